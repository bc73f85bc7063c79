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
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator import store
from orchestrator.cells import Key, key_of
from orchestrator.errors import UserError
from orchestrator.logfiles import read_text
from orchestrator.model import REFERENCE, CpuFacts, HostResult, Measurement, OpenSSLBuild, Run
from orchestrator.parse import parse_console

KNOWN_DIR = Path(__file__).resolve().parent / "known"
BOARDS_FILE = "boards.toml"
RUN_ID = "reference"  # the run every reference host is shown in: tables label its hosts "<id> (reference)"
SOURCE = REFERENCE  # Run.source of reference runs
STORE_DIR = "reference"  # <results>/reference/<id>/ holds the entries `sslbench import --reference` added
REQUIRED = ("id", "board", "source")
UNKNOWN = "unknown"


@dataclass
class Entry:
    """One published log and what its source says about it (boards.toml's keys; every value a string)."""

    id: str
    board: str
    source: str
    cpu: str = UNKNOWN
    arch: str = UNKNOWN
    openssl: str = UNKNOWN
    options: str = UNKNOWN
    retrieved: str = UNKNOWN
    notes: str = ""
    clusters: str = ""  # "Cortex-A53,Cortex-A72": the clusters of unlabelled per-cluster rows, in row order

    def to_dict(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass
class Board:
    """An entry read: its host result (host = the entry's id) and what reading it left out."""

    entry: Entry
    result: HostResult
    notes: list[str] = field(default_factory=list)


def load_entries(directory: Path = KNOWN_DIR) -> list[Entry]:
    path = directory / BOARDS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"cannot read the known boards in {path}: {exc}") from None
    return [entry_of(item, str(path)) for item in data.get("board", [])]


def entry_of(item: dict[str, Any], where: str) -> Entry:
    missing = [key for key in REQUIRED if not str(item.get(key, "")).strip()]
    if missing:
        raise UserError(f"{where}: a reference entry lacks {', '.join(missing)}")
    known = {name: str(value) for name, value in item.items() if name in Entry.__dataclass_fields__}
    return Entry(**known)


def api_of(options: str) -> str | None:
    """'evp' when the published command line has -evp, 'legacy' when it is known without, None when unknown."""
    if not options.strip() or options.strip().lower() == UNKNOWN:
        return None
    return "evp" if re.search(r"(?<!\S)-evp(?!\S)", options) else "legacy"


def per_cluster(entry: Entry) -> bool:
    """The entry says each command ran once per CPU cluster."""
    return "per cluster" in entry.options or "<cluster>" in entry.options


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


def shipped(directory: Path = KNOWN_DIR) -> list[Board]:
    boards = []
    for entry in load_entries(directory):
        path = directory / f"{entry.id}.txt"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot read the known board log {path}: {exc.strerror or exc}") from None
        boards.append(read(entry, text))
    return boards


def stored(results: Path) -> list[Run]:
    """The reference entries `sslbench import --reference` added to this store."""
    root = Path(results) / STORE_DIR
    if not root.is_dir():
        return []
    return [store.load_run(path) for path in store.list_runs(root)]


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
    created = max((e.get("retrieved", "") for e in entries.values()), default="")
    return Run(RUN_ID, created, command=["sslbench", "reference"], matrix={"reference": entries, "notes": notes},
               hosts=hosts, source=SOURCE), notes


def add(entry: Entry, log: Path, results: Path) -> Path:
    """Store a reference entry (`sslbench import --reference`): <results>/reference/<id>/run.json and the log."""
    text = read_text(log)
    board = read(entry, text)
    name = store.safe_name(entry.id)
    run_dir = Path(results) / STORE_DIR / name
    if (run_dir / store.RUN_FILE).exists():
        raise UserError(f"a reference '{entry.id}' is already stored in {run_dir}; remove it first to replace it")
    run_dir.mkdir(parents=True, exist_ok=True)
    copy = run_dir / f"{name}.txt"
    copy.write_text(text, encoding="utf-8")
    board.result.logs.append(copy.name)
    run = Run(name, store.utc_now(), command=["sslbench", "import", "--reference", str(log)],
              matrix={"reference": {entry.id: entry.to_dict()}, "notes": board.notes}, hosts=[board.result],
              source=SOURCE)
    store.save_run(run_dir, run)
    return run_dir
