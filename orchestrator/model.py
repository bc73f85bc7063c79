"""Plain data passed between the layers (parse -> store -> tables/diff/report).

Everything here is a dataclass written as JSON with `to_dict`; what the store keeps (a Run, its hosts and their
parts) reads back with `from_dict`, so a stored run can always be read without the code that produced it.
ParsedLog is only written (`sslbench parse --json`).
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from dataclasses import dataclass, field
from typing import Any, Callable

# 1: every field of every record written out, a Measurement as an object.
# 2: Measurement keys equal to the field's default left out.
# 3: a host's measurements as rows: "measurement_fields" names the columns once, each row holds the values in that
#    order with trailing defaults (status ok, reason None, repeat 0, flags []) cut; half the bytes of objects and
#    a fraction of the time to load. Fields a row or object lacks take the dataclass defaults (as a schema 1 file
#    without a newer field does), so never change a Measurement default without a new schema version.
# 4: a second benchmark kind: Measurement.kind and .implementation appended after cpu (their defaults, an
#    openssl-speed figure, cut from its row, so a speed row is the schema 3 row), and "measurement_fields" names them
#    only where a row holds them; HostResult.tunnels, .tunnel_evidence and .installed, written only when non-empty.
#    A speed-only run writes the schema 3 bytes but for the schema number.
# Every older form still loads.
SCHEMA_VERSION = 4

# Measurement.kind values: the names of the benchmark kinds (orchestrator/kinds registers what each one is)
SPEED = "openssl-speed"
TUNNEL = "tunnel"
# a tunnel Measurement's operation: which way iperf3's data went (forward: client -> server; reverse: iperf3 -R)
FORWARD = "forward"
REVERSE = "reverse"

# Measurement.status values
OK = "ok"
UNSUPPORTED = "unsupported"
ERROR = "error"

# Measurement.flags values: conditions that make a figure not comparable. The one place of their names: every other
# module takes them from here. The host-side checks (orchestrator/evidence/checks.py) raise the EVIDENCE_FLAGS.
THROTTLED = "throttled"
HOT = "hot"
BUSY = "busy"
CORES_OFFLINE = "cores-offline"
PIN_FAILED = "pin-failed"
EVIDENCE_FLAGS = (THROTTLED, HOT, BUSY, CORES_OFFLINE, PIN_FAILED)
# the log parser's (orchestrator/parse/speed/resolve.py): a figure read from less than openssl's table
PARTIAL = "partial"
PARTIAL_CHILDREN = "partial-children"
PARSER_FLAGS = (PARTIAL, PARTIAL_CHILDREN)
ALL_FLAGS = EVIDENCE_FLAGS + PARSER_FLAGS
# HostResult.flags only: the host did not finish all its cells
INCOMPLETE = "incomplete"

# Run.source of the published results of known boards (orchestrator/reference): tables mark their hosts
REFERENCE = "reference"

# The block sizes a line rate is read from: VPN packets (~1400 B) to full TLS records (16 KiB). Insights answer
# with them, tables list them first, and a known board is quoted at them.
LINE_BLOCKS = (1024, 16384)

# HostResult.status values
HOST_OK = "ok"
HOST_UNREACHABLE = "unreachable"
HOST_FAILED = "failed"


@dataclass
class Measurement:
    """One figure: a cell of one `openssl speed` table (kind SPEED), or one measured tunnel (kind TUNNEL).

    openssl speed: an algorithm at one block size (or one public-key operation). Symmetric ciphers and digests
    fill `block_size` and `bytes_per_second`; public-key rows (rsa2048, ecdsap256, ed25519 ...) fill `operation`
    ("sign", "verify", "op", "encrypt", ...) and `ops_per_second` instead.  `count`/`seconds` come from a progress
    line when there was one.

    A tunnel: `algorithm` "wireguard", "openvpn-aes-256-gcm" or "openvpn-chacha20-poly1305", `implementation`
    which one ran, `operation` FORWARD or REVERSE, `threads` iperf3's parallel streams, `bytes_per_second` the
    receiver's throughput (iperf3's sum_received bits/s / 8); block_size and ops_per_second None. A tunnel the
    host cannot run is UNSUPPORTED with reason "not measurable: <why>".
    """

    algorithm: str
    block_size: int | None = None
    bytes_per_second: float | None = None
    operation: str | None = None
    ops_per_second: float | None = None
    threads: int = 1
    api: str | None = None  # "evp", "legacy", or None when the log cannot tell
    openssl_version: str | None = None
    count: int | None = None
    seconds: float | None = None
    status: str = OK  # OK, UNSUPPORTED (the host cannot run this cell) or ERROR
    reason: str | None = None  # why a cell is unsupported / failed, or why a parser flag (partial-children) is set
    repeat: int = 0  # index of the sample when a cell was run --repeat N times
    flags: list[str] = field(default_factory=list)  # validity flags: busy, throttled, hot, ...
    cpu: str | None = None  # core/cluster label of a pinned single-thread cell ("Cortex-A76", "cpu4-7"); else None
    # Appended in schema 4, after every schema 3 field: a schema 3 row (trailing defaults cut) reads as it was.
    kind: str = SPEED  # the benchmark kind's registry name: SPEED, or TUNNEL (a measured tunnel, see below)
    # tunnel only: which implementation carried it ("kernel", "wireguard-go", "openvpn-tun", "openvpn-dco")
    implementation: str | None = None

    @property
    def value(self) -> float | None:
        """The figure stored: bytes/s for throughput and tunnels, ops/s for public-key operations."""
        return self.bytes_per_second if self.operation is None or self.kind != SPEED else self.ops_per_second

    def to_dict(self) -> dict[str, object]:
        """Every field but the schema 4 ones at their defaults: an openssl-speed figure as it always was."""
        data = _flat_dict(self)
        if self.implementation is None:
            del data["implementation"]
            if self.kind == SPEED:
                del data["kind"]
        return data

    def to_row(self) -> list[Any]:
        """The run.json form (schema 3): every field in field order, trailing defaults cut."""
        spec = _fields(Measurement)
        row = list(spec.values(self))
        end, defaults = len(row), spec.defaults
        while end > 1 and row[end - 1] == defaults[end - 1]:
            end -= 1
        del row[end:]
        for i in spec.lists:  # flags: a copy, not the measurement's own list
            if i < end:
                row[i] = list(row[i])
        return row

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Measurement:
        # Missing keys (compact or older files) take the field defaults. The try is the fast path of loading a
        # store (10^5 records); only a record with keys this version does not know is filtered.
        try:
            return cls(**_unchecked(data))
        except TypeError:
            return cls(**_known_fields(cls, data))


@dataclass
class OpenSSLBuild:
    """What `openssl version -a` (or the block printed by `openssl speed`) says about the build."""

    version: str | None = None  # "1.1.1w", "3.0.19", "LibreSSL 3.8.2": the first one the output printed
    version_line: str | None = None  # the line as printed
    built_on: str | None = None
    options: str | None = None
    compiler: str | None = None
    cpuinfo: str | None = None  # "OPENSSL_ia32cap=..." / "OPENSSL_armcap=..." (3.x)
    platform: str | None = None
    # The `openssl` program (apps/, its `speed` decides what is timed) and libcrypto can be separate packages of
    # different versions (OpenWrt openssl-util / libopenssl3, Debian openssl / libssl3). `openssl version` prints
    # the program's, and "(Library: …)" with libcrypto's (3.x always, 1.x where they differ); `openssl speed`
    # prints libcrypto's only. None: that output was not seen (stores written before both were recorded).
    program_version: str | None = None
    library_version: str | None = None

    @property
    def versions_differ(self) -> bool:
        return bool(self.program_version and self.library_version and self.program_version != self.library_version)

    def versions_said(self) -> str | None:
        """"3.0.16" when both agree (or one is known), "3.0.16 (libcrypto 3.0.15)" when they differ."""
        if self.versions_differ:
            return f"{self.program_version} (libcrypto {self.library_version})"
        return self.program_version or self.library_version or self.version

    def to_dict(self) -> dict[str, object]:
        return _flat_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object] | None) -> OpenSSLBuild:
        return cls(**_known_fields(cls, data or {}))


@dataclass
class CpuFacts:
    """What /proc/cpuinfo says: model, core names, logical CPU count and crypto instructions."""

    model: str | None = None  # "Intel(R) Core(TM) i5-...", "Cortex-A53", "MIPS 74Kc V5.0"
    arch: str | None = None  # "x86", "arm", "mips" (from the cpuinfo layout, or uname -m)
    logical_cpus: int | None = None
    crypto: list[str] = field(default_factory=list)  # "aes", "pmull", "sha1", "sha2", "sha512", "sha_ni", ...
    cores: list[str] = field(default_factory=list)  # core name per logical CPU where known (big.LITTLE)
    system_type: str | None = None  # MIPS `system type`, ARM `Hardware`
    bogomips: float | None = None

    def to_dict(self) -> dict[str, object]:
        return _flat_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object] | None) -> CpuFacts:
        return cls(**_known_fields(cls, data or {}))


@dataclass
class OsFacts:
    """Which OS family and firmware a host runs (os-release, openwrt_release, DD-WRT, redhat-release)."""

    family: str | None = None  # "debian", "raspbian", "armbian", "ubuntu", "openwrt", "ddwrt", "centos", "arch", ...
    name: str | None = None  # pretty name
    version: str | None = None  # VERSION_ID / DISTRIB_RELEASE
    revision: str | None = None  # OpenWrt DISTRIB_REVISION, DD-WRT build number
    kernel: str | None = None  # uname -r
    machine: str | None = None  # uname -m
    uname: str | None = None  # the whole `uname -a` line
    target: str | None = None  # OpenWrt DISTRIB_TARGET / OPENWRT_BOARD ("mediatek/filogic"): which build of a release

    def to_dict(self) -> dict[str, object]:
        return _flat_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object] | None) -> OsFacts:
        return cls(**_known_fields(cls, data or {}))


@dataclass
class ParsedLog:
    """Everything one log (or one captured console session) told us."""

    measurements: list[Measurement] = field(default_factory=list)
    cpu: CpuFacts = field(default_factory=CpuFacts)
    os: OsFacts = field(default_factory=OsFacts)
    openssl: OpenSSLBuild = field(default_factory=OpenSSLBuild)
    skipped: list[str] = field(default_factory=list)  # human-readable notes on what could not be read
    timing: str | None = None  # how openssl timed: "elapsed" (-elapsed), "cpu" (its default), "mixed", or None
    errors: list[str] = field(default_factory=list)  # a reader's bug the parser's net caught: figures may be lost

    def to_dict(self) -> dict[str, object]:
        return {
            "measurements": [m.to_dict() for m in self.measurements],
            "cpu": self.cpu.to_dict(),
            "os": self.os.to_dict(),
            "openssl": self.openssl.to_dict(),
            "skipped": list(self.skipped),
            "timing": self.timing, "errors": list(self.errors),
        }


@dataclass
class TunnelMethod:
    """What makes two figures of one tunnel comparable, one per host per tunnel (algorithm and implementation).

    A change of iperf3_version, mtu, veth_mtu, duration_seconds or socket_buffer between two sides is a change of
    method; implementation_version and (kernel WireGuard's) kernel are the firmware under judgement."""

    tunnel: str  # the tunnel Measurement's algorithm: "wireguard", "openvpn-aes-256-gcm", ...
    implementation: str  # "kernel", "wireguard-go", "openvpn-tun", "openvpn-dco"
    implementation_version: str | None = None  # "2.6.14", "0.0.20220316"; the kernel release for kernel WireGuard
    iperf3_version: str | None = None
    mtu: int | None = None  # the tunnel interface's
    veth_mtu: int | None = None
    duration_seconds: float | None = None  # of each iperf3 run
    socket_buffer: int | None = None  # OpenVPN sndbuf/rcvbuf, bytes
    kernel: str | None = None  # uname -r

    def to_dict(self) -> dict[str, object]:
        return _flat_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TunnelMethod:
        return cls(**_known_fields(cls, data))


@dataclass
class ProcessCpu:
    """CPU time one process (or a kernel thread group: "kernel wireguard") took during a tunnel measurement."""

    name: str
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return _flat_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ProcessCpu:
        return cls(**_known_fields(cls, data))


@dataclass
class TunnelEvidence:
    """How one tunnel measurement went, matched to its Measurement by algorithm, implementation, operation,
    threads and repeat (tunnel evidence is never compared itself: the verdicts it leads to are flags)."""

    algorithm: str
    implementation: str
    operation: str  # FORWARD or REVERSE
    threads: int = 1
    repeat: int = 0
    sender_bytes_per_second: float | None = None
    retransmits: int | None = None
    udp_rcvbuf_errors: int | None = None  # summed over both namespaces, the delta over the measurement
    udp_sndbuf_errors: int | None = None
    cpu_seconds: list[ProcessCpu] = field(default_factory=list)
    # the share of the whole machine's CPU time (/proc/stat) that was NOT the tunnel or iperf3 processes
    busy_fraction: float | None = None

    def to_dict(self) -> dict[str, object]:
        data = _flat_dict(self)
        data["cpu_seconds"] = [p.to_dict() for p in self.cpu_seconds]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> TunnelEvidence:
        known = _known_fields(cls, data)
        known["cpu_seconds"] = [ProcessCpu.from_dict(_json_dict(p)) for p in _json_list(data.get("cpu_seconds", []))]
        return cls(**known)


@dataclass
class InstalledPackage:
    """A package the run installed on (or found installed on) a host for its benchmarks."""

    name: str
    version: str | None = None
    manager: str | None = None  # "apk", "opkg", "apt", ...

    def to_dict(self) -> dict[str, object]:
        return _flat_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> InstalledPackage:
        return cls(**_known_fields(cls, data))


# HostResult's lists of records (schema 4), written after its measurements and only when non-empty, so a host
# without them writes the bytes it wrote before
_HOST_RECORDS: dict[str, type[TunnelMethod | TunnelEvidence | InstalledPackage]] = {
    "tunnels": TunnelMethod, "tunnel_evidence": TunnelEvidence, "installed": InstalledPackage}


@dataclass
class HostResult:
    """One host of one run: how it went, what it is, and what it measured."""

    host: str
    status: str = HOST_OK  # HOST_OK, HOST_UNREACHABLE, HOST_FAILED
    reason: str | None = None
    firmware: str | None = None  # a user label (`import --firmware`), else derived from os/openssl facts
    cpu: CpuFacts = field(default_factory=CpuFacts)
    os: OsFacts = field(default_factory=OsFacts)
    openssl: OpenSSLBuild = field(default_factory=OpenSSLBuild)
    measurements: list[Measurement] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # host-wide validity flags
    conditions: dict[str, Any] = field(default_factory=dict)  # idle/clock/thermal evidence before/after
    logs: list[str] = field(default_factory=list)  # raw log files, relative to the run directory
    tunnels: list[TunnelMethod] = field(default_factory=list)  # each measured tunnel's method
    tunnel_evidence: list[TunnelEvidence] = field(default_factory=list)  # each tunnel measurement's evidence
    installed: list[InstalledPackage] = field(default_factory=list)  # what provisioning installed or found
    interrupted: str | None = None  # the stage a stop caught it at: detect, provision, cells, tunnels, fetch

    def to_dict(self) -> dict[str, object]:
        """The run.json form, measurements as rows (not dataclasses.asdict: it deep-copies field by field, slowly).
        Its `conditions` is the host's own dict, not a copy: every caller writes the form out at once (a deep copy
        took 0.2 ms per host per write, more than writing it)."""
        data: dict[str, object] = {name: getattr(self, name) for name in _fields(HostResult).names
                                   if name != "measurements" and name not in _HOST_RECORDS}
        rows = [m.to_row() for m in self.measurements]
        data.update(cpu=self.cpu.to_dict(), os=self.os.to_dict(), openssl=self.openssl.to_dict(),
                    flags=list(self.flags), conditions=self.conditions, logs=list(self.logs),
                    measurement_fields=_row_fields(rows), measurements=rows)
        data.update({name: [r.to_dict() for r in getattr(self, name)] for name in _HOST_RECORDS if getattr(self, name)})
        if self.interrupted is None:  # the usual case: run.json files stay as they were
            del data["interrupted"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> HostResult:
        known = _known_fields(cls, data)
        known["cpu"] = CpuFacts.from_dict(_json_object(data.get("cpu")))
        known["os"] = OsFacts.from_dict(_json_object(data.get("os")))
        known["openssl"] = OpenSSLBuild.from_dict(_json_object(data.get("openssl")))
        fields = data.get("measurement_fields")
        known["measurements"] = _measurements(_json_list(data.get("measurements", [])),
                                              None if fields is None else _json_list(fields))
        for name, record in _HOST_RECORDS.items():
            known[name] = [record.from_dict(_json_dict(r)) for r in _json_list(data.get(name, []))]
        return cls(**known)


@dataclass
class Run:
    """A stored run: results/<run_id>/run.json."""

    run_id: str
    created: str  # ISO 8601, UTC
    command: list[str] = field(default_factory=list)
    matrix: dict[str, Any] = field(default_factory=dict)
    hosts: list[HostResult] = field(default_factory=list)
    source: str = "run"  # "run" (measured by sslbench), "import" (saved logs) or REFERENCE (known boards)
    schema: int = SCHEMA_VERSION
    # False while `sslbench run` is at work: then each finished host is in its own <host>/host.json (store.py)
    complete: bool = True
    # why the run stopped before its end (a signal, a stop of its own), e.g. "interrupted (Ctrl-C)"; None: it ran out
    interrupted: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "schema": SCHEMA_VERSION,  # the form written is always the current one, whatever the run was read from
            "run_id": self.run_id,
            "created": self.created,
            "source": self.source,
            "command": list(self.command),
            "matrix": self.matrix,
            "complete": self.complete,
            **({"interrupted": self.interrupted} if self.interrupted else {}),
            "hosts": [h.to_dict() for h in self.hosts],
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Run:
        known = _known_fields(cls, data)
        known["hosts"] = [HostResult.from_dict(_json_dict(h)) for h in _json_list(data.get("hosts", []))]
        return cls(**known)


@dataclass(frozen=True)
class _Fields:
    names: tuple[str, ...]
    known: frozenset[str]
    defaults: tuple[Any, ...]  # dataclasses.MISSING for required fields; default_factory() made once, to compare
    lists: tuple[int, ...]  # positions of the list fields
    values: Callable[[Any], tuple[Any, ...]]  # every field of an instance in one C call


@functools.cache
def _fields(cls: Any) -> _Fields:
    """A dataclass's fields, read once: dataclasses.fields() per record was most of the time of loading a store."""
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    defaults = tuple(f.default if f.default_factory is dataclasses.MISSING else f.default_factory() for f in fields)
    lists = tuple(i for i, default in enumerate(defaults) if isinstance(default, list))
    return _Fields(names, frozenset(names), defaults, lists, operator.attrgetter(*names))


def _flat_dict(record: Any) -> dict[str, object]:
    """A dataclass of plain values and lists of them as a dict, lists copied (dataclasses.asdict would
    deep-copy value by value, slowly)."""
    spec = _fields(type(record))  # type: ignore[arg-type]  # a dataclass type: hashable
    values = spec.values(record)
    data: dict[str, object] = dict(zip(spec.names, values))
    for i in spec.lists:
        data[spec.names[i]] = values[i].copy()
    return data


def _row_fields(rows: list[list[Any]]) -> list[str]:
    """The "measurement_fields" of these rows: the schema 3 columns (through cpu) at least, so a speed-only host
    writes the header it always wrote, and the schema 4 ones only where a row holds them."""
    names = _fields(Measurement).names
    return list(names[:max([names.index("cpu") + 1, *map(len, rows)])])


def _measurements(items: list[Any], fields: list[str] | None) -> list[Measurement]:
    """A host's measurements from run.json: rows under their field names (schema 3), or one object each."""
    if fields is None:
        return list(map(Measurement.from_dict, items))
    names = _fields(Measurement).names
    # Written by this version, or by an older one whose fields are a prefix of ours (new fields go last):
    # positional, the fast path; the missing trailing fields take their defaults.
    if tuple(fields) == names[:len(fields)]:
        return list(itertools.starmap(Measurement, items))
    return [Measurement.from_dict(dict(zip(fields, row))) for row in items]  # another version's fields


# run.json read back: json.loads gives what it gives. The containers are checked here (anything else is a damaged
# file: TypeError, which store.load_run's callers see as for any bad record); the values go unchecked into the
# dataclasses' constructors, as the store wrote them.

def _json_dict(value: object) -> dict[str, object]:
    if isinstance(value, dict):
        return value
    raise TypeError(f"a JSON object expected, not {type(value).__name__}")


def _json_object(value: object) -> dict[str, object] | None:
    """A nested object of a record, None where the record has none."""
    return None if value is None else _json_dict(value)


def _json_list(value: object) -> list[Any]:
    """A JSON array whose items go to a constructor as they are (a measurement row's values, in field order)."""
    if isinstance(value, list):
        return value
    raise TypeError(f"a JSON array expected, not {type(value).__name__}")


def _unchecked(data: dict[str, object]) -> dict[str, Any]:
    """A record's keys as a dataclass's keyword arguments: the constructor takes the values as stored."""
    return data


def _known_fields(cls: type, data: dict[str, object]) -> dict[str, Any]:
    """A new dict of the keys the dataclass knows, so newer stores still load in older code."""
    known = _fields(cls).known
    if known.issuperset(data):
        return dict(data)  # the usual case, checked in C: no per-key filtering
    return {k: v for k, v in data.items() if k in known}
