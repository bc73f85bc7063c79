"""Cluster detection, pin targets and the pinning check."""
from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

from orchestrator.evidence.clusters import Cluster, detect_clusters, pin_plan, pin_targets, pinning_held
from orchestrator.evidence.conditions import read_cell, read_snapshot
from orchestrator.evidence.cell import CellRun
from orchestrator.evidence.records import Snapshot
from orchestrator.model import CpuFacts
from orchestrator.parse.cpuinfo import parse_cpuinfo

DATA = Path(__file__).resolve().parents[1] / "data"


def snap(name: str) -> Snapshot:
    found = read_snapshot((DATA / "conditions" / name).read_text())
    assert found is not None
    return found


def stored(form: dict) -> Snapshot:
    """A snapshot as a run.json holds it, read back."""
    return Snapshot.from_dict(form)


def test_big_little_from_cpufreq_policies_fastest_first():
    clusters = detect_clusters(snap("rk3576-before.txt"))
    assert [(c.cpus, c.source, c.max_khz, c.capacity) for c in clusters] == [
        ([4, 5, 6, 7], "cpufreq", 2304000, 1024),
        ([0, 1, 2, 3], "cpufreq", 2208000, 530),
    ]
    assert pin_targets(clusters) == [7, 3]
    assert clusters[0].label == "cpu4-7"


def test_core_names_from_cpuinfo_label_the_clusters():
    cpu = CpuFacts(cores=["Cortex-A53"] * 4 + ["Cortex-A72"] * 4)
    clusters = detect_clusters(snap("rk3576-before.txt"), cpu)
    assert [c.label for c in clusters] == ["Cortex-A72", "Cortex-A53"]
    assert clusters[0].to_dict()["label"] == "Cortex-A72"


def test_cpuinfo_part_alone_when_sysfs_says_nothing():
    cpu = parse_cpuinfo((DATA / "facts" / "cpuinfo-aarch64-rock5b-rk3588.txt").read_text())
    bare = {"cpus": {"online": list(range(8))},
            "topology": {f"cpu{i}": {"physical_package_id": -1, "cluster_id": -1} for i in range(8)}}
    clusters = detect_clusters(stored(bare), cpu)
    assert [(c.cpus, c.source, c.core) for c in clusters] == [
        ([0, 1, 2, 3], "cpuinfo", "Cortex-A55"),
        ([4, 5, 6, 7], "cpuinfo", "Cortex-A76"),
    ]


def test_topology_ids_alone_are_not_clusters():
    # before cluster_id existed, ARM kernels put the cluster number in physical_package_id; x86 kernels give each
    # L2 domain its own cluster_id. Neither says the cores differ.
    old = {"cpus": {"online": [0, 1, 2, 3, 4, 5]},
           "topology": {f"cpu{i}": {"physical_package_id": 0 if i < 4 else 1} for i in range(6)}}
    assert [c.cpus for c in detect_clusters(stored(old))] == [[0, 1, 2, 3, 4, 5]]
    # ... but with the core types from /proc/cpuinfo, the A53s and A72s are two clusters
    clusters = detect_clusters(stored(old), CpuFacts(cores=["Cortex-A53"] * 4 + ["Cortex-A72"] * 2))
    assert sorted((c.cpus, c.source, c.core) for c in clusters) == [
        ([0, 1, 2, 3], "cpuinfo", "Cortex-A53"), ([4, 5], "cpuinfo", "Cortex-A72")]
    new = {"cpus": {"online": [0, 1, 2, 3]},
           "topology": {f"cpu{i}": {"physical_package_id": 0, "cluster_id": i // 2} for i in range(4)}}
    assert [c.cpus for c in detect_clusters(stored(new))] == [[0, 1, 2, 3]]


def test_one_core_name_for_the_whole_file_names_every_core():
    # older ARM kernels print `CPU part` once, after the processor blocks
    s = {"cpus": {"online": [0, 1, 2, 3]}, "topology": {f"cpu{i}": {"cluster_id": i} for i in range(4)}}
    [cluster] = detect_clusters(stored(s), CpuFacts(cores=["Cortex-A7"]))
    assert cluster.cpus == [0, 1, 2, 3] and cluster.core == "Cortex-A7"


def test_per_core_policies_are_regrouped():
    # x86 hybrid with one policy per core: P-cores 0-1 at 4.7 GHz, E-cores 2-5 at 3.4 GHz
    policies = {f"policy{i}": {"related_cpus": [i], "cpuinfo_max_freq": 4700000 if i < 2 else 3400000} for i in range(6)}
    clusters = detect_clusters(stored({"cpus": {"online": list(range(6))}, "policies": policies}))
    assert [c.cpus for c in clusters] == [[0, 1], [2, 3, 4, 5]]
    same = {f"policy{i}": {"related_cpus": [i], "cpuinfo_max_freq": 3000000} for i in range(4)}
    assert [c.cpus for c in detect_clusters(stored({"policies": same}))] == [[0, 1, 2, 3]]


def test_homogeneous_machines_have_one_cluster_and_no_pinning():
    vm = snap("debian12-x86_64-vm-snapshot.txt")  # real: cluster_id 65535, one package
    clusters = detect_clusters(vm)
    assert [(c.cpus, c.source) for c in clusters] == [([0, 1], "all")]
    assert pin_targets(clusters) == []
    router = snap("openwrt-mips-1core.txt")
    assert [c.cpus for c in detect_clusters(router)] == [[0]]
    assert detect_clusters(Snapshot(), CpuFacts(logical_cpus=2))[0].cpus == [0, 1]


def test_offline_cpus_are_not_pin_targets():
    s = snap("rk3576-before.txt")
    assert s.cpus is not None
    s.cpus.online = [0, 1, 2, 3, 4, 5]
    assert pin_targets(detect_clusters(s)) == [5, 3]


def test_pinning_evidence():
    ok = read_cell((DATA / "conditions" / "rk3576-cell-cpu7-ok.txt").read_text()).run
    check = pinning_held(ok, 7)
    assert check.held is True and check.seen == [7]  # the first sample was `taskset` still on CPU 4
    assert pinning_held(ok, 6).held is False
    moved = read_cell((DATA / "conditions" / "rk3576-cell-pin-failed.txt").read_text()).run
    assert moved is not None
    check = pinning_held(moved, 7)
    assert check.held is False and check.allowed == [4, 5, 6, 7] and check.seen == [4, 7]
    no_mask = dataclasses.replace(moved, allowed_cpus=[])
    assert pinning_held(no_mask, 7).reason == "ran on CPU 4,7, pinned to 7"
    assert pinning_held(CellRun(samples=[]), 7).held is None


def test_cluster_label_without_names():
    assert Cluster(cpus=[0, 2], source="all").label == "cpu0,2"


def test_no_sysfs_falls_back_to_the_stat_lines():
    router = snap("rig-openwrt1-busybox-dropbear.txt")  # real: /proc only
    assert [(c.cpus, c.source) for c in detect_clusters(router)] == [([0, 1], "all")]


def test_pinned_cpu_from_the_command_line():
    from orchestrator.evidence.clusters import pinned_cpu_of

    assert pinned_cpu_of("taskset -c 7 /usr/bin/openssl speed -mr") == 7
    assert pinned_cpu_of("/usr/bin/openssl speed -mr -multi 4") is None
    assert pinned_cpu_of("") is None


# --- what `sslbench run` pins to: detect.sh's `cpu clusters` section -> (CPU, label) per cluster ---------

DETECT = Path(__file__).resolve().parents[2] / "playbooks" / "files" / "detect.sh"


def fake_cpu_tree(root: Path, policies: dict[str, tuple[str, str]], capacities: dict[int, str] | None = None) -> Path:
    """/sys/devices/system/cpu with cpufreq policies {name: (related_cpus, cpuinfo_max_freq)}."""
    cpu = root / "sys/devices/system/cpu"
    cpu.mkdir(parents=True)
    cpus = sorted(int(c) for related, _ in policies.values() for c in related.split())
    (cpu / "online").write_text(f"0-{cpus[-1]}\n" if cpus else "0\n")
    for name, (related, top) in policies.items():
        d = cpu / "cpufreq" / name
        d.mkdir(parents=True)
        (d / "related_cpus").write_text(related + "\n")
        (d / "cpuinfo_max_freq").write_text(top + "\n")
    for n in cpus:
        (cpu / f"cpu{n}" / "topology").mkdir(parents=True)
        (cpu / f"cpu{n}" / "topology" / "physical_package_id").write_text("0\n")
        if capacities:
            (cpu / f"cpu{n}" / "cpu_capacity").write_text(capacities[n] + "\n")
    return root


def detect_output(tmp_path: Path, root: Path, with_taskset: bool = True) -> str:
    """What detect.sh prints on a host with this /sys (PATH: this machine's basic tools, taskset or not)."""
    bin_dir = tmp_path / ("bin" if with_taskset else "bin-without-taskset")
    bin_dir.mkdir(exist_ok=True)
    if with_taskset and not (bin_dir / "taskset").exists():
        (bin_dir / "taskset").write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / "taskset").chmod(0o755)
    for tool in ("cat", "ls", "df", "tail", "awk", "grep", "uname"):
        found = shutil.which(tool)
        if found and not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    out = subprocess.run([shutil.which("sh"), str(DETECT)], capture_output=True, text=True, timeout=30,
                         env={"PATH": str(bin_dir), "SSLBENCH_SYSROOT": str(root)})
    assert out.returncode == 0, out.stderr
    return out.stdout


def facts_of(text: str):
    from orchestrator.run.fleet import HostState, apply_facts
    from orchestrator.model import HostResult

    state = HostState(name="h", result=HostResult(host="h"))
    apply_facts(state, text)
    return state


def detected_pins(tmp_path: Path, root: Path, with_taskset: bool = True):
    return facts_of(detect_output(tmp_path, root, with_taskset))


def test_detect_finds_the_clusters_of_a_big_little_board_and_pins_one_core_of_each(tmp_path):
    root = fake_cpu_tree(tmp_path / "rk", {"policy0": ("0 1 2 3", "2208000"), "policy4": ("4 5 6 7", "2304000")})
    state = detected_pins(tmp_path, root)
    assert state.pins == [(7, "cpu4-7"), (3, "cpu0-3")] and state.pin_note is None


def test_rk3588_two_big_clusters_of_one_core_type_get_distinct_labels():
    clusters = [Cluster(cpus=[6, 7], source="cpufreq", max_khz=2400000, core="Cortex-A76"),
                Cluster(cpus=[4, 5], source="cpufreq", max_khz=2256000, core="Cortex-A76"),
                Cluster(cpus=[0, 1, 2, 3], source="cpufreq", max_khz=1800000, core="Cortex-A55")]
    assert pin_plan(clusters) == [(7, "Cortex-A76 cpu6-7"), (5, "Cortex-A76 cpu4-5"), (3, "Cortex-A55")]


def test_no_pinning_on_one_cluster_or_without_taskset(tmp_path):
    # x86: one policy per core, all at the same clock -> one cluster, nothing pinned, nothing said
    same = fake_cpu_tree(tmp_path / "x86", {f"policy{i}": (str(i), "3000000") for i in range(4)})
    state = detected_pins(tmp_path, same)
    assert state.pins == [] and state.pin_note is None
    # big.LITTLE without taskset: not pinned, and the plan says why
    big_little = fake_cpu_tree(tmp_path / "bl", {"policy0": ("0 1", "1400000"), "policy2": ("2 3", "2000000")})
    state = detected_pins(tmp_path, big_little, with_taskset=False)
    assert state.pins == [] and "no taskset" in state.pin_note and "2 CPU clusters" in state.pin_note


def test_no_sysfs_at_all_means_no_pinning(tmp_path):
    (tmp_path / "bare").mkdir()
    state = detected_pins(tmp_path, tmp_path / "bare")
    assert state.pins == [] and state.pin_note is None


def test_cpu_capacity_tells_big_from_little_without_cpufreq(tmp_path):
    root = tmp_path / "cap"
    cpu = root / "sys/devices/system/cpu"
    for n in range(6):
        (cpu / f"cpu{n}").mkdir(parents=True)
        (cpu / f"cpu{n}" / "cpu_capacity").write_text(("446" if n < 4 else "1024") + "\n")
    (cpu / "online").write_text("0-5\n")
    state = detected_pins(tmp_path, root)
    assert [cpu for cpu, _ in state.pins] == [5, 3]


# --- topologies as detect.sh reads them on real machines: identical cores are one cluster whatever their ids ----

TOPOLOGY = DATA / "topology"


def sys_tree(root: Path, cpus: dict[int, dict], hybrid: dict[str, str] | None = None) -> Path:
    """A /sys tree: per CPU {cluster_id, package, capacity, policy, max_khz}; a cpufreq policy lists its CPUs."""
    base = root / "sys/devices/system/cpu"
    base.mkdir(parents=True)
    (base / "online").write_text(f"0-{max(cpus)}\n")
    policies: dict[str, list[int]] = {}
    for n, c in cpus.items():
        topo = base / f"cpu{n}" / "topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text(f"{c.get('package', 0)}\n")
        (topo / "cluster_id").write_text(f"{c.get('cluster_id', 65535)}\n")
        if "capacity" in c:
            (base / f"cpu{n}" / "cpu_capacity").write_text(f"{c['capacity']}\n")
        if "policy" in c:
            policies.setdefault(c["policy"], []).append(n)
    for name, members in policies.items():
        d = base / "cpufreq" / name
        d.mkdir(parents=True)
        (d / "related_cpus").write_text(" ".join(map(str, members)) + "\n")
        (d / "cpuinfo_max_freq").write_text(f"{cpus[members[0]]['max_khz']}\n")
    for pmu, text in (hybrid or {}).items():
        (root / "sys/devices" / pmu).mkdir(parents=True)
        (root / "sys/devices" / pmu / "cpus").write_text(text + "\n")
    return root


def pins_of(tmp_path: Path, root: Path, cpuinfo: str | None = None):
    """What `sslbench run` pins on a host with this /sys (and /proc/cpuinfo text, else this machine's)."""
    text = detect_output(tmp_path, root)
    if cpuinfo is not None:
        head, _, rest = text.partition("@@sslbench:/proc/cpuinfo\n")
        text = f"{head}@@sslbench:/proc/cpuinfo\n{cpuinfo}\n{rest[rest.index('@@sslbench:'):]}"
    return facts_of(text).pins


def test_real_x86_vm_with_a_cluster_id_per_core_is_one_cluster():
    # captured: this build VM (2 vCPUs, cluster_id 0 and 1, cpu_capacity 1024 both, no cpufreq)
    text = (TOPOLOGY / "x86_64-vm-2cpu-cluster-id-per-core.detect.txt").read_text()
    assert "cluster_id 0" in text and "cluster_id 1" in text
    state = facts_of(text)
    assert state.pins == [] and state.pin_note is None


def test_many_core_server_is_one_cluster(tmp_path):
    # 64 cores / 128 threads: a cluster_id per L2 (per core, SMT siblings share it), two packages, one
    # acpi-cpufreq policy per CPU, a few favoured cores turbo 100 MHz higher (ITMT)
    cpus = {n: {"cluster_id": n % 64, "package": (n % 64) // 32, "policy": f"policy{n}",
                "max_khz": 3500000 if n % 64 in (3, 17) else 3400000} for n in range(128)}
    assert pins_of(tmp_path, sys_tree(tmp_path / "epyc", cpus)) == []


def test_intel_hybrid_pins_a_p_core_and_an_e_core(tmp_path):
    # Alder Lake: 4 P-cores with SMT (cpus 0-7) and 8 E-cores (8-15), a policy per CPU, P 4.7 GHz, E 3.6 GHz
    cpus = {n: {"cluster_id": n // 2 if n < 8 else 4 + (n - 8) // 4, "policy": f"policy{n}",
                "max_khz": 4700000 if n < 8 else 3600000} for n in range(16)}
    root = sys_tree(tmp_path / "adl", cpus, hybrid={"cpu_core": "0-7", "cpu_atom": "8-15"})
    assert pins_of(tmp_path, root) == [(7, "P-core"), (15, "E-core")]


def test_rk3576_two_core_types_in_one_cluster_id(tmp_path):
    # ArmSoM Sige5 as sbc-bench reported it (tests/data/console/sbc-bench-armsom-sige5-full-report.txt):
    # cluster 0 for every CPU, policy0 = cpu0-3 at 2208 MHz (A53), policy4 = cpu4-7 at 2304 MHz (A72)
    cpus = {n: {"cluster_id": 0, "policy": "policy0" if n < 4 else "policy4",
                "max_khz": 2208000 if n < 4 else 2304000} for n in range(8)}
    cpuinfo = "".join(f"processor\t: {n}\nCPU implementer\t: 0x41\nCPU part\t: {'0xd03' if n < 4 else '0xd08'}\n\n"
                      for n in range(8))
    assert pins_of(tmp_path, sys_tree(tmp_path / "rk3576", cpus), cpuinfo) == [(7, "Cortex-A72"), (3, "Cortex-A53")]


def test_rk3588_big_clusters_are_one_when_alike_and_two_when_clocked_apart(tmp_path):
    # Rock 5B: A55 cpu0-3 (policy0, 1.8 GHz, capacity 530), A76 cpu4-5 (policy4) and cpu6-7 (policy6)
    cpuinfo = (DATA / "facts" / "cpuinfo-aarch64-rock5b-rk3588.txt").read_text()

    def board(a76_khz: tuple[int, int]) -> dict[int, dict]:
        cpus = {n: {"cluster_id": 0, "policy": "policy0", "max_khz": 1800000, "capacity": 530} for n in range(4)}
        for n in range(4, 8):
            cpus[n] = {"cluster_id": 1 + (n - 4) // 2, "policy": "policy4" if n < 6 else "policy6",
                       "max_khz": a76_khz[n >= 6], "capacity": 1024}
        return cpus

    alike = pins_of(tmp_path, sys_tree(tmp_path / "alike", board((2400000, 2400000))), cpuinfo)
    assert alike == [(7, "Cortex-A76"), (3, "Cortex-A55")]
    binned = pins_of(tmp_path, sys_tree(tmp_path / "binned", board((2256000, 2400000))), cpuinfo)
    assert binned == [(7, "Cortex-A76 cpu6-7"), (5, "Cortex-A76 cpu4-5"), (3, "Cortex-A55")]
