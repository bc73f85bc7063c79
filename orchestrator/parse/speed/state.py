"""What the readers of one `openssl speed` log share: the figures read so far (Row) and State.

The log is read line by line (orchestrator/parse/speed/__init__.py dispatches each line to the reader of
its format); every reader only adds to State. Nothing is decided before the last line: units, names,
the -multi summary against its children and the progress counts are resolved at the end (resolve.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.model import OpenSSLBuild

# openssl's default block sizes: 1.0.x and LibreSSL, then 1.1.0 on (a table with no header has these).
SIZES_1_0 = (16, 64, 256, 1024, 8192)
SIZES_1_1 = (16, 64, 256, 1024, 8192, 16384)

ORPHAN = -1  # Row.child of a -multi child's line that lost its `Got: … from N` frame: counted nowhere


@dataclass(slots=True)  # one per table cell: no per-instance __dict__ (less memory, less for the GC to walk)
class Row:
    """A throughput or public-key figure before the whole log has been read."""

    label: str  # as printed (decides api)
    algorithm: str
    block_size: int | None = None
    value: float | None = None  # bytes/s or ops/s
    operation: str | None = None
    child: int | None = None  # the -multi child it came from (`Got: … from N`), ORPHAN, or None: the parent's
    pk_key: tuple[Any, ...] | None = None  # (family, bits, op) or (name, None, op), to match progress lines
    error: str | None = None  # why openssl's figure is not a measurement
    unsupported: str | None = None  # why the build did not run it
    core: str | None = None  # the CPU core a per-cluster row names (sbc-bench `… (Cortex-A53)`)
    flag: str | None = None  # a validity flag of the figure (partial-children) and why
    flag_reason: str | None = None


@dataclass
class State:
    """Everything read so far from one log, by what it is for."""

    # The build and the command
    build: OpenSSLBuild = field(default_factory=OpenSSLBuild)
    seen_block: bool = False  # a version block line was read (a headerless -multi summary may follow)
    hints: dict[str, Any] | None = None  # what an `openssl speed …` command line in the log asks for (speed_command_hints)
    ops_format: bool = False  # 3.2+ progress lines (`… ops in 2.99s`)
    elapsed: bool = False  # timed by wall clock: `-elapsed` on its command line, or openssl said so

    # Figures, in the order read
    rows: list[Row] = field(default_factory=list)
    pk_seconds_lines: list[Any] = field(default_factory=list[Any])  # [family, name, bits, values, child] of `-mr` lines in
    #                                                       seconds/op or ops/s (≤ 1.1.0 or later): decided at the end
    mr_old_format: bool | None = None  # what the -mr lines themselves say of that unit (see pk.old_pk_format)

    # Human tables
    sizes: tuple[int, ...] | None = None  # block sizes of the throughput header (or the parent's `+H`)
    pk_table: str | None = None  # "kem" / "sig" after a KEM / signature table's header, else None
    pk_header_words: frozenset[str] | None = None  # the last line's public-key header words (a header wrapped in two)

    # Lines that may continue on the next line
    wrapped: tuple[str, str] | None = None  # (kind, line) cut by a mail client: "header" / "row" / "pk" / "got"
    wrapped_row: tuple[Any, ...] | None = None  # (label, values, core, sizes_by_count) of a "row" waiting for the rest
    elided: bool = False  # the line being read ended in an elision marker (`— snip —`, `[...]`, `…`: lines.Elided)
    pending_progress: str | None = None  # a `Doing …` line whose result has not come yet
    pending_dt: tuple[str, int] | None = None  # `+DT:name:tm:size`, waiting for its `+R`
    pending_dtp: tuple[Any, ...] | None = None  # `+DTP:…` as a progress key, waiting for its `+Rn`

    # Progress lines: count and CPU seconds per test, in run order
    progress: dict[tuple[Any, ...], list[tuple[int, float]]] = field(default_factory=dict)  # ("sym", alg, size) /
    #                                                                              ("pk",) + pk_key -> runs
    progress_labels: dict[str, str] = field(default_factory=dict)  # algorithm -> its name as progress lines print it
    kem_names: list[str] = field(default_factory=list)  # KEM names in run order (they name `+F9` lines)
    sig_names: list[str] = field(default_factory=list)  # signature names in run order (`+F10`)
    failed_tests: set[str] = field(default_factory=set)  # NAME of `NAME error!` lines (canonical)

    # -multi
    forked: set[int] = field(default_factory=set)  # N of `Forked child N`
    children: set[int] = field(default_factory=set)  # N of intact `Got: … from N` lines
    child_sizes: dict[int, tuple[int, ...]] = field(default_factory=dict)  # each child's `+H`
    bare: list[Any] = field(default_factory=list[Any])  # what `-mr` lines without `Got:` gave since the last `Got:` line
    orphans: int = 0  # children's lines that lost their `Got: … from N` frame

    # What the user is told
    skipped: list[str] = field(default_factory=list)  # what could not be read, and why
    ignored: list[str] = field(default_factory=list)  # lines that are not speed output (a session's facts)
