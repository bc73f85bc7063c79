"""Live progress per host: "cell k of n" and an ETA from the cells' planned seconds.

`HostProgress` is pure state fed with the on-host runner's progress file (printed by every poll);
`ProgressView` draws it with rich on a terminal, or prints one line per change otherwise.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, TextIO

from orchestrator import textsafe
from orchestrator.units import count, format_eta


@dataclass
class HostProgress:
    host: str
    phase: str = "waiting"  # waiting, detect, provision, bench, done, failed, unreachable
    total: int = 0
    planned: dict[str, float] = field(default_factory=dict)  # cell id -> planned seconds
    done: dict[str, int] = field(default_factory=dict)  # finished cell id -> exit code
    current: str | None = None
    current_since: float | None = None  # time.monotonic() when `current` was first seen
    message: str = ""

    @property
    def planned_total(self) -> float:
        return sum(self.planned.values())

    def remaining_seconds(self, now: float | None = None) -> float:
        left = sum(s for cell, s in self.planned.items() if cell not in self.done)
        if self.current and self.current_since is not None and self.current not in self.done:
            elapsed = (now if now is not None else time.monotonic()) - self.current_since
            left -= min(elapsed, self.planned.get(self.current, 0.0))
        return max(left, 0.0)

    def update(self, progress_text: str, now: float | None = None) -> bool:
        """Apply the progress file (`start k n id` / `done k n id rc` lines); True when something changed."""
        changed = False
        for line in progress_text.splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[0] == "start" and parts[3] not in self.done:
                if self.current != parts[3]:
                    self.current = parts[3]
                    self.current_since = now if now is not None else time.monotonic()
                    changed = True
                self.total = self.total or _int(parts[2])
            elif len(parts) >= 5 and parts[0] == "done" and parts[3] not in self.done:
                self.done[parts[3]] = _int(parts[4])
                self.total = self.total or _int(parts[2])
                if self.current == parts[3]:
                    self.current = None
                changed = True
        return changed

    def describe(self, now: float | None = None) -> str:
        if self.phase == "bench" and self.total:
            now_doing = f" {self.current}" if self.current else ""
            return (f"cell {min(len(self.done) + 1, self.total)}/{self.total}{now_doing}, "
                    f"ETA {format_eta(self.remaining_seconds(now))}")
        return self.phase + (f": {self.message}" if self.message else "")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


class ProgressView:
    """Rich live bars on a terminal; plain lines (one per change) in logs and CI. A fleet of more than `per_host`
    hosts gets one summary instead (hosts per phase, the longest ETA), at most every SUMMARY_EVERY seconds in
    plain mode: a thousand bars would not fit a terminal, and redrawing them would cost the controller."""

    SUMMARY_EVERY = 10.0

    def __init__(self, stream: TextIO | None = None, live: bool | None = None, per_host: int = 30) -> None:
        self.stream = stream or sys.stderr
        self.hosts: dict[str, HostProgress] = {}
        self.live = self.stream.isatty() if live is None else live
        self.per_host = per_host
        self.expected = 0  # hosts the run has, as far as known before each shows up (the summary from the start)
        self._rich: Any = None  # rich.progress.Progress while live
        self._tasks: dict[str, int] = {}
        self._last_line: dict[str, str] = {}
        self._summary_at = 0.0

    def __enter__(self) -> ProgressView:
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn

            self._rich = Progress(TextColumn("{task.fields[host]:<20}"), BarColumn(), TextColumn("{task.description}"),
                                  console=Console(file=getattr(self.stream, "raw", self.stream)),  # textsafe
                                  refresh_per_second=4)
            self._rich.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None

    def host(self, name: str) -> HostProgress:
        if name not in self.hosts:
            self.hosts[name] = HostProgress(host=name)
        return self.hosts[name]

    def refresh(self, name: str) -> None:
        if max(len(self.hosts), self.expected) > self.per_host:
            self._refresh_summary()
            return
        state = self.host(name)
        text = state.describe()
        if self._rich is not None:
            total = state.planned_total or 1.0
            done = total - state.remaining_seconds() if state.planned else (total if state.phase == "done" else 0)
            text = _rich_safe(text)  # rich writes to the raw stream: host text shown, never run, nor read as markup
            if name not in self._tasks:
                self._tasks[name] = self._rich.add_task(text, total=total, host=_rich_safe(name[:20]))
            self._rich.update(self._tasks[name], description=text, total=total, completed=done)
        elif self._last_line.get(name) != text:
            self._last_line[name] = text
            print(f"{name}: {text}", file=self.stream, flush=True)

    def summary(self, now: float | None = None) -> str:
        """`64 hosts: 40 done, 20 bench, 4 failed; ETA 1m05s` (the longest ETA of the hosts still at work)."""
        now = time.monotonic() if now is None else now
        phases: dict[str, int] = {}
        for state in self.hosts.values():
            phases[state.phase] = phases.get(state.phase, 0) + 1
        order = ("done", "bench", "provision", "detect", "waiting", "failed", "unreachable")
        counts = ", ".join(f"{phases[p]} {p}" for p in sorted(phases, key=lambda p: (order + (p,)).index(p)))
        left = max((s.remaining_seconds(now) for s in self.hosts.values() if s.phase == "bench"), default=None)
        return f"{count(len(self.hosts), 'host')}: {counts}" + (f"; ETA {format_eta(left)}" if left is not None else "")

    def _refresh_summary(self) -> None:
        text = self.summary()
        done = sum(1 for s in self.hosts.values() if s.phase in ("done", "failed", "unreachable"))
        if self._rich is not None:
            for task in self._tasks.values():  # per-host bars of a fleet that grew past per_host
                self._rich.update(task, visible=False)
            if "" not in self._tasks:
                self._tasks[""] = self._rich.add_task(text, total=len(self.hosts), host="fleet")
            self._rich.update(self._tasks[""], description=text, total=len(self.hosts), completed=done)
        elif time.monotonic() - self._summary_at >= self.SUMMARY_EVERY or done == len(self.hosts):
            if self._last_line.get("") != text:
                self._summary_at = time.monotonic()
                self._last_line[""] = text
                print(text, file=self.stream, flush=True)


def _rich_safe(text: str) -> str:
    from rich.markup import escape

    return escape(textsafe.cell(text).replace("\n", " "))
