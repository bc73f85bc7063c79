"""Comparison tables: flat records in, text / Markdown / CSV / JSON out."""
from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
import operator
import re
import textwrap
from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Sequence

from orchestrator import textsafe
from orchestrator.analysis.cells import record_key
from orchestrator.errors import UserError
from orchestrator.model import (ERROR, HOST_OK, LINE_BLOCKS, OK, REFERENCE, UNSUPPORTED, HostResult, Measurement, ParsedLog,
                                Run)
from orchestrator.stats import median
from orchestrator.units import UNITS, convert, fmt_number, fmt_time

FORMATS = ("table", "markdown", "csv", "json")


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table", width: int | None = None,
           drop: Sequence[str] = ()) -> str:
    """Render one table. `json` gives a list of objects keyed by the headers.

    width: fit a plain text table to that many columns and say below it what was dropped or abbreviated (see
    _fitted); None never cuts, and Markdown, CSV and JSON are never cut. drop: the headers of the columns that
    go first when a table does not fit, in that order (after them, columns go from the right).
    """
    if fmt in ("table", "markdown"):
        return _text_table(headers, rows, markdown=fmt == "markdown", width=width if fmt == "table" else None,
                           drop=drop)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(map(textsafe.csv_cell, headers))
        writer.writerows(map(textsafe.csv_cell, row) for row in rows)  # OWASP: docs/trust.md
        return out.getvalue().rstrip("\n")
    if fmt == "json":
        return json.dumps([dict(zip(headers, row)) for row in rows], indent=2)
    raise UserError(f"unknown format '{fmt}'; choose one of: {', '.join(FORMATS)}")


def _text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], markdown: bool, width: int | None = None,
                drop: Sequence[str] = ()) -> str:
    """Columns of left-aligned text: a plain table with a dashed ruler, or a GitHub Markdown table.

    The layout of tabulate's "simple" and "github" formats with disable_numparse, which rendered these tables
    before, kept character for character (tests/unit/test_tables.py): each column as wide as its widest line and
    at least its header + 2; None is empty; surrounding whitespace of a value is dropped; values with line
    breaks take as many lines as they have (an empty value none). Hand-written because a 50,000-row diff is
    rendered here, and tabulate's type inference over every value took seconds. A plain table wider than
    `width` is fitted to it (_fitted).
    """
    # host text is data: control characters shown, never sent (textsafe); in Markdown nothing renders, and a `|`
    # in a value (a failure reason's " | ", a host alias) cannot end its cell
    safe = textsafe.markdown if markdown else textsafe.cell
    head = [safe(str(header)) for header in headers]
    texts = [["" if value is None else safe(str(value)) for value in column] for column in zip(*rows)]
    multiline = any(_LINE_BREAK.search(text) for text in (*head, *map("".join, texts)))  # before the strip
    columns = [[text.strip() for text in column] for column in texts] if rows else [[] for _ in head]
    text_width: Callable[[str], int] = _lines_width if multiline else textsafe.width
    widths = [max(text_width(header) + 2, max(map(text_width, column), default=0))
              for header, column in zip(head, columns)]
    if width is not None and _total(widths) > width:
        return _fitted(head, columns, width, drop)
    return _layout(head, columns, widths, multiline, markdown)


def _layout(head: Sequence[str], columns: Sequence[Sequence[str]], widths: Sequence[int], multiline: bool,
            markdown: bool, spaced: bool = False) -> str:
    """The lines of a table of these widths; `spaced`: a blank line between two rows when one takes several."""
    # padded by terminal columns where a value is not ASCII (a CJK host name takes two a character)
    pad = str.ljust if all(text.isascii() for text in (*head, *itertools.chain(*columns))) else textsafe.ljust
    if markdown:
        def line(cells: Iterable[str]) -> str:
            return "| " + " | ".join(pad(cell, width) for cell, width in zip(cells, widths)) + " |"
        ruler = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    else:
        def line(cells: Iterable[str]) -> str:
            return "  ".join(pad(cell, width) for cell, width in zip(cells, widths)).rstrip()
        ruler = "  ".join("-" * width for width in widths)
    if not multiline:
        return "\n".join([line(head), ruler, *map(line, zip(*columns))])
    out = [line(parts) for parts in itertools.zip_longest(*map(_LINE_BREAK.split, head), fillvalue="")]
    out.append(ruler)
    tall: bool | None = None  # did the row before take several lines (None: no row yet)
    for row in zip(*columns):  # a row whose values are all empty takes no line
        lines = [line(parts) for parts in itertools.zip_longest(*(text.splitlines() for text in row), fillvalue="")]
        if spaced and lines and tall is not None and (tall or len(lines) > 1):
            out.append("")
        if lines:
            tall = len(lines) > 1
        out.extend(lines)
    return "\n".join(out)


def _lines_width(text: str) -> int:
    return max(map(textsafe.width, _LINE_BREAK.split(text)))


def _total(widths: Sequence[int]) -> int:
    """The length of a plain table's widest line: its columns and two spaces between each two."""
    return sum(widths) + 2 * (len(widths) - 1)


# Fitting a plain table to the terminal: a column whose longest value is longer than this may wrap, at spaces, down
# to this width (texts before figures, see _fitted); shorter values never wrap.
WRAP_MIN = 20


def _fitted(head: list[str], columns: list[list[str]], width: int, drop: Sequence[str]) -> str:
    """The table in at most `width` columns, never a line wider, and below it one line saying what it lost.

    Lossless first: no column empty in every row, no padding beyond the widest value, headers wrapped at their
    spaces, long texts (verdicts, reasons, firmware labels: longer than WRAP_MIN, not starting with a digit, a quarter
    narrower wrapped) wrapped at theirs down to WRAP_MIN. Then the columns named in `drop` go, in that order; then long figures ("1,639 MB/s
    (13,110 Mbit/s)") wrap too; then long values are cut to WRAP_MIN with "…" (abbreviated); then columns go from
    the right, never the first. A first column alone still too wide has its lines cut.
    """
    names = [" ".join(header.split()) for header in head]  # a header as the note names it
    empty = {i for i, column in enumerate(columns) if i and column and not any(column)}  # go first, unsaid
    hinted = [names.index(name) for name in dict.fromkeys(drop) if name in names[1:] and names.index(name) not in empty]
    order = hinted + [i for i in reversed(range(1, len(head))) if i not in hinted and i not in empty]
    tries = [(n, False) for n in range(len(hinted) + 1)] + [(n, True) for n in range(len(hinted), len(order) + 1)]
    targets: list[int] | None = None
    kept: list[int] = [0]
    for count, lossy in tries:
        kept = [i for i in range(len(head)) if i not in order[:count] and i not in empty]
        targets = _fit_widths([head[i] for i in kept], [columns[i] for i in kept], width, lossy)
        if targets is not None:
            break
    if targets is None:  # the first column alone does not fit: its lines are cut below
        targets = [max(width, 1)]
    abbreviated: list[int] = []
    new_head, new_columns = [], []
    for i, target in zip(kept, targets):
        header, cut_header = _wrap(head[i], target)
        cells = [_wrap(text, target) for text in columns[i]]
        if len({text for text, _ in cells}) < len(set(columns[i])):  # router-…-01 and -02 cut alike: keep their ends
            cells = [_wrap(text, target, middle=True) for text in columns[i]]
        if cut_header or any(cut for _, cut in cells):
            abbreviated.append(i)
        new_head.append(header)
        new_columns.append([text for text, _ in cells])
    multiline = any(_LINE_BREAK.search(text) for text in (*new_head, *(t for column in new_columns for t in column)))
    widths = [max(_lines_width(header), max(map(_lines_width, column), default=0))
              for header, column in zip(new_head, new_columns)]
    lines = _layout(new_head, new_columns, widths, multiline, markdown=False, spaced=True).split("\n")
    cut_lines = any(textsafe.width(line) > width for line in lines)
    lines = [line if textsafe.width(line) <= width else textsafe.cut(line, width - 1) + "…" for line in lines]
    dropped = [names[i] for i in order if i not in kept]
    said = ([f"dropped {', '.join(dropped)}"] if dropped else []) + (
        [f"abbreviated {', '.join(names[i] for i in abbreviated)}"] if abbreviated else []) + (
        ["lines cut"] if cut_lines else [])
    if said:  # one line: the way back to every column only where it fits
        note = f"fitted to {width} columns: {'; '.join(said)}"
        hint = " (--width 0 shows all)"
        lines += [note + hint] if len(note + hint) <= width else textwrap.wrap(note, max(width, 20))
    return "\n".join(lines)


def _fit_widths(head: list[str], columns: list[list[str]], width: int, lossy: bool) -> list[int] | None:
    """Widths of these columns that fit `width`, or None (see _fitted): headers wrapped at spaces, then text wrapped;
    when `lossy`, figures wrapped too, then long values cut."""
    def words(text: str) -> int:  # the longest word
        return max(map(textsafe.width, _SPACES.split(_glued(text))), default=0)

    values = [max(map(_lines_width, column), default=0) for column in columns]
    widths = [max(_lines_width(header), value) for header, value in zip(head, values)]
    if _total(widths) <= width:
        return widths
    header_words = [words(header) for header in head]
    widths = [max(word, value) for word, value in zip(header_words, values)]  # every header wraps: they align
    long = [max(column, key=_lines_width) if value > WRAP_MIN else "" for column, value in zip(columns, values)]
    wrap = [max(WRAP_MIN, max(map(words, column))) if text else value  # the narrowest a column wraps to
            for column, text, value in zip(columns, long, values)]
    # a verdict, a reason, a firmware label: not a figure with units, nor a name that wrapping would hardly narrow
    text = [bool(t) and not t[0].isdigit() and 4 * w <= 3 * value for t, w, value in zip(long, wrap, values)]
    floors = [[max(word, w if is_text else value) for word, w, is_text, value in zip(header_words, wrap, text, values)]]
    if lossy:
        floors.append([max(word, w) for word, w in zip(header_words, wrap)])  # figures wrap too
        floors.append([max(word, min(value, WRAP_MIN)) for word, value in zip(header_words, values)])  # values cut
    for floor in floors:
        widths = _shrink(widths, floor, _total(widths) - width)
    return widths if _total(widths) <= width else None


def _wrapped(text: str, width: int) -> list[str]:
    """Lines of at most `width` at spaces, a figure kept with its unit ("16384 B" / "MB/s", never "16384" / "B")."""
    lines = textwrap.wrap(_glued(text), width, break_long_words=False, break_on_hyphens=False)
    return [line.replace(_GLUE, " ") for line in lines]


_GLUE = "\u00a0"  # a no-break space: textwrap never breaks a line there (str.split does)
_SPACES = re.compile("[ \t\r\n]+")  # where textwrap breaks
_UNIT = re.compile(r"(?<=\d) (?=(?:B|kB/s|MB/s|Mbit/s|MHz|ops/s|cores?)\b)")


def _glued(text: str) -> str:
    return _UNIT.sub(_GLUE, text)


def _shrink(widths: list[int], floors: list[int], excess: int) -> list[int]:
    """Take `excess` characters off the widest columns above their floors, one at a time."""
    widths = list(widths)
    while excess > 0:
        wide = [i for i, (w, floor) in enumerate(zip(widths, floors)) if w > floor]
        if not wide:
            break
        widest = max(wide, key=lambda i: (widths[i], -i))
        widths[widest] -= 1
        excess -= 1
    return widths


def _wrap(text: str, width: int, middle: bool = False) -> tuple[str, bool]:
    """A value within `width`: its lines wrapped at spaces, a word longer than that cut with "…" (at its end, or in
    its `middle` to keep the end that tells it apart); and whether cut."""
    if _lines_width(text) <= width:
        return text, False
    lines: list[str] = []
    cut = False
    for line in text.splitlines():
        for part in _wrapped(line, width) or [""]:
            if textsafe.width(part) > width:
                tail = (width - 1) // 2 if middle else 0
                end = textsafe.cut(part[::-1], tail)[::-1] if tail else ""
                part, cut = textsafe.cut(part, width - 1 - tail) + "…" + end, True
            lines.append(part)
    return "\n".join(lines), cut


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
    flat: list[dict[str, Any]] = []
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


def _table(cells: _Cells, flags: _Flags, by: str, columns: Sequence[Any], names: list[str],
           show: Callable[[Any, Any], Any], cell_column: Callable[[Any], Any]) -> tuple[list[str], list[list[Any]]]:
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
_RowKey = tuple[str, str, str, int, str]  # (host, algorithm, api, threads, cpu)
_Cells = dict[tuple[_RowKey, Any], Any]  # (row key, column) -> a median, or "unsupported" / "error"
_Flags = dict[_RowKey, set[str]]


def _cells(rows: list[dict[str, Any]], column_field: str, value_field: str) -> tuple[_Cells, _Flags]:
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
    cells: _Cells = {}
    for key in set(values) | set(states):
        if values.get(key):
            cells[key] = median(values[key])
        else:
            cells[key] = UNSUPPORTED if UNSUPPORTED in states[key] else ERROR
    return cells, flags


def _key_columns(cells: _Cells, by: str) -> list[tuple[str, int]]:
    """(header, index into the row key) in display order; the host column only when hosts are named."""
    if by not in ("host", "algorithm"):
        raise UserError(f"unknown grouping '{by}'; choose 'host' or 'algorithm'")
    named = any(key[0] for (key, _) in cells)
    host = [("host", 0)] if named else []
    algo = [("algorithm", 1), ("api", 2), ("threads", 3)] + ([("cpu", 4)] if any(key[4] for (key, _) in cells) else [])
    return algo + host if by == "host" else host + algo


def _row_keys(cells: _Cells, keys: list[tuple[str, int]]) -> list[tuple[_RowKey, list[Any]]]:
    order = [index for _, index in keys]
    unique = {key for (key, _) in cells}
    ranked = sorted(unique, key=lambda k: [_sortable(k[i]) for i in order])
    return [(k, [k[i] for i in order]) for k in ranked]


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
    """The throughput and public-key tables of stored runs, then the hosts that failed, with their reason.

    legend: runs_table first (default: when there are several runs). width: see render; a narrow terminal loses
    the small blocks first, then the api column.
    """
    runs = list(runs)
    rows = records_from_runs(runs)
    failed = failed_hosts(runs)
    if fmt == "json":
        return json.dumps([{k: r.get(k) for k in JSON_FIELDS} for r in rows + failed], indent=2)
    labels = host_labels(runs)
    if any(label != host for (_, host), label in labels.items()):  # the same host in two runs: keep them apart
        rows = [dict(r, host=labels[r["run_id"], r["host"]]) for r in rows]
    parts = []
    if legend if legend is not None else len(runs) > 1:
        headers, body = runs_table(runs)
        parts.append(render(headers, body, fmt, width, drop=RUNS_TABLE_DROP))
    headers, body = throughput_table(rows)
    if body:
        parts.append(render(headers, display_rows(body, fmt), fmt, width, drop=_throughput_drop(headers)))
    headers, body = pk_table(rows)
    if body:
        parts.append(render(headers, display_rows(body, fmt), fmt, width, drop=["api"]))
    if not rows and not failed:
        parts.append("(no measurements)")
    if failed:  # which run a host failed in, when there are several
        by_run = ["run"] if len(runs) > 1 else []
        parts.append(render(["host", *by_run, "status", "reason"],
                            [[r["host"], *([r["run_id"]] if by_run else []), r["status"], r["reason"]] for r in failed],
                            fmt, width))
    return "\n\n".join(parts)


def _throughput_drop(headers: Sequence[str]) -> list[str]:
    """The columns of a throughput_table a narrow terminal loses first: the block sizes but the largest, those
    other than the VPN and TLS sizes of model.LINE_BLOCKS first, smallest first; then the api."""
    sized = [(int(found[1]), header) for header in headers if (found := _BLOCK_COLUMN.match(header))]
    sized = sized[:-1] if sized else sized  # the largest block stays
    return [header for _, header in sorted(sized, key=lambda item: (item[0] in LINE_BLOCKS, item[0]))] + ["api"]


_BLOCK_COLUMN = re.compile(r"(\d+) B\b")  # a column of throughput_table: "16 B MB/s", "16384 B"
