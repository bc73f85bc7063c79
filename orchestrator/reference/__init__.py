"""Known boards: published `openssl speed` results of well-known boards, to show the user's own beside them.

The data ships in `known/` (README.md there says how it was collected and how to add an entry): one log per
board exactly as published, and `boards.toml` with each log's board, CPU, OpenSSL version, the `openssl speed`
options used and the source URL. Entries the user adds with `sslbench import --reference` are stored under
`<results>/reference/<id>/` (run.json and the log), outside the runs (store.list_runs never lists them).

A log is read by sslbench's own parser (parse_console), then two facts of the entry correct what a log alone
cannot tell:
- the API: sbc-bench lower-cases OpenSSL 3.x's output, so an `-evp` run's `AES-128-CBC` rows read as the legacy
  name; the entry's `options` (the command line as published) say whether `-evp` was given. "unknown" options
  keep what the parser read.
- clusters: an sbc-bench version that runs a command once per CPU cluster without labelling the rows prints
  the same row once per cluster. `clusters = "Cortex-A53,Cortex-A72"` in the entry names them in the order the
  rows come, and each row gets its cluster (Measurement.cpu), as a pinned cell of `sslbench run` has. Without it,
  a per-cluster log's unlabelled rows are left out, with a note: their median would mix two different cores, a
  figure that may be wrong is never shown as ok.

An entry's format is entries.py's, the figure quoted beside a line rate quotes.py's; the other wings import
every name from this package.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator import store
from orchestrator.analysis.cells import Key, key_of
from orchestrator.errors import UserError
from orchestrator.logfiles import read_text
from orchestrator.model import CpuFacts, HostResult, Measurement, OpenSSLBuild, Run
from orchestrator.parse import parse_console
from orchestrator.reference.entries import (
    FIGURES, KNOWN_DIR, LOG, SOURCE, UNITS, UNKNOWN, Entry, Figure, api_of, entry_file, entry_of, figure_of,
    figure_spec, figure_value, load_entries, not_told, per_cluster,
)
from orchestrator.reference.quotes import Quote, entries_of, quote, summary_note

__all__ = [  # what the other wings use, from this package or the modules it is cut into
    "FIGURES", "KNOWN_DIR", "LOG", "SOURCE", "UNITS", "UNKNOWN", "Board", "Entry", "Figure", "Quote", "add",
    "api_of", "entries_of", "entry_file", "entry_of", "figure_of", "figure_spec", "figure_value", "known_run",
    "load_entries", "not_told", "quote", "read", "read_entry", "read_figures", "shipped", "stored", "summary_note",
]

RUN_ID = "reference"  # the run every reference host is shown in: tables label its hosts "<id> (reference)"
STORE_DIR = store.REFERENCE_DIR  # <results>/reference/<id>/ holds the entries `sslbench import --reference` added


@dataclass
class Board:
    """An entry read: its host result (host = the entry's id) and what reading it left out."""

    entry: Entry
    result: HostResult
    notes: list[str] = field(default_factory=list)


def read(entry: Entry, text: str) -> Board:
    """The entry's log as a host result, API and clusters set from the entry (see the module docstring)."""
    log = parse_console(text)
    notes: list[str] = []
    api = api_of(entry.options)
    measurements = log.measurements
    if api is not None:
        for m in measurements:
            if m.operation is None and m.api is not None and m.api != api:
                m.api = api
    measurements = _clusters(entry, measurements, notes)
    seen: dict[Key, int] = {}
    for m in measurements:  # repeated rows of one cell are samples 0, 1, ... (sbc-bench runs each command twice)
        key = key_of(m)
        m.repeat = seen.get(key, 0)
        seen[key] = m.repeat + 1
    if not any(m.status == "ok" for m in measurements):
        why = f"nothing left to show ({notes[0]})" if notes else "no openssl speed figure could be read from its log"
        raise UserError(f"reference '{entry.id}': {why}")
    version = log.openssl.version or (entry.openssl if entry.openssl != UNKNOWN else None)
    openssl = log.openssl
    openssl.version = version
    cpu = log.cpu if log.cpu.model else CpuFacts(model=entry.cpu, arch=entry.arch)
    result = HostResult(entry.id, firmware=f"reference: {entry.board}", cpu=cpu, os=log.os, openssl=openssl,
                        measurements=measurements)
    return Board(entry, result, notes)


def _clusters(entry: Entry, measurements: list[Measurement], notes: list[str]) -> list[Measurement]:
    names = [name.strip() for name in entry.clusters.split(",") if name.strip()]
    unlabelled: dict[Key, list[Measurement]] = {}
    for m in measurements:
        if m.cpu is None and m.threads == 1:
            unlabelled.setdefault(key_of(m), []).append(m)
    repeated = {key: rows for key, rows in unlabelled.items() if len(rows) > 1}
    if not repeated or not (names or per_cluster(entry)):
        return measurements
    drop: set[int] = set()
    for key, rows in repeated.items():
        if names and len(rows) == len(names):
            for m, name in zip(rows, names):
                m.cpu = name
        else:
            drop.update(id(m) for m in rows)
    if drop:
        cells = len({key_of(m) for m in measurements if id(m) in drop})
        notes.append(f"{entry.id}: {len(drop)} unlabelled per-cluster rows of {cells} cells left out "
                     f"(which cluster each row measured is not known; give clusters = \"A,B\" in its entry)")
    return [m for m in measurements if id(m) not in drop]


def read_figures(entry: Entry) -> Board:
    """A summary entry as a host result: its table read by the log parser, and each single figure whose block size
    and threads the source states as a cell. The rest stay in entry.figures (not cells: where it sits is unknown)."""
    measurements: list[Measurement] = []
    notes: list[str] = []
    version = entry.openssl if entry.openssl != UNKNOWN else None
    if entry.table.strip():
        board = read(entry, entry.table)
        measurements = board.result.measurements
        notes = board.notes
    api = api_of(entry.options)
    seen: dict[Key, int] = {}
    for f in entry.figures:
        if f.block is None or f.threads is None:
            continue
        m = Measurement(f.algorithm, f.block, f.bytes_per_second(entry.unit), threads=f.threads, api=api,
                        openssl_version=version)
        m.repeat = seen.get(key_of(m), 0)
        seen[key_of(m)] = m.repeat + 1
        measurements.append(m)
    openssl = OpenSSLBuild(version=version)
    result = HostResult(entry.id, firmware=f"reference: {entry.board}", cpu=CpuFacts(model=entry.cpu, arch=entry.arch),
                        openssl=openssl, measurements=measurements)
    return Board(entry, result, notes)


def read_entry(entry: Entry, directory: Path = KNOWN_DIR) -> Board:
    """Any entry: a log entry's <id>.txt from `directory`, a summary entry from its own figures."""
    if entry.summary:
        return read_figures(entry)
    path = directory / f"{entry.id}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read the known board log {path}: {exc.strerror or exc}") from None
    return read(entry, text)


def shipped(directory: Path = KNOWN_DIR) -> list[Board]:
    return [read_entry(entry, directory) for entry in load_entries(directory)]


def stored(results: Path) -> list[Run]:
    """The reference entries `sslbench import --reference` added to this store."""
    root = Path(results) / STORE_DIR
    if not root.is_dir():
        return []
    return store.readable_runs(root)  # a damaged entry is named and skipped: the other boards still show


def known_run(results: Path | None = None, directory: Path = KNOWN_DIR) -> tuple[Run, list[str]]:
    """Every known board, shipped and added to `results`, as one run (source "reference"), and reading notes."""
    boards = shipped(directory)
    hosts = [board.result for board in boards]
    notes = [note for board in boards for note in board.notes]
    entries = {board.entry.id: board.entry.to_dict() for board in boards}
    for run in stored(results) if results is not None else []:
        for host in run.hosts:
            hosts = [h for h in hosts if h.host != host.host] + [host]
        entries.update(run.matrix.get("reference") or {})
        notes.extend(run.matrix.get("notes") or [])
    created = max((str(e.get("retrieved", "")) for e in entries.values()), default="")
    return Run(RUN_ID, created, command=["sslbench", "reference"], matrix={"reference": entries, "notes": notes},
               hosts=hosts, source=SOURCE), notes


def _entry_dir(root: Path, entry_id: str) -> Path:
    """The directory for a new reference `entry_id` under `root`: store.safe_name, plus 8 hex digits of the id's
    SHA-256 when another entry already has that directory or one that differs only in case (the store's rule for
    host directories, orchestrator/run/fleet.py): `路由器` and `交换机` both sanitise to `_`, `a/b` and `a_b` to `a_b`.
    An entry with this very id already stored is an error naming its directory."""
    taken = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if not (path / store.RUN_FILE).is_file():
            continue
        taken.append(path.name.casefold())
        try:
            ids = store.load_run(path).matrix.get("reference") or {}
        except UserError:
            continue  # a damaged entry keeps its directory name; `report --against known` says what is wrong
        if entry_id in ids:
            raise UserError(f"a reference '{entry_id}' is already stored in {path}; remove it first to replace it")
    name = store.safe_name(entry_id)
    if name.casefold() in taken:
        name = f"{name[:119]}-{hashlib.sha256(entry_id.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
    return root / name


def add(entry: Entry, log: Path | None, results: Path, command: list[str] | None = None) -> Path:
    """Store a reference entry (`sslbench import --reference`): <results>/reference/<id>/run.json, and the log of a
    log entry. A summary entry (kind "figures", log None) keeps its figures in run.json's entry."""
    if entry.summary != (log is None):
        raise UserError(f"reference '{entry.id}': " + ("a published log is a 'log' entry: leave out the figures"
                                                       if log is not None else "a 'log' entry needs its LOG"))
    text = read_text(log) if log is not None else ""
    board = read_figures(entry) if log is None else read(entry, text)
    if not board.result.measurements and not entry.figures:
        raise UserError(f"reference '{entry.id}': no figure to store")
    run_dir = _entry_dir(Path(results) / STORE_DIR, entry.id)
    name = run_dir.name
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        if log is not None:
            copy = run_dir / f"{name}.txt"
            copy.write_text(text, encoding="utf-8")
            board.result.logs.append(copy.name)
    except OSError as exc:
        raise UserError(f"cannot write the reference to {run_dir}: {exc.strerror or exc}") from None
    run = Run(name, store.utc_now(), command=command or ["sslbench", "import", "--reference", str(log)],
              matrix={"reference": {entry.id: entry.to_dict()}, "notes": board.notes}, hosts=[board.result],
              source=SOURCE)
    store.save_run(run_dir, run)
    return run_dir
