"""A run's private directory on the controller (ansible-runner's data, the playbooks, the step scripts: ~150 KB in
$TMPDIR), and those of runs that died without removing theirs (`kill -9`, a power cut): each names its owner, and
the next run removes every one whose owner is gone.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "sslbench-runner-"
OWNER = "owner"  # the pid and start time of the sslbench that made the dir


def _start_time(pid: int) -> str | None:
    """The process's start time (field 22 of /proc/PID/stat): with the pid it names one process, even once the pid
    is reused. None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _owner_gone(directory: Path) -> bool:
    try:
        pid_text, started = (directory / OWNER).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return False  # not one this code made (or still being made): left alone
    return _start_time(pid) != started


def clean_stale(parent: Path | None = None) -> list[Path]:
    """Remove the private dirs of runs that are gone; returns them."""
    removed = []
    for directory in Path(parent or tempfile.gettempdir()).glob(PREFIX + "*"):
        if directory.is_dir() and not directory.is_symlink() and _owner_gone(directory):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


def make() -> Path:
    """A new private dir, marked as this process's (after removing those whose runs are gone)."""
    clean_stale()
    directory = Path(tempfile.mkdtemp(prefix=PREFIX))
    (directory / OWNER).write_text(f"{os.getpid()} {_start_time(os.getpid()) or 0}\n")
    return directory
