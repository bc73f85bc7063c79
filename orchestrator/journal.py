"""The store's journal, results/.written: one line per run as it is put into the store, in that order.

A run's date is the clock of the controller that made it (or an import's --date), and a controller's clock can be
wrong: a run made with the clock 73 years ahead would stay "the latest" after every correct run. The journal keeps
the order runs were written in, which no clock can change: "latest" is the run written last (store.list_runs
lists runs in this order), and where a run's date disagrees with it, it is said when the run is written (`record`)
and by `report` (`disagreements`).

A line: run id, when it was written (this controller's clock, UTC), its date, and `clock` (dated by the clock of
the controller that wrote it: a run, an import without --date) or `given` (an import's --date, a backfill, which
may be any time before). Appended under the store's lock (store.locked); lines it cannot read are passed over.
"""
from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from orchestrator.model import REFERENCE, Run

JOURNAL_FILE = ".written"
DATE_GIVEN = "given"  # run.matrix["date"] of an import dated by --date (analysis/provenance.py writes it)
SLACK = _dt.timedelta(minutes=5)  # clocks of a fleet's controllers that differ by less are in agreement


@dataclass(frozen=True)
class Entry:
    run_id: str
    written: str  # ISO 8601, UTC: the writing controller's clock
    created: str  # the run's date
    by_clock: bool  # dated by that clock (not an import's --date)


def entries(root: Path | str) -> list[Entry]:
    try:
        text = (Path(root) / JOURNAL_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 4 and parts[0]:
            found.append(Entry(parts[0], parts[1], parts[2], parts[3] != DATE_GIVEN))
    return found


def order(root: Path | str) -> dict[str, int]:
    """Run id -> its place in the order of writing (a run written twice, the last)."""
    return {entry.run_id: index for index, entry in enumerate(entries(root))}


def _time(text: str) -> _dt.datetime | None:
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def record(root: Path | str, run_id: str, created: str, by_clock: bool) -> list[str]:
    """Write a run into the journal (the caller holds the store's lock); what its date and this controller's clock
    say against the runs written before it, in sentences (none when they agree)."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
    notes = _against_store(entries(root), run_id, created, now, by_clock)
    line = "\t".join((run_id, now.isoformat(), created, "clock" if by_clock else DATE_GIVEN)) + "\n"
    fd = os.open(Path(root) / JOURNAL_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)
    return notes


def _against_store(before: Sequence[Entry], run_id: str, created: str, now: _dt.datetime, by_clock: bool) -> list[str]:
    notes = []
    date = _time(created)
    if date is not None and date > now + SLACK:
        notes.append(f"run {run_id} is dated {created}, later than this controller's clock ({now.isoformat()})")
    # the latest time a run written before this one was known to be: its writer's clock, its own clock date
    seen = [(when, entry) for entry in before for when in (_time(entry.written),
                                                           _time(entry.created) if entry.by_clock else None) if when]
    if seen:
        latest, entry = max(seen, key=lambda item: item[0])
        if latest > now + SLACK:
            notes.append(f"run {entry.run_id}, written before this one, is dated or was written {latest.isoformat()}, "
                         f"later than this controller's clock ({now.isoformat()}): one of the two clocks is wrong. "
                         f"Run {run_id} is the latest all the same (the latest is the run written last; "
                         "`sslbench report --all` says where dates and write order disagree)")
    if by_clock and date is None:
        notes.append(f"run {run_id} has no readable date ({created!r})")
    return notes


def by_clock(run: Run) -> bool:
    """A run dated by the clock of the controller that wrote it: not an import's --date, not a reference."""
    return run.source != REFERENCE and (run.source != "import" or (run.matrix or {}).get("date") != DATE_GIVEN)


def disagreements(runs: Sequence[Run]) -> list[str]:
    """Runs in the order written (store.load_all's) whose dates go back in time: a run dated by its controller's
    clock earlier than one written before it. Backfilled imports (--date) are not counted either way."""
    notes = []
    latest: tuple[_dt.datetime, Run] | None = None
    for run in runs:
        date = _time(run.created) if by_clock(run) else None
        if date is None:
            continue
        if latest is not None and date + SLACK < latest[0]:
            notes.append(f"run {run.run_id} (dated {run.created}) was written after run {latest[1].run_id} (dated "
                         f"{latest[1].created}): a controller's clock was wrong; the latest is the run written last")
        if latest is None or date > latest[0]:
            latest = (date, run)
    return notes
