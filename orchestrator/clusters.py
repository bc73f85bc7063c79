"""CPU clusters (big.LITTLE and alike), which core to pin a single-thread cell to, and whether
the pinning really held.

Sources, most trusted first (the first that tells clusters apart wins):
  1. cpufreq policies: CPUs that share a clock (`related_cpus`) are one cluster.  Per-core
     policies (x86, some Qualcomm) are grouped again by top clock and cpu_capacity.
  2. topology `cluster_id`, then `physical_package_id` (older ARM kernels put the cluster there),
     then `cpu_capacity` (ARM without cpufreq).
  3. the core type per CPU from /proc/cpuinfo `CPU part` (CpuFacts.cores, parse_cpuinfo).
  4. one cluster of every CPU seen.
Pure: snapshot dicts (orchestrator/parse/conditions.py) and CpuFacts in, plain data out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from orchestrator.model import CpuFacts

# sysfs spells "not known" as -1, which some kernels print unsigned
_UNKNOWN_IDS = {-1, 65535, 4294967295}


@dataclass
class Cluster:
    cpus: list[int]
    source: str  # "cpufreq", "cluster_id", "physical_package_id", "cpu_capacity", "cpuinfo", "all"
    max_khz: int | None = None
    core: str | None = None  # "Cortex-A76" when cpuinfo names it
    capacity: int | None = None  # ARM cpu_capacity (1024 = the biggest core)

    @property
    def label(self) -> str:
        """What a table calls the cell pinned to this cluster: "Cortex-A76" or "cpu4-7"."""
        return self.core or f"cpu{_span(self.cpus)}"

    def to_dict(self) -> dict[str, Any]:
        return {"cpus": list(self.cpus), "source": self.source, "max_khz": self.max_khz,
                "core": self.core, "capacity": self.capacity, "label": self.label}


def detect_clusters(snapshot: dict[str, Any], cpu: CpuFacts | None = None) -> list[Cluster]:
    """Clusters of the online CPUs, fastest first (top clock, then capacity, then CPU number)."""
    online = snapshot.get("cpus", {}).get("online") or _cpus_from_topology(snapshot) or _cpus_from_stat(snapshot)
    if not online and cpu and cpu.logical_cpus:
        online = list(range(cpu.logical_cpus))
    cores = list(cpu.cores) if cpu and cpu.cores else []
    for finder in (_from_cpufreq, _from_topology, _from_cpuinfo):
        groups = finder(snapshot, online, cores)
        if len(groups) > 1 or (groups and finder is _from_cpufreq):
            break
    else:
        groups = [Cluster(cpus=list(online), source="all")] if online else []
    topo = snapshot.get("topology", {})
    for group in groups:
        names = {cores[c] for c in group.cpus if c < len(cores)}
        if group.core is None and len(names) == 1:
            group.core = names.pop()
        caps = {topo.get(f"cpu{c}", {}).get("cpu_capacity") for c in group.cpus} - {None}
        if group.capacity is None and len(caps) == 1:
            group.capacity = caps.pop()
    groups.sort(key=lambda g: (-(g.max_khz or 0), -(g.capacity or 0), g.cpus[0]))
    return groups


def _from_cpufreq(snapshot: dict[str, Any], online: list[int], _cores: list[str]) -> list[Cluster]:
    groups: list[Cluster] = []
    topo = snapshot.get("topology", {})
    for name, pol in snapshot.get("policies", {}).items():
        cpus = [c for c in (pol.get("related_cpus") or pol.get("affected_cpus") or []) if not online or c in online]
        if not cpus:
            continue
        top = pol.get("cpuinfo_max_freq") or max((k for k, _ in pol.get("time_in_state", [])), default=None)
        groups.append(Cluster(cpus=sorted(cpus), source="cpufreq", max_khz=top))
    if groups and all(len(g.cpus) == 1 for g in groups) and len(groups) > 1:
        # one policy per core says nothing about clusters: regroup cores that look alike
        merged: dict[tuple[Any, ...], Cluster] = {}
        for g in groups:
            cap = topo.get(f"cpu{g.cpus[0]}", {}).get("cpu_capacity")
            key = (g.max_khz, cap)
            if key in merged:
                merged[key].cpus.append(g.cpus[0])
            else:
                merged[key] = Cluster(cpus=list(g.cpus), source="cpufreq", max_khz=g.max_khz)
        groups = list(merged.values())
    return groups


def _from_topology(snapshot: dict[str, Any], online: list[int], _cores: list[str]) -> list[Cluster]:
    topo = snapshot.get("topology", {})
    # cpu_capacity last: ARM boards without cpufreq still tell big (1024) from LITTLE cores by it
    for key in ("cluster_id", "physical_package_id", "cpu_capacity"):
        by_id: dict[int, list[int]] = {}
        for cpu in online:
            value = topo.get(f"cpu{cpu}", {}).get(key)
            if value is None or value in _UNKNOWN_IDS:
                by_id = {}
                break
            by_id.setdefault(value, []).append(cpu)
        if len(by_id) > 1:
            return [Cluster(cpus=cpus, source=key) for cpus in by_id.values()]
    return []


def _from_cpuinfo(_snapshot: dict[str, Any], online: list[int], cores: list[str]) -> list[Cluster]:
    if not cores:
        return []
    by_core: dict[str, list[int]] = {}
    for cpu, name in enumerate(cores):
        if not online or cpu in online:
            by_core.setdefault(name, []).append(cpu)
    return [Cluster(cpus=cpus, source="cpuinfo", core=name) for name, cpus in by_core.items()]


def _cpus_from_topology(snapshot: dict[str, Any]) -> list[int]:
    names = snapshot.get("topology", {})
    return sorted(int(n[3:]) for n in names if n.startswith("cpu") and n[3:].isdigit()
                  and names[n].get("online", 1) == 1)


def _cpus_from_stat(snapshot: dict[str, Any]) -> list[int]:
    return sorted(int(n[3:]) for n in snapshot.get("cpu_times", {}) if n[3:].isdigit())


def pin_targets(clusters: list[Cluster]) -> list[int]:
    """One core per cluster for pinned single-thread cells: the last core of each, because cpu0
    takes most interrupts and housekeeping on small boards.  Empty when there is one cluster
    (pinning would only add a dependency on taskset)."""
    if len(clusters) < 2:
        return []
    return [cluster.cpus[-1] for cluster in clusters]


def pinned_command(cpu: int, command: list[str]) -> list[str]:
    """`taskset -c N command...` (util-linux and BusyBox both take -c)."""
    return ["taskset", "-c", str(int(cpu)), *command]


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

    def to_dict(self) -> dict[str, Any]:
        return {"held": self.held, "seen": list(self.seen), "allowed": list(self.allowed), "reason": self.reason}


def pinning_held(run: dict[str, Any], wanted: int) -> PinCheck:
    """Did the process run only on `wanted`?  Judged from what conditions.sh saw while it ran:
    the `processor` field of /proc/PID/stat per sample and the kernel's Cpus_allowed_list."""
    samples = list(run.get("samples", []))
    # the first sample can catch `taskset` itself before it set the mask and exec'd
    if len(samples) > 1 and samples[0].get("comm") != samples[-1].get("comm"):
        samples = samples[1:]
    seen = sorted({s["cpu"] for s in samples if isinstance(s.get("cpu"), int)})
    allowed = list(run.get("allowed_cpus", []))
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


def host_pins(snapshot: dict[str, Any], cpu: CpuFacts | None = None) -> tuple[list[tuple[int, str]], str | None]:
    """What a host's single-thread cells are pinned to, from the detect play's `cpu clusters` section
    (cpufreq/topology/taskset in conditions.sh's format), and a note when it cannot pin."""
    clusters = detect_clusters(snapshot, cpu)
    pins = pin_plan(clusters)
    if pins and "taskset" not in snapshot.get("tools", {}):
        names = ", ".join(c.label for c in clusters)
        return [], f"{len(clusters)} CPU clusters ({names}) but no taskset: single-thread cells are not pinned"
    return pins, None
