"""Comparison tables: flat records in, text / Markdown / CSV / JSON out."""
from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
import operator
import re
from collections import defaultdict
from typing import Any, Iterable, Sequence

from orchestrator.cells import record_key
from orchestrator.errors import UserError
from orchestrator.model import ERROR, HOST_OK, OK, UNSUPPORTED, HostResult, Measurement, ParsedLog, Run
from orchestrator.stats import median
from orchestrator.units import UNITS, convert, fmt_number

FORMATS = ("table", "markdown", "csv", "json")


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table") -> str:
    """Render one table. `json` gives a list of objects keyed by the headers."""
    if fmt in ("table", "markdown"):
        return _text_table(headers, rows, markdown=fmt == "markdown")
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    if fmt == "json":
        return json.dumps([dict(zip(headers, row)) for row in rows], indent=2)
    raise UserError(f"unknown format '{fmt}'; choose one of: {', '.join(FORMATS)}")


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], markdown: bool) -> str:
    """Columns of left-aligned text: a plain table with a dashed ruler, or a GitHub Markdown table.

    The layout of tabulate's "simple" and "github" formats with disable_numparse, which rendered these tables
    before, kept character for character (tests/unit/test_tables.py): each column as wide as its widest line and
    at least its header + 2; None is empty; surrounding whitespace of a value is dropped; values with line
    breaks take as many lines as they have (an empty value none). Hand-written because a 50,000-row diff is
    rendered here, and tabulate's type inference over every value took seconds.
    """
    head = [str(header) for header in headers]  # headers are kept as given
    texts = [["" if value is None else str(value) for value in column] for column in zip(*rows)]
    multiline = any(_LINE_BREAK.search(text) for text in (*head, *map("".join, texts)))  # before the strip
    columns = [[text.strip() for text in column] for column in texts] if rows else [[] for _ in head]
    if multiline:
        def text_width(text: str) -> int:
            return max(map(len, _LINE_BREAK.split(text)))
    else:
        text_width = len
    widths = [max(text_width(header) + 2, max(map(text_width, column), default=0))
              for header, column in zip(head, columns)]
    if markdown:
        def line(cells: Iterable[str]) -> str:
            return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |"
        ruler = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    else:
        def line(cells: Iterable[str]) -> str:
            return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()
        ruler = "  ".join("-" * width for width in widths)
    if not multiline:
        return "\n".join([line(head), ruler, *map(line, zip(*columns))])
    out = [line(parts) for parts in itertools.zip_longest(*map(_LINE_BREAK.split, head), fillvalue="")]
    out.append(ruler)
    for row in zip(*columns):  # a row whose values are all empty takes no line
        out.extend(line(parts) for parts in itertools.zip_longest(*(text.splitlines() for text in row), fillvalue=""))
    return "\n".join(out)


_LINE_BREAK = re.compile("[\r\n]")


# ---------------------------------------------------------------------------------------------------------
# Flat records and comparison tables (many hosts, many runs). Pure: data in, (headers, rows) out.

PK_OPERATIONS = ("sign", "verify", "op", "encrypt", "decrypt", "keygen", "encaps", "decaps")


_MEASUREMENT_FIELDS = tuple(f.name for f in dataclasses.fields(Measurement))
_measurement_values = operator.attrgetter(*_MEASUREMENT_FIELDS)  # every field of a Measurement in one C call


def _build_record(m: Measurement, run_id: str | None, host: str, firmware: str | None) -> dict[str, Any]:
    """Every Measurement field (a new field is a new record key), then the tags. Not vars(m): on Python
    3.11+ that gives each instance a __dict__ for good; not asdict: it deep-copies."""
    record = dict(zip(_MEASUREMENT_FIELDS, _measurement_values(m)))
    record["run_id"], record["host"], record["firmware"] = run_id, host, firmware
    return record


def records(host_results: Iterable[HostResult], run_id: str | None = None) -> list[dict[str, Any]]:
    """One flat dict per measurement, with the host (and run) it belongs to."""
    flat = []
    append, build = flat.append, _build_record
    for result in host_results:
        host, firmware = result.host, result.firmware
        host_flags = set(result.flags)
        host_version = result.openssl.version
        for m in result.measurements:
            row = build(m, run_id, host, firmware)
            row["flags"] = sorted(host_flags.union(m.flags)) if host_flags or m.flags else []
            if not row["openssl_version"]:
                row["openssl_version"] = host_version
            append(row)
    return flat


def records_from_runs(runs: Iterable[Run]) -> list[dict[str, Any]]:
    """Records of every host of every run, tagged with the run id."""
    return [r for run in runs for r in records(run.hosts, run_id=run.run_id)]


def failed_hosts(runs: Iterable[Run]) -> list[dict[str, Any]]:
    """One record per host that failed or was unreachable: host, run, its status and reason (no figures)."""
    return [{"run_id": run.run_id, "host": h.host, "status": h.status, "reason": h.reason or ""}
            for run in runs for h in run.hosts if h.status != HOST_OK]


def records_from_log(log: ParsedLog, host: str | None = None) -> list[dict[str, Any]]:
    """Records of one parsed log (`sslbench parse`), optionally under a host name."""
    result = HostResult(host=host or "", cpu=log.cpu, os=log.os, openssl=log.openssl, measurements=log.measurements)
    return [dict(r, host=host) for r in records([result])]


def throughput_table(rows: Iterable[dict[str, Any]], by: str = "host", unit: str = "MB/s",
                     unit_in_header: bool = True) -> tuple[list[str], list[list[Any]]]:
    """Block-size columns for symmetric ciphers and digests.

    by="host": rows grouped by algorithm, one row per host (compare boxes); by="algorithm": rows grouped
    by host, one row per algorithm. unit: "MB/s", "Mbit/s" or "both" (two columns per block size);
    decimal units (see orchestrator.units.UNIT_NOTE). A cell is the median over repeats, rounded to
    0.01; "unsupported" / "error" when the host could not measure it. unit_in_header=False gives
    bare "16 B" headers, for a text table whose caption names the unit. A last "flags" column lists
    validity flags (busy, throttled ...) of the row's cells when any cell has one.
    """
    units_ = _units(unit)
    cells, flags = _cells([r for r in rows if r.get("operation") is None and r.get("block_size") is not None],
                          "block_size", "bytes_per_second")
    sizes = sorted({column for (_, column) in cells})
    columns = [(size, u) for size in sizes for u in units_]
    names = [f"{size} B {u}" if unit_in_header or len(units_) > 1 else f"{size} B" for size, u in columns]

    def show(value: Any, column: tuple[int, str]) -> Any:
        return round(convert(value, column[1]), 2) if isinstance(value, (int, float)) else value

    return _table(cells, flags, by, columns, names, show, lambda column: column[0])


def pk_table(rows: Iterable[dict[str, Any]], by: str = "host") -> tuple[list[str], list[list[Any]]]:
    """Public-key operations per second (sign/s, verify/s, ...): one column per operation present."""
    cells, flags = _cells([r for r in rows if r.get("operation")], "operation", "ops_per_second")
    present = {column for (_, column) in cells}
    operations = [op for op in PK_OPERATIONS if op in present] + sorted(present - set(PK_OPERATIONS))

    def show(value: Any, _op: str) -> Any:
        return round(value, 1) if isinstance(value, (int, float)) else value

    return _table(cells, flags, by, operations, [f"{op}/s" for op in operations], show, lambda op: op)


def _table(cells: dict, flags: dict, by: str, columns: list, names: list[str], show, cell_column
           ) -> tuple[list[str], list[list[Any]]]:
    keys = _key_columns(cells, by)
    ordered = _row_keys(cells, keys)
    with_flags = any(flags.get(row_key) for row_key, _ in ordered)
    headers = [name for name, _ in keys] + names + (["flags"] if with_flags else [])
    table = []
    for row_key, labels in ordered:
        line = list(labels)
        for column in columns:
            value = cells.get((row_key, cell_column(column)))
            line.append("" if value is None else show(value, column))
        if with_flags:
            line.append(" ".join(sorted(flags.get(row_key, ()))))
        table.append(line)
    return headers, table


def display_rows(rows: Sequence[Sequence[Any]], fmt: str) -> list[list[Any]]:
    """Numbers as people read them (3 significant figures, 12,345) for text and Markdown; as is for CSV/JSON."""
    if fmt not in ("table", "markdown"):
        return [list(r) for r in rows]
    return [[fmt_number(v) if isinstance(v, float) else ("" if v is None else v) for v in r] for r in rows]


# A table cell is a host's cells.Key: the row holds its other fields, the column its block size (throughput) or
# operation (public key). cpu is the cluster of a pinned big.LITTLE cell.
_RowKey = tuple  # (host, algorithm, api, threads, cpu)


def _cells(rows: list[dict[str, Any]], column_field: str, value_field: str) -> tuple[dict, dict]:
    """(row key, column) -> median of ok values, else "unsupported"/"error"; and row key -> validity flags."""
    values: dict[tuple[_RowKey, Any], list[float]] = defaultdict(list)
    states: dict[tuple[_RowKey, Any], set[str]] = defaultdict(set)
    flags: dict[_RowKey, set[str]] = defaultdict(set)
    for r in rows:  # 10^5 records: each field read once
        get = r.get
        algorithm, api, operation, threads, block_size, cpu = record_key(r)
        row_key = (get("host") or "", algorithm, api or "", threads or 1, cpu or "")
        key = (row_key, block_size if column_field == "block_size" else operation)
        row_flags = get("flags")
        if row_flags:
            flags[row_key].update(row_flags)
        status = get("status") or OK
        value = get(value_field)
        if status == OK and value is not None:
            values[key].append(float(value))
        else:
            states[key].add(status)
    cells: dict[tuple[_RowKey, Any], Any] = {}
    for key in set(values) | set(states):
        if values.get(key):
            cells[key] = median(values[key])
        else:
            cells[key] = UNSUPPORTED if UNSUPPORTED in states[key] else ERROR
    return cells, flags


def _key_columns(cells: dict, by: str) -> list[tuple[str, int]]:
    """(header, index into the row key) in display order; the host column only when hosts are named."""
    if by not in ("host", "algorithm"):
        raise UserError(f"unknown grouping '{by}'; choose 'host' or 'algorithm'")
    named = any(key[0] for (key, _) in cells)
    host = [("host", 0)] if named else []
    algo = [("algorithm", 1), ("api", 2), ("threads", 3)] + ([("cpu", 4)] if any(key[4] for (key, _) in cells) else [])
    return algo + host if by == "host" else host + algo


def _row_keys(cells: dict, keys: list[tuple[str, int]]) -> list[tuple[_RowKey, list[Any]]]:
    order = [index for _, index in keys]
    unique = {key for (key, _) in cells}
    ranked = sorted(unique, key=lambda k: [_sortable(k[i]) for i in order])
    return [(k, [k[i] for i in order]) for k in ranked]


def _sortable(value: Any) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))


def _units(unit: str) -> tuple[str, ...]:
    if unit == "both":
        return UNITS
    if unit in UNITS:
        return (unit,)
    raise UserError(f"unknown unit '{unit}'; choose MB/s, Mbit/s or both")


# ---------------------------------------------------------------------------------------------------------
# Stored runs as `sslbench run` prints them at the end and `sslbench report` again

# What `--format json` prints per record (the table's raw data, not display strings).
# A host that failed or was unreachable is one more row: its host status and reason, no figures.
JSON_FIELDS = ("run_id", "host", "algorithm", "block_size", "threads", "api", "cpu", "bytes_per_second",
               "operation", "ops_per_second", "status", "reason", "repeat", "openssl_version", "flags")


def render_runs(runs: Iterable[Run], fmt: str = "table") -> str:
    """The throughput and public-key tables of stored runs, then the hosts that failed, with their reason."""
    runs = list(runs)
    rows = records_from_runs(runs)
    failed = failed_hosts(runs)
    if fmt == "json":
        return json.dumps([{k: r.get(k) for k in JSON_FIELDS} for r in rows + failed], indent=2)
    by_run = len(runs) > 1
    if by_run:  # the same host in two runs: keep them apart
        rows = [dict(r, host=f"{r['host']} ({r['run_id']})") for r in rows]
        failed = [dict(r, host=f"{r['host']} ({r['run_id']})") for r in failed]
    parts = []
    headers, body = throughput_table(rows)
    if body:
        parts.append(render(headers, display_rows(body, fmt), fmt))
    headers, body = pk_table(rows)
    if body:
        parts.append(render(headers, display_rows(body, fmt), fmt))
    if not parts and not failed:
        return "(no measurements)"
    if failed:
        parts.append(render(["host", "status", "reason"], [[r["host"], r["status"], r["reason"]] for r in failed], fmt))
    return "\n\n".join(parts)
