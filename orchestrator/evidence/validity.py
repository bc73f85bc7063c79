"""Validity flags: was a figure measured under conditions that make it comparable?

Inputs are the dicts of orchestrator/evidence/conditions.py (host snapshots before/after the matrix,
the idle gate, per-cell evidence) and `Measurement`s; outputs are flag names plus one human
reason per flag, so a table can show `busy` and a report can say why.  Pure: no I/O.

Flags (the names tables and diffs show):
  throttled      the clock went below its top during the run (time_in_state), the thermal cap
                 lowered scaling_max_freq, or Raspberry Pi firmware reports throttling bits
  hot            a CPU thermal zone above THRESHOLDS.hot_celsius
  busy           the host never became idle, other processes used CPU while the cell ran, or
                 openssl's progress line shows it got much less CPU time than it asked for
  cores-offline  some present CPUs were offline (a -multi figure would be low)
  pin-failed     a pinned cell ran (also) on another core than the one it was pinned to
Flags the log parser sets (orchestrator/parse/speed/resolve.py; the names live in orchestrator/model.py), with the figure's `reason`:
  partial           the log ends before openssl printed its table: the figure comes from a progress
                    line (count × block size / CPU seconds)
  partial-children  openssl's own -multi summary is missing: the figure is the sum of the children
                    whose lines could be read (the reason says how many of N)
Too few repeats for a verdict is not a flag of the measurements: `diff` shows each side's sample count
and says under the table which cells have too few (stats.MIN_SAMPLES_TO_DETECT), as benchstat does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from orchestrator.evidence import conditions as ev
from orchestrator.evidence.clusters import detect_clusters, pinned_cpu_of, pinning_held
from orchestrator.evidence.conditions import parse_cell, parse_conditions, parse_idle
from orchestrator.methods import FIXED_PUBKEY_SECONDS, FIXED_SECONDS
from orchestrator.model import ALL_FLAGS, BUSY, CORES_OFFLINE, HOT, PIN_FAILED, THROTTLED, Measurement
from orchestrator.stats import median



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


@dataclass
class Verdict:
    flags: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # one line per flag raised, "flag: why"
    facts: dict[str, Any] = field(default_factory=dict)  # measured evidence (clock, temperature, background CPU)

    def add(self, flag: str, reason: str) -> None:
        if flag not in self.flags:
            self.flags.append(flag)
        self.reasons.append(f"{flag}: {reason}")

    def to_dict(self) -> dict[str, Any]:
        return {"flags": list(self.flags), "reasons": list(self.reasons), "facts": dict(self.facts)}


def decode_throttled(value: int | None) -> dict[str, list[str]]:
    """get_throttled bits -> {"now": [...], "since_boot": [...]} in words."""
    if value is None:
        return {"now": [], "since_boot": []}
    return {
        "now": [name for bit, name in THROTTLED_BITS.items() if value & (1 << bit)],
        "since_boot": [name for bit, name in THROTTLED_BITS.items() if value & (1 << (bit + _SINCE_BOOT))],
    }


def _throttled_bits_reason(before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """Bits set now (before or after), or sticky bits that appeared during the interval."""
    old, new = before.get("throttled"), after.get("throttled")
    now = decode_throttled(new)["now"] or decode_throttled(old)["now"]
    if now:
        return f"get_throttled=0x{(new if new is not None else old):x}: {', '.join(now)}"
    if old is not None and new is not None:
        appeared = set(decode_throttled(new)["since_boot"]) - set(decode_throttled(old)["since_boot"])
        if appeared:
            return f"get_throttled 0x{old:x} -> 0x{new:x}: {', '.join(sorted(appeared))} during the run"
    return None


def tis_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[int, int]:
    """time_in_state growth per frequency (kHz -> 10 ms units) of one policy between two snapshots."""
    old = {khz: t for khz, t in ev.time_in_state(before)}
    delta: dict[int, int] = {}
    for khz, t in ev.time_in_state(after):
        grown = t - old.get(khz, 0)
        if grown > 0:
            delta[khz] = grown
    return delta


def top_khz(policy: dict[str, Any]) -> int | None:
    """The clock a policy should run at under load: its max setting, else its highest step."""
    steps = [khz for khz, _ in ev.time_in_state(policy)]
    return policy.get("scaling_max_freq") or (max(steps) if steps else None) or policy.get("cpuinfo_max_freq")


def _mhz(khz: int | None) -> str:
    return "?" if khz is None else str(khz // 1000)


def below_top(before: dict[str, Any], after: dict[str, Any], top: int | None = None,
              th: Thresholds = THRESHOLDS) -> float | None:
    """Share of the interval one policy spent below its top clock (None: no time_in_state)."""
    delta = tis_delta(before, after)
    total = sum(delta.values())
    top = top or top_khz(before)
    if not total or not top:
        return None
    low = sum(t for khz, t in delta.items() if khz < top * th.same_freq)
    return low / total


def mean_khz(before: dict[str, Any], after: dict[str, Any]) -> float | None:
    """Time-weighted clock of one policy over an interval, from time_in_state (idle time included)."""
    delta = tis_delta(before, after)
    total = sum(delta.values())
    return sum(khz * t for khz, t in delta.items()) / total if total else None


def cpu_temperatures(snapshot: dict[str, Any], th: Thresholds = THRESHOLDS) -> dict[str, float]:
    """Plausible temperatures of the zones that measure the CPU/SoC (all zones when none says so)."""
    zones = {name: z for name, z in ev.thermal_zones(snapshot).items()
             if isinstance(z.get("temp_c"), (int, float)) and th.plausible_celsius[0] < z["temp_c"] < th.plausible_celsius[1]}
    cpu_words = ("cpu", "soc", "pkg", "package", "core", "cluster", "big", "little", "arm", "tsens", "x86")
    cpu_zones = {n: z for n, z in zones.items() if any(w in z.get("type", "").lower() for w in cpu_words)}
    chosen = cpu_zones or zones
    return {f"{name} ({z.get('type', '?')})": z["temp_c"] for name, z in chosen.items()}


def hottest(snapshots: Iterable[dict[str, Any]], th: Thresholds = THRESHOLDS) -> tuple[str, float] | None:
    best: tuple[str, float] | None = None
    for snap in snapshots:
        for zone, temp in cpu_temperatures(snap, th).items():
            if best is None or temp > best[1]:
                best = (zone, temp)
    return best


def offline_cpus(snapshot: dict[str, Any]) -> list[int]:
    """Present CPUs that are offline.  `offline` also lists possible-but-absent CPUs (VMs say 2-63)."""
    offline = set(ev.cpu_set(snapshot, "offline") or [])
    present = ev.cpu_set(snapshot, "present")
    if present is not None:
        offline &= set(present)
    return sorted(offline)


# Kernel driver names that mean plain C code; anything else (aes-ce, sha256-neon, aesni, safexcel,
# mtk-...) is CPU instructions or a crypto engine the kernel prefers.
_GENERIC_DRIVER = re.compile(r"generic|-lib$|fixed-time|^(cbc|ecb|ctr|gcm|hmac)\(")


def crypto_evidence(snapshot: dict[str, Any]) -> dict[str, Any]:
    """What the host offers besides plain C: the kernel's preferred driver per algorithm (highest
    priority), whether any is not generic, and the OpenSSL engines/providers that are available."""
    best: dict[str, dict[str, Any]] = {}
    for entry in ev.crypto_drivers(snapshot):
        name, prio = entry.get("name"), entry.get("priority") or 0
        if name and (name not in best or prio > (best[name].get("priority") or 0)):
            best[name] = entry
    drivers = {name: e.get("driver") for name, e in sorted(best.items())}
    accelerated = sorted(name for name, drv in drivers.items() if drv and not _GENERIC_DRIVER.search(drv))
    return {
        "kernel_drivers": drivers,
        "kernel_accelerated": accelerated,
        "openssl_engines": [e.get("id") for e in ev.openssl_engines(snapshot) if e.get("available")],
        "openssl_providers": [p.get("id") for p in ev.openssl_providers(snapshot) if p.get("status", "active") == "active"],
    }


def host_verdict(before: dict[str, Any], after: dict[str, Any], idle: dict[str, Any] | None = None,
                 th: Thresholds = THRESHOLDS) -> Verdict:
    """Host-wide flags from the snapshots taken before and after the whole matrix."""
    verdict = Verdict()
    if idle and idle.get("idle") is False:
        last = (idle.get("samples") or [{}])[-1]
        verdict.add(BUSY, f"not idle after {idle.get('waited')} s (load {last.get('load1')}, "
                          f"{last.get('cpu_cores')} cores busy)")
    bits = _throttled_bits_reason(before, after)
    if bits:
        verdict.add(THROTTLED, bits)
    clocks: dict[str, Any] = {}
    for name, pol_after in ev.policies(after).items():
        pol_before = ev.policy(before, name)
        cap_before, cap_after = pol_before.get("scaling_max_freq"), pol_after.get("scaling_max_freq")
        if cap_before and cap_after and cap_after < cap_before * th.same_freq:
            verdict.add(THROTTLED, f"{name} max clock lowered {cap_before // 1000} -> {cap_after // 1000} MHz during the run")
        rated = pol_before.get("cpuinfo_max_freq")
        if rated and cap_before and cap_before < rated * th.same_freq:
            verdict.reasons.append(f"note: {name} limited to {cap_before // 1000} of {rated // 1000} MHz by its settings")
        share = below_top(pol_before, pol_after, th=th)
        governor = pol_before.get("scaling_governor") or pol_after.get("scaling_governor")
        if share is not None and governor == "performance" and share > th.host_below_top_fraction:
            verdict.add(THROTTLED, f"{name} ({governor}) spent {share:.0%} of the run below {_mhz(top_khz(pol_before))} MHz")
        clocks[name] = {"governor": governor, "mean_khz": _round(mean_khz(pol_before, pol_after)),
                        "below_top": _round(share, 3), "top_khz": top_khz(pol_before)}
    if clocks:
        verdict.facts["clocks"] = clocks
    hot = hottest([before, after], th)
    if hot:
        verdict.facts["max_celsius"] = hot[1]
        if hot[1] > th.hot_celsius:
            verdict.add(HOT, f"{hot[0]} at {hot[1]:.1f} °C (limit {th.hot_celsius:.0f})")
    for snap in (before, after):
        gone = offline_cpus(snap)
        if gone:
            verdict.add(CORES_OFFLINE, f"CPUs {_cpu_list(gone)} offline ({snap.get('label') or 'snapshot'})")
            break
    online_before, online_after = (set(ev.online_cpus(s)) for s in (before, after))
    if online_before and online_after and online_after < online_before:
        verdict.add(CORES_OFFLINE, f"CPUs {_cpu_list(sorted(online_before - online_after))} went offline during the run")
    swap_before, swap_after = ev.swap_used_kb(before), ev.swap_used_kb(after)
    if swap_before is not None and swap_after is not None and swap_after > swap_before:
        verdict.reasons.append(f"note: swap use grew {swap_before} -> {swap_after} kB during the run")
    return verdict


def background_cores(cell: dict[str, Any]) -> float | None:
    """CPU other processes used while a cell ran, in cores (1.0 = one core fully busy).

    All non-idle time on the host minus what the benchmark and its children used (the shell's
    cutime/cstime), over the elapsed ticks per CPU.  Both sides are in USER_HZ ticks.
    """
    run = ev.cell_run(cell)
    times_before = ev.cpu_times(ev.cell_snapshot(cell, "before"))
    times_after = ev.cpu_times(ev.cell_snapshot(cell, "after"))
    if "cpu" not in times_before or "cpu" not in times_after:
        return None
    if run.get("children_before") is None or run.get("children_after") is None:
        return None
    ncpu = sum(1 for name in times_after if name != "cpu") or 1
    busy = _busy_ticks(times_after["cpu"]) - _busy_ticks(times_before["cpu"])
    total = sum(times_after["cpu"][:8]) - sum(times_before["cpu"][:8])
    ticks_per_cpu = total / ncpu
    if ticks_per_cpu < 20:  # under ~0.2 s: too short to judge
        return None
    own = run["children_after"] - run["children_before"]
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


def _policies_for(cpus: list[int], policies: dict[str, Any]) -> list[str]:
    names = []
    for name, pol in policies.items():
        members = ev.policy_cpus(pol) or _policy_number(name)
        if set(members) & set(cpus):
            names.append(name)
    return names


def _policy_number(name: str) -> list[int]:
    """policyN is named after its first CPU (cpuN/cpufreq on old kernels)."""
    match = re.fullmatch(r"(?:policy|cpu)(\d+)", name)
    return [int(match.group(1))] if match else []


def cell_verdict(cell: dict[str, Any], *, threads: int = 1, measurements: Iterable[Measurement] = (),
                 nominal_seconds: float | None = None, host_before: dict[str, Any] | None = None,
                 pinned_cpu: int | None = None, th: Thresholds = THRESHOLDS) -> Verdict:
    """Flags for one cell from its evidence (parse_cell) and the measurements its log gave.

    `nominal_seconds`: what each timed run asked for (-seconds N; 3 on 1.0.x); `host_before`:
    the host snapshot before the matrix (it knows each policy's top clock); `pinned_cpu`: the
    core a pinned cell was meant to run on.
    """
    verdict = Verdict()
    if pinned_cpu is not None:
        check = pinning_held(ev.cell_run(cell), pinned_cpu)
        verdict.facts["pinning"] = check.to_dict()
        if check.held is False:
            verdict.add(PIN_FAILED, check.reason)
    before, after = ev.cell_snapshot(cell, "before"), ev.cell_snapshot(cell, "after")
    background = background_cores(cell)
    if background is not None:
        verdict.facts["background_cores"] = round(background, 2)
        if background > th.background_cores:
            verdict.add(BUSY, f"other processes used {background:.2f} cores while it ran")
    short = [m for m in measurements if short_cpu_time(m, nominal_seconds, th)]
    if short:
        worst = min(short, key=lambda m: m.seconds or 0.0)
        verdict.add(BUSY, f"{worst.algorithm} {worst.block_size or worst.operation or ''}".rstrip()
                    + f" got {worst.seconds:.2f}s of CPU in {nominal_seconds:g}s")
    bits = _throttled_bits_reason(before, after)
    if bits:
        verdict.add(THROTTLED, bits)
    seen = ev.observed_cpus(ev.cell_run(cell))
    if seen:
        verdict.facts["cpus"] = seen
    policies = ev.policies(after)
    host_policies = ev.policies(host_before or {})
    judged = _policies_for(seen, policies) if seen else list(policies)
    shares: dict[str, float] = {}
    for name in judged:
        pol_before = ev.policy(before, name)
        top = top_khz(host_policies.get(name) or pol_before)
        share = below_top(pol_before, policies[name], top, th)
        if share is not None:
            shares[name] = share
            clock = mean_khz(pol_before, policies[name])
            if clock:
                verdict.facts.setdefault("clock_khz", {})[name] = round(clock)
    if shares:
        # single-thread and not seen: it ran on the policy that was busiest, i.e. the least below top
        name = min(shares, key=shares.__getitem__) if (threads == 1 and not seen) else max(shares, key=shares.__getitem__)
        top = top_khz(host_policies.get(name) or ev.policy(before, name))
        if shares[name] > th.below_top_fraction:
            verdict.add(THROTTLED, f"{name} spent {shares[name]:.0%} of the cell below {_mhz(top)} MHz")
    hot = hottest([after], th)
    if hot:
        verdict.facts["max_celsius"] = hot[1]
        if hot[1] > th.hot_celsius:
            verdict.add(HOT, f"{hot[0]} at {hot[1]:.1f} °C (limit {th.hot_celsius:.0f})")
    return verdict


def apply_flags(measurements: Iterable[Measurement], flags: Iterable[str]) -> None:
    """Add flags to measurements, once each, in the order of ALL_FLAGS."""
    wanted = set(flags)
    for m in measurements:
        merged = set(m.flags) | wanted
        m.flags = [f for f in ALL_FLAGS if f in merged] + sorted(merged - set(ALL_FLAGS))


def _round(value: float | None, digits: int = 0) -> float | int | None:
    if value is None:
        return None
    return round(value) if digits == 0 else round(value, digits)


def _cpu_list(cpus: list[int]) -> str:
    return ",".join(str(c) for c in cpus)


# --- glue for the run: texts in, flags on the records ---------------------------------------------

def nominal_seconds(openssl_args: list[str], pubkey: bool = False) -> float:
    """The seconds each timed run of a planned cell (matrix.CellPlan.args) asked for: `-seconds N`, else openssl's
    defaults. What a whole stored run asked for is cells.requested_seconds."""
    if "-seconds" in openssl_args:
        at = openssl_args.index("-seconds")
        try:
            return float(openssl_args[at + 1])
        except (IndexError, ValueError):
            pass
    return float(FIXED_PUBKEY_SECONDS if pubkey else FIXED_SECONDS)


def flag_cell(measurements: list[Measurement], evidence_text: str, *, threads: int = 1,
              nominal: float | None = None, host_before: dict[str, Any] | None = None,
              pinned_cpu: int | None = None, th: Thresholds = THRESHOLDS) -> Verdict:
    """Judge one cell from the evidence conditions.sh appended to its log; flag its measurements.
    A cell whose command was `taskset -c N ...` is checked for pinning to N unless `pinned_cpu` says."""
    cell = parse_cell(evidence_text)
    if pinned_cpu is None:  # the run script pins single-thread cells on big.LITTLE hosts (pin-target)
        pinned_cpu = pinned_cpu_of(ev.run_command(ev.cell_run(cell)))
    verdict = cell_verdict(cell, threads=threads, measurements=measurements,
                           nominal_seconds=nominal, host_before=host_before, pinned_cpu=pinned_cpu, th=th)
    apply_flags([m for m in measurements if m.status == "ok"], verdict.flags)
    return verdict


def flag_host(result: Any, before_text: str = "", after_text: str = "", idle_text: str = "",
              th: Thresholds = THRESHOLDS) -> Verdict:
    """Host-wide flags and the evidence behind them, stored on a HostResult (flags, conditions)."""
    before, after, idle = parse_conditions(before_text), parse_conditions(after_text), parse_idle(idle_text)
    verdict = host_verdict(before, after, idle or None, th)
    conditions = result.conditions
    for key, value in (("before", before), ("after", after), ("idle", idle)):
        if value:
            conditions[key] = value
    if before:
        conditions["clusters"] = [c.to_dict() for c in detect_clusters(before, result.cpu)]
        conditions["crypto"] = crypto_evidence(before)
    conditions["verdict"] = verdict.to_dict()
    for flag in verdict.flags:
        if flag not in result.flags:
            result.flags.append(flag)
    return verdict


def measured_mhz(conditions: dict[str, Any]) -> float | None:
    """The clock the benchmark really ran at, for per-MHz figures (None when the host has no cpufreq).

    The median over cells of the time_in_state clock of the policy each cell ran on; without cell
    evidence, the highest top clock of the host's policies (what a busy core would run at).
    """
    clocks = [khz for verdict in ev.cell_verdicts(conditions).values()
              for khz in (ev.verdict_facts(verdict).get("clock_khz") or {}).values()]
    if clocks:
        return round(median(clocks) / 1000, 1)
    tops = [c.get("top_khz") for c in (ev.host_verdict_facts(conditions).get("clocks") or {}).values()]
    tops = [t for t in tops if t]
    return round(max(tops) / 1000, 1) if tops else None
