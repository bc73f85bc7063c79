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

import hashlib

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator import store
from orchestrator.analysis.cells import Key, best_core, host_cells, key_of, medians
from orchestrator.errors import UserError
from orchestrator.logfiles import read_text
from orchestrator.model import LINE_BLOCKS, REFERENCE, CpuFacts, HostResult, Measurement, OpenSSLBuild, Run
from orchestrator.parse import parse_console

KNOWN_DIR = Path(__file__).resolve().parent / "known"
BOARDS_FILE = "boards.toml"
RUN_ID = "reference"  # the run every reference host is shown in: tables label its hosts "<id> (reference)"
SOURCE = REFERENCE  # Run.source of reference runs
STORE_DIR = "reference"  # <results>/reference/<id>/ holds the entries `sslbench import --reference` added
REQUIRED = ("id", "board", "source")
UNKNOWN = "unknown"
LOG, FIGURES = "log", "figures"  # Entry.kind: a whole published log (<id>.txt), or a table row / a few figures
KINDS = (LOG, FIGURES)
UNITS = {"k": 1000.0, "B/s": 1.0}  # "k": openssl's "1000s of bytes per second processed" (a value printed "123.45k")
ALL_THREADS = "all"  # a figure of `-multi $(nproc)`: threads = the entry's cores


@dataclass
class Figure:
    """One published figure of a summary entry, as printed (`value`), and where it sits when the source says so."""

    algorithm: str
    value: str  # as published: "8271.81k", "785498"
    block: int | None = None  # bytes; None: the source does not say which block size
    threads: int | None = 1  # None: not stated (or "all" without a known core count)
    label: str = ""  # the source's own name of the figure (a column heading, a row name)

    def bytes_per_second(self, unit: str) -> float:
        return figure_value(self.value, unit)

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "value": self.value, "block": self.block if self.block else UNKNOWN,
                "threads": self.threads if self.threads else UNKNOWN, "label": self.label}


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
    kind: str = LOG  # LOG or FIGURES
    accuracy: str = ""  # what the source itself says of its figures' accuracy
    cores: str = UNKNOWN  # CPU count the source gives: a `-multi $(nproc)` figure ran on that many
    unit: str = "k"  # of figures printed without a unit (UNITS)
    table: str = ""  # FIGURES: a published `type ... bytes` header and its row(s), as printed
    figures: list[Figure] = field(default_factory=list)  # FIGURES: single published figures

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "figures"}
        out["figures"] = [f.to_dict() for f in self.figures]
        return out

    @property
    def summary(self) -> bool:
        return self.kind == FIGURES


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
    """An entry from a boards.toml table (or `import --reference`'s options): every problem a UserError."""
    missing = [key for key in REQUIRED if not str(item.get(key, "")).strip()]
    if missing:
        raise UserError(f"{where}: a reference entry lacks {', '.join(missing)}")
    where = f"{where}: reference '{item['id']}'"
    unknown = sorted(set(item) - set(Entry.__dataclass_fields__) - {"figure"})
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(unknown)} (keys: {', '.join(Entry.__dataclass_fields__)})")
    known: dict[str, Any] = {name: str(value) for name, value in item.items()
                             if name in Entry.__dataclass_fields__ and name != "figures"}  # figures: read below
    entry = Entry(**known)
    if entry.kind not in KINDS:
        raise UserError(f"{where}: kind '{entry.kind}' is neither {LOG!r} (a published log) nor {FIGURES!r} "
                        "(a table row or a few published figures)")
    if entry.unit not in UNITS:
        raise UserError(f"{where}: unit '{entry.unit}' is not one of {', '.join(UNITS)}")
    items = item.get("figure", item.get("figures", []))
    if not isinstance(items, list) or not all(isinstance(f, dict) for f in items):
        raise UserError(f"{where}: figures are tables ([[board.figure]]) with algorithm, block, threads and value")
    entry.figures = [figure_of(f, entry, f"{where}, figure {i + 1}") for i, f in enumerate(items)]
    if entry.kind == FIGURES and not (entry.figures or entry.table.strip()):
        raise UserError(f"{where}: a 'figures' entry needs its published figures ([[board.figure]] or table)")
    if entry.kind == LOG and (entry.figures or entry.table.strip()):
        raise UserError(f"{where}: figures or a table belong to kind = \"figures\"; a 'log' entry is its <id>.txt")
    return entry


def figure_of(item: dict[str, Any], entry: Entry, where: str) -> Figure:
    missing = [key for key in ("algorithm", "value") if not str(item.get(key, "")).strip()]
    if missing:
        raise UserError(f"{where}: lacks {', '.join(missing)}")
    extra = sorted(set(item) - {"algorithm", "value", "block", "threads", "label"})
    if extra:
        raise UserError(f"{where}: unknown key(s) {', '.join(extra)} (keys: algorithm, value, block, threads, label)")
    value = str(item["value"]).strip()
    figure_value(value, entry.unit, where)  # a value that is no number fails here, not in a report
    block = _count(item.get("block", UNKNOWN), where, "block")
    threads_text = str(item.get("threads", 1)).strip().lower()
    if threads_text == ALL_THREADS:
        threads = _count(entry.cores, where, "cores") if entry.cores.strip().lower() != UNKNOWN else None
    else:
        threads = _count(threads_text, where, "threads")
    return Figure(str(item["algorithm"]).strip().lower(), value, block, threads, str(item.get("label", "")))


def _count(text: Any, where: str, name: str) -> int | None:
    """A positive whole number, or None for "unknown"."""
    word = str(text).strip().lower()
    if word == UNKNOWN:
        return None
    if not word.isdigit() or int(word) < 1:
        raise UserError(f"{where}: {name} '{text}' is not a positive whole number or \"unknown\"")
    return int(word)


def figure_value(text: str, unit: str, where: str = "a figure") -> float:
    """bytes/s of a published figure: "123.45k" is openssl's 1000s of bytes per second; a bare number has `unit`."""
    word = text.strip().replace(",", "")
    factor = UNITS[unit]
    if word.lower().endswith("k"):
        word, factor = word[:-1], UNITS["k"]
    try:
        number = float(word)
    except ValueError:
        raise UserError(f"{where}: value '{text}' is not a number (as openssl prints it: 8271.81k)") from None
    if not number > 0 or number == float("inf"):
        raise UserError(f"{where}: value '{text}' is not a positive figure")
    return number * factor


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


# `sslbench import --reference --figure ALG:BLOCK[:THREADS]=VALUE`
FIGURE_SPEC = re.compile(r"^(?P<algorithm>[^:=\s]+):(?P<block>[^:=\s]+)(?::(?P<threads>[^:=\s]+))?=(?P<value>\S+)$")


def figure_spec(spec: str) -> dict[str, str]:
    """--figure ALG:BLOCK[:THREADS]=VALUE as a boards.toml figure table (reference.figure_of checks the values)."""
    match = FIGURE_SPEC.match(spec.strip())
    if not match:
        raise UserError(f"--figure '{spec}': write ALGORITHM:BLOCK[:THREADS]=VALUE, e.g. aes-128-gcm:16384=646187.19k "
                        "or aes-128-gcm:unknown:all=3101794")
    item = {k: v for k, v in match.groupdict().items() if v is not None}
    item["label"] = f"--figure {spec.strip()}"
    return item


def entry_file(path: Path) -> dict[str, Any]:
    """`--entry FILE.toml`: one entry, its keys at the top level or as one [[board]] table (kind "figures" unless
    the file says otherwise)."""
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not a TOML entry file: {exc}") from None
    boards = data.get("board")
    if isinstance(boards, list):  # a [[board]] table copied from boards.toml
        if len(boards) != 1 or set(data) != {"board"}:
            raise UserError(f"{path}: give one entry: one [[board]] table, or its keys at the top level")
        data = boards[0]
    if not isinstance(data, dict):
        raise UserError(f"{path}: not an entry")
    data.setdefault("kind", FIGURES)
    return data


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


def not_told(entry: dict[str, Any] | Entry) -> str:
    """What the published figures cannot tell, in words: API, threads, -elapsed, the measuring method."""
    e = entry.to_dict() if isinstance(entry, Entry) else entry
    options, version = str(e.get("options", UNKNOWN)), str(e.get("openssl", UNKNOWN))
    api = api_of(options)
    parts = [f"API {api}" if api else "API unknown"]
    if options.strip().lower() == UNKNOWN:
        parts.append("-elapsed unknown")
    else:
        parts.append("-elapsed" if "-elapsed" in options else "not -elapsed (CPU time)")
    figures = e.get("figures") or []
    if any(f.get("threads") == UNKNOWN for f in figures) or (str(e.get("kind")) == FIGURES and e.get("table")
                                                               and "-multi" not in options):
        parts.append("threads not stated")
    if any(f.get("block") == UNKNOWN for f in figures):
        parts.append("block size not stated")
    parts.append(f"OpenSSL {version}" if version.lower() != UNKNOWN else "OpenSSL version unknown: method unknown")
    return "; ".join(parts)


def shipped(directory: Path = KNOWN_DIR) -> list[Board]:
    return [read_entry(entry, directory) for entry in load_entries(directory)]


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


# The figures a line-rate comparison quotes of a known board, in order of preference: the AEADs of
# insights.line_rates first, then aes-128-gcm (router-map's and many router threads' cipher), then any other.
QUOTE_ALGORITHMS = ("aes-256-gcm", "chacha20-poly1305", "aes-128-gcm")


@dataclass
class Quote:
    """The figure of a known board to set beside a user's line rate: one algorithm, one block (None: the source
    does not say which), one core and all cores (bytes/s), and whether it is a cell of the tables or a figure kept
    only as published."""

    algorithm: str
    block: int | None
    one_core: float | None
    all_cores: float | None
    cores: int | None
    placed: bool
    flags: list[str] = field(default_factory=list)  # of the quoted cells (partial: read from progress lines)

    @property
    def text(self) -> str:
        block = f"{self.block} B" if self.block else "block not stated"
        flags = f" [{', '.join(self.flags)}]" if self.flags else ""
        return f"{self.algorithm} {block}{flags}"


def entries_of(run: Run) -> dict[str, dict[str, Any]]:
    """The entries (Entry.to_dict) of a reference run, by id; {} for any other run."""
    if run.source != SOURCE:
        return {}
    entries = run.matrix.get("reference") or {}
    return {str(k): v for k, v in entries.items() if isinstance(v, dict)}


def quote(entry: dict[str, Any], result: HostResult) -> Quote | None:
    """The figure to quote for a known board (QUOTE_ALGORITHMS first; the smallest block of LINE_BLOCKS measured,
    else the largest; a cell before a figure the source gives without block size), or None without throughput."""
    candidates: list[tuple[str, int | None, int, float, bool]] = []  # algorithm, block, threads, bytes/s, placed
    cells = host_cells(result)
    for key, value in best_core(medians(cells)).items():
        if key.operation is None and key.block_size is not None:
            candidates.append((key.algorithm, key.block_size, key.threads, value, True))
    unit = str(entry.get("unit", "k"))
    for f in entry.get("figures") or []:
        block, threads = f.get("block"), f.get("threads")
        if isinstance(block, int) and isinstance(threads, int):
            continue  # a cell already
        try:
            value = figure_value(str(f.get("value", "")), unit if unit in UNITS else "k")
        except UserError:
            continue
        candidates.append((str(f.get("algorithm", "")), block if isinstance(block, int) else None,
                           threads if isinstance(threads, int) else 0, value, False))
    if not candidates:
        return None
    algorithms = list(dict.fromkeys(c[0] for c in candidates))
    algorithm = min(algorithms, key=lambda a: (QUOTE_ALGORITHMS.index(a) if a in QUOTE_ALGORITHMS
                                               else len(QUOTE_ALGORITHMS), a))
    rows = [c for c in candidates if c[0] == algorithm]
    placed = any(c[4] for c in rows)
    rows = [c for c in rows if c[4] == placed]
    blocks = sorted({c[1] for c in rows if c[1] is not None})
    in_range = [b for b in blocks if LINE_BLOCKS[0] <= b <= LINE_BLOCKS[1]]
    block = in_range[0] if in_range else (blocks[-1] if blocks else None)
    rows = [c for c in rows if c[1] == block]
    one = max((c[3] for c in rows if c[2] == 1), default=None)
    multi = max(((c[2], c[3]) for c in rows if c[2] != 1), default=None)
    cores = multi[0] if multi and multi[0] > 1 else None
    flags = sorted({flag for key, cell in cells.items() if placed and key.algorithm == algorithm
                    and key.block_size == block and key.operation is None for flag in cell.flags})
    return Quote(algorithm, block, one, multi[1] if multi else None, cores, placed, flags)


def summary_note(run: Run) -> list[str]:
    """What a table of a reference run cannot show by its labels: which known boards are summary figures (a
    published row or ranking, not a log) and that their figures without block size or threads are in no table."""
    entries = entries_of(run)
    summaries = sorted(name for name, e in entries.items() if e.get("kind") == FIGURES)
    if not summaries:
        return []
    loose = sum(1 for name in summaries for f in entries[name].get("figures") or []
                if not (isinstance(f.get("block"), int) and isinstance(f.get("threads"), int)))
    return [f"{len(summaries)} known boards are summary figures (a published table row or ranking, not a log): "
            f"{', '.join(summaries)}; {loose} of their figures state no block size or threads and are in no table "
            "(report --view line-rate and the site's comparison pages list them as published)"]
