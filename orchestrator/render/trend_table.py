"""A host's trend laid out for a reader: the table of firmware segments per cell, the legend, the largest steps,
method changes and drifts under it; CSV and JSON keep the raw numbers."""
from __future__ import annotations

from typing import Any

from orchestrator import stats
from orchestrator.analysis.cells import Key, label
from orchestrator.analysis.trend import (MIN_HISTORY, STEP_MIN_PCT, Z_THRESHOLD, CellTrend, Step, Trend, drift_sentence, legend,
                                         step_sentence)
from orchestrator.model import SPEED
from orchestrator.render import formats
from orchestrator.render.model import Block, Document, Lines, Table
from orchestrator.units import count, fmt_delta, fmt_rate

FORMATS = formats.TABLE_FORMATS


def table(result: Trend) -> tuple[list[str], list[list[Any]]]:
    """One row per cell: each segment's median, the steps between them, the largest named step, the flags."""
    headers = ["cell"]
    for i, segment in enumerate(result.segments):
        if i:
            headers.append(f"{result.segments[i - 1].letter}→{segment.letter}")
        headers.append(segment.letter)
    headers += ["largest step", "flags"]
    rows = []
    for cell in result.cells:
        row: list[Any] = [label(cell.key)]
        for i, group in enumerate(cell.groups):
            if i:
                row.append(_step_text(cell.steps[i - 1]))
            row.append(fmt_rate(group.median, cell.unit) if group and group.median is not None else "-")
        largest = cell.largest
        row.append(f"{fmt_delta(largest.delta_pct)} {largest.old}→{largest.new}" if largest else "")
        row.append(" ".join(_group_flags(result, cell)))
        rows.append(row)
    return headers, rows


def _step_text(step: Step | None) -> str:
    if step is None or step.delta_pct is None:
        return ""
    if step.method_change is not None:
        return "method"
    return fmt_delta(step.delta_pct) if step.named else "~"


def method_changes(result: Trend) -> list[str]:
    """One line per measuring-method boundary between segments: the cells it concerns and why."""
    names = {s.letter: s.short for s in result.segments}
    said: dict[tuple[str, str, str], int] = {}
    for cell in result.cells:
        for step in cell.steps:
            if step is not None and step.method_change is not None:
                key = (step.old, step.new, step.method_change)
                said[key] = said.get(key, 0) + 1
    return [f"{count} cell(s) at {names[old]} → {names[new]}: {sentence}"
            for (old, new, sentence), count in said.items()]


def _group_flags(result: Trend, cell: CellTrend) -> list[str]:
    seen: dict[str, list[str]] = {}
    for segment, group in zip(result.segments, cell.groups):
        for flag in group.flags if group else ():
            seen.setdefault(flag, []).append(segment.letter)
    return [f"{flag}({','.join(letters)})" for flag, letters in sorted(seen.items())]


def to_json(result: Trend) -> dict[str, Any]:
    return {
        "host": result.host,
        "runs": result.runs,
        "undated_runs": result.undated,
        "duplicate_measurements": result.duplicates,
        "notes": result.order_notes(),
        "thresholds": {"alpha": stats.ALPHA, "step_min_pct": STEP_MIN_PCT, "z": Z_THRESHOLD,
                       "min_history": MIN_HISTORY},
        "firmware": [{"segment": s.letter, "label": s.label, "short": s.short, "runs": len(s.runs),
                      "first": s.first, "last": s.last, "run_ids": [p.run_id for p in s.runs]}
                     for s in result.segments],
        "cells": [{
            "algorithm": c.key.algorithm, "api": c.key.api, "operation": c.key.operation, "threads": c.key.threads,
            "block_size": c.key.block_size, "cpu": c.key.cpu, **_kind_fields(c.key), "unit": c.unit,
            "medians": [None if g is None else {"segment": s.letter, "median": g.median, "n": g.n,
                                                "spread_pct": _round(g.spread_pct), "flags": g.flags}
                        for s, g in zip(result.segments, c.groups)],
            "steps": [None if s is None else _step_json(s) for s in c.steps],
            "largest_step": None if c.largest is None else dict(_step_json(c.largest),
                                                                sentence=step_sentence(result, c, c.largest)),
        } for c in result.cells],
        "drifts": [{"segment": d.segment, "first_run": d.first_run, "first": d.first, "last_run": d.last_run,
                    "last": d.last, "runs": d.runs, "history": d.history, "stable_history": d.stable, "z": round(d.score, 2),
                    "delta_pct": _round(d.delta_pct), "cells": [label(k) for k in d.cells],
                    "sentence": drift_sentence(result, d)} for d in result.drifts],
    }


def _kind_fields(key: Key) -> dict[str, object]:
    """A figure of another kind than openssl speed says its kind and implementation (speed's records as ever)."""
    return {} if key.kind == SPEED else {"kind": key.kind, "implementation": key.implementation}


def _step_json(step: Step) -> dict[str, Any]:
    return {"from": step.old, "to": step.new, "delta_pct": _round(step.delta_pct), "p_value": step.p_value,
            "significant": step.significant, "step": step.named, "method_change": step.method_change}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


CSV_HEADERS = ["host", "algorithm", "api", "operation", "threads", "block_size", "cpu", "unit", "segment", "firmware",
               "runs", "first", "last", "n", "median", "delta_pct", "p_value", "significant", "step", "flags"]


KIND_HEADERS = ["kind", "implementation"]  # after "cpu", where the trend has figures of another kind than speed


def csv_headers(result: Trend) -> list[str]:
    if all(cell.key.kind == SPEED for cell in result.cells):
        return CSV_HEADERS
    at = CSV_HEADERS.index("cpu") + 1
    return CSV_HEADERS[:at] + KIND_HEADERS + CSV_HEADERS[at:]


def csv_rows(result: Trend) -> list[list[Any]]:
    """One row per cell and segment; the step columns say how it changed from the segment before."""
    rows = []
    kinds = len(csv_headers(result)) > len(CSV_HEADERS)
    for cell in result.cells:
        key = cell.key
        kind = [key.kind, key.implementation or ""] if kinds else []
        for i, (segment, group) in enumerate(zip(result.segments, cell.groups)):
            if group is None:
                continue
            step = cell.steps[i - 1] if i else None
            rows.append([result.host, key.algorithm, key.api or "", key.operation or "", key.threads,
                         "" if key.block_size is None else key.block_size, key.cpu or "", *kind, cell.unit,
                         segment.letter,
                         segment.label, len(segment.runs), segment.first, segment.last, group.n,
                         "" if group.median is None else group.median,
                         "" if step is None or step.delta_pct is None else round(step.delta_pct, 3),
                         "" if step is None or step.p_value is None else step.p_value,
                         "" if step is None or step.significant is None else step.significant,
                         "" if step is None else step.named, " ".join(group.flags)])
    return rows


def document(result: Trend) -> Document:
    """The segment table per cell under the host's legend, the largest steps, method changes and drifts after it;
    to_json as data, csv_rows as CSV."""
    headers, rows = table(result)
    blocks: list[Block] = [
        Lines([f"{result.host}: {count(result.runs, 'run')} under {count(len(result.segments), 'firmware version')}"]),
        Lines(legend(result), bullets=True), Lines(result.order_notes(), prefix="note: "), Table(headers, rows)]
    named = sorted((c for c in result.cells if c.largest), key=lambda c: -abs(c.largest.delta_pct or 0.0))  # type: ignore[union-attr]
    if named:
        blocks.append(Lines([step_sentence(result, c, c.largest) for c in named if c.largest], bullets=True,
                            title="largest step per cell (Mann-Whitney U p < 0.05 and at least "
                                  f"{STEP_MIN_PCT:g}% between firmware medians; ~ otherwise):"))
    else:
        blocks.append(Lines([], title=f"no step between firmware versions (Mann-Whitney U p < 0.05 and at least "
                                      f"{STEP_MIN_PCT:g}%)"))
    changed = method_changes(result)
    if changed:
        blocks.append(Lines(changed, bullets=True, title="measuring method changed (`method`: not a regression or an "
                                                         "improvement, never judged):"))
    if result.drifts:
        blocks.append(Lines([drift_sentence(result, d) for d in result.drifts], bullets=True,
                            title="runs outside their firmware's history (median robust z over the cells beyond "
                                  f"±{Z_THRESHOLD:g}):"))
    return Document(blocks, data=to_json(result), flat=Table(csv_headers(result), csv_rows(result)))


def render(result: Trend, fmt: str = "table") -> str:
    return formats.write(document(result), fmt)
