"""The result store: results/<run-id>/run.json next to results/<run-id>/<host>/*.log.

Raw logs are always kept, so any run can be parsed again with newer code.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import fcntl
import fnmatch
import json
import os
import re
import secrets
import sys
from pathlib import Path
from typing import Iterator, Sequence

from orchestrator import journal, runschema
from orchestrator.errors import UserError
from orchestrator.model import HOST_FAILED, HOST_OK, INCOMPLETE, HostResult, Run

RUN_FILE = "run.json"
HOST_FILE = "host.json"  # <run>/<host>/host.json: a host's result, written when it finishes
DEFAULT_RESULTS = Path("results")
LOCK_FILE = ".lock"  # results/.lock: the store's lock (`locked`)
REFERENCE_DIR = "reference"  # results/reference/<id>/: the entries of `import --reference`, a store of their own
ASIDE_PREFIX = ".aside-"  # results/.aside-<run-id>: a run being written whole, renamed into place when done
# the reason of a host an unfinished run.json lists without its host.json
UNFINISHED = ("did not finish: the run was stopped before this host finished (or is still running); the logs that "
              "came back are in its directory of the run, those of cells that finished on the host after that stay "
              "there until the next `sslbench run` on it collects them")

_COMPACT = (",", ":")  # json.dumps separators without spaces
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """A host or label as a single, harmless path component (no '/', no '..', no leading dot)."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "_"
    return cleaned[:128]


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def new_run_id() -> str:
    """Sortable by time to the microsecond (runs started in the same second keep their order), unique by the suffix.

    20260101T120000.123456Z-1a2b; ids before schema 3 had whole seconds (20260101T120000Z-1a2b) and still sort.
    """
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{stamp}-{secrets.token_hex(2)}"


_RUN_ID_TIME = re.compile(r"(\d{8}T\d{6})(?:\.(\d{1,6}))?Z")


def run_order(name: str) -> tuple[str, str, str]:
    """Sort key of a run id: its time to the microsecond (whole-second ids at .000000), then the id itself."""
    match = _RUN_ID_TIME.match(name)
    if not match:
        return (name, "", name)  # a hand-named run (no time in its id): by its name
    return (match[1], (match[2] or "").ljust(6, "0"), name)


def new_run_dir(results_dir: Path | str = DEFAULT_RESULTS, run_id: str | None = None) -> Path:
    """A new run's directory in the store, written down in its journal at once (a run is written when it starts);
    a clock that disagrees with the store's is said on stderr."""
    run_dir = Path(results_dir) / safe_name(run_id or new_run_id())
    try:
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        with locked(run_dir.parent):
            run_dir.mkdir(exist_ok=False)
            notes = journal.record(run_dir.parent, run_dir.name, utc_now(), by_clock=True)
    except FileExistsError:
        raise UserError(f"run directory {run_dir} already exists; choose another run id") from None
    except OSError as exc:
        raise UserError(f"cannot create run directory {run_dir}: {exc.strerror}") from None
    for note in notes:
        print(f"sslbench: warning: {note}", file=sys.stderr)
    return run_dir


@contextlib.contextmanager
def locked(results_dir: Path | str) -> Iterator[None]:
    """The store's lock (results/.lock, fcntl.flock): what is checked and what is written under it is one step for
    every other sslbench (two imports of one log, a run starting). Not re-entrant: take it once."""
    root = Path(results_dir)
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def aside_dir(results_dir: Path | str) -> tuple[Path, str]:
    """A hidden directory of the store to write a run in whole (`.aside-<run-id>`), and the run's id; list_runs
    never sees it, `put_in_place` renames it into the store, and `sslbench check` names one left behind."""
    run_id = new_run_id()
    path = Path(results_dir) / f"{ASIDE_PREFIX}{run_id}"
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise UserError(f"cannot create {path}: {exc.strerror}") from None
    return path, run_id


def put_in_place(aside: Path, run_id: str, created: str, by_clock: bool) -> tuple[Path, list[str]]:
    """A run written aside, renamed into the store (one rename: the run is there whole or not at all) and written
    in its journal. The caller holds the lock. Returns its directory and what its date says against the store."""
    target = aside.parent / run_id
    os.rename(aside, target)
    return target, journal.record(aside.parent, run_id, created, by_clock=by_clock)


def host_dir(run_dir: Path, host: str) -> Path:
    """Where a host's raw logs go inside a run directory (created on demand)."""
    path = Path(run_dir) / safe_name(host)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def save_host(run_dir: Path, dir_name: str, host: HostResult) -> Path:
    """One host's result beside its logs, when it finishes: run.json is written at the start and the end of a run,
    not once per host (rewriting it whole for each of 1,000 hosts writes gigabytes)."""
    path = host_dir(run_dir, dir_name) / HOST_FILE
    _write_atomically(path, json.dumps(host.to_dict(), separators=_COMPACT) + "\n")
    return path


def save_unfinished_host(run_dir: Path, dir_name: str, host: HostResult) -> Path:
    """A host still at work, as it stands after each cell that came back: failed with UNFINISHED until it finishes
    (save_host then replaces it). A run that dies at once (a second Ctrl-C, a kill -9, a crash) keeps every cell
    that reached the controller, and says the host did not finish."""
    data = host.to_dict()
    data.update(status=HOST_FAILED, reason=UNFINISHED, flags=[*host.flags, INCOMPLETE])
    path = host_dir(run_dir, dir_name) / HOST_FILE
    _write_atomically(path, json.dumps(data, separators=_COMPACT) + "\n")
    return path


def save_run(run_dir: Path, run: Run) -> Path:
    """Write run.json atomically: a crash mid-write never leaves a truncated store.

    Compact, one host per line: a store of 1,000 hosts is tens of MB that `diff` must read back, and indent=
    would both double it and force json's pure-Python encoder. One line per host still greps and diffs well.
    """
    path = Path(run_dir) / RUN_FILE
    data = run.to_dict()
    hosts = data.pop("hosts")
    assert isinstance(hosts, list)  # Run.to_dict's list of host records
    head = json.dumps(data, separators=_COMPACT)
    lines = ",\n".join(json.dumps(host, separators=_COMPACT) for host in hosts)
    text = f'{head[:-1]},"hosts":[\n{lines}\n]}}\n' if hosts else f'{head[:-1]},"hosts":[]}}\n'
    _write_atomically(path, text)
    return path


def load_run(path: Path | str) -> Run:
    """Load a run from its directory or its run.json; clear errors for anything else."""
    path = Path(path)
    file = path / RUN_FILE if path.is_dir() else path
    if not file.exists():
        raise UserError(f"{path} is not a stored run (no {RUN_FILE}); runs live under results/<run-id>/")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UserError(f"cannot read {file}: {exc}") from None
    if not isinstance(data, dict) or "run_id" not in data:
        raise UserError(f"{file} is not an sslbench run file")
    try:
        runschema.check_run(data)  # the one check of a run as read: no reader meets a value of the wrong type
    except runschema.BadRun as exc:
        raise UserError(f"{file}: {exc}") from None
    run = Run.from_dict(data)
    if not run.complete:  # a run at work, or one that stopped dead: its finished hosts are in their own files
        _add_finished_hosts(run, file.parent)
    return run


def _add_finished_hosts(run: Run, run_dir: Path) -> None:
    finished = {}
    for path in sorted(run_dir.glob(f"*/{HOST_FILE}")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            runschema.check_host(data)
            host = HostResult.from_dict(data)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):  # BadRun is a ValueError
            continue  # a file cut short by the crash, or damaged: its host did not finish, as below
        finished[host.host] = host
    for host in run.hosts:  # never finished: not `ok` with no figures, as if it had measured nothing
        if host.host not in finished and host.status == HOST_OK:
            host.status, host.reason = HOST_FAILED, UNFINISHED
            host.flags.append(INCOMPLETE)
    run.hosts = [finished.pop(h.host, h) for h in run.hosts] + list(finished.values())


def list_runs(results_dir: Path | str = DEFAULT_RESULTS) -> list[Path]:
    """Run directories under results_dir in the order they were written (the store's journal; runs of a store
    older than it first, by the time in their id, see run_order). Not hidden directories (a run being written
    aside) nor symbolic links (a `latest` link to a run is not a second run)."""
    root = Path(results_dir)
    if not root.is_dir():
        return []
    order = journal.order(root)
    found = [p for p in root.iterdir() if not p.name.startswith(".") and not p.is_symlink() and (p / RUN_FILE).is_file()]
    return sorted(found, key=lambda p: (p.name in order, order.get(p.name, 0), run_order(p.name)))


def resolve_run(ref: str, results_dir: Path | str = DEFAULT_RESULTS) -> Path:
    """A run given as a path, a run id under results_dir, or 'latest'."""
    if ref == "latest":
        runs = list_runs(results_dir)
        if not runs:
            raise UserError(f"no stored runs under {results_dir}; run `sslbench run` first")
        return runs[-1]
    for candidate in (Path(ref), Path(results_dir) / ref):
        if (candidate / RUN_FILE).is_file() or (candidate.is_file() and candidate.name == RUN_FILE):
            return candidate
    raise UserError(f"no stored run '{ref}' (looked for {ref}/{RUN_FILE} and {Path(results_dir) / ref}/{RUN_FILE})")


def load_all(results: Path) -> list[Run]:
    """Every readable run in the store; unreadable ones are named on stderr and skipped."""
    if not list_runs(results):
        raise UserError(f"no stored runs under {results}; give --results DIR or run `sslbench run` first")
    return readable_runs(results)


def readable_runs(results: Path | str) -> list[Run]:
    """The runs under `results` that load, in the order written; each one that does not is named on stderr in one
    line (the file and the field) and skipped: no single file takes the store down."""
    runs = []
    for path in list_runs(results):
        try:
            runs.append(load_run(path))
        except UserError as exc:
            print(f"sslbench: skipping {path}: {exc}", file=sys.stderr)
    return runs


def hosts_of(runs: Sequence[Run], patterns: Sequence[str]) -> list[Run]:
    """The runs with only their hosts whose names match one of the shell-style patterns ('rock*', 'pi4'); a run
    left with none is left out. UserError when no host matches."""
    picked = [dataclasses.replace(run, hosts=[r for r in run.hosts if _matches(r.host, patterns)]) for run in runs]
    picked = [run for run in picked if run.hosts]
    if not picked:
        raise _no_match(runs, patterns)
    return picked


def latest_of_each_host(runs: Sequence[Run], patterns: Sequence[str] = ()) -> list[Run]:
    """"Compare my boards": each host's latest result with figures, and its latest result too when that came after
    (a failure since). `runs` in the order they were written, as load_all gives them: the latest is the one written
    last, whatever a controller's clock said (journal.py), but for an import backfilled with --date to before the
    host's latest so far, which is history, not news. Each run kept holds only the hosts taken from it.
    patterns: only the hosts matching one of them (hosts_of)."""
    latest: dict[str, int] = {}  # host -> index of its latest run
    measured: dict[str, int] = {}  # host -> index of its latest run with figures
    for index, run in enumerate(runs):
        backfill = not journal.by_clock(run)
        for result in run.hosts:
            host = result.host
            if patterns and not _matches(host, patterns):
                continue
            if not (backfill and host in latest and run.created < runs[latest[host]].created):
                latest[host] = index
            if result.measurements and not (backfill and host in measured and
                                            run.created < runs[measured[host]].created):
                measured[host] = index
    if not latest:
        raise _no_match(runs, patterns)
    taken: dict[int, set[str]] = {}
    for host, index in latest.items():
        taken.setdefault(index, set()).add(host)
        if host in measured:
            taken.setdefault(measured[host], set()).add(host)
    return [dataclasses.replace(run, hosts=[r for r in run.hosts if r.host in taken[index]])
            for index, run in enumerate(runs) if index in taken]


def _matches(host: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(host, pattern) for pattern in patterns)


def _no_match(runs: Sequence[Run], patterns: Sequence[str]) -> UserError:
    hosts = sorted({result.host for run in runs for result in run.hosts})
    if not hosts:
        return UserError("the runs hold no host")
    known = ", ".join(hosts[:12]) + (f" and {len(hosts) - 12} more" if len(hosts) > 12 else "")
    return UserError(f"no host matches {' or '.join(repr(p) for p in patterns)}; the hosts are: {known}")
