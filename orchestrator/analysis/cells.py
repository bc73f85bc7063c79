"""A measured cell: its key, its samples, and the grouping of a host's measurements into cells.

A cell is one figure a benchmark kind (orchestrator/kinds) measures on a host. For `openssl speed`: algorithm ×
api × operation × threads × block size × cpu (the cluster a single-thread cell was pinned to on a big.LITTLE
host); for a tunnel: tunnel × implementation × direction × streams. `Key` names those fields and the kind; every
module that asks "is this the same figure?" (diff, trend, verdicts, tables, report, insights, import) uses it, and
figures of two kinds never share one. The samples of a cell are the values of its ok measurements (in its kind's
unit): one per `--repeat` index, or pooled over several runs.

Not to be confused with `matrix.CellPlan`: one planned `openssl speed` invocation, which measures a cell per
block size (or per public-key operation).
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple

from orchestrator import kinds, stats
from orchestrator.kinds import RunContext
from orchestrator.model import ALL_FLAGS, BUSY, OK, SPEED, UNSUPPORTED, HostResult, Measurement, Run

# The flags that make a figure less comparable, carried from measurements and hosts to their cells.
CARRIED_FLAGS = frozenset(ALL_FLAGS)


class Key(NamedTuple):
    """What makes repeats of one figure the same cell: the one home of a figure's key (diff rows, tables, reports
    and verdicts take it from here). Figures of different kinds never share a key."""

    algorithm: str
    api: str | None  # "evp", "legacy", or None (public-key cells, logs that cannot tell, tunnels)
    operation: str | None  # "sign", "verify", ... for public-key cells; FORWARD/REVERSE for tunnels; else None
    threads: int  # openssl's -multi N; a tunnel's iperf3 streams
    block_size: int | None  # None for public-key cells and tunnels
    cpu: str | None = None  # cluster label of a pinned big.LITTLE cell; None unpinned, or after best_core
    kind: str = SPEED  # the benchmark kind (orchestrator/kinds)
    implementation: str | None = None  # a tunnel's implementation ("kernel", "wireguard-go" ...)


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
    """Tables list cells by kind (openssl speed first), algorithm, api, operation, threads, block size, cluster,
    implementation (None before any value)."""
    algorithm, api, operation, threads, block, cpu, kind, implementation = key
    return (kind != SPEED, kind, algorithm, api or "", operation or "", threads, -1 if block is None else block,
            cpu or "", implementation or "")


def label(key: Key) -> str:
    """A cell as people name it, as its kind says: 'aes-256-gcm 1024 B evp t1', 'rsa2048 sign t4',
    'sha256 16384 B t1 Cortex-A76', 'wireguard kernel forward t1'."""
    return kinds.get(key.kind).label(key)


def key_cells(key: Key) -> tuple[str, str, Any, Any]:
    """A cell in a table's key columns (algorithm, api, threads, block / op), as its kind lays them out."""
    return kinds.get(key.kind).key_cells(key)


@dataclass
class Cell:
    """A measured cell of one host: its samples and what makes them less comparable."""

    samples: list[float] = field(default_factory=list)  # values of the ok measurements
    flags: set[str] = field(default_factory=set)  # CARRIED_FLAGS, and unsupported, error, invalid
    unit: str = "B/s"  # its kind's unit: "B/s" throughput, "ops/s" public-key operations, "bit/s" tunnels
    # How its samples were measured: its kind's method id -> the version said of that side (the openssl whose
    # `speed` measured so; a tunnel's firmware); one entry, unless a pool mixes methods. Its kind's `compare` tells
    # whether two sides can be compared.
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


def host_cells(result: HostResult, busy_below: float | None = None,
               into: dict[Key, Cell] | None = None, timer: str | None = None,
               aead: bool | None = False) -> dict[Key, Cell]:
    """Group a host's measurements into cells (adding to `into` pools several runs of one firmware).

    `busy_below`: the seconds a progress line of the run must reach (evidence.validity.busy_below of the run's
    requested_seconds); a figure timed for less flags its cell busy. `timer`: run_timer of the run, `aead`:
    run_aead of the run (None: unknown, read from each algorithm's block lengths where they tell): what a kind's
    method may depend on (Cell.methods). Each figure's value and unit are its kind's.
    """
    cells: dict[Key, Cell] = {} if into is None else into
    host_flags = {f for f in result.flags if f in CARRIED_FLAGS}
    # A progress line "… in 2.10s" on a 3 s cell: the process got less CPU than it asked for (validity.short_cpu_time,
    # as a threshold: this is the hot loop of a 50,000-cell diff, keep it plain).
    isfinite, fields, make_key = math.isfinite, _key_fields, Key._make
    kind = kinds.get(SPEED)
    for m in result.measurements:
        if m.kind != kind.name:
            kind = kinds.get(m.kind)
        key = fields(m)
        cell = cells.get(key)  # type: ignore[call-overload]  # a plain tuple: named tuples hash and compare as tuples
        if cell is None:
            cell = cells[make_key(key)] = Cell(unit=kind.unit_of(m))
            cell.flags.update(host_flags)
        if m.status != OK:
            cell.flags.add("unsupported" if m.status == UNSUPPORTED else "error")
            continue
        value = kind.value(m)
        if value is not None:
            if isfinite(value):
                cell.samples.append(float(value))
            else:
                cell.flags.add("invalid")  # openssl printed inf/nan: the cell ran for ~0 s
        if m.flags:
            cell.flags.update(f for f in m.flags if f in CARRIED_FLAGS)
        if busy_below is not None and m.seconds is not None and m.seconds < busy_below:
            cell.flags.add(BUSY)
    _add_methods(result, cells, RunContext(timer, aead))
    return cells


def _add_methods(result: HostResult, cells: dict[Key, Cell], context: RunContext) -> None:
    """One method per cell of this result, as its kind says (a pool keeps each run's)."""
    by_kind: dict[str, list[Key]] = {}
    for key in {_key_fields(m) for m in result.measurements}:
        by_kind.setdefault(key[6], []).append(Key._make(key))
    for name, keys in by_kind.items():
        for key, (method, said) in kinds.get(name).cell_methods(result, keys, context).items():
            cells[key].methods.setdefault(method, said)


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
