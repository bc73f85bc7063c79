"""Comparison tables: flat records in, tables (render/model.py) out, laid out by a format of render/formats.py."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import operator
import re
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Literal, Sequence, TypedDict, cast

from orchestrator.analysis.cells import Key, record_key
from orchestrator.errors import UserError
from orchestrator.model import (ERROR, HOST_OK, LINE_BLOCKS, OK, REFERENCE, SPEED, UNSUPPORTED, HostResult,
                                Measurement, ParsedLog, Run)
from orchestrator.render import formats
from orchestrator.render.model import Aside, Document, Table
from orchestrator.stats import median
from orchestrator.units import UNITS, convert, fmt_number, fmt_time

FORMATS = formats.TABLE_FORMATS


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table", width: int | None = None,
           drop: Sequence[str] = ()) -> str:
    """One table in a format of render/formats.py. `json` gives a list of objects keyed by the headers.

    width: fit a plain text table to that many columns and say below it what was dropped or abbreviated
    (layout.grid); None never cuts, and Markdown, CSV and JSON are never cut. drop: the headers of the columns that
    go first when a table does not fit, in that order (after them, columns go from the right).
    """
    if not formats.get(fmt).tables:
        raise UserError(f"unknown format '{fmt}'; choose one of: {', '.join(FORMATS)}")
    return formats.write(Document([Table(headers, rows, drop)]), fmt, width)


# ---------------------------------------------------------------------------------------------------------
# Flat records and comparison tables (many hosts, many runs). Pure: data in, (headers, rows) out.

PK_OPERATIONS = ("sign", "verify", "op", "encrypt", "decrypt", "keygen", "encaps", "decaps")


_MEASUREMENT_FIELDS = tuple(f.name for f in dataclasses.fields(Measurement))
_measurement_values = operator.attrgetter(*_MEASUREMENT_FIELDS)  # every field of a Measurement in one C call


class Record(TypedDict):
    """A flat record: every Measurement field (a new field is a new key: test_tables checks they agree), and the
    host (and run) it belongs to. What `--format json` prints of a run (JSON_FIELDS) and comparison tables read."""

    algorithm: str
    block_size: int | None
    bytes_per_second: float | None
    operation: str | None
    ops_per_second: float | None
    threads: int
    api: str | None
    openssl_version: str | None
    count: int | None
    seconds: float | None
    status: str
    reason: str | None
    repeat: int
    flags: list[str]  # the host's validity flags and the measurement's
    cpu: str | None
    kind: str
    implementation: str | None
    run_id: str | None
    host: str | None
    firmware: str | None


def _build_record(m: Measurement, run_id: str | None, host: str, firmware: str | None) -> Record:
    """Every Measurement field, then the tags. Not vars(m): on Python 3.11+ that gives each instance a __dict__
    for good; not asdict: it deep-copies."""
    record = cast(Record, dict(zip(_MEASUREMENT_FIELDS, _measurement_values(m))))
    record["run_id"], record["host"], record["firmware"] = run_id, host, firmware
    return record


def records(host_results: Iterable[HostResult], run_id: str | None = None) -> list[Record]:
    """One flat record per measurement, with the host (and run) it belongs to."""
    flat: list[Record] = []
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


def records_from_runs(runs: Iterable[Run]) -> list[Record]:
    """Records of every host of every run, tagged with the run id."""
    return [r for run in runs for r in records(run.hosts, run_id=run.run_id)]


@dataclass(frozen=True)
class FailedHost:
    """A host that failed or was unreachable in a run: its status and why (it has no figures)."""

    run_id: str
    host: str
    status: str
    reason: str


def failed_hosts(runs: Iterable[Run]) -> list[FailedHost]:
    """Every host that failed or was unreachable, with its run."""
    return [FailedHost(run.run_id, h.host, h.status, h.reason or "") for run in runs for h in run.hosts
            if h.status != HOST_OK]


def records_from_log(log: ParsedLog, host: str | None = None) -> list[Record]:
    """Records of one parsed log (`sslbench parse`), optionally under a host name."""
    result = HostResult(host=host or "", cpu=log.cpu, os=log.os, openssl=log.openssl, measurements=log.measurements)
    flat = records([result])
    for record in flat:
        record["host"] = host
    return flat


def throughput_table(rows: Iterable[Record], by: str = "host", unit: str = "MB/s",
                     unit_in_header: bool = True) -> tuple[list[str], list[list[Any]]]:
    """Block-size columns for symmetric ciphers and digests (openssl speed figures only).

    by="host": rows grouped by algorithm, one row per host (compare boxes); by="algorithm": rows grouped
    by host, one row per algorithm. unit: "MB/s", "Mbit/s" or "both" (two columns per block size);
    decimal units (see orchestrator.units.UNIT_NOTE). A cell is the median over repeats, rounded to
    0.01; "unsupported" / "error" when the host could not measure it. unit_in_header=False gives
    bare "16 B" headers, for a text table whose caption names the unit. A last "flags" column lists
    validity flags (busy, throttled ...) of the row's cells when any cell has one.
    """
    units_ = _units(unit)
    cells, flags = _cells([r for r in rows if r.get("operation") is None and r.get("block_size") is not None
                           and r.get("kind") == SPEED], "block_size", "bytes_per_second")
    sizes = sorted({column for (_, column) in cells})
    columns = [(size, u) for size in sizes for u in units_]
    names = [f"{size} B {u}" if unit_in_header or len(units_) > 1 else f"{size} B" for size, u in columns]

    def show(value: Any, column: tuple[int, str]) -> Any:
        return round(convert(value, column[1]), 2) if isinstance(value, (int, float)) else value

    return _table(cells, flags, by, columns, names, show, lambda column: column[0])


def pk_table(rows: Iterable[Record], by: str = "host") -> tuple[list[str], list[list[Any]]]:
    """Public-key operations per second (sign/s, verify/s, ...) of openssl speed: a column per operation present."""
    cells, flags = _cells([r for r in rows if r.get("operation") and r.get("kind") == SPEED], "operation",
                          "ops_per_second")
    present = {column for (_, column) in cells}
    operations = [op for op in PK_OPERATIONS if op in present] + sorted(present - set(PK_OPERATIONS))

    def show(value: Any, _op: str) -> Any:
        return round(value, 1) if isinstance(value, (int, float)) else value

    return _table(cells, flags, by, operations, [f"{op}/s" for op in operations], show, lambda op: op)


def _table(cells: _Cells, flags: _Flags, by: str, columns: Sequence[Any], names: list[str],
           show: Callable[[Any, Any], Any], cell_column: Callable[[Any], Any]) -> tuple[list[str], list[list[Any]]]:
    keys = _key_columns(cells, by)
    ordered = _row_keys(cells, keys)
    with_flags = any(flags.get(row_key) for row_key, _ in ordered)
    headers = keys + names + (["flags"] if with_flags else [])
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
    """Numbers as people read them (3 significant figures, 12,345) where a person reads the format; as is for data."""
    if not formats.get(fmt).reading:
        return [list(r) for r in rows]
    return [[fmt_number(v) if isinstance(v, float) else ("" if v is None else v) for v in r] for r in rows]


# A table cell is a host's cells.Key: the row holds its other fields (the row's Key has no block size and no
# operation), the column its block size (throughput) or operation (public key). cpu is the cluster of a pinned
# big.LITTLE cell.
_Row = tuple[str, Key]  # (host, the cell's Key less its column)
_Cells = dict[tuple[_Row, Any], Any]  # (row, column) -> a median, or "unsupported" / "error"
_Flags = dict[_Row, set[str]]


def _cells(rows: list[Record], column_field: str,
           value_field: Literal["bytes_per_second", "ops_per_second"]) -> tuple[_Cells, _Flags]:
    """(row, column) -> stats.median of the cell's ok values, else "unsupported"/"error"; and row -> validity flags."""
    values: dict[tuple[str, Key], list[float]] = defaultdict(list)
    states: dict[tuple[str, Key], set[str]] = defaultdict(set)
    flags: _Flags = defaultdict(set)
    by_block = column_field == "block_size"
    for r in rows:  # 10^5 records: each field read once
        key = record_key(r)
        cell = (r.get("host") or "", key)
        row_flags = r.get("flags")
        if row_flags:
            flags[_row(cell)].update(row_flags)
        status = r.get("status") or OK
        value = r.get(value_field)
        if status == OK and value is not None:
            values[cell].append(float(value))
        else:
            states[cell].add(status)
    cells: _Cells = {}
    for cell in set(values) | set(states):
        at = (_row(cell), cell[1].block_size if by_block else cell[1].operation)
        if values.get(cell):
            cells[at] = median(values[cell])
        else:
            cells[at] = UNSUPPORTED if UNSUPPORTED in states[cell] else ERROR
    return cells, flags


def _row(cell: tuple[str, Key]) -> _Row:
    """The row of a host's cell: its Key less its block size and operation (one is the column), api and cpu ""
    where None, threads 1 where unset."""
    host, key = cell
    return host, Key(key.algorithm, key.api or "", None, key.threads or 1, None, key.cpu or "")


_ROW_FIELDS: dict[str, Callable[[_Row], Any]] = {
    "host": lambda row: row[0], "algorithm": lambda row: row[1].algorithm, "api": lambda row: row[1].api,
    "threads": lambda row: row[1].threads, "cpu": lambda row: row[1].cpu}


def _key_columns(cells: _Cells, by: str) -> list[str]:
    """The row's columns in display order; the host column only when hosts are named, cpu only when pinned."""
    if by not in ("host", "algorithm"):
        raise UserError(f"unknown grouping '{by}'; choose 'host' or 'algorithm'")
    host = ["host"] if any(row[0] for (row, _) in cells) else []
    algo = ["algorithm", "api", "threads"] + (["cpu"] if any(row[1].cpu for (row, _) in cells) else [])
    return algo + host if by == "host" else host + algo


def _row_keys(cells: _Cells, keys: list[str]) -> list[tuple[_Row, list[Any]]]:
    fields = [_ROW_FIELDS[name] for name in keys]
    unique = {row for (row, _) in cells}
    ranked = sorted(unique, key=lambda row: [_sortable(field(row)) for field in fields])
    return [(row, [field(row) for field in fields]) for row in ranked]


def _sortable(value: Any) -> tuple[int, Any, str]:
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


def host_labels(runs: Sequence[Run]) -> dict[tuple[str, str], str]:
    """How every table and report names the host of a run, by (run id, host): the host, and "host @ run-id" only
    where the host has figures in several of the runs shown (runs_table says once which run each host came from;
    a host that failed is listed with its run)."""
    counts = Counter(result.host for run in runs for result in run.hosts if result.measurements)

    def label(run: Run, host: str) -> str:
        if run.source == REFERENCE:  # a published result of a known board (orchestrator/reference)
            return f"{host} (reference)"
        return host if counts[host] <= 1 else f"{host} @ {run.run_id}"

    return {(run.run_id, result.host): label(run, result.host) for run in runs for result in run.hosts}


def runs_table(runs: Sequence[Run]) -> tuple[list[str], list[list[Any]]]:
    """The runs shown and the hosts each one gave, failed ones with their status: what the labels of host_labels
    leave out."""
    def named(result: HostResult) -> str:
        return result.host if result.status == HOST_OK else f"{result.host} ({result.status})"

    return (["run", "created", "source", "hosts"],
            [[run.run_id, fmt_time(run.created), run.source, ", ".join(map(named, run.hosts))] for run in runs])


RUNS_TABLE_DROP = ("source",)  # the column a terminal too narrow for runs_table loses first


def render_runs(runs: Iterable[Run], fmt: str = "table", width: int | None = None, legend: bool | None = None) -> str:
    """runs_document in a format; width: see render."""
    return formats.write(runs_document(runs, legend), fmt, width)


def runs_document(runs: Iterable[Run], legend: bool | None = None) -> Document:
    """The throughput and public-key tables of stored runs, then the hosts that failed, with their reason; as data
    (JSON) every record (JSON_FIELDS).

    legend: runs_table first (default: when there are several runs). A narrow terminal loses the small blocks
    first, then the api column.
    """
    runs = list(runs)
    rows = records_from_runs(runs)
    failed = failed_hosts(runs)
    doc = Document(data=[{k: r.get(k) for k in JSON_FIELDS} for r in rows] + [
        {k: getattr(f, k, None) for k in JSON_FIELDS} for f in failed])  # a failed host: no figures
    labels = host_labels(runs)
    if any(label != host for (_, host), label in labels.items()):  # the same host in two runs: keep them apart
        rows = [_relabelled(r, labels[r["run_id"] or "", r["host"] or ""]) for r in rows]
    if legend if legend is not None else len(runs) > 1:
        doc.blocks.append(Table(*runs_table(runs), RUNS_TABLE_DROP))
    headers, body = throughput_table(rows)
    if body:
        doc.blocks.append(Table(headers, body, _throughput_drop(headers), readable=True))
    headers, body = pk_table(rows)
    if body:
        doc.blocks.append(Table(headers, body, ["api"], readable=True))
    if not rows and not failed:  # a reader's line; data for a program (CSV, JSON) stays data: stderr
        doc.blocks.append(Aside("(no measurements)"))
    if failed:  # which run a host failed in, when there are several
        by_run = ["run"] if len(runs) > 1 else []
        doc.blocks.append(Table(["host", *by_run, "status", "reason"],
                                [[f.host, *([f.run_id] if by_run else []), f.status, f.reason] for f in failed]))
    return doc


def _relabelled(record: Record, host: str) -> Record:
    copy = record.copy()
    copy["host"] = host
    return copy


def _throughput_drop(headers: Sequence[str]) -> list[str]:
    """The columns of a throughput_table a narrow terminal loses first: the block sizes but the largest, those
    other than the VPN and TLS sizes of model.LINE_BLOCKS first, smallest first; then the api."""
    sized = [(int(found[1]), header) for header in headers if (found := _BLOCK_COLUMN.match(header))]
    sized = sized[:-1] if sized else sized  # the largest block stays
    return [header for _, header in sorted(sized, key=lambda item: (item[0] in LINE_BLOCKS, item[0]))] + ["api"]


_BLOCK_COLUMN = re.compile(r"(\d+) B\b")  # a column of throughput_table: "16 B MB/s", "16384 B"
