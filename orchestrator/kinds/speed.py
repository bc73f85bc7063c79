"""`openssl speed`: crypto throughput (bytes/s per block size) and public-key operations (ops/s) of a host's OpenSSL.

Its planner is run/matrix.py (the cells a host's OpenSSL can run), its host script playbooks/files/sslbench-run.sh
(one `openssl speed` per cell), its parser parse/speed (every openssl and LibreSSL layout), and its method the
table of methods.py (what apps/speed.c times changed in some releases; the timer; -aead).
"""
from __future__ import annotations

from typing import Any, Iterable

from orchestrator import methods
from orchestrator.kinds.registry import Figure, Kind, Needs, Option, RunContext, register
from orchestrator.model import SPEED, HostResult, Measurement

# Block lengths only `openssl speed -aead` uses (1.1.1+: 2, 31, 136, 1024, 8192, 16384), and ones only the plain
# list has (16, 64, 256): what tells an imported log's -aead cells from plain -evp ones.
AEAD_ONLY_SIZES = frozenset((2, 31, 136))
PLAIN_ONLY_SIZES = frozenset((16, 64, 256))


def nominal_seconds(seconds: float | None) -> float:
    """One timed run of a symmetric cell (one block size): -seconds N, else openssl's fixed time (public-key
    operations take methods.FIXED_PUBKEY_SECONDS each where -seconds is missing)."""
    return float(seconds or methods.FIXED_SECONDS)


def value(m: Measurement) -> float | None:
    return m.bytes_per_second if m.operation is None else m.ops_per_second


def unit_of(figure: Figure) -> str:
    return "B/s" if figure.operation is None else "ops/s"


def label(key: Figure) -> str:
    """'aes-256-gcm 1024 B evp t1', 'rsa2048 sign t4', 'sha256 16384 B t1 Cortex-A76'."""
    size = "" if key.block_size is None else f"{key.block_size} B"
    parts = [key.algorithm, key.operation if key.operation else size, key.api or "", f"t{key.threads}", key.cpu or ""]
    return " ".join(part for part in parts if part)


def key_cells(key: Figure) -> tuple[str, str, Any, Any]:
    """algorithm, api, threads (with the cluster of a pinned cell), block size or operation."""
    threads: Any = key.threads if key.cpu is None else f"{key.threads} {key.cpu}"
    return key.algorithm, key.api or "", threads, key.operation or key.block_size


def measured_by(result: HostResult) -> str | None:
    """The version of the `openssl speed` that measured the host's figures: the program's where recorded, else
    libcrypto's (what an imported speed log prints), else the one its measurements carry."""
    build = result.openssl
    version = build.program_version or build.version or build.library_version
    return version or next((m.openssl_version for m in result.measurements
                            if m.openssl_version and m.kind == SPEED), None)


def _aead_use(result: HostResult, aead: bool | None) -> dict[str, bool | None]:
    """Per AEAD-flagged algorithm of the result, whether its cells were measured with -aead (None: unknown)."""
    sizes: dict[str, set[int]] = {}
    for m in result.measurements:
        if m.block_size is not None and m.kind == SPEED and methods.aead_flagged(m.algorithm):
            sizes.setdefault(m.algorithm, set()).add(m.block_size)
    out: dict[str, bool | None] = {}
    for algorithm, seen in sizes.items():
        with_aead, plain = bool(seen & AEAD_ONLY_SIZES), bool(seen & PLAIN_ONLY_SIZES)
        out[algorithm] = aead if aead is not None or with_aead == plain else with_aead
    return out


def cell_methods(result: HostResult, keys: Iterable[Figure], context: RunContext) -> dict[Any, tuple[str, str | None]]:
    """methods.method_id of each cell, with the version of the `openssl speed` that measured it. `context.aead`
    None (unknown): read from each algorithm's block lengths where they tell."""
    version = measured_by(result)
    aead = context.aead
    aead_use = _aead_use(result, aead) if aead is None else {}
    out: dict[Any, tuple[str, str | None]] = {}
    for key in keys:
        size = key.block_size
        used = (True if size in AEAD_ONLY_SIZES else False if size in PLAIN_ONLY_SIZES else
                aead_use.get(key.algorithm, aead)) if aead is None else aead
        out[key] = (methods.method_id(key.algorithm, key.api, key.operation, version, context.timer, used), version)
    return out


SPEED_KIND = register(Kind(
    name=SPEED,
    summary="openssl speed: crypto throughput per block size and public-key operations per second",
    options=(Option("--algorithms", "A,B", "the algorithms openssl speed measures"),
             Option("--sizes", "N,M", "block sizes in bytes"),
             Option("--threads", "1,all", "threads (-multi N)"),
             Option("--api", "evp,legacy", "through EVP and/or the legacy names"),
             Option("--seconds", "N", "seconds per timed run (-seconds; openssl's own default without it)"),
             Option("--repeat", "N", "samples per cell")),
    needs=(Needs("openwrt", ("openssl-util",)), Needs("debian", ("openssl",)), Needs("redhat", ("openssl",)),
           Needs("arch", ("openssl",))),
    nominal_seconds=nominal_seconds,
    planner="orchestrator.run.matrix:plan_host",
    script="files/sslbench-run.sh",
    parser="orchestrator.parse.speed:parse_speed",
    value=value, unit_of=unit_of, label=label, key_cells=key_cells, cell_methods=cell_methods,
    compare=methods.compare,
))
