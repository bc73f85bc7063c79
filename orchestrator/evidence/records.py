"""The evidence conditions.sh reports, as typed records: snapshots and the idle gate (a cell's: evidence/cell.py).

evidence/conditions.py reads the hosts' text into these once; the judges (clusters, validity, checks) and
insights read their fields. A snapshot and the idle gate are stored in `HostResult.conditions` as JSON:
`to_dict` writes the form run.json has always held (keys in the order conditions.sh prints its sections, a
key only where the host said it), `from_dict` reads any stored form back. A stored form cannot be trusted
to have its shape (a hand-edited or older run.json, a section null): `from_dict` keeps what has the right
type and drops the rest, so odd evidence reads as "no evidence", never as a traceback.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

Number = int | float

# --- what a stored value may be, read tolerantly --------------------------------------------------


def as_dict(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def as_list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_number(value: object) -> Number | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def as_ints(value: object) -> list[int] | None:
    """A stored list of ints (a CPU list, a /proc/stat line); None when it is not a list."""
    if not isinstance(value, list):
        return None
    return [n for n in value if as_int(n) is not None]


def _ints_by_name(value: object) -> dict[str, int]:
    return {key: n for key, n in as_dict(value).items() if isinstance(n, int) and not isinstance(n, bool)}


def put(out: dict[str, object], key: str, value: object) -> None:
    """A key only where the host said it: None is "absent" in these records."""
    if value is not None:
        out[key] = value


# --- a snapshot's sections ------------------------------------------------------------------------

FREQ_KEYS = ("cpuinfo_min_freq", "cpuinfo_max_freq", "scaling_min_freq", "scaling_max_freq", "scaling_cur_freq")
# A policy's keys in the order conditions.sh prints them (policy_dir): the stored form's order.
_POLICY_ORDER = ("affected_cpus", "scaling_driver", "scaling_available_governors", "cpuinfo_min_freq",
                 "cpuinfo_max_freq", "scaling_min_freq", "related_cpus", "scaling_max_freq", "scaling_governor",
                 "scaling_cur_freq")


@dataclass
class Policy:
    """One cpufreq policy (policyN, or cpuN/cpufreq on old kernels); clocks in kHz."""

    affected_cpus: list[int] | None = None
    related_cpus: list[int] | None = None
    cpuinfo_min_freq: int | None = None
    cpuinfo_max_freq: int | None = None
    scaling_min_freq: int | None = None
    scaling_max_freq: int | None = None
    scaling_cur_freq: int | None = None
    scaling_available_governors: list[str] | None = None
    scaling_driver: str | None = None
    scaling_governor: str | None = None
    other: dict[str, str] = field(default_factory=dict)  # any other file of the policy, as printed
    time_in_state: list[tuple[int, int]] | None = None  # (kHz, time in 10 ms units), None: no stats

    @property
    def cpus(self) -> list[int]:
        """The CPUs the policy clocks (related_cpus, else affected_cpus)."""
        return self.related_cpus or self.affected_cpus or []

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for key in _POLICY_ORDER:
            value = getattr(self, key)
            put(out, key, list(value) if isinstance(value, list) else value)
        out.update(self.other)
        if self.time_in_state is not None:
            out["time_in_state"] = [[khz, t] for khz, t in self.time_in_state]  # pairs as lists: JSON's form
        return out

    @classmethod
    def from_dict(cls, data: object) -> Policy:
        raw = as_dict(data)
        governors = raw.get("scaling_available_governors")
        steps = [as_ints(pair) for pair in as_list(raw.get("time_in_state"))]
        known = {*_POLICY_ORDER, "time_in_state"}
        return cls(
            affected_cpus=as_ints(raw.get("affected_cpus")), related_cpus=as_ints(raw.get("related_cpus")),
            **{key: as_int(raw.get(key)) for key in FREQ_KEYS},
            scaling_available_governors=([g for g in governors if isinstance(g, str)]
                                         if isinstance(governors, list) else None),
            scaling_driver=as_str(raw.get("scaling_driver")), scaling_governor=as_str(raw.get("scaling_governor")),
            other={k: v for k, v in raw.items() if k not in known and isinstance(v, str)},
            time_in_state=([(pair[0], pair[1]) for pair in steps if pair is not None and len(pair) == 2]
                           if "time_in_state" in raw and isinstance(raw["time_in_state"], list) else None))


@dataclass
class ThermalZone:
    type: str | None = None
    temp_c: float | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        put(out, "type", self.type)
        put(out, "temp_c", self.temp_c)
        return out

    @classmethod
    def from_dict(cls, data: object) -> ThermalZone:
        raw = as_dict(data)
        temp = as_number(raw.get("temp_c"))
        return cls(as_str(raw.get("type")), None if temp is None else float(temp))


_CPU_SETS = ("online", "offline", "present", "possible")


@dataclass
class CpuSets:
    """/sys/devices/system/cpu's lists; None where the host did not have the file."""

    online: list[int] | None = None
    offline: list[int] | None = None
    present: list[int] | None = None
    possible: list[int] | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for key in _CPU_SETS:
            put(out, key, getattr(self, key))
        return out

    @classmethod
    def from_dict(cls, data: object) -> CpuSets:
        raw = as_dict(data)
        return cls(*(as_ints(raw.get(key)) for key in _CPU_SETS))


@dataclass
class Swap:
    total_kb: int | None = None
    free_kb: int | None = None
    used_kb: int | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for key in ("total_kb", "free_kb", "used_kb"):
            put(out, key, getattr(self, key))
        return out

    @classmethod
    def from_dict(cls, data: object) -> Swap:
        raw = as_dict(data)
        return cls(as_int(raw.get("total_kb")), as_int(raw.get("free_kb")), as_int(raw.get("used_kb")))


@dataclass(frozen=True)
class SwapDevice:
    """A line of /proc/swaps."""

    device: str
    type: str
    size_kb: Number | None
    used_kb: Number | None

    def to_dict(self) -> dict[str, object]:
        return {"device": self.device, "type": self.type, "size_kb": self.size_kb, "used_kb": self.used_kb}

    @classmethod
    def from_dict(cls, data: object) -> SwapDevice:
        raw = as_dict(data)
        return cls(as_str(raw.get("device")) or "", as_str(raw.get("type")) or "",
                   as_number(raw.get("size_kb")), as_number(raw.get("used_kb")))


@dataclass(frozen=True)
class CryptoDriver:
    """A /proc/crypto entry a TLS/VPN cipher could use."""

    name: str
    driver: str | None = None
    priority: int | None = None
    type: str | None = None
    module: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name}
        put(out, "driver", self.driver)
        out["priority"] = self.priority  # always there: null when the host printed no number
        put(out, "type", self.type)
        put(out, "module", self.module)
        return out

    @classmethod
    def from_dict(cls, data: object) -> CryptoDriver | None:
        raw = as_dict(data)
        name = as_str(raw.get("name"))
        if not name:
            return None
        return cls(name, as_str(raw.get("driver")), as_int(raw.get("priority")), as_str(raw.get("type")),
                   as_str(raw.get("module")))


@dataclass
class OpenSSLEngine:
    id: str
    name: str
    available: bool | None = None  # `engine -t`'s [ available ] line; None: it printed none

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "name": self.name, "available": self.available}


@dataclass
class OpenSSLProvider:
    id: str
    name: str | None = None
    version: str | None = None
    status: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.id}
        for key in ("name", "version", "status"):
            put(out, key, getattr(self, key))
        return out


@dataclass
class OpenSSLPlugins:
    """The engines and providers of the OpenSSL that runs the matrix (`path`)."""

    path: str
    engines: list[OpenSSLEngine] | None = None
    providers: list[OpenSSLProvider] | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path}
        if self.engines is not None:
            out["engines"] = [e.to_dict() for e in self.engines]
        if self.providers is not None:
            out["providers"] = [p.to_dict() for p in self.providers]
        return out

    @classmethod
    def from_dict(cls, data: object) -> OpenSSLPlugins:
        raw = as_dict(data)
        engines = [as_dict(e) for e in as_list(raw.get("engines"))]
        providers = [as_dict(p) for p in as_list(raw.get("providers"))]
        return cls(
            as_str(raw.get("path")) or "",
            [OpenSSLEngine(as_str(e.get("id")) or "", as_str(e.get("name")) or "",
                           _bool(e.get("available")))
             for e in engines] if "engines" in raw else None,
            [OpenSSLProvider(as_str(p.get("id")) or "", as_str(p.get("name")), as_str(p.get("version")),
                             as_str(p.get("status"))) for p in providers] if "providers" in raw else None)


# --- a snapshot -----------------------------------------------------------------------------------


@dataclass
class Snapshot:
    """What one `conditions.sh snapshot|quick|before|after` printed; None: the host printed no such section."""

    label: str = ""
    notes: list[str] = field(default_factory=list)  # the script's `note:` lines: what the host lacks
    timestamp: Number | None = None  # epoch seconds (full snapshots)
    uptime: Number | None = None
    loadavg: list[float] | None = None
    running: int | None = None
    tasks: int | None = None
    cpu_times: dict[str, list[int]] | None = None  # /proc/stat's cpu lines in USER_HZ ticks: "cpu" and "cpuN"
    policies: dict[str, Policy] | None = None  # cpufreq policies by name
    thermal: dict[str, ThermalZone] | None = None
    throttled: int | None = None  # Raspberry Pi `vcgencmd get_throttled`
    cpus: CpuSets | None = None
    topology: dict[str, dict[str, int]] | None = None  # cpuN -> topology numbers (and cpu_capacity, online)
    hybrid: dict[str, list[int]] | None = None  # Intel hybrids: CPUs by PMU (cpu_core, cpu_atom)
    memory: dict[str, int] | None = None  # mem_total_kb, mem_available_kb
    swap: Swap | None = None
    swaps: list[SwapDevice] | None = None
    tools: dict[str, str] | None = None  # helper tools by name: where they are (a bare name: a builtin or applet)
    crypto: list[CryptoDriver] | None = None
    openssl: OpenSSLPlugins | None = None

    # readers that say "nothing" for a section the host did not have

    def policy(self, name: str) -> Policy:
        return (self.policies or {}).get(name) or Policy()

    def cpu_set(self, which: str) -> list[int] | None:
        """`online`, `offline`, `present` or `possible`; None when not read."""
        value: list[int] | None = getattr(self.cpus, which) if self.cpus else None
        return value

    @property
    def online_cpus(self) -> list[int]:
        return self.cpu_set("online") or []

    @property
    def swap_used_kb(self) -> int | None:
        return self.swap.used_kb if self.swap else None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"label": self.label, "notes": list(self.notes)}
        for key, value in (("timestamp", self.timestamp), ("uptime", self.uptime), ("loadavg", self.loadavg),
                           ("running", self.running), ("tasks", self.tasks)):
            put(out, key, list(value) if isinstance(value, list) else value)
        if self.cpu_times is not None:
            out["cpu_times"] = {name: list(ticks) for name, ticks in self.cpu_times.items()}
        if self.policies is not None:
            out["policies"] = {name: p.to_dict() for name, p in self.policies.items()}
        if self.thermal is not None:
            out["thermal"] = {name: z.to_dict() for name, z in self.thermal.items()}
        put(out, "throttled", self.throttled)
        if self.cpus is not None:
            out["cpus"] = self.cpus.to_dict()
        if self.topology is not None:
            out["topology"] = {name: dict(numbers) for name, numbers in self.topology.items()}
        if self.hybrid is not None:
            out["hybrid"] = {pmu: list(cpus) for pmu, cpus in self.hybrid.items()}
        if self.memory is not None:
            out["memory"] = dict(self.memory)
        if self.swap is not None:
            out["swap"] = self.swap.to_dict()
        if self.swaps is not None:
            out["swaps"] = [s.to_dict() for s in self.swaps]
        if self.tools is not None:
            out["tools"] = dict(self.tools)
        if self.crypto is not None:
            out["crypto"] = [c.to_dict() for c in self.crypto]
        if self.openssl is not None:
            out["openssl"] = self.openssl.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: object) -> Snapshot:
        raw = as_dict(data)

        def section(key: str) -> dict[str, object] | None:
            return as_dict(raw[key]) if isinstance(raw.get(key), dict) else None

        def listed(key: str) -> list[object] | None:
            value = raw.get(key)
            return value if isinstance(value, list) else None

        loadavg = listed("loadavg")
        cpu_times, policies, thermal = section("cpu_times"), section("policies"), section("thermal")
        cpus, topology, hybrid, memory = section("cpus"), section("topology"), section("hybrid"), section("memory")
        swap, tools, openssl = section("swap"), section("tools"), section("openssl")
        swaps, crypto = listed("swaps"), listed("crypto")
        return cls(
            label=as_str(raw.get("label")) or "",
            notes=[n for n in as_list(raw.get("notes")) if isinstance(n, str)],
            timestamp=as_number(raw.get("timestamp")), uptime=as_number(raw.get("uptime")),
            loadavg=None if loadavg is None else [f for f in map(_float, loadavg) if f is not None],
            running=as_int(raw.get("running")), tasks=as_int(raw.get("tasks")),
            cpu_times=None if cpu_times is None else {k: as_ints(v) or [] for k, v in cpu_times.items()},
            policies=None if policies is None else {k: Policy.from_dict(v) for k, v in policies.items()},
            thermal=None if thermal is None else {k: ThermalZone.from_dict(v) for k, v in thermal.items()},
            throttled=as_int(raw.get("throttled")),
            cpus=None if cpus is None else CpuSets.from_dict(cpus),
            topology=None if topology is None else {
                k: _ints_by_name(v) for k, v in topology.items()},
            hybrid=None if hybrid is None else {k: as_ints(v) or [] for k, v in hybrid.items()},
            memory=None if memory is None else _ints_by_name(memory),
            swap=None if swap is None else Swap.from_dict(swap),
            swaps=None if swaps is None else [SwapDevice.from_dict(s) for s in swaps if isinstance(s, dict)],
            tools=None if tools is None else {k: v for k, v in tools.items() if isinstance(v, str)},
            crypto=None if crypto is None else [c for c in map(CryptoDriver.from_dict, crypto) if c is not None],
            openssl=None if openssl is None else OpenSSLPlugins.from_dict(openssl))


# --- the idle gate --------------------------------------------------------------------------------


class IdleOutcome(enum.Enum):
    """What the gate's last line said."""

    IDLE = "yes"
    NOT_IDLE = "no"  # it gave up waiting: the host stayed busy
    SKIPPED = "skipped"  # the gate was turned off (or said something else)
    UNDECIDED = "undecided"  # no verdict line: the gate was cut short


@dataclass(frozen=True)
class IdleSample:
    waited: Number | None
    load1: float | None
    cpu_cores: float | None  # cores busy over the sample

    def to_dict(self) -> dict[str, object]:
        return {"waited": self.waited, "load1": self.load1, "cpu_cores": self.cpu_cores}


@dataclass
class IdleGate:
    """The idle gate's verdict, its samples and the parameters it ran with."""

    outcome: IdleOutcome = IdleOutcome.UNDECIDED
    samples: list[IdleSample] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    params: dict[str, Number | None] | None = None
    waited: Number | None = None
    reason: str | None = None  # load, quiet, timeout, disabled

    @property
    def idle(self) -> bool | None:
        return {IdleOutcome.IDLE: True, IdleOutcome.NOT_IDLE: False}.get(self.outcome)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"idle": self.idle, "samples": [s.to_dict() for s in self.samples],
                                  "notes": list(self.notes)}
        if self.params is not None:
            out["params"] = dict(self.params)
        if self.outcome is not IdleOutcome.UNDECIDED:
            out["waited"], out["reason"] = self.waited, self.reason
        return out

    @classmethod
    def from_dict(cls, data: object) -> IdleGate:
        raw = as_dict(data)
        idle = raw.get("idle")
        decided = "waited" in raw or "reason" in raw
        outcome = (IdleOutcome.IDLE if idle is True else IdleOutcome.NOT_IDLE if idle is False
                   else IdleOutcome.SKIPPED if decided else IdleOutcome.UNDECIDED)
        samples = [as_dict(s) for s in as_list(raw.get("samples"))]
        params = raw.get("params")
        return cls(outcome,
                   [IdleSample(as_number(s.get("waited")), _float(s.get("load1")), _float(s.get("cpu_cores")))
                    for s in samples],
                   [n for n in as_list(raw.get("notes")) if isinstance(n, str)],
                   {k: as_number(v) for k, v in as_dict(params).items()} if isinstance(params, dict) else None,
                   as_number(raw.get("waited")), as_str(raw.get("reason")))


def _float(value: object) -> float | None:
    number = as_number(value)
    return None if number is None else float(number)
