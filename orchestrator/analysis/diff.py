"""Old vs new, cell by cell: median, spread, delta % and the benchstat verdict (see stats.py for the rules).

Each side is a host's cells (orchestrator.analysis.cells: the key, the samples, the carried validity flags), from one run or
pooled over the runs of one firmware; a row per host × cells.Key on either side. Cells are flagged when the host
was short of CPU time (busy, throttled, hot ... from orchestrator.evidence.validity, or a progress line well under the
run's `-seconds`) or the cell was unsupported on a side.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from orchestrator import kinds, stats, store
from orchestrator.analysis import identity, insights, provenance
from orchestrator.analysis.cells import Cell
from orchestrator.analysis.cells import Key
from orchestrator.analysis.cells import best_core
from orchestrator.analysis.cells import host_cells
from orchestrator.analysis.cells import requested_seconds
from orchestrator.analysis.cells import run_aead
from orchestrator.analysis.cells import run_timer
from orchestrator.analysis.cells import sort_key
from orchestrator.errors import UserError
from orchestrator.evidence.validity import busy_below
from orchestrator.model import SPEED, HostResult, Run


@dataclass
class DiffRow:
    host: str
    key: Key  # the cell: cells.Key, the one home of what makes two figures the same
    unit: str  # its kind's unit ("B/s", "ops/s", "bit/s")
    old: float | None  # median
    new: float | None
    old_spread_pct: float | None
    new_spread_pct: float | None
    old_n: int
    new_n: int
    delta_pct: float | None
    p_value: float | None
    significant: bool | None
    flags: list[str]
    # The sides were measured differently (the kind's compare: methods.compare for openssl speed): never a regression
    # or an improvement, `significant` is None; the sentence names the cause and the boundary, `comparable` what can
    # still be compared and how.
    method_change: str | None = None
    comparable: str | None = None
    old_method: str | None = None
    new_method: str | None = None

    def to_record(self) -> dict[str, Any]:
        """The JSON shape of `sslbench diff --format json`; a figure of another kind than openssl speed says its
        kind and implementation after its cpu."""
        key = self.key
        record: dict[str, object] = {"host": self.host, "algorithm": key.algorithm, "api": key.api,
                                  "operation": key.operation, "block_size": key.block_size, "threads": key.threads,
                                  "cpu": key.cpu}
        if key.kind != SPEED:
            record.update(kind=key.kind, implementation=key.implementation)
        record.update({
            "unit": self.unit,
            "old": self.old,
            "new": self.new,
            "old_spread_pct": _round(self.old_spread_pct),
            "new_spread_pct": _round(self.new_spread_pct),
            "old_n": self.old_n,
            "new_n": self.new_n,
            "delta_pct": _round(self.delta_pct),
            "p_value": self.p_value,
            "significant": self.significant,
            "flags": list(self.flags),
            "old_method": self.old_method,
            "new_method": self.new_method,
            "method_change": self.method_change,
        })
        return record


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


Side = dict[str, dict[Key, Cell]]  # host -> cells


def side_of_run(run: Run, host: str | None = None) -> Side:
    busy, timer = busy_below(requested_seconds(run)), run_timer(run)
    results, _ = provenance.distinct((run, h) for h in run.hosts if host is None or h.host == host)
    aead = run_aead(run)
    return {h.host: host_cells(h, busy, timer=timer, aead=aead) for _, h in results}


def diff_sides(old: Side, new: Side) -> list[DiffRow]:
    """One row per cell present on either side, hosts and cells in a stable order."""
    rows: list[DiffRow] = []
    for host in sorted(set(old) | set(new)):
        old_cells, new_cells = old.get(host, {}), new.get(host, {})
        for key in sorted(set(old_cells) | set(new_cells), key=sort_key):
            rows.append(_diff_cell(host, key, old_cells.get(key), new_cells.get(key)))
    return rows


def _diff_cell(host: str, key: Key, old: Cell | None, new: Cell | None) -> DiffRow:
    # Called once per cell of a 50,000-cell diff: positional DiffRow, no work for empty flag sets.
    flags: list[str] = []
    if old is None:
        flags.append("missing-old")
    elif old.flags:
        flags.extend(f"{flag}-old" for flag in sorted(old.flags))
    if new is None:
        flags.append("missing-new")
    elif new.flags:
        flags.extend(f"{flag}-new" for flag in sorted(new.flags))
    unit = (old or new).unit  # type: ignore[union-attr]
    old_summary = new_summary = None
    delta = p = significant = None
    if old and old.samples and new and new.samples:
        comparison = stats.compare(old.samples, new.samples)
        old_summary, new_summary = comparison.old, comparison.new
        delta, p, significant = comparison.delta_pct, comparison.p_value, comparison.significant
    elif old and old.samples:
        old_summary = stats.summarize(old.samples)
    elif new and new.samples:
        new_summary = stats.summarize(new.samples)
    change = (kinds.get(key.kind).compare(old.methods, new.methods)
              if old and new and old.methods != new.methods else None)
    if change is not None:
        flags.append(METHOD_CHANGED)
        significant = None  # a changed ruler: no verdict, whatever the test says
    row = DiffRow(
        host, key, unit,
        old_summary.median if old_summary else None,
        new_summary.median if new_summary else None,
        old_summary.spread_pct if old_summary else None,
        new_summary.spread_pct if new_summary else None,
        old_summary.n if old_summary else 0,
        new_summary.n if new_summary else 0,
        delta, p, significant, flags,
    )
    if old is not None and old.methods:
        row.old_method = "|".join(sorted(old.methods))
    if new is not None and new.methods:
        row.new_method = "|".join(sorted(new.methods))
    if change is not None:
        row.method_change, row.comparable = change.sentence, change.comparable
    return row


METHOD_CHANGED = "method-changed"  # the flag of a row whose sides openssl speed measured differently


def diff_runs(old: Run, new: Run, host: str | None = None) -> list[DiffRow]:
    if host is not None and not any(h.host == host for h in (*old.hosts, *new.hosts)):
        raise UserError(f"host '{host}' is in neither run {old.run_id} nor {new.run_id}")
    return diff_sides(side_of_run(old, host), side_of_run(new, host))


@dataclass
class FirmwareSeen:
    """One firmware identity of a host across the store: when and in which runs it was measured."""

    label: str
    first: str  # ISO time of the first run
    last: str
    run_ids: list[str]
    results: list[tuple[Run, HostResult]] = field(default_factory=list, repr=False)
    duplicates: int = 0  # imported measurements dropped from `results` as copies of one already counted


def firmware_history(runs: Iterable[Run], host: str) -> list[FirmwareSeen]:
    """The firmware identities `host` was measured under, oldest first (by when each was last measured).

    Runs are ordered by `created`, then by the time in their ids (store.run_order): `created` has whole seconds.
    """
    seen: dict[str, FirmwareSeen] = {}
    ordered = sorted(runs, key=lambda r: (r.created, store.run_order(r.run_id)))
    position = {id(run): i for i, run in enumerate(ordered)}
    for run in ordered:
        for result in run.hosts:
            if result.host != host or not result.measurements:
                continue
            label = identity.firmware_label(result)
            entry = seen.get(label)
            if entry is None:
                entry = seen[label] = FirmwareSeen(label, run.created, run.created, [])
            entry.last = run.created
            if run.run_id not in entry.run_ids:
                entry.run_ids.append(run.run_id)
            entry.results.append((run, result))
    return sorted(seen.values(), key=lambda e: position[id(e.results[-1][0])])  # by the last run of each


def pick_firmware(history: Sequence[FirmwareSeen], wanted: str, host: str) -> FirmwareSeen:
    """A firmware named by its full label, or by a part of it that only one label contains."""
    exact = [e for e in history if e.label == wanted]
    if exact:
        return exact[0]
    partial = [e for e in history if wanted.lower() in e.label.lower()]
    if len(partial) == 1:
        return partial[0]
    labels = "; ".join(e.label for e in history)
    if not partial:
        raise UserError(f"host '{host}' was never measured under firmware '{wanted}'; known: {labels}")
    raise UserError(f"'{wanted}' matches several firmware labels of '{host}': {labels}; give more of the label")


def diff_by_firmware(
    runs: Iterable[Run], host: str, old_label: str | None = None, new_label: str | None = None
) -> tuple[FirmwareSeen, FirmwareSeen, list[DiffRow]]:
    """Compare two firmware identities of one host; every run under one firmware adds samples to its side."""
    history = firmware_history(runs, host)
    if not history:
        raise UserError(f"no stored measurements of host '{host}'; check the name with `sslbench history {host}`")
    if old_label is None and new_label is None and len(history) < 2:
        raise UserError(
            f"host '{host}' was measured under one firmware only ({history[0].label}); "
            "measure it again after the upgrade, or import older logs with `sslbench import --firmware LABEL`"
        )
    new = pick_firmware(history, new_label, host) if new_label else history[-1]
    if old_label:
        old = pick_firmware(history, old_label, host)
    else:
        older = [e for e in history if e is not new]
        if not older:
            raise UserError(f"host '{host}' has no firmware other than '{new.label}' to compare with")
        old = older[-1]
    if old is new:
        raise UserError(f"--from and --to name the same firmware ('{old.label}')")
    # the same log imported twice is one measurement, on whichever side it came first (provenance.py)
    ordered = sorted([*old.results, *new.results], key=lambda pair: (pair[0].created, store.run_order(pair[0].run_id)))
    kept, _ = provenance.distinct(ordered)
    for entry in (old, new):
        mine = {run.run_id for run, _ in entry.results}  # one result of the host per run
        before = sum(len(result.measurements) for _, result in entry.results)
        entry.results = [(run, result) for run, result in kept if run.run_id in mine]
        entry.duplicates = before - sum(len(result.measurements) for _, result in entry.results)
    return old, new, diff_sides(_pool(old, host), _pool(new, host))


def order_notes(old: FirmwareSeen, new: FirmwareSeen) -> list[str]:
    """What the reader of `old = …, new = …` must know of the order: import time, interleaving."""
    notes = []
    runs = {run.run_id: run for run, _ in (*old.results, *new.results)}
    undated = sum(1 for run in runs.values() if provenance.undated(run))
    if undated and len(runs) > 1:
        notes.append(provenance.import_time_note(undated, len(runs)))
    for a, b in ((old, new), (new, old)):
        if a.first < b.first and a.last > b.last:
            notes.append(f"{a.label} was measured both before and after {b.label}: its side pools the runs of "
                         f"both times (`sslbench trend` shows them in order)")
            break
    else:
        if old.first <= new.last and new.first <= old.last and (old.first, old.last) != (new.first, new.last):
            notes.append(f"the runs of {old.label} and {new.label} interleave in time: each side pools all of its "
                         "runs (`sslbench trend` shows them in order)")
    if old.duplicates or new.duplicates:
        notes.append(provenance.duplicates_note(old.duplicates + new.duplicates))
    return notes


def version_lines(old: Run, new: Run, host: str | None = None) -> list[str]:
    """Per host in both runs whose OpenSSL changed: "router: OpenSSL 3.0.15 (libcrypto 3.0.16) → 3.0.16", the
    program's version (what `openssl speed` times follows it) with libcrypto's where the two differ."""
    before = {h.host: h.openssl for h in old.hosts if host is None or h.host == host}
    lines = []
    for result in sorted(new.hosts, key=lambda h: h.host):
        build = before.get(result.host)
        if build is None:
            continue
        a, b = build.versions_said(), result.openssl.versions_said()
        if a and b and a != b:
            name = "" if a.startswith("LibreSSL") or b.startswith("LibreSSL") else "OpenSSL "
            lines.append(f"{result.host}: {name}{a} → {b}")
    return lines + firmware_lines(old, new, host)


def firmware_lines(old: Run, new: Run, host: str | None = None) -> list[str]:
    """Per host in both runs, what changed of the firmware its figures of other kinds judge, as each kind says it
    ("router: wireguard (kernel): kernel 6.6.73 → 6.6.80")."""
    before = {h.host: h for h in old.hosts if host is None or h.host == host}
    lines: list[str] = []
    for result in sorted(new.hosts, key=lambda h: h.host):
        if result.host in before:
            lines.extend(f"{result.host}: {line}" for kind in kinds.KINDS.values()
                         for line in kind.firmware_lines(before[result.host], result))
    return lines


def line_rate_changes(rows: Sequence[DiffRow], links: Sequence[int]) -> list[str]:
    """The line-rate verdicts that changed between old and new, one sentence each (what a user acts on).

    Judged on the medians of the diff's own rows (the figures the table shows) of the hosts with cells on both
    sides, from the AEAD cells insights.line_rates reads: not a second pass over every measurement.
    """
    old: dict[str, dict[Key, float]] = {}
    new: dict[str, dict[Key, float]] = {}
    for row in rows:
        if row.key.algorithm in insights.AEADS and row.key.kind == SPEED:
            if row.old is not None:
                old.setdefault(row.host, {})[row.key] = row.old
            if row.new is not None:
                new.setdefault(row.host, {})[row.key] = row.new
    hosts = sorted({row.host for row in rows if "missing-old" not in row.flags}
                   & {row.host for row in rows if "missing-new" not in row.flags})
    lines = []
    for host in hosts:
        # big.LITTLE: one row per cluster; a line rate counts the best core
        before = insights.line_rates(best_core(old.get(host, {})), links)
        after = insights.line_rates(best_core(new.get(host, {})), links)
        for a, b in zip(before, after):
            if (a.carried, a.cores_needed) != (b.carried, b.cores_needed):
                lines.append(f"{host}: was: {a.verdict}; now: {b.verdict}")
    return lines


def _pool(entry: FirmwareSeen, host: str) -> Side:
    cells: dict[Key, Cell] = {}
    for run, result in entry.results:
        host_cells(result, busy_below(requested_seconds(run)), into=cells, timer=run_timer(run), aead=run_aead(run))
    return {host: cells}
