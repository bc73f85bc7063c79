"""The host-side checks: one entry each in HOST_CHECKS or CELL_CHECKS, as pyperf keeps its system checks in one list.

An entry names the part of conditions.sh's output it reads (a snapshot section, read by its entry in
conditions.SECTION_READERS, or the idle gate / the cell wrapper's run block), its rule, the limit in
THRESHOLDS that bounds it and the flag it raises (a name of model.EVIDENCE_FLAGS). A rule returns Findings: a
reason for its flag, or a note beside the verdict. Rules that measure something write it into the verdict's
facts (clock, temperature, background CPU), which the run stores. validity.py runs the lists in order; the
order is the order of the stored flags, reasons and facts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Generic, Iterable, Iterator, TypeVar

from orchestrator.evidence.clusters import PinCheck, pinning_held
from orchestrator.evidence.cell import CellEvidence, CellRun
from orchestrator.evidence.records import IdleGate, IdleSample, Policy, Snapshot
from orchestrator.model import BUSY, CORES_OFFLINE, HOT, PIN_FAILED, THROTTLED, Measurement


@dataclass(frozen=True)
class Thresholds:
    """Every limit in one place, with the reason it has that value."""

    # Most ARM SoC device trees start passive cooling (cpufreq capping) between 80 and 85 °C,
    # and Raspberry Pi firmware sets its soft limit at 80 °C (60 °C on some older boards).
    hot_celsius: float = 80.0
    # Zones outside this range are sensors that are not wired up (-273, 127, 0x7fff ...).
    plausible_celsius: tuple[float, float] = (-30.0, 150.0)
    # Other processes using more than 0.7 of a core on average while a cell ran: one hog is 1.0
    # (measured 1.15-1.2 on the test fleet).  The ambient noise of a quiet box (sshd, kernel threads)
    # stays under 0.1, but a controller on the same machine (localhost, the test fleet) is seen too:
    # its polls (Ansible, SSH) measured 0.2-0.4 cores over 1-s cells, 0.53 once on a 2-core CI box
    # while the run was starting; 0.7 keeps both margins wide.  Contention on the benchmark's own
    # core shows in its progress line's CPU seconds (cpu_seconds_ratio) instead.
    background_cores: float = 0.7
    # `Doing X for 3s ...: N X's in 2.6s`: openssl counts its own user CPU time.  Under 90 % of the
    # nominal time means something else ran on its core (startup costs land outside the window).
    cpu_seconds_ratio: float = 0.90
    # A policy may sit below its top clock at the start of a cell while the governor ramps up
    # (tens of ms); more than 5 % of the cell's time below the top is a cap, not a ramp.
    below_top_fraction: float = 0.05
    # Over the whole matrix (between cells the CPU idles), only judged with the `performance`
    # governor, which never lowers the clock on its own.
    host_below_top_fraction: float = 0.02
    # Frequencies within 1 % count as the same step (boards list 1799999 vs 1800000 kHz).
    same_freq: float = 0.99


THRESHOLDS = Thresholds()

# Raspberry Pi `vcgencmd get_throttled`: bits 0-3 now, bits 16-19 "has happened since boot".
THROTTLED_BITS = {
    0: "under-voltage",
    1: "arm frequency capped",
    2: "throttled",
    3: "soft temperature limit",
}
_SINCE_BOOT = 16

@dataclass(frozen=True)
class PolicyClock:
    """How one cpufreq policy ran over the whole matrix."""

    governor: str | None
    mean_khz: int | None  # time-weighted clock from time_in_state (idle between cells included)
    below_top: float | None  # share of the time below the top clock
    top_khz: int | None

    def to_dict(self) -> dict[str, object]:
        return {"governor": self.governor, "mean_khz": self.mean_khz, "below_top": self.below_top,
                "top_khz": self.top_khz}


@dataclass
class Facts:
    """What a verdict measured besides its flags, as the checks found it; None: not measured. Stored with the
    verdict (to_dict: the measured ones, in this order)."""

    pinning: PinCheck | None = None  # a pinned cell: did the pinning hold
    background_cores: float | None = None  # a cell: CPU other processes used while it ran, in cores
    cpus: list[int] | None = None  # a cell: the CPUs the benchmark process was seen on
    clock_khz: dict[str, int] | None = None  # a cell: the clock of each policy it ran on
    clocks: dict[str, PolicyClock] | None = None  # the host: each policy over the whole matrix
    max_celsius: float | None = None  # the hottest CPU zone

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.pinning is not None:
            out["pinning"] = self.pinning.to_dict()
        if self.background_cores is not None:
            out["background_cores"] = self.background_cores
        if self.cpus is not None:
            out["cpus"] = list(self.cpus)
        if self.clock_khz is not None:
            out["clock_khz"] = dict(self.clock_khz)
        if self.clocks is not None:
            out["clocks"] = {name: clock.to_dict() for name, clock in self.clocks.items()}
        if self.max_celsius is not None:
            out["max_celsius"] = self.max_celsius
        return out


@dataclass(frozen=True)
class Finding:
    reason: str
    raises: bool = True  # False: a note beside the verdict; the check's flag is not raised


def note(text: str) -> Finding:
    return Finding(text, raises=False)


@dataclass(frozen=True)
class HostEvidence:
    """What a host-wide check sees: the snapshots before and after the whole matrix, and the idle gate."""

    before: Snapshot
    after: Snapshot
    idle: IdleGate | None = None


@dataclass(frozen=True)
class CellContext:
    """What a cell's check sees: its evidence and what the run knows of the cell.

    `nominal_seconds`: what each timed run asked for (-seconds N; 3 on 1.0.x); `host_before`: the host snapshot
    before the matrix (it knows each policy's top clock); `pinned_cpu`: the core a pinned cell was meant to run on.
    """

    cell: CellEvidence
    threads: int = 1
    measurements: tuple[Measurement, ...] = ()
    nominal_seconds: float | None = None
    host_before: Snapshot | None = None
    pinned_cpu: int | None = None

    @property
    def run(self) -> CellRun:
        return self.cell.run or CellRun()

    @property
    def before(self) -> Snapshot:
        return self.cell.before or Snapshot()

    @property
    def after(self) -> Snapshot:
        return self.cell.after or Snapshot()


E = TypeVar("E", HostEvidence, CellContext)


@dataclass(frozen=True)
class Check(Generic[E]):
    name: str
    section: str  # what of conditions.sh's output it reads: a snapshot section (SECTION_READERS), `idle`, `cell`
    rule: Callable[[E, Thresholds, Facts], Iterable[Finding]]
    threshold: str | None  # the Thresholds field that bounds it; None: a yes/no fact
    flag: str | None  # the flag its findings raise (model.EVIDENCE_FLAGS); None: notes only
    extra_sections: tuple[str, ...] = field(default=())  # other sections its rule reads


# --- measuring: what the rules share --------------------------------------------------------------

def decode_throttled(value: int | None) -> dict[str, list[str]]:
    """get_throttled bits -> {"now": [...], "since_boot": [...]} in words."""
    if value is None:
        return {"now": [], "since_boot": []}
    return {
        "now": [name for bit, name in THROTTLED_BITS.items() if value & (1 << bit)],
        "since_boot": [name for bit, name in THROTTLED_BITS.items() if value & (1 << (bit + _SINCE_BOOT))],
    }


def tis_delta(before: Policy, after: Policy) -> dict[int, int]:
    """time_in_state growth per frequency (kHz -> 10 ms units) of one policy between two snapshots."""
    old = dict(before.time_in_state or [])
    delta: dict[int, int] = {}
    for khz, t in after.time_in_state or []:
        grown = t - old.get(khz, 0)
        if grown > 0:
            delta[khz] = grown
    return delta


def top_khz(policy: Policy) -> int | None:
    """The clock a policy should run at under load: its max setting, else its highest step."""
    steps = [khz for khz, _ in policy.time_in_state or []]
    return policy.scaling_max_freq or (max(steps) if steps else None) or policy.cpuinfo_max_freq


def mhz(khz: int | None) -> str:
    return "?" if khz is None else str(khz // 1000)


def below_top(before: Policy, after: Policy, top: int | None = None, th: Thresholds = THRESHOLDS) -> float | None:
    """Share of the interval one policy spent below its top clock (None: no time_in_state)."""
    delta = tis_delta(before, after)
    total = sum(delta.values())
    top = top or top_khz(before)
    if not total or not top:
        return None
    low = sum(t for khz, t in delta.items() if khz < top * th.same_freq)
    return low / total


def mean_khz(before: Policy, after: Policy) -> float | None:
    """Time-weighted clock of one policy over an interval, from time_in_state (idle time included)."""
    delta = tis_delta(before, after)
    total = sum(delta.values())
    return sum(khz * t for khz, t in delta.items()) / total if total else None


_CPU_ZONE_WORDS = ("cpu", "soc", "pkg", "package", "core", "cluster", "big", "little", "arm", "tsens", "x86")


def cpu_temperatures(snapshot: Snapshot, th: Thresholds = THRESHOLDS) -> dict[str, float]:
    """Plausible temperatures of the zones that measure the CPU/SoC (all zones when none says so)."""
    low, high = th.plausible_celsius
    zones = {name: z for name, z in (snapshot.thermal or {}).items() if z.temp_c is not None and low < z.temp_c < high}
    cpu_zones = {n: z for n, z in zones.items() if any(w in (z.type or "").lower() for w in _CPU_ZONE_WORDS)}
    chosen = cpu_zones or zones
    return {f"{name} ({z.type or '?'})": z.temp_c for name, z in chosen.items() if z.temp_c is not None}


def hottest(snapshots: Iterable[Snapshot], th: Thresholds = THRESHOLDS) -> tuple[str, float] | None:
    best: tuple[str, float] | None = None
    for snap in snapshots:
        for zone, temp in cpu_temperatures(snap, th).items():
            if best is None or temp > best[1]:
                best = (zone, temp)
    return best


def offline_cpus(snapshot: Snapshot) -> list[int]:
    """Present CPUs that are offline.  `offline` also lists possible-but-absent CPUs (VMs say 2-63)."""
    offline = set(snapshot.cpu_set("offline") or [])
    present = snapshot.cpu_set("present")
    if present is not None:
        offline &= set(present)
    return sorted(offline)


def background_cores(cell: CellEvidence) -> float | None:
    """CPU other processes used while a cell ran, in cores (1.0 = one core fully busy).

    All non-idle time on the host minus what the benchmark and its children used (the shell's
    cutime/cstime), over the elapsed ticks per CPU.  Both sides are in USER_HZ ticks.
    """
    run = cell.run or CellRun()
    times_before = (cell.before.cpu_times if cell.before else None) or {}
    times_after = (cell.after.cpu_times if cell.after else None) or {}
    if "cpu" not in times_before or "cpu" not in times_after:
        return None
    if run.children_before is None or run.children_after is None:
        return None
    ncpu = sum(1 for name in times_after if name != "cpu") or 1
    busy = _busy_ticks(times_after["cpu"]) - _busy_ticks(times_before["cpu"])
    total = sum(times_after["cpu"][:8]) - sum(times_before["cpu"][:8])
    ticks_per_cpu = total / ncpu
    if ticks_per_cpu < 20:  # under ~0.2 s: too short to judge
        return None
    own = run.children_after - run.children_before
    return max(0.0, float((busy - own) / ticks_per_cpu))


def _busy_ticks(fields: list[int]) -> int:
    # user nice system idle iowait irq softirq steal (guest time is already in user)
    padded = list(fields[:8]) + [0] * (8 - len(fields[:8]))
    return sum(padded) - padded[3] - padded[4]


def busy_below(nominal_seconds: float | None, th: Thresholds = THRESHOLDS) -> float | None:
    """The seconds under which a progress line's figure of a cell asked to run `nominal_seconds` is busy, the rule of
    short_cpu_time as one number: grouping a 50,000-cell diff (cells.host_cells) then compares a float per
    measurement. None when the nominal time is unknown."""
    return th.cpu_seconds_ratio * nominal_seconds if nominal_seconds else None


def short_cpu_time(measurement: Measurement, nominal_seconds: float | None, th: Thresholds = THRESHOLDS) -> bool:
    """A progress line says openssl got much less CPU than the seconds it ran for."""
    if not nominal_seconds or measurement.seconds is None:
        return False
    return measurement.seconds < nominal_seconds * th.cpu_seconds_ratio


def _policies_for(cpus: list[int], policies: dict[str, Policy]) -> list[str]:
    return [name for name, pol in policies.items() if set(pol.cpus or _policy_number(name)) & set(cpus)]


def _policy_number(name: str) -> list[int]:
    """policyN is named after its first CPU (cpuN/cpufreq on old kernels)."""
    match = re.fullmatch(r"(?:policy|cpu)(\d+)", name)
    return [int(match.group(1))] if match else []


def _said(policy: Policy | None) -> Policy | None:
    """A policy the host said something of (a header alone says nothing)."""
    return policy if policy is not None and policy != Policy() else None


def _cpu_list(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)


# --- the rules ------------------------------------------------------------------------------------

def throttled_bits(before: Snapshot, after: Snapshot) -> Iterator[Finding]:
    """Bits set now (before or after), or sticky bits that appeared during the interval."""
    old, new = before.throttled, after.throttled
    now = decode_throttled(new)["now"] or decode_throttled(old)["now"]
    if now:
        yield Finding(f"get_throttled=0x{(new if new is not None else old):x}: {', '.join(now)}")
    elif old is not None and new is not None:
        appeared = set(decode_throttled(new)["since_boot"]) - set(decode_throttled(old)["since_boot"])
        if appeared:
            yield Finding(f"get_throttled 0x{old:x} -> 0x{new:x}: {', '.join(sorted(appeared))} during the run")


def _hot(snapshots: list[Snapshot], th: Thresholds, facts: Facts) -> Iterator[Finding]:
    hot = hottest(snapshots, th)
    if hot:
        facts.max_celsius = hot[1]
        if hot[1] > th.hot_celsius:
            yield Finding(f"{hot[0]} at {hot[1]:.1f} °C (limit {th.hot_celsius:.0f})")


def host_not_idle(ev: HostEvidence, _th: Thresholds, _facts: Facts) -> Iterator[Finding]:
    if ev.idle and ev.idle.idle is False:
        last = ev.idle.samples[-1] if ev.idle.samples else IdleSample(None, None, None)
        yield Finding(f"not idle after {ev.idle.waited} s (load {last.load1}, {last.cpu_cores} cores busy)")


def host_clocks(ev: HostEvidence, th: Thresholds, facts: Facts) -> Iterator[Finding]:
    """Per policy: a thermal cap lowered during the run, a limit by settings (a note), time below the top clock
    with the `performance` governor."""
    clocks: dict[str, PolicyClock] = {}
    for name, pol_after in (ev.after.policies or {}).items():
        pol_before = ev.before.policy(name)
        cap_before, cap_after = pol_before.scaling_max_freq, pol_after.scaling_max_freq
        if cap_before and cap_after and cap_after < cap_before * th.same_freq:
            yield Finding(f"{name} max clock lowered {cap_before // 1000} -> {cap_after // 1000} MHz during the run")
        rated = pol_before.cpuinfo_max_freq
        if rated and cap_before and cap_before < rated * th.same_freq:
            yield note(f"{name} limited to {cap_before // 1000} of {rated // 1000} MHz by its settings")
        share = below_top(pol_before, pol_after, th=th)
        governor = pol_before.scaling_governor or pol_after.scaling_governor
        if share is not None and governor == "performance" and share > th.host_below_top_fraction:
            yield Finding(f"{name} ({governor}) spent {share:.0%} of the run below {mhz(top_khz(pol_before))} MHz")
        clock = mean_khz(pol_before, pol_after)
        clocks[name] = PolicyClock(governor, None if clock is None else round(clock),
                                   None if share is None else round(share, 3), top_khz(pol_before))
    if clocks:
        facts.clocks = clocks


def host_cores_offline(ev: HostEvidence, _th: Thresholds, _facts: Facts) -> Iterator[Finding]:
    for snap in (ev.before, ev.after):
        gone = offline_cpus(snap)
        if gone:
            yield Finding(f"CPUs {_cpu_list(gone)} offline ({snap.label or 'snapshot'})")
            break
    online_before, online_after = set(ev.before.online_cpus), set(ev.after.online_cpus)
    if online_before and online_after and online_after < online_before:
        yield Finding(f"CPUs {_cpu_list(sorted(online_before - online_after))} went offline during the run")


def host_swap_grew(ev: HostEvidence, _th: Thresholds, _facts: Facts) -> Iterator[Finding]:
    swap_before, swap_after = ev.before.swap_used_kb, ev.after.swap_used_kb
    if swap_before is not None and swap_after is not None and swap_after > swap_before:
        yield note(f"swap use grew {swap_before} -> {swap_after} kB during the run")


def cell_pinning(cx: CellContext, _th: Thresholds, facts: Facts) -> Iterator[Finding]:
    if cx.pinned_cpu is not None:
        check = pinning_held(cx.cell.run, cx.pinned_cpu)
        facts.pinning = check
        if check.held is False:
            yield Finding(check.reason)


def cell_background(cx: CellContext, th: Thresholds, facts: Facts) -> Iterator[Finding]:
    background = background_cores(cx.cell)
    if background is not None:
        facts.background_cores = round(background, 2)
        if background > th.background_cores:
            yield Finding(f"other processes used {background:.2f} cores while it ran")


def cell_short_cpu_time(cx: CellContext, th: Thresholds, _facts: Facts) -> Iterator[Finding]:
    short = [m for m in cx.measurements if short_cpu_time(m, cx.nominal_seconds, th)]
    if short:
        worst = min(short, key=lambda m: m.seconds or 0.0)
        yield Finding(f"{worst.algorithm} {worst.block_size or worst.operation or ''}".rstrip()
                      + f" got {worst.seconds:.2f}s of CPU in {cx.nominal_seconds:g}s")


def cell_below_top(cx: CellContext, th: Thresholds, facts: Facts) -> Iterator[Finding]:
    """Time below the top clock on the policies the cell ran on (all of them when not seen)."""
    seen = cx.run.observed_cpus
    if seen:
        facts.cpus = seen
    before, policies = cx.before, cx.after.policies or {}
    host_policies = (cx.host_before.policies if cx.host_before else None) or {}
    judged = _policies_for(seen, policies) if seen else list(policies)
    shares: dict[str, float] = {}
    clocks: dict[str, int] = {}
    for name in judged:
        pol_before = before.policy(name)
        share = below_top(pol_before, policies[name], top_khz(_said(host_policies.get(name)) or pol_before), th)
        if share is not None:
            shares[name] = share
            clock = mean_khz(pol_before, policies[name])
            if clock:
                clocks[name] = round(clock)
    if clocks:
        facts.clock_khz = clocks
    if shares:
        # single-thread and not seen: it ran on the policy that was busiest, i.e. the least below top
        name = min(shares, key=shares.__getitem__) if (cx.threads == 1 and not seen) else max(shares, key=shares.__getitem__)
        top = top_khz(_said(host_policies.get(name)) or before.policy(name))
        if shares[name] > th.below_top_fraction:
            yield Finding(f"{name} spent {shares[name]:.0%} of the cell below {mhz(top)} MHz")


# Check(name, section, rule, threshold, flag[, other sections its rule reads]), in the order a verdict lists them.
HOST_CHECKS: list[Check[HostEvidence]] = [
    Check("idle gate", "idle", host_not_idle, None, BUSY),
    Check("firmware throttling", "throttled", lambda ev, _th, _f: throttled_bits(ev.before, ev.after), None, THROTTLED),
    Check("clock", "cpufreq", host_clocks, "host_below_top_fraction", THROTTLED, ("time_in_state",)),
    Check("temperature", "thermal", lambda ev, th, facts: _hot([ev.before, ev.after], th, facts), "hot_celsius", HOT),
    Check("cores offline", "cpus", host_cores_offline, None, CORES_OFFLINE),
    Check("swap", "meminfo", host_swap_grew, None, None),
]

CELL_CHECKS: list[Check[CellContext]] = [
    Check("pinning", "cell", cell_pinning, None, PIN_FAILED),
    Check("background CPU", "stat", cell_background, "background_cores", BUSY, ("cell",)),
    Check("CPU time", "cell", cell_short_cpu_time, "cpu_seconds_ratio", BUSY),  # openssl's own progress lines
    Check("firmware throttling", "throttled", lambda cx, _th, _f: throttled_bits(cx.before, cx.after), None, THROTTLED),
    Check("clock", "time_in_state", cell_below_top, "below_top_fraction", THROTTLED, ("cpufreq", "cell")),
    Check("temperature", "thermal", lambda cx, th, facts: _hot([cx.after], th, facts), "hot_celsius", HOT),
]
