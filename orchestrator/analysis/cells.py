"""A measured cell: its key, its samples, and the grouping of a host's measurements into cells.

A cell is one figure `openssl speed` measures on a host: algorithm × api × operation × threads × block size
× cpu (the cluster a single-thread cell was pinned to on a big.LITTLE host). `Key` names those six fields;
every module that asks "is this the same figure?" (diff, tables, report, insights, import) uses it. The
samples of a cell are the values of its ok measurements: one per `--repeat` index, or pooled over several runs.

Not to be confused with `matrix.CellPlan`: one planned `openssl speed` invocation, which measures a cell per
block size (or per public-key operation).
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple

from orchestrator import methods, stats
from orchestrator.model import ALL_FLAGS, BUSY, OK, UNSUPPORTED, HostResult, Measurement, Run

# The flags that make a figure less comparable, carried from measurements and hosts to their cells.
CARRIED_FLAGS = frozenset(ALL_FLAGS)


class Key(NamedTuple):
    """What makes repeats of one figure the same cell."""

    algorithm: str
    api: str | None  # "evp", "legacy", or None (public-key cells, logs that cannot tell)
    operation: str | None  # "sign", "verify", ... for public-key cells; None for throughput
    threads: int
    block_size: int | None  # None for public-key cells
    cpu: str | None = None  # cluster label of a pinned big.LITTLE cell; None unpinned, or after best_core


# A measurement's key fields as a plain tuple in Key's order: one C call per measurement (a 50,000-cell diff
# reads 500,000). A plain tuple equals and hashes like the Key with the same fields, so it finds that Key in a
# dict; host_cells makes the Key itself once per cell.
_key_fields = operator.attrgetter(*Key._fields)


def key_of(m: Measurement) -> Key:
    """The Key of a measurement."""
    return Key._make(_key_fields(m))


_record_key_fields = operator.itemgetter(*Key._fields)


def record_key(record: Mapping[str, Any]) -> Key:
    """The Key of a flat record (tables.records: a Measurement's fields in a dict)."""
    return Key._make(_record_key_fields(record))


def sort_key(key: Key) -> tuple[Any, ...]:
    """Tables list cells by algorithm, api, operation, threads, block size, cluster (None before any value)."""
    algorithm, api, operation, threads, block, cpu = key
    return (algorithm, api or "", operation or "", threads, -1 if block is None else block, cpu or "")


def label(key: Key) -> str:
    """A cell as people name it: 'aes-256-gcm 1024 B evp t1', 'rsa2048 sign t4', 'sha256 16384 B t1 Cortex-A76'."""
    parts = [key.algorithm, key.operation if key.operation else ("" if key.block_size is None else f"{key.block_size} B"),
             key.api or "", f"t{key.threads}", key.cpu or ""]
    return " ".join(part for part in parts if part)


@dataclass
class Cell:
    """A measured cell of one host: its samples and what makes them less comparable."""

    samples: list[float] = field(default_factory=list)  # values of the ok measurements
    flags: set[str] = field(default_factory=set)  # CARRIED_FLAGS, and unsupported, error, invalid
    unit: str = "B/s"  # "B/s" for throughput, "ops/s" for public-key operations
    # How its samples were measured: methods.method_id -> the openssl version whose `speed` measured so (one
    # entry, unless a pool mixes methods); methods.compare tells whether two sides can be compared.
    methods: dict[str, str | None] = field(default_factory=dict)


def requested_seconds(run: Run) -> float | None:
    """The `-seconds N` a run asked openssl for per cell (from run.matrix), None when openssl's defaults ran.

    For one planned invocation, with openssl's defaults filled in, see validity.nominal_seconds.
    """
    for key in ("seconds", "seconds_per_cell"):
        value = run.matrix.get(key) if isinstance(run.matrix, dict) else None
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
    return None


def run_timer(run: Run) -> str | None:
    """How the run's openssl timed its cells: "elapsed" (sslbench run; an import of -elapsed logs), "cpu", or
    None (unknown, or mixed)."""
    value = run.matrix.get("timing") if isinstance(run.matrix, dict) else None
    return value if value in ("elapsed", "cpu") else None


def run_aead(run: Run) -> bool | None:
    """Whether the run's `openssl speed` was given -aead: False for sslbench's own runs (matrix.plan_host never
    passes it), the matrix's "aead" where an import recorded it, else None (unknown; host_cells then reads the
    block lengths)."""
    value = run.matrix.get("aead") if isinstance(run.matrix, dict) else None
    if isinstance(value, bool):
        return value
    return False if run.source == "run" else None


# Block lengths only `openssl speed -aead` uses (1.1.1+: 2, 31, 136, 1024, 8192, 16384), and ones only the plain
# list has (16, 64, 256): what tells an imported log's -aead cells from plain -evp ones.
_AEAD_ONLY_SIZES = frozenset((2, 31, 136))
_PLAIN_ONLY_SIZES = frozenset((16, 64, 256))


def _aead_use(result: HostResult, aead: bool | None) -> dict[str, bool | None]:
    """Per AEAD-flagged algorithm of the result, whether its cells were measured with -aead (None: unknown)."""
    sizes: dict[str, set[int]] = {}
    for m in result.measurements:
        if m.block_size is not None and methods.aead_flagged(m.algorithm):
            sizes.setdefault(m.algorithm, set()).add(m.block_size)
    out: dict[str, bool | None] = {}
    for algorithm, seen in sizes.items():
        with_aead, plain = bool(seen & _AEAD_ONLY_SIZES), bool(seen & _PLAIN_ONLY_SIZES)
        out[algorithm] = aead if aead is not None or with_aead == plain else with_aead
    return out


def speed_version(result: HostResult) -> str | None:
    """The version of the `openssl speed` that measured the host's figures: the program's where recorded, else
    libcrypto's (what an imported speed log prints), else the one its measurements carry."""
    build = result.openssl
    version = build.program_version or build.version or build.library_version
    return version or next((m.openssl_version for m in result.measurements if m.openssl_version), None)


def host_cells(result: HostResult, busy_below: float | None = None,
               into: dict[Key, Cell] | None = None, timer: str | None = None,
               aead: bool | None = False) -> dict[Key, Cell]:
    """Group a host's measurements into cells (adding to `into` pools several runs of one firmware).

    `busy_below`: the seconds a progress line of the run must reach (evidence.validity.busy_below of the run's
    requested_seconds); a figure timed for less flags its cell busy. `timer`:
    run_timer of the run, part of each cell's method (Cell.methods). `aead`: run_aead of the run (None: unknown,
    read from each algorithm's block lengths where they tell).
    """
    cells: dict[Key, Cell] = {} if into is None else into
    host_flags = {f for f in result.flags if f in CARRIED_FLAGS}
    # A progress line "… in 2.10s" on a 3 s cell: the process got less CPU than it asked for (validity.short_cpu_time,
    # as a threshold: this is the hot loop of a 50,000-cell diff, keep it plain).
    isfinite, fields, make_key = math.isfinite, _key_fields, Key._make
    for m in result.measurements:
        key = fields(m)
        cell = cells.get(key)  # type: ignore[call-overload]  # a plain tuple: named tuples hash and compare as tuples
        if cell is None:
            cell = cells[make_key(key)] = Cell(unit="B/s" if m.operation is None else "ops/s")
            cell.flags.update(host_flags)
        if m.status != OK:
            cell.flags.add("unsupported" if m.status == UNSUPPORTED else "error")
            continue
        value = m.bytes_per_second if m.operation is None else m.ops_per_second
        if value is not None:
            if isfinite(value):
                cell.samples.append(float(value))
            else:
                cell.flags.add("invalid")  # openssl printed inf/nan: the cell ran for ~0 s
        if m.flags:
            cell.flags.update(f for f in m.flags if f in CARRIED_FLAGS)
        if busy_below is not None and m.seconds is not None and m.seconds < busy_below:
            cell.flags.add(BUSY)
    version = speed_version(result)
    method_id = methods.method_id
    aead_use = _aead_use(result, aead)
    for key in {fields(m) for m in result.measurements}:  # one method per cell of this result
        size = key[4]
        used = (True if size in _AEAD_ONLY_SIZES else False if size in _PLAIN_ONLY_SIZES else
                aead_use.get(key[0], aead)) if aead is None else aead
        cells[key].methods.setdefault(  # type: ignore[index]
            method_id(key[0], key[1], key[2], version, timer, used), version)
    return cells


def medians(cells: Mapping[Key, Cell]) -> dict[Key, float]:
    """The median of every cell with at least one sample."""
    return {key: stats.median(cell.samples) for key, cell in cells.items() if cell.samples}


def best_core(values: Mapping[Key, float]) -> dict[Key, float]:
    """One value per cell regardless of cluster, the best cluster's (its key has cpu None): on a big.LITTLE host
    what one flow gets on a big core. Unpinned cells pass through."""
    out: dict[Key, float] = {}
    for key, value in values.items():
        if key.cpu is not None:
            key = key._replace(cpu=None)
        if value > out.get(key, -math.inf):
            out[key] = value
    return out
