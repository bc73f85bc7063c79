"""A known board's entry as boards.toml (or `sslbench import --reference`) gives it: the published figures' board,
CPU, OpenSSL version, `openssl speed` options and source, every problem a UserError; and what such figures cannot
tell. Reading an entry into a host result is the package's (orchestrator/reference/__init__.py).
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.errors import UserError
from orchestrator.logfiles import read_text
from orchestrator.model import REFERENCE

KNOWN_DIR = Path(__file__).resolve().parent / "known"
BOARDS_FILE = "boards.toml"
SOURCE = REFERENCE  # Run.source of reference runs
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

    def to_dict(self) -> dict[str, str | int]:
        """As run.json keeps it in an entry: block and threads "unknown" when the source does not state them."""
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

    def to_dict(self) -> dict[str, object]:
        """The entry as JSON (a reference run's matrix keeps it, by id): entries_of reads it back."""
        out: dict[str, object] = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "figures"}
        out["figures"] = [f.to_dict() for f in self.figures]
        return out

    @property
    def summary(self) -> bool:
        return self.kind == FIGURES


def load_entries(directory: Path = KNOWN_DIR) -> list[Entry]:
    path = directory / BOARDS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"cannot read the known boards in {path}: {exc}") from None
    return [entry_of(item, str(path)) for item in data.get("board", [])]


def entry_of(item: dict[str, object], where: str) -> Entry:
    """An entry from a boards.toml table (or `import --reference`'s options): every problem a UserError."""
    missing = [key for key in REQUIRED if not str(item.get(key, "")).strip()]
    if missing:
        raise UserError(f"{where}: a reference entry lacks {', '.join(missing)}")
    where = f"{where}: reference '{item['id']}'"
    unknown = sorted(set(item) - set(Entry.__dataclass_fields__) - {"figure"})
    if unknown:
        raise UserError(f"{where}: unknown key(s) {', '.join(unknown)} (keys: {', '.join(Entry.__dataclass_fields__)})")
    known = {name: str(value) for name, value in item.items()
             if name in Entry.__dataclass_fields__ and name != "figures"}  # figures: read below
    entry = Entry(figures=[], **known)
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


def figure_of(item: dict[str, object], entry: Entry, where: str) -> Figure:
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


def _count(text: object, where: str, name: str) -> int | None:
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


def entry_file(path: Path) -> dict[str, object]:
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


def not_told(entry: dict[str, object] | Entry) -> str:
    """What the published figures cannot tell, in words: API, threads, -elapsed, the measuring method."""
    e = entry.to_dict() if isinstance(entry, Entry) else entry
    options, version = str(e.get("options", UNKNOWN)), str(e.get("openssl", UNKNOWN))
    api = api_of(options)
    parts = [f"API {api}" if api else "API unknown"]
    if options.strip().lower() == UNKNOWN:
        parts.append("-elapsed unknown")
    else:
        parts.append("-elapsed" if "-elapsed" in options else "not -elapsed (CPU time)")
    figures = stored_figures(e)
    if any(f.get("threads") == UNKNOWN for f in figures) or (str(e.get("kind")) == FIGURES and e.get("table")
                                                               and "-multi" not in options):
        parts.append("threads not stated")
    if any(f.get("block") == UNKNOWN for f in figures):
        parts.append("block size not stated")
    parts.append(f"OpenSSL {version}" if version.lower() != UNKNOWN else "OpenSSL version unknown: method unknown")
    return "; ".join(parts)


def stored_figures(entry: dict[str, object]) -> list[dict[str, object]]:
    """The figures of an entry as run.json keeps it (Entry.to_dict): [] when it has none."""
    figures = entry.get("figures")
    return [f for f in figures if isinstance(f, dict)] if isinstance(figures, list) else []
