"""CI verdicts: fail a pipeline on a significant regression beyond a threshold (render/junit.py says so in JUnit XML).

A **regression** is a cell whose median went down (for a kind whose figures are rates, higher is better: every kind
so far; a kind may say lower is better, orchestrator/kinds) by more than PCT percent with the benchstat verdict
`significant` (stats.compare: Mann-Whitney U, p < 0.05; a cell without
repeats on both sides has no verdict and never fails). `sslbench diff A B --fail-on-regression PCT` judges each row
of the diff; `sslbench trend HOST --fail-on-regression PCT` judges the newest firmware step of each cell and the
newest run against its firmware's history (a drift that includes the latest run, down by more than PCT).
Any regression: exit code EXIT_REGRESSION (3), beside 0 (fine), 1 (hosts failed), 2 (bad input), 130 (Ctrl-C).

A cell whose two sides `openssl speed` measured differently (orchestrator/methods.py: another loop from some
release on, another timer) is **method changed**: never a regression, whatever its delta; it is skipped with the
cause and boundary as the reason, and `summary` says how many were set aside and why. A drop under one method
still fails. A tunnel's method is its TunnelMethod (iperf3, MTUs, duration, socket buffer); its firmware (the
implementation's version, kernel WireGuard's kernel) is what is judged. A cell carrying a flag that says a figure
may be wrong (busy, throttled, hot, partial ...: DOUBTFUL) on either side is never a regression: skipped, with its
flags as the reason.

A `Case` is one JUnit test case per cell (classname = host, name = the cell; render/junit.py writes the XML),
failed when it is such a regression, skipped when it has no verdict (or its method changed). Without a threshold (no
--fail-on-regression) nothing is judged, so no case fails and the exit code is 0, as the XML says: each significant
drop is reported in its case's system-out ("significant drop ..., not judged"), and each suite's properties give the
threshold (`sslbench.fail_on_regression`: PCT, or "none" with `sslbench.significant_drops`, their number).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from orchestrator import stats
from orchestrator.analysis.cells import label
from orchestrator.analysis.diff import DiffRow
from orchestrator.analysis.trend import Trend
from orchestrator.kinds import higher_is_better
from orchestrator.model import ALL_FLAGS
from orchestrator.units import fmt_delta, fmt_p, fmt_rate

EXIT_REGRESSION = 3


@dataclass
class Case:
    """One JUnit test case: a cell of a host, and whether it regressed."""

    host: str
    name: str
    failure: str | None = None  # what regressed, when it did
    drop: str | None = None  # a significant drop that no threshold judged (no --fail-on-regression)
    skipped: str | None = None  # why there is no verdict
    detail: str = ""  # the figures, for system-out


def is_regression(delta_pct: float | None, significant: bool | None, pct: float, higher_is_better: bool = True) -> bool:
    """A significant change for the worse by more than pct %: down for a rate, up where lower is better (a
    kind's `higher_is_better`)."""
    if not significant or delta_pct is None:
        return False
    return delta_pct < -pct if higher_is_better else delta_pct > pct


# The flags that say a figure may be wrong (the hosts' evidence, the parser's): a change of a cell carrying one on
# either side may not be real, and is never called a regression.
DOUBTFUL = frozenset(ALL_FLAGS)


def doubtful(flags: Sequence[str]) -> list[str]:
    """The row's flags (`busy-new`, `throttled-old` ...) that make its change doubtful."""
    return [flag for flag in flags if flag.rsplit("-", 1)[0] in DOUBTFUL or flag in DOUBTFUL]


def _limit(pct: float, higher_is_better: bool) -> str:
    """'-5%' for a rate, '+5%' where lower is better."""
    return f"-{pct:g}%" if higher_is_better else f"+{pct:g}%"


def _said_doubtful(flags: Sequence[str]) -> str:
    return f"not judged: a figure that may be wrong ({' '.join(flags)})"


NOT_JUDGED = "not judged: no --fail-on-regression PCT"


def diff_cases(rows: Sequence[DiffRow], pct: float | None) -> list[Case]:
    """A case per row; with `pct` None a significant drop is reported (Case.drop), never failed."""
    cases = []
    for row in rows:
        name = label(row.key)
        detail = (f"old {fmt_rate(row.old, row.unit) if row.old is not None else '-'}, "
                  f"new {fmt_rate(row.new, row.unit) if row.new is not None else '-'}, "
                  f"delta {fmt_delta(row.delta_pct)} {fmt_p(row.p_value)} n={row.old_n}+{row.new_n}"
                  + (f" flags: {' '.join(row.flags)}" if row.flags else ""))
        case = Case(row.host, name, detail=detail.strip())
        better, flagged = higher_is_better(row.key.kind), doubtful(row.flags)
        if row.method_change is not None:
            case.skipped = f"{METHOD_CHANGED}: {row.method_change}"
        elif flagged and is_regression(row.delta_pct, row.significant, 0.0, better):
            case.skipped = _said_doubtful(flagged)
        elif pct is None and is_regression(row.delta_pct, row.significant, 0.0, better):
            case.drop = f"significant drop {fmt_delta(row.delta_pct)} ({fmt_p(row.p_value)}), {NOT_JUDGED}"
        elif pct is not None and is_regression(row.delta_pct, row.significant, pct, better):
            case.failure = (f"{name}: {fmt_delta(row.delta_pct)} ({fmt_p(row.p_value)}), "
                            f"worse than {_limit(pct, better)}")
        elif row.old is None or row.new is None:
            case.skipped = "measured on one side only"
        elif row.significant is None:
            case.skipped = "one sample on a side: no verdict (sslbench run --repeat 4 or more)"
        cases.append(case)
    return cases


def trend_cases(result: Trend, pct: float | None) -> list[Case]:
    """The newest firmware step of every cell, and the newest run against its firmware's history; with `pct` None
    a significant drop is reported (Case.drop), never failed."""
    cases = []
    segments = result.segments
    for cell in result.cells:
        name = label(cell.key)
        step = cell.steps[-1] if cell.steps else None
        if step is None:
            reason = "one firmware only" if len(segments) < 2 else "not measured under both of the newest firmwares"
            cases.append(Case(result.host, name, skipped=reason))
            continue
        detail = f"{step.old}→{step.new}: {fmt_delta(step.delta_pct)} {fmt_p(step.p_value)}".strip()
        case = Case(result.host, name, detail=detail)
        better = higher_is_better(cell.key.kind)
        flagged = doubtful([flag for group in cell.groups[-2:] if group for flag in group.flags])
        if step.method_change is not None:
            case.skipped = f"{METHOD_CHANGED}: {step.method_change}"
        elif flagged and is_regression(step.delta_pct, step.significant, 0.0, better):
            case.skipped = _said_doubtful(sorted(set(flagged)))
        elif pct is None and is_regression(step.delta_pct, step.significant, 0.0, better):
            case.drop = (f"significant drop {fmt_delta(step.delta_pct)} at {segments[-2].short} → "
                         f"{segments[-1].short} ({fmt_p(step.p_value)}), {NOT_JUDGED}")
        elif pct is not None and is_regression(step.delta_pct, step.significant, pct, better):
            case.failure = (f"{name}: {fmt_delta(step.delta_pct)} at {segments[-2].short} → {segments[-1].short} "
                            f"({fmt_p(step.p_value)}), worse than {_limit(pct, better)}")
        elif step.significant is None:
            case.skipped = "one sample on a side: no verdict (sslbench run --repeat 4 or more)"
        cases.append(case)
    latest = segments[-1].runs[-1]
    case = Case(result.host, "latest run within its firmware's history", detail=f"run {latest.run_id}")
    for drift in result.drifts:
        if drift.last_run == latest.run_id and drift.delta_pct < -(pct or 0.0):
            against = "the host's stable history" if drift.stable else "its firmware's history"
            if pct is None:
                case.drop = (f"run {latest.run_id}: figures {fmt_delta(drift.delta_pct)} (robust z "
                             f"{drift.score:+.1f}) against {against}, {NOT_JUDGED}")
                continue
            case.failure = (f"run {latest.run_id}: figures {fmt_delta(drift.delta_pct)} (robust z {drift.score:+.1f}) "
                            f"against {against}, worse than -{pct:g}%")
    cases.append(case)
    return cases


def failures(cases: Sequence[Case]) -> list[Case]:
    return [case for case in cases if case.failure]


METHOD_CHANGED = "measuring method changed"  # the start of a skipped case's reason


def summary(cases: Sequence[Case], pct: float) -> str:
    """One line for the end of the output: how many cells regressed beyond PCT, and how many were set aside
    because their sides were measured differently (and why)."""
    failed = failures(cases)
    if not failed:
        said = f"no significant regression worse than -{pct:g}% (alpha {stats.ALPHA:g})"
    else:
        said = f"{len(failed)} significant regression(s) worse than -{pct:g}%: exit code {EXIT_REGRESSION}"
    aside: dict[str, int] = {}
    for case in cases:
        if case.skipped and case.skipped.startswith(METHOD_CHANGED):
            reason = case.skipped[len(METHOD_CHANGED) + 2:]
            aside[reason] = aside.get(reason, 0) + 1
    for reason, count in aside.items():
        said += f"\n{count} cell(s) set aside, not judged: {METHOD_CHANGED} ({reason})"
    return said
