"""CPU clusters (big.LITTLE and alike), which core to pin a single-thread cell to, and whether
the pinning really held.

A cluster is a set of CPUs whose cores are alike: the same core type, capacity and top clock (within
ALIKE_WITHIN where each CPU has a cpufreq policy of its own). Only cores that really differ in one of those make separate clusters (and get
their single-thread cells run once each); ids alone never do: x86 kernels give every L2 domain (often
every core) its own `topology/cluster_id`, and RK3576 reports cluster_id 0 for both of its clusters.
Per CPU:
  - core type: /proc/cpuinfo `CPU part` (CpuFacts.cores) on ARM, the hybrid PMU lists
    (/sys/devices/cpu_core, cpu_atom: Intel P- and E-cores) on x86;
  - capacity: /sys/devices/system/cpu/cpuN/cpu_capacity;
  - top clock: `cpuinfo_max_freq` of the cpufreq policy the CPU belongs to.
What is unknown for every CPU says nothing; what is known for some CPUs only, groups the rest apart.
Pure: snapshots (orchestrator/evidence/records.py) and CpuFacts in, plain data out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from orchestrator.evidence.cell import CellRun
from orchestrator.evidence.records import Snapshot
from orchestrator.model import CpuFacts

# Where every CPU has its own cpufreq policy (x86), cores of one type whose capacity and top clock differ by at
# most this fraction are one cluster: Intel's favoured cores turbo 100-200 MHz above their twins.
ALIKE_WITHIN = 0.05
HYBRID_CORE_TYPES = {"cpu_core": "P-core", "cpu_atom": "E-core"}  # /sys/devices/<pmu>/cpus on Intel hybrids


@dataclass
class Cluster:
    cpus: list[int]
    source: str  # what tells it from the others: "cpufreq", "cpu_capacity", "cpuinfo", "hybrid", or "all"
    max_khz: int | None = None
    core: str | None = None  # "Cortex-A76" when cpuinfo names it, "P-core"/"E-core" on Intel hybrids
    capacity: int | None = None  # ARM cpu_capacity (1024 = the biggest core)

    @property
    def label(self) -> str:
        """What a table calls the cell pinned to this cluster: "Cortex-A76" or "cpu4-7"."""
        return self.core or f"cpu{_span(self.cpus)}"

    def to_dict(self) -> dict[str, object]:
        return {"cpus": list(self.cpus), "source": self.source, "max_khz": self.max_khz,
                "core": self.core, "capacity": self.capacity, "label": self.label}


def detect_clusters(snapshot: Snapshot, cpu: CpuFacts | None = None) -> list[Cluster]:
    """Clusters of the online CPUs, fastest first (top clock, then capacity, then CPU number)."""
    online = (snapshot.online_cpus or _cpus_from_topology(snapshot) or _cpus_from_stat(snapshot)
              or _cpus_from_policies(snapshot))
    if not online and cpu and cpu.logical_cpus:
        online = list(range(cpu.logical_cpus))
    if not online:
        return []
    traits = _core_traits(snapshot, online, list(cpu.cores) if cpu and cpu.cores else [])
    policies = (snapshot.policies or {}).values()
    # One cpufreq policy per CPU (x86) says nothing about clock domains: there a favoured core's extra turbo
    # bin is not another cluster. Policies that span CPUs are real clock domains: any difference counts.
    within = ALIKE_WITHIN if all(len(p.cpus) <= 1 for p in policies) else 0.0
    clusters: list[Cluster] = []
    for n in sorted(online, key=lambda n: (traits[n][0] or "", -(traits[n][1] or 0), -(traits[n][2] or 0), n)):
        core, capacity, clock = traits[n]
        head = clusters[-1] if clusters else None
        if head and head.core == core and _close(head.capacity, capacity, within) and _close(head.max_khz, clock, within):
            head.cpus.append(n)
        else:
            clusters.append(Cluster(cpus=[n], source="all", core=core, capacity=capacity, max_khz=clock))
    if len(clusters) > 1:
        source = _what_differs(clusters)
        for cluster in clusters:
            cluster.cpus.sort()
            cluster.source = source
    clusters.sort(key=lambda g: (-(g.max_khz or 0), -(g.capacity or 0), g.cpus[0]))
    return clusters


def _close(a: int | None, b: int | None, within: float) -> bool:
    """Two capacities or top clocks of cores that are alike: both unknown, or at most `within` apart."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= within * max(a, b)


_Traits = tuple[str | None, int | None, int | None]


def _core_traits(snapshot: Snapshot, online: list[int], cores: list[str]) -> dict[int, _Traits]:
    """(core type, capacity, top clock in kHz) per online CPU; None where unknown."""
    hybrid = {n: HYBRID_CORE_TYPES.get(pmu, pmu) for pmu, cpus in (snapshot.hybrid or {}).items() for n in cpus}
    topo = snapshot.topology or {}
    top_clock: dict[int, int] = {}
    for pol in (snapshot.policies or {}).values():
        top = pol.cpuinfo_max_freq or max((k for k, _ in pol.time_in_state or []), default=None)
        for n in pol.cpus:
            if top:
                top_clock[n] = top
    if len(set(cores)) == 1:  # one `CPU part` for the whole file (older kernels): every core is that one
        cores = cores[:1] * (max(online) + 1)
    elif len(cores) <= max(online):  # names for some CPUs only: cannot tell which is which
        cores = []
    return {n: (hybrid.get(n) or (cores[n] if cores else None),
                topo.get(f"cpu{n}", {}).get("cpu_capacity"), top_clock.get(n))
            for n in online}


def _what_differs(clusters: list[Cluster]) -> str:
    """The trait that tells clusters apart, for the record: the core type first, then the clock, then capacity."""
    if len({c.core for c in clusters}) > 1:
        return "hybrid" if any(c.core in HYBRID_CORE_TYPES.values() for c in clusters) else "cpuinfo"
    return "cpufreq" if len({c.max_khz for c in clusters}) > 1 else "cpu_capacity"


def _cpus_from_topology(snapshot: Snapshot) -> list[int]:
    names = snapshot.topology or {}
    return sorted(int(n[3:]) for n in names if n.startswith("cpu") and n[3:].isdigit()
                  and names[n].get("online", 1) == 1)


def _cpus_from_policies(snapshot: Snapshot) -> list[int]:
    return sorted({n for p in (snapshot.policies or {}).values() for n in p.cpus})


def _cpus_from_stat(snapshot: Snapshot) -> list[int]:
    return sorted(int(n[3:]) for n in snapshot.cpu_times or {} if n[3:].isdigit())


def pin_targets(clusters: list[Cluster]) -> list[int]:
    """One core per cluster for pinned single-thread cells: the last core of each, because cpu0
    takes most interrupts and housekeeping on small boards.  Empty when there is one cluster
    (pinning would only add a dependency on taskset)."""
    if len(clusters) < 2:
        return []
    return [cluster.cpus[-1] for cluster in clusters]


_TASKSET = re.compile(r"(?:^|\s)taskset\s+-c\s+(\d+)\s")


def pinned_cpu_of(command: str) -> int | None:
    """The CPU a command line asked taskset for ("taskset -c 7 openssl speed ..." -> 7)."""
    match = _TASKSET.search(command or "")
    return int(match.group(1)) if match else None


@dataclass
class PinCheck:
    held: bool | None  # None: no evidence (the command ended before the first sample)
    seen: list[int] = field(default_factory=list)
    allowed: list[int] = field(default_factory=list)
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"held": self.held, "seen": list(self.seen), "allowed": list(self.allowed), "reason": self.reason}


def pinning_held(run: CellRun | None, wanted: int) -> PinCheck:
    """Did the process run only on `wanted`?  Judged from what conditions.sh saw while it ran:
    the `processor` field of /proc/PID/stat per sample and the kernel's Cpus_allowed_list."""
    run = run or CellRun()
    samples = run.process_samples
    seen = run.observed_cpus
    allowed = run.allowed_cpus or []
    if allowed and allowed != [wanted]:
        return PinCheck(False, seen, allowed, f"allowed on CPUs {_span(allowed)}, not only {wanted}")
    if not seen:
        return PinCheck(None, seen, allowed, "no sample while it ran")
    if seen != [wanted]:
        return PinCheck(False, seen, allowed, f"ran on CPU {_span(seen)}, pinned to {wanted}")
    return PinCheck(True, seen, allowed, f"ran on CPU {wanted} in all {len(samples)} samples")


def _span(cpus: list[int]) -> str:
    """[4, 5, 6, 7] -> "4-7"; [0, 2] -> "0,2"."""
    cpus = sorted(cpus)
    if cpus and cpus == list(range(cpus[0], cpus[-1] + 1)) and len(cpus) > 1:
        return f"{cpus[0]}-{cpus[-1]}"
    return ",".join(str(c) for c in cpus)


def pin_plan(clusters: list[Cluster]) -> list[tuple[int, str]]:
    """(CPU, label) per cluster for the pinned single-thread cells (pin_targets); the label goes into
    Measurement.cpu, so it must tell clusters apart (RK3588 has two Cortex-A76 clusters)."""
    labels = [c.label for c in clusters]
    plan = []
    for cluster, cpu in zip(clusters, pin_targets(clusters)):
        label = cluster.label
        if labels.count(label) > 1:
            label = f"{label} cpu{_span(cluster.cpus)}"
        plan.append((cpu, label))
    return plan


def host_pins(snapshot: Snapshot, cpu: CpuFacts | None = None) -> tuple[list[tuple[int, str]], str | None]:
    """What a host's single-thread cells are pinned to, from the detect play's `cpu clusters` section
    (cpufreq/topology/taskset in conditions.sh's format), and a note when it cannot pin."""
    clusters = detect_clusters(snapshot, cpu)
    pins = pin_plan(clusters)
    if pins and "taskset" not in (snapshot.tools or {}):
        names = ", ".join(c.label for c in clusters)
        return [], f"{len(clusters)} CPU clusters ({names}) but no taskset: single-thread cells are not pinned"
    return pins, None
