"""A run's private directory on the controller (ansible-runner's data, the playbooks, the step scripts: ~150 KB in
$TMPDIR), and those of runs that died without removing theirs (`kill -9`, a power cut): each names its owner, and
the next run removes every one whose owner is gone, and `sslbench check` (storecheck.py) reports them.
"""
from __future__ import annotations

import enum
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


class Owner(enum.Enum):
    """Whose a private dir is, by its owner file."""

    LIVE = "live"  # the sslbench that made it still runs
    GONE = "gone"  # killed before removing it: `run` removes it, `check` reports it
    UNKNOWN = "unknown"  # no owner file (an sslbench before owner files, or one making it now): left alone


def owner(directory: Path) -> Owner:
    try:
        pid_text, started = (directory / OWNER).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return Owner.UNKNOWN
    return Owner.LIVE if _start_time(pid) == started else Owner.GONE


def private_dirs(parent: Path | None = None) -> list[Path]:
    """The private dirs in the temporary directory (or `parent`), in name order."""
    return sorted(d for d in Path(parent or tempfile.gettempdir()).glob(PREFIX + "*") if d.is_dir()
                  and not d.is_symlink())


def clean_stale(parent: Path | None = None) -> list[Path]:
    """Remove the private dirs of runs that are gone; returns them."""
    removed = []
    for directory in private_dirs(parent):
        if owner(directory) is Owner.GONE:
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


def make() -> Path:
    """A new private dir, marked as this process's (after removing those whose runs are gone)."""
    clean_stale()
    directory = Path(tempfile.mkdtemp(prefix=PREFIX))
    (directory / OWNER).write_text(f"{os.getpid()} {_start_time(os.getpid()) or 0}\n")
    return directory
