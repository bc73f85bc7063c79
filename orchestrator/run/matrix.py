"""What each host's OpenSSL can run, and the list of `openssl speed` cells it will run: the planner of the
openssl-speed benchmark kind (orchestrator/kinds/speed.py names it, and gives the time of one timed run).

Pure: version strings and user choices in, plain data out.  The cells become a text file
(`id<TAB>pin<TAB>args` per line) that playbooks/files/sslbench-run.sh runs one by one; a cell the host's
OpenSSL cannot run is not sent at all but recorded as an "unsupported" Measurement with the reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from orchestrator import kinds
from orchestrator.errors import UserError
from orchestrator.methods import FIXED_PUBKEY_SECONDS, FIXED_SECONDS
from orchestrator.model import SPEED, UNSUPPORTED, Measurement
from orchestrator.run.tunnels import TunnelPlan

DEFAULT_ALGORITHMS = (
    "aes-128-cbc", "aes-256-cbc", "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "sha256", "sha512",
    "rsa2048", "ecdsap256", "ed25519",
)
DEFAULT_THREADS = ("1", "all")
DEFAULT_APIS = ("evp", "legacy")
APIS = ("evp", "legacy")

SIZES_OLD = (16, 64, 256, 1024, 8192)  # up to 1.0.2, and LibreSSL
SIZES_NEW = (16, 64, 256, 1024, 8192, 16384)  # from 1.1.0
TIMING = "elapsed"  # every cell runs with -elapsed (wall clock), recorded in run.json's matrix

# Every token of an `openssl speed` command line: no shell metacharacters can get through.
SAFE_TOKEN = re.compile(r"^-?[A-Za-z0-9][A-Za-z0-9._-]*$")
SAFE_ALGORITHM = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Algorithm:
    """How `openssl speed` knows one algorithm."""

    name: str
    kind: str  # "cipher", "digest" or "pubkey"
    legacy: bool = False  # has a non-EVP name (`openssl speed aes-128-cbc`) besides `-evp aes-128-cbc`
    since: tuple[int, ...] = (0, 9, 8)  # first OpenSSL that has it in speed
    libressl: bool = True  # LibreSSL's speed has it


KNOWN = {
    a.name: a
    for a in (
        Algorithm("aes-128-cbc", "cipher", legacy=True),
        Algorithm("aes-256-cbc", "cipher", legacy=True),
        Algorithm("aes-128-gcm", "cipher", since=(1, 0, 1)),
        Algorithm("aes-256-gcm", "cipher", since=(1, 0, 1)),
        Algorithm("chacha20-poly1305", "cipher", since=(1, 1, 0), libressl=False),
        Algorithm("sha1", "digest", legacy=True),
        Algorithm("sha256", "digest", legacy=True),
        Algorithm("sha512", "digest", legacy=True),
        Algorithm("md5", "digest", legacy=True),
        Algorithm("rsa2048", "pubkey"),
        Algorithm("rsa4096", "pubkey"),
        Algorithm("ecdsap256", "pubkey", since=(1, 0, 0)),
        Algorithm("ecdhp256", "pubkey", since=(1, 0, 0)),
        Algorithm("ed25519", "pubkey", since=(1, 1, 1), libressl=False),
    )
}
_PUBKEY_NAME = re.compile(r"^(rsa|dsa|ecdsa|ecdh|ed|x)\d")


def algorithm_info(name: str) -> Algorithm:
    """Known algorithms as tabled; others are tried through EVP and judged by the host's answer."""
    if name in KNOWN:
        return KNOWN[name]
    return Algorithm(name, "pubkey" if _PUBKEY_NAME.match(name) else "cipher")


@dataclass(frozen=True)
class Capabilities:
    """What one OpenSSL build's `openssl speed` accepts."""

    label: str  # "OpenSSL 1.0.2", "LibreSSL 3.8.2", "unknown"
    version: tuple[int, ...] | None
    libressl: bool = False
    sizes: tuple[int, ...] = SIZES_NEW
    has_seconds: bool = True  # -seconds N (1.1.1+)
    has_bytes: bool = True  # -bytes N (1.1.1+)
    rsa_operations: int = 2  # sign, verify; 3.2+ adds encrypt, decrypt

    def supports(self, algo: Algorithm) -> str | None:
        """None when the algorithm can run, else the reason it cannot."""
        if self.libressl and not algo.libressl:
            return f"{self.label} speed has no {algo.name}"
        if not self.libressl and self.version is not None and self.version < algo.since:
            since = ".".join(str(p) for p in algo.since)
            return f"{self.label} speed has no {algo.name} (added in OpenSSL {since})"
        return None


_VERSION = re.compile(r"(LibreSSL\s+)?(\d+)\.(\d+)\.(\d+)")


def capabilities(version: str | None) -> Capabilities:
    """Capabilities from a version as `openssl version` prints it ("OpenSSL 1.0.2u  20 Dec 2019", "3.0.19", "LibreSSL 3.8.2").

    An unknown version gets the modern set: a cell that then fails on the host is recorded with the host's error.
    """
    match = _VERSION.search(version or "")
    if not match:
        return Capabilities(label="unknown OpenSSL", version=None)
    numbers = tuple(int(g) for g in match.group(2, 3, 4))
    if match.group(1) or "libressl" in (version or "").lower():
        # LibreSSL forked 1.0.1: five sizes, fixed 3 s, no -seconds/-bytes.
        return Capabilities(label=f"LibreSSL {'.'.join(map(str, numbers))}", version=numbers, libressl=True,
                            sizes=SIZES_OLD, has_seconds=False, has_bytes=False)
    label = f"OpenSSL {'.'.join(map(str, numbers))}"
    if numbers < (1, 1, 0):
        return Capabilities(label=label, version=numbers, sizes=SIZES_OLD, has_seconds=False, has_bytes=False)
    if numbers < (1, 1, 1):
        return Capabilities(label=label, version=numbers, has_seconds=False, has_bytes=False)
    return Capabilities(label=label, version=numbers, rsa_operations=4 if numbers >= (3, 2, 0) else 2)


@dataclass
class MatrixRequest:
    """What the user asked for (command-line options), before any host is known."""

    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    sizes: tuple[int, ...] | None = None  # None: every size the host's OpenSSL has
    threads: tuple[str, ...] = DEFAULT_THREADS  # "1", "all" or a number
    apis: tuple[str, ...] = DEFAULT_APIS
    seconds: int | None = None  # None: openssl's own defaults
    repeat: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "algorithms": list(self.algorithms), "sizes": list(self.sizes) if self.sizes else None,
            "threads": list(self.threads), "apis": list(self.apis), "seconds": self.seconds, "repeat": self.repeat,
            "timing": TIMING,
        }


def parse_request(algorithms: str | None = None, sizes: str | None = None, threads: str | None = None,
                  apis: str | None = None, seconds: int | None = None, repeat: int = 1) -> MatrixRequest:
    """Check the command-line values; every problem is a UserError that says what is allowed."""
    req = MatrixRequest(seconds=seconds, repeat=repeat)
    for option, value in (("--algorithms", algorithms), ("--sizes", sizes), ("--threads", threads), ("--api", apis)):
        if value is not None and not _split(value):  # (`--algorithms "$ALGS"` with ALGS unset: not the default)
            raise UserError(f"{option} is empty; leave it out for the default")
    if algorithms:
        names = tuple(_split(algorithms.lower()))
        bad = [n for n in names if not SAFE_ALGORITHM.match(n)]
        if bad:
            raise UserError(f"bad algorithm name(s) {', '.join(map(repr, bad))}: use names like aes-128-gcm,sha256")
        req.algorithms = names
    if sizes:
        try:
            numbers = tuple(int(s) for s in _split(sizes))
        except ValueError:
            raise UserError(f"--sizes takes block sizes in bytes, e.g. 16,1024,16384 (got {sizes!r})") from None
        if any(v <= 0 or v > 1 << 24 for v in numbers):
            raise UserError("--sizes values must be between 1 and 16777216 bytes")
        req.sizes = numbers
    if threads:
        words = tuple(_split(threads.lower()))
        if any(v != "all" and not (v.isdigit() and int(v) > 0) for v in words):
            raise UserError(f"--threads takes 1, all or a number of threads, comma-separated (got {threads!r})")
        req.threads = words
    if apis:
        words = tuple(_split(apis.lower()))
        if any(v not in APIS for v in words):
            raise UserError(f"--api takes evp and/or legacy (got {apis!r})")
        req.apis = words
    if seconds is not None and not 1 <= seconds <= 3600:
        raise UserError("--seconds must be between 1 and 3600")
    if not 1 <= repeat <= 100:
        raise UserError("--repeat must be between 1 and 100")
    return req


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


@dataclass
class CellPlan:
    """One planned `openssl speed` invocation on one host. It measures a cell (cells.Key) per block size or
    public-key operation; its id names its log and its condition evidence."""

    id: str  # also the log file name: <id>.log
    algorithm: str
    kind: str
    api: str | None  # "evp", "legacy", None for public-key cells
    threads: int
    sizes: tuple[int, ...]  # the block sizes this cell measures (empty for public-key cells)
    args: list[str]  # after `openssl`: ["speed", "-mr", ...]; options before algorithm names
    seconds: float  # planned benchmark time (the ETA)
    repeat: int = 0
    pin: int | None = None  # CPU a single-thread cell is pinned to with taskset (big.LITTLE hosts)
    cpu: str | None = None  # label of that core's cluster ("Cortex-A76", "cpu4-7"), Measurement.cpu

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "algorithm": self.algorithm, "api": self.api, "threads": self.threads,
                "sizes": list(self.sizes), "args": list(self.args), "seconds": self.seconds, "repeat": self.repeat,
                "pin": self.pin, "cpu": self.cpu}




@dataclass
class HostPlan:
    host: str
    capabilities: Capabilities
    cells: list[CellPlan] = field(default_factory=list)
    unsupported: list[Measurement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tunnels: list[TunnelPlan] = field(default_factory=list)  # measured after the cells (run/tunnels.py)

    @property
    def eta_seconds(self) -> float:
        return sum(c.seconds for c in self.cells) + sum(t.eta_seconds for t in self.tunnels)


def resolve_threads(spec: Iterable[str], logical_cpus: int | None) -> list[int]:
    """"1,all" on a 4-CPU host -> [1, 4]; duplicates dropped (all == 1 on a single-core box)."""
    out: list[int] = []
    for item in spec:
        n = (logical_cpus or 1) if item == "all" else int(item)
        if n not in out:
            out.append(n)
    return out


@dataclass
class _Planning:
    """What the cells of one host's plan share: the plan they go to, its OpenSSL, pins, timing and block sizes."""

    plan: HostPlan
    caps: Capabilities
    pins: Sequence[tuple[int, str]]
    timing: list[str]
    sym_seconds: float
    pk_seconds: float
    sizes: tuple[int, ...] | None  # as requested (None: the default table)
    size_runs: list[tuple[list[str], tuple[int, ...]]]  # (`-bytes N` or nothing, the sizes that run gives)
    missing: list[int]  # sizes asked for that a host without -bytes cannot run


def plan_host(host: str, request: MatrixRequest, *, openssl_version: str | None,
              logical_cpus: int | None, pins: Sequence[tuple[int, str]] = ()) -> HostPlan:
    """The cells one host runs, and the cells it cannot run with the reason.

    `pins`: (CPU, cluster label) per cluster of a big.LITTLE host (clusters.pin_targets): every
    single-thread cell then runs once pinned to each of those CPUs; -multi cells use all cores."""
    caps = capabilities(openssl_version)
    plan = HostPlan(host=host, capabilities=caps)
    threads = resolve_threads(request.threads, logical_cpus)
    for cpu, _label in pins:
        if not isinstance(cpu, int) or cpu < 0:  # it goes on the host's command line
            raise UserError(f"refusing pin target {cpu!r}: a CPU number is needed")
    seconds = request.seconds if caps.has_seconds else None
    if request.seconds and not caps.has_seconds:
        plan.notes.append(f"{caps.label} has no -seconds: symmetric cells run its fixed {FIXED_SECONDS} s per size, "
                          f"public-key cells {FIXED_PUBKEY_SECONDS} s per operation")
    # -elapsed: figures by wall clock, what the box delivered (openssl's default divides by its own user CPU
    # time, which reads high on a loaded box); the idle gate and the busy flag say when it was not a fair moment
    timing = ["-elapsed", *(["-seconds", str(seconds)] if seconds else [])]
    planning = _Planning(plan, caps, pins, timing, kinds.get(SPEED).nominal_seconds(seconds),
                         seconds or FIXED_PUBKEY_SECONDS,
                         request.sizes, *_size_runs(request.sizes, caps))
    for rep in range(request.repeat):
        for algo_name in request.algorithms:
            algo = algorithm_info(algo_name)
            for n in threads:
                if algo.kind == "pubkey":
                    _pubkey_cells(planning, algo, n, rep)
                    continue
                for api in request.apis:
                    _symmetric_cells(planning, algo, api, n, rep)
    return plan


def _size_runs(sizes: tuple[int, ...] | None,
               caps: Capabilities) -> tuple[list[tuple[list[str], tuple[int, ...]]], list[int]]:
    """Which block sizes, and how: `-bytes N` cells, or the default table filtered afterwards; and the sizes
    asked for that the default table lacks."""
    if sizes is None:
        return [([], caps.sizes)], []
    if caps.has_bytes:
        return [(["-bytes", str(s)], (s,)) for s in sizes], []
    kept = tuple(s for s in sizes if s in caps.sizes)
    return ([([], kept)] if kept else []), [s for s in sizes if s not in caps.sizes]


def _pubkey_cells(planning: _Planning, algo: Algorithm, threads: int, rep: int) -> None:
    plan, caps = planning.plan, planning.caps
    reason = caps.supports(algo)
    if reason:
        if rep == 0:
            plan.unsupported.append(_unsupported(algo.name, None, threads, None, reason, caps))
        return
    ops = caps.rsa_operations if algo.name.startswith("rsa") else 2
    multi = ["-multi", str(threads)] if threads > 1 else []
    for pin, label in _pinned(planning.pins, threads):
        plan.cells.append(_cell(plan, algo, None, threads, (), ["-mr", *planning.timing, *multi, algo.name],
                                ops * planning.pk_seconds, rep, pin, label))


def _symmetric_cells(planning: _Planning, algo: Algorithm, api: str, threads: int, rep: int) -> None:
    plan, caps = planning.plan, planning.caps
    if api == "legacy" and not algo.legacy:
        return  # EVP-only algorithm (gcm, chacha20-poly1305): nothing to compare
    reason = caps.supports(algo)
    if reason is None and api == "evp" and caps.version is not None and caps.version < (0, 9, 8):
        reason = f"{caps.label} speed has no -evp"
    if reason:
        if rep == 0:
            for size in planning.sizes or caps.sizes:
                plan.unsupported.append(_unsupported(algo.name, api, threads, size, reason, caps))
        return
    if rep == 0:
        for size in planning.missing:
            plan.unsupported.append(_unsupported(
                algo.name, api, threads, size,
                f"{caps.label} has no -bytes; its fixed sizes are {','.join(map(str, caps.sizes))}", caps))
    multi = ["-multi", str(threads)] if threads > 1 else []
    name_args = ["-evp", algo.name] if api == "evp" else [algo.name]
    for size_args, sizes in planning.size_runs:
        # Without -bytes the whole fixed table runs, whatever we keep of it.
        runs = len(sizes) if size_args else len(caps.sizes)
        for pin, label in _pinned(planning.pins, threads):
            plan.cells.append(_cell(plan, algo, api, threads, sizes,
                                    ["-mr", *planning.timing, *multi, *size_args, *name_args],
                                    runs * planning.sym_seconds, rep, pin, label))


def _pinned(pins: Sequence[tuple[int, str]], threads: int) -> list[tuple[int | None, str | None]]:
    """One run per cluster for a single-thread cell on a big.LITTLE host, else one unpinned run."""
    return list(pins) if threads == 1 and pins else [(None, None)]


def _cell(plan: HostPlan, algo: Algorithm, api: str | None, threads: int, sizes: tuple[int, ...],
          options: list[str], seconds: float, rep: int, pin: int | None = None, cpu: str | None = None) -> CellPlan:
    parts = [f"{len(plan.cells) + 1:03d}", api or "pk", algo.name, f"t{threads}"]
    if len(sizes) == 1 and "-bytes" in options:
        parts.append(f"b{sizes[0]}")
    if pin is not None:
        parts.append(f"c{pin}")
    parts.append(f"r{rep}")
    args = ["speed", *options]
    bad = [a for a in args if not SAFE_TOKEN.match(a)]
    if bad:  # parse_request already refuses such names; this guards every other caller
        raise UserError(f"refusing unsafe openssl argument(s): {bad!r}")
    return CellPlan(id="-".join(parts), algorithm=algo.name, kind=algo.kind, api=api, threads=threads,
                sizes=sizes, args=args, seconds=float(seconds), repeat=rep, pin=pin, cpu=cpu)


def _unsupported(algorithm: str, api: str | None, threads: int, size: int | None, reason: str,
                 caps: Capabilities) -> Measurement:
    return Measurement(algorithm=algorithm, block_size=size, threads=threads, api=api,
                       openssl_version=None if caps.version is None else caps.label.split(" ", 1)[1],
                       status=UNSUPPORTED, reason=reason)


def cells_text(cells: Iterable[CellPlan]) -> str:
    """The file the on-host script reads: `id<TAB>pin<TAB>arg arg ...` per line (pin: a CPU number, or -)."""
    return "".join(f"{c.id}\t{'-' if c.pin is None else int(c.pin)}\t{' '.join(c.args)}\n" for c in cells)
