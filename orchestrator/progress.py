"""Live progress per host: "cell k of n" and an ETA from the cells' planned seconds.

`HostProgress` is pure state fed with the on-host runner's progress file (printed by every poll);
`ProgressView` draws it with rich on a terminal, or prints one line per change otherwise.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

from orchestrator.units import format_eta


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
    """Rich live bars on a terminal; plain lines (one per change) in logs and CI."""

    def __init__(self, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.hosts: dict[str, HostProgress] = {}
        self.live = self.stream.isatty() if live is None else live
        self._rich = None
        self._tasks: dict[str, int] = {}
        self._last_line: dict[str, str] = {}

    def __enter__(self) -> ProgressView:
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn

            self._rich = Progress(TextColumn("{task.fields[host]:<20}"), BarColumn(), TextColumn("{task.description}"),
                                  console=Console(file=self.stream), refresh_per_second=4)
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
        state = self.host(name)
        text = state.describe()
        if self._rich is not None:
            total = state.planned_total or 1.0
            done = total - state.remaining_seconds() if state.planned else (total if state.phase == "done" else 0)
            if name not in self._tasks:
                self._tasks[name] = self._rich.add_task(text, total=total, host=name[:20])
            self._rich.update(self._tasks[name], description=text, total=total, completed=done)
        elif self._last_line.get(name) != text:
            self._last_line[name] = text
            print(f"{name}: {text}", file=self.stream, flush=True)
