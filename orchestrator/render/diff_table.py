"""A diff laid out for a reader (benchstat's table: `~` when not significant, `method` when the ruler changed) and the
notes under it; CSV and JSON keep the raw numbers."""
from __future__ import annotations

from typing import Any, Sequence

from orchestrator import stats
from orchestrator.analysis.cells import key_cells
from orchestrator.analysis.diff import DiffRow
from orchestrator.model import SPEED
from orchestrator.render import formats
from orchestrator.render.model import Document, Later, Table
from orchestrator.units import count, fmt_value

HEADERS = ["host", "algorithm", "api", "threads", "block", "old", "new", "delta", "p", "flags"]


def _delta_cell(row: DiffRow) -> str:
    if row.delta_pct is None:
        return "-"
    if row.method_change is not None:
        return "method"  # not a change of the host: the ruler changed (notes say which)
    if row.significant is False:
        return "~"
    return f"{row.delta_pct:+.1f}%"


def _p_cell(row: DiffRow) -> str:
    if row.old is None or row.new is None:
        return ""
    counts = f"n={row.old_n}+{row.new_n}"
    if row.p_value is None:
        return f"{counts} (no repeats)"
    return f"p={row.p_value:.3f} {counts}"


def table_rows(rows: Sequence[DiffRow]) -> list[list[Any]]:
    out = []
    for row in rows:
        algorithm, api, threads, block = key_cells(row.key)  # as its kind lays a key out (a tunnel: its implementation)
        out.append([
            row.host, algorithm, api, threads, "" if block is None else block,
            fmt_value(row.old, row.unit, row.old_spread_pct if row.old_n > 1 else None),
            fmt_value(row.new, row.unit, row.new_spread_pct if row.new_n > 1 else None),
            _delta_cell(row), _p_cell(row), " ".join(row.flags),
        ])
    return out


def notes(rows: Sequence[DiffRow]) -> list[str]:
    """benchstat-style warnings under the table: why cells have no verdict or a weak one."""
    compared = [r for r in rows if r.old_n and r.new_n]
    single = sum(1 for r in compared if r.p_value is None)
    few = sum(1 for r in compared if r.p_value is not None and min(r.old_n, r.new_n) < stats.MIN_SAMPLES_TO_DETECT)
    out = []
    if single:
        has = "has" if single == 1 else "have"
        out.append(f"{single} of {count(len(compared), 'cell')} {has} one sample on a side: no verdict "
                   f"(sslbench run --repeat {stats.MIN_SAMPLES_TO_DETECT} or more)")
    if few:
        has = "has" if few == 1 else "have"
        out.append(f"{count(few, 'cell')} {has} fewer than {stats.MIN_SAMPLES_TO_DETECT} samples on a side: "
                   f"need >= {stats.MIN_SAMPLES_TO_DETECT} to detect a change at alpha {stats.ALPHA:g}")
    out.extend(method_notes(rows))
    return out


def method_notes(rows: Sequence[DiffRow]) -> list[str]:
    """One note per measuring-method boundary: how many cells it sets aside, the cause, what still compares."""
    said: dict[str, list[DiffRow]] = {}
    for row in rows:
        if row.method_change is not None:
            said.setdefault(row.method_change, []).append(row)
    out = []
    for sentence, changed in said.items():
        comparable = changed[0].comparable or ""
        out.append(f"{len(changed)} cell(s) marked `method`: measuring method changed, not a regression or an "
                   f"improvement: {sentence}. {comparable[:1].upper()}{comparable[1:]}")
    return out


def document(rows: Sequence[DiffRow]) -> Document:
    """The benchstat-like table (`~` when not significant) for a reader; every row's raw numbers as data (JSON, one
    record a line) and as CSV."""
    records = Later(lambda: [row.to_record() for row in rows])
    headers = list(rows[0].to_record()) if rows else list(DiffRow.__dataclass_fields__)
    if any(row.key.kind != SPEED for row in rows) and "kind" not in headers:  # a figure of another kind says it
        at = headers.index("cpu") + 1
        headers[at:at] = ["kind", "implementation"]
    values = Later(lambda: [[_flat(r.get(h)) for h in headers] for r in records])
    return Document([Table(HEADERS, Later(lambda: table_rows(rows)))], data=records, data_lines=True,
                    flat=Table(headers, values))


def _flat(value: Any) -> Any:
    return " ".join(value) if isinstance(value, list) else ("" if value is None else value)


def render(rows: Sequence[DiffRow], fmt: str = "table") -> str:
    return formats.write(document(rows), fmt)
