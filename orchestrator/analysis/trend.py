"""A host's stored runs over months: firmware steps and drifts within one firmware, cell by cell.

Every run of the host, in time order, is cut into **segments**: consecutive runs under one firmware identity
(identity.firmware_label; a return to an older firmware is a segment of its own). Per cell (cells.Key):

- the **median** of each segment, over the samples of its runs pooled (as `diff --by firmware` pools them);
- the **step** between consecutive segments: stats.compare, the Mann-Whitney U test and benchstat verdict that
  `diff` uses (p < 0.05, `~` otherwise). A step is **named** only when it is significant *and* the medians differ
  by at least STEP_MIN_PCT: a store of months holds hundreds of cells × firmware changes, and at alpha 0.05 one
  test in twenty is "significant" by chance, while a chance difference of the medians of whole firmware
  segments stays far below a few percent (the same idea as airspeed velocity's `--factor`). Below it the step
  is shown as `~` and the JSON keeps its delta, p and `significant`.
- the **largest named step**, one sentence: "aes-256-gcm 1024 B evp t1: -18.0% at 23.05.3 → 23.05.4 (p=0.003)".

**Drifts** (same firmware, figures moving: thermal paste drying, a failing power supply, a kernel module loaded):
each run is judged against the earlier runs of its segment (its firmware's own history). Per cell, the run's
median gets a robust z-score against that history: z = (value - median) / scale with scale = 1.4826 × MAD (the
MAD scaled to a standard deviation), at least MIN_SCALE_PCT of the median (openssl's rounded figures can make the
MAD 0). The run's score is the median z over its cells (a board-wide cause moves every cell; one cell's noise
does not move the median). |score| > Z_THRESHOLD (3.5, Iglewicz and Hoaglin's outlier rule for modified
z-scores) with at least MIN_HISTORY earlier runs marks the run as outside its history; consecutive such runs
in one direction are one drift. Runs outside their history stay out of later runs' history and out of the
step tests (a step is about firmware, a drift about the board). Runs or cells carrying validity flags (busy,
throttled ... see docs/trust.md) are neither judged nor part of a history: their flags already explain them.

**The newest runs of a young firmware.** A run whose own firmware has fewer than MIN_HISTORY earlier runs is
judged against the host's **stable history** instead: the runs of the consecutive earlier firmware segments back
to the nearest boundary, followed by the run's own earlier runs. A boundary is a named step of any cell, or a
measuring-method change (below), between two of those segments or between the last of them and the run's own:
the figures did not move with the firmware there, so the board's history carries over. (A firmware with enough
runs of its own is judged against them alone, as **Drifts** says; the first firmware of a host has no stable history
before it, so its first MIN_HISTORY runs are never judged.) So a board whose last two of five nightly runs under a
new firmware are 12 % slower is flagged, and `trend --fail-on-regression` fails on it.

**Measuring methods.** Each cell carries the method its kind measured it with (orchestrator/kinds): for `openssl
speed`, orchestrator/methods.py (what apps/speed.c times changed in some releases, e.g. AEAD per message from 3.0.16
on); for a tunnel, its TunnelMethod (iperf3, MTUs, duration, socket buffer). A step between two segments measured
differently is **method changed**: never named, never a regression (`significant` None), its sentence names the
cause and the boundary. A tunnel's firmware (its implementation's version, kernel WireGuard's kernel) is what a
step judges, like the firmware of any cell.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from orchestrator import kinds, stats, store
from orchestrator.analysis import identity, provenance
from orchestrator.analysis.cells import Cell, Key, host_cells, label, requested_seconds, run_aead, run_timer, sort_key
from orchestrator.errors import UserError
from orchestrator.evidence.validity import busy_below
from orchestrator.model import EVIDENCE_FLAGS, HostResult, Run
from orchestrator.units import count, fmt_delta, fmt_p

STEP_MIN_PCT = 3.0  # a significant step smaller than this is shown as ~ (see the module docstring)
Z_THRESHOLD = 3.5  # robust z-score beyond which a run is outside its firmware's history
MIN_HISTORY = 5  # earlier runs of the same firmware a run is judged against, at least
MIN_SCALE_PCT = 1.0  # the robust scale is at least this share of the history's median
MAD_TO_SIGMA = 1.4826  # MAD x this estimates the standard deviation of normal noise


@dataclass
class RunPoint:
    """One run of the host: its cells and each cell's median in that run."""

    run_id: str
    created: str
    firmware: str
    cells: dict[Key, Cell]
    values: dict[Key, float]
    host_flags: list[str]
    drift: bool = False  # outside its firmware's history (set by the drift pass)
    undated: bool = False  # an import without --date: placed at the time of the import (provenance.undated)
    interrupted: str | None = None  # the run stopped before its end: why, and where it caught this host


@dataclass
class Segment:
    """Consecutive runs under one firmware: their samples pooled per cell."""

    letter: str
    label: str
    short: str
    runs: list[RunPoint]
    cells: dict[Key, Cell] = field(default_factory=dict)  # pooled over the runs not marked as drift

    @property
    def first(self) -> str:
        return self.runs[0].created

    @property
    def last(self) -> str:
        return self.runs[-1].created


@dataclass
class GroupCell:
    median: float | None
    n: int
    spread_pct: float | None
    flags: list[str]


@dataclass
class Step:
    """The change of one cell from a segment to the next."""

    old: str  # segment letters
    new: str
    delta_pct: float | None
    p_value: float | None
    significant: bool | None
    named: bool  # significant and at least STEP_MIN_PCT
    method_change: str | None = None  # the sides were measured differently: why (methods.compare), never named


@dataclass
class CellTrend:
    key: Key
    unit: str
    groups: list[GroupCell | None]  # per segment; None where the cell was not measured
    steps: list[Step | None]  # between segment i and i+1; None where a side has no figure
    largest: Step | None  # the largest named step

    @property
    def flags(self) -> list[str]:
        return sorted({flag for group in self.groups if group for flag in group.flags})


@dataclass
class Drift:
    """Consecutive runs of one firmware outside that firmware's history, in one direction."""

    segment: str  # letter
    first_run: str
    first: str  # created
    last_run: str
    last: str
    runs: int
    history: int  # earlier runs the first one was judged against
    score: float  # median z of the first run
    delta_pct: float  # median change of the cells of the first run against their history medians
    cells: list[Key]  # cells of the first run beyond Z_THRESHOLD themselves
    stable: int = 0  # of the history, runs of earlier firmware (the host's stable history, module docstring)


@dataclass
class Trend:
    host: str
    segments: list[Segment]
    cells: list[CellTrend]
    drifts: list[Drift]
    duplicates: int = 0  # imported measurements counted once (provenance.distinct)

    @property
    def undated(self) -> int:
        return sum(1 for s in self.segments for p in s.runs if p.undated)

    def order_notes(self) -> list[str]:
        """What the reader must know of the order and the samples: import time, duplicates left out."""
        notes = []
        if self.undated and self.runs > 1:
            notes.append(provenance.import_time_note(self.undated, self.runs))
        if self.duplicates:
            notes.append(provenance.duplicates_note(self.duplicates))
        notes += [f"run {p.run_id} stopped before its end ({p.interrupted}): only the cells it finished are in it"
                  for s in self.segments for p in s.runs if p.interrupted]
        return notes

    @property
    def runs(self) -> int:
        return sum(len(s.runs) for s in self.segments)


# ---- building ----------------------------------------------------------------------------------------------

def host_points(runs: Iterable[Run], host: str, dropped: list[int] | None = None) -> list[RunPoint]:
    """The host's runs with measurements, oldest first (by `created`, then the time in the run id); an imported
    measurement stored more than once counted at its first (provenance.distinct: how many in `dropped`)."""
    pairs = [(run, result) for run in sorted(runs, key=lambda r: (r.created, store.run_order(r.run_id)))
             for result in run.hosts if result.host == host and result.measurements]
    kept, count = provenance.distinct(pairs)
    if dropped is not None:
        dropped.append(count)
    return [_point(run, result) for run, result in kept]


def _point(run: Run, result: HostResult) -> RunPoint:
    cells = host_cells(result, busy_below(requested_seconds(run)), timer=run_timer(run), aead=run_aead(run))
    values = {key: stats.median(cell.samples) for key, cell in cells.items() if cell.samples}
    stopped = None
    if run.interrupted:
        stopped = run.interrupted + (f" during {result.interrupted}" if result.interrupted else "")
    return RunPoint(run.run_id, run.created, identity.firmware_label(result), cells, values, list(result.flags),
                    undated=provenance.undated(run), interrupted=stopped)


def segments_of(points: Sequence[RunPoint]) -> list[Segment]:
    segments: list[Segment] = []
    for point in points:
        if segments and segments[-1].label == point.firmware:
            segments[-1].runs.append(point)
        else:
            segments.append(Segment(_letter(len(segments)), point.firmware, "", [point]))
    shorts = short_labels([s.label for s in segments])
    for segment in segments:
        segment.short = shorts[segment.label]
    return segments


def _letter(index: int) -> str:
    """A, B, ... Z, AA, AB ..."""
    text = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        text = chr(ord("A") + rest) + text
    return text


def short_labels(labels: Sequence[str]) -> dict[str, str]:
    """Each firmware label's first part ('OpenWrt 23.05.3 r23809-…' of '… · Linux … · OpenSSL …') where that
    part tells the host's labels apart, else the whole label."""
    distinct = list(dict.fromkeys(labels))
    heads = {lab: lab.split(" · ")[0] for lab in distinct}
    if len(set(heads.values())) == len(distinct):
        return heads
    return {lab: lab for lab in distinct}


def trend(runs: Iterable[Run], host: str, keep: Callable[[Key], bool] | None = None) -> Trend:
    """The host's trend; `keep` selects the cells (the command's --algorithm/--api/--threads/--size)."""
    dropped: list[int] = []
    points = host_points(runs, host, dropped)
    if not points:
        raise UserError(f"no stored measurements of host '{host}'; check the name with `sslbench history {host}`")
    if keep is not None:
        for point in points:
            point.cells = {k: c for k, c in point.cells.items() if keep(k)}
            point.values = {k: v for k, v in point.values.items() if k in point.cells}
        if not any(point.cells for point in points):
            raise UserError(f"no cell of host '{host}' matches the filters")
    segments = segments_of(points)
    drifts = [drift for segment in segments for drift in _drifts(segment)]
    cells = _pool_all(segments)
    # Second pass: the runs a young firmware could not judge, against the host's stable history (docstring).
    if len(segments) > 1:
        for i in range(1, len(segments)):
            prior = _stable_history(segments, cells, i)
            if prior:
                for point in segments[i].runs:
                    point.drift = False
                drifts = [d for d in drifts if d.segment != segments[i].letter]
                drifts.extend(_drifts(segments[i], prior))
        drifts.sort(key=lambda d: ([s.letter for s in segments].index(d.segment), d.first))
        cells = _pool_all(segments)
    return Trend(host, segments, cells, drifts, duplicates=sum(dropped))


def _pool_all(segments: Sequence[Segment]) -> list[CellTrend]:
    """Pool each segment's runs (but drifts and flagged runs) per cell; the cells' trends."""
    for segment in segments:
        segment.cells = {}
        pooled_runs = [p for p in segment.runs if not p.drift and not flagged(p)] or segment.runs
        for point in pooled_runs:
            for key, cell in point.cells.items():
                pooled = segment.cells.get(key)
                if pooled is None:
                    pooled = segment.cells[key] = Cell(unit=cell.unit)
                pooled.samples.extend(cell.samples)
                pooled.flags.update(cell.flags)
                for method, version in cell.methods.items():
                    pooled.methods.setdefault(method, version)
    keys = sorted({key for segment in segments for key in segment.cells}, key=sort_key)
    return [_cell_trend(key, segments) for key in keys]


def _stable_history(segments: Sequence[Segment], cells: Sequence[CellTrend], index: int) -> list[RunPoint]:
    """The runs of the earlier segments back to the nearest boundary (a named step or a method change of any
    cell), oldest first; drifts and flagged runs left out."""
    start = index
    while start > 0 and not any(_boundary(cell.steps[start - 1]) for cell in cells):
        start -= 1
    return [p for segment in segments[start:index] for p in segment.runs if not p.drift and not flagged(p)]


def _boundary(step: Step | None) -> bool:
    return step is not None and (step.named or step.method_change is not None)


def _cell_trend(key: Key, segments: Sequence[Segment]) -> CellTrend:
    groups: list[GroupCell | None] = []
    unit = "B/s"
    for segment in segments:
        cell = segment.cells.get(key)
        if cell is None:
            groups.append(None)
            continue
        unit = cell.unit
        summary = stats.summarize(cell.samples) if cell.samples else None
        groups.append(GroupCell(summary.median if summary else None, summary.n if summary else 0,
                                summary.spread_pct if summary and summary.n > 1 else None, sorted(cell.flags)))
    steps: list[Step | None] = []
    for old, new in zip(segments, segments[1:]):
        a, b = old.cells.get(key), new.cells.get(key)
        if a is None or b is None or not a.samples or not b.samples:
            steps.append(None)
            continue
        comparison = stats.compare(a.samples, b.samples)
        delta = comparison.delta_pct
        change = kinds.get(key.kind).compare(a.methods, b.methods) if a.methods != b.methods else None
        if change is not None:  # another ruler: no verdict (methods.py; a tunnel's method, kinds/tunnel.py)
            steps.append(Step(old.letter, new.letter, delta, comparison.p_value, None, False, change.sentence))
            continue
        named = bool(comparison.significant) and delta is not None and abs(delta) >= STEP_MIN_PCT
        steps.append(Step(old.letter, new.letter, delta, comparison.p_value, comparison.significant, named))
    named_steps = [s for s in steps if s is not None and s.named]
    largest = max(named_steps, key=lambda s: abs(s.delta_pct or 0.0)) if named_steps else None
    return CellTrend(key, unit, groups, steps, largest)


def _drifts(segment: Segment, prior: Sequence[RunPoint] = ()) -> list[Drift]:
    """Mark the segment's runs outside their history (RunPoint.drift) and return them as drifts. `prior`: the
    host's stable history before the segment, for the runs with fewer than MIN_HISTORY of their own."""
    baseline: list[RunPoint] = []
    found: list[tuple[RunPoint, int, float, float, list[Key]]] = []  # run, history, score, delta, cells beyond
    stable: dict[int, int] = {}
    for point in segment.runs:
        if flagged(point):
            continue  # a flagged run: explained by its flags, and no history for the others
        against = baseline if len(baseline) >= MIN_HISTORY else [*prior, *baseline]
        judged = _judge(point, against) if len(against) >= MIN_HISTORY else None
        if judged is not None and abs(judged[0]) > Z_THRESHOLD:
            point.drift = True
            found.append((point, len(against), judged[0], judged[1], judged[2]))
            stable[id(point)] = len(against) - len(baseline)
            continue
        baseline.append(point)
    drifts: list[Drift] = []
    index = {id(p): i for i, p in enumerate(segment.runs)}
    for point, history, score, delta, cells in found:
        last = drifts[-1] if drifts else None
        if (last is not None and (last.score > 0) == (score > 0)
                and _consecutive(segment, index, last.last_run, point)):
            last.last_run, last.last, last.runs = point.run_id, point.created, last.runs + 1
            continue
        drifts.append(Drift(segment.letter, point.run_id, point.created, point.run_id, point.created, 1, history,
                            score, delta, cells, stable.get(id(point), 0)))
    return drifts


_HOST_FLAGS = frozenset(EVIDENCE_FLAGS)


def flagged(point: RunPoint) -> bool:
    """A run whose host carries a validity flag: neither judged, nor history, nor pooled (while others are)."""
    return any(flag in _HOST_FLAGS for flag in point.host_flags)


def _consecutive(segment: Segment, index: dict[int, int], last_run: str, point: RunPoint) -> bool:
    """No judged run of the segment between the drift's last run and this one."""
    runs = segment.runs
    start = next(i for i, p in enumerate(runs) if p.run_id == last_run)
    between = runs[start + 1:index[id(point)]]
    return all(p.drift or flagged(p) for p in between)


def _judge(point: RunPoint, baseline: Sequence[RunPoint]) -> tuple[float, float, list[Key]] | None:
    """(median z over the run's cells, median change in %, cells beyond Z_THRESHOLD), None without history."""
    scores: list[float] = []
    deltas: list[float] = []
    beyond: list[Key] = []
    for key, value in point.values.items():
        if point.cells[key].flags:
            continue
        history = [p.values[key] for p in baseline if key in p.values and not p.cells[key].flags]
        if len(history) < MIN_HISTORY:
            continue
        middle = stats.median(history)
        mad = stats.median([abs(v - middle) for v in history])
        scale = max(MAD_TO_SIGMA * mad, abs(middle) * MIN_SCALE_PCT / 100)
        if scale <= 0:
            continue
        z = (value - middle) / scale
        scores.append(z)
        deltas.append(stats.delta_pct(middle, value) or 0.0)
        if abs(z) > Z_THRESHOLD:
            beyond.append(key)
    if not scores:
        return None
    return stats.median(scores), stats.median(deltas), sorted(beyond, key=sort_key)


def cell_filter(algorithms: Sequence[str] = (), apis: Sequence[str] = (), threads: Sequence[int] = (),
                sizes: Sequence[int] = ()) -> Callable[[Key], bool] | None:
    """The cells a command's filters select (empty: any); api 'none' selects cells without one."""
    if not (algorithms or apis or threads or sizes):
        return None
    wanted_apis = {None if a == "none" else a for a in apis}

    def keep(key: Key) -> bool:
        return ((not algorithms or key.algorithm in algorithms) and (not apis or key.api in wanted_apis)
                and (not threads or key.threads in threads) and (not sizes or key.block_size in sizes))

    return keep


# ---- what the trend says ---------------------------------------------------------------------------------

def step_sentence(result: Trend, cell: CellTrend, step: Step) -> str:
    """'aes-256-gcm 1024 B evp t1: -18.0% at 23.05.3 → 23.05.4 (p=0.003)'."""
    names = {s.letter: s.short for s in result.segments}
    p = f" ({fmt_p(step.p_value)})" if step.p_value is not None else ""
    return f"{label(cell.key)}: {fmt_delta(step.delta_pct)} at {names[step.old]} → {names[step.new]}{p}"


def drift_sentence(result: Trend, drift: Drift) -> str:
    names = {s.letter: s.short for s in result.segments}
    until = f", {drift.runs} runs until {drift.last}" if drift.runs > 1 else ", 1 run"
    if drift.stable:
        own = drift.history - drift.stable
        against = (f"against the host's stable history: {count(drift.stable, 'run')} of earlier firmware with no step "
                   f"before {names[drift.segment]}, and {own} of its own")
    else:
        against = f"against {drift.history} earlier runs of {names[drift.segment]}"
    return (f"{drift.first} run {drift.first_run}: figures {fmt_delta(drift.delta_pct)} (robust z {drift.score:+.1f}) "
            f"{against}{until}")


def legend(result: Trend) -> list[str]:
    lines = []
    for s in result.segments:
        left = [p for p in s.runs if p.drift or flagged(p)]
        flags = sorted({f for p in left for f in p.host_flags if f in _HOST_FLAGS})
        out = (f"; {len(left)} left out of the medians and steps"
               + (f" (outside the history, or {' '.join(flags)})" if flags else " (outside the history)")) if left else ""
        lines.append(f"{s.letter} = {s.label} ({count(len(s.runs), 'run')}, {s.first} … {s.last}{out})")
    return lines
