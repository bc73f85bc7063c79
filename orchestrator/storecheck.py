"""`sslbench check`: what in a store cannot be read, and what a dead sslbench left behind, as restic check and borg
check say it: one finding per line, each with the path to look at.

Findings (`Kind`): a run.json that does not load (store.load_run's reason: unreadable, or the field runschema found
wrong); a host.json of an unfinished run that does not; a run never finished ("still running, or stopped dead":
complete false); a run directory with logs but no run.json; a run left aside by an import that died before its
rename (results/.aside-*); a half-written file (*.tmp of store._write_atomically); and, when no other sslbench is
running, the private directories of ansible-runner (sslbench-runner-* in the temporary directory) a killed run left
(privatedir.py's owner rule; those without an owner file, an older sslbench's, to remove by hand).
"""
from __future__ import annotations

import enum
import fcntl
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orchestrator import privatedir, runschema, store
from orchestrator.errors import UserError


class Kind(enum.Enum):
    UNREADABLE = "unreadable run"
    BAD_HOST = "unreadable host file"
    UNFINISHED = "unfinished run"
    NO_RUN_FILE = "logs without run.json"
    ASIDE = "import left aside"
    HALF_WRITTEN = "half-written file"
    RUNNER_DIR = "runner directory left behind"
    OLD_RUNNER_DIR = "runner directory of an older sslbench"


@dataclass(frozen=True)
class Finding:
    kind: Kind
    path: Path
    why: str


def check(results: Path) -> list[Finding]:
    """Every finding in the store under `results` (and the temporary directory's runner dirs), in path order."""
    if not results.is_dir():
        raise UserError(f"{results} is not a directory; give the result store with --results DIR")
    others = _other_sslbench()
    live = f" (an sslbench is running: pid {', '.join(map(str, others[:3]))}; it may be at work on it)" if others else ""
    found: list[Finding] = []
    for path in sorted(results.iterdir()):
        if path.is_symlink() or not path.is_dir():
            continue
        if path.name.startswith(store.ASIDE_PREFIX):
            if not _store_busy(results):
                found.append(Finding(Kind.ASIDE, path, "an import stopped before its run was put in the store; "
                                                      "nothing of it is in the store"))
            continue
        if path.name.startswith("."):
            continue
        if path.name == store.REFERENCE_DIR and not (path / store.RUN_FILE).is_file():
            found += [finding for entry in sorted(path.iterdir()) if entry.is_dir() and not entry.is_symlink()
                      for finding in _check_run_dir(entry, live)]  # the entries of `import --reference`
            continue
        found += _check_run_dir(path, live)
    found += [Finding(Kind.HALF_WRITTEN, tmp, "a write cut short (the file it was to replace is whole)")
              for tmp in sorted(results.glob("*/**/*.tmp"))]
    return found + _runner_dirs(busy=bool(others))


def _runner_dirs(busy: bool) -> list[Finding]:
    """The private dirs whose sslbench is gone (privatedir's owner rule: the next `run` removes them too), and
    those without an owner file, which no `run` removes: made by an older sslbench (or, while another sslbench
    runs, by one making it now: not said then)."""
    found = []
    for path in privatedir.private_dirs(Path(tempfile.gettempdir())):
        whose = privatedir.owner(path)
        if whose is privatedir.Owner.GONE:
            found.append(Finding(Kind.RUNNER_DIR, path, "ansible-runner's private directory of a run that was "
                                                        "killed (the next `sslbench run` removes it)"))
        elif whose is privatedir.Owner.UNKNOWN and not busy:
            found.append(Finding(Kind.OLD_RUNNER_DIR, path, "made by an older sslbench (no owner file): no run "
                                                            "removes it; remove it by hand"))
    return found


def _check_run_dir(path: Path, live: str) -> list[Finding]:
    if not (path / store.RUN_FILE).is_file():
        logs = [p for p in path.rglob("*") if p.is_file()]
        return [Finding(Kind.NO_RUN_FILE, path, f"{len(logs)} file(s), no {store.RUN_FILE}: not a run any command "
                                                "reads")] if logs else []
    try:
        run = store.load_run(path)
    except UserError as exc:
        return [Finding(Kind.UNREADABLE, path / store.RUN_FILE, str(exc).removeprefix(f"{path / store.RUN_FILE}: "))]
    found = []
    if not run.complete:
        found.append(Finding(Kind.UNFINISHED, path, f"started {run.created}, never finished: still running, or "
                                                    f"stopped dead{live}"))
        for host_file in sorted(path.glob(f"*/{store.HOST_FILE}")):
            why = _bad_host(host_file)
            if why:
                found.append(Finding(Kind.BAD_HOST, host_file, why))
    return found


def _bad_host(path: Path) -> str | None:
    try:
        runschema.check_host(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:  # BadRun is a ValueError
        return str(exc)
    return None


def _store_busy(results: Path) -> bool:
    """Whether another sslbench holds the store's lock now (an import writing aside)."""
    try:
        fd = os.open(results / store.LOCK_FILE, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _other_sslbench() -> list[int]:
    """Other processes running sslbench (its script or `python -m orchestrator`), this one's parents left out."""
    mine = {os.getpid(), os.getppid()}
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        pid = int(cmdline.parent.name)
        if pid not in mine and any(w.endswith(b"/sslbench") or w == b"sslbench" or w == b"orchestrator"
                                   for w in words[:3]):
            found.append(pid)
    return sorted(found)
