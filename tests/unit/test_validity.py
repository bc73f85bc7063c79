"""Validity flags from captured condition texts (tests/data/conditions) and measurements."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from orchestrator.evidence.conditions import read_cell, read_idle, read_snapshot
from orchestrator.evidence.cell import CellEvidence
from orchestrator.evidence.records import IdleOutcome, Policy, Snapshot
from orchestrator.model import BUSY, CORES_OFFLINE, HOT, PIN_FAILED, THROTTLED, CpuFacts, Measurement
from orchestrator.evidence.validity import (
    THRESHOLDS,
    Thresholds,
    apply_flags,
    background_cores,
    below_top,
    cell_verdict,
    decode_throttled,
    host_verdict,
    mean_khz,
    offline_cpus,
    short_cpu_time,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "conditions"


def snap(name: str) -> Snapshot:
    found = read_snapshot((DATA / name).read_text())
    assert found is not None
    return found


def cell(name: str) -> CellEvidence:
    return read_cell((DATA / name).read_text())


def test_get_throttled_bits_decoded():
    assert decode_throttled(0x50005) == {"now": ["under-voltage", "throttled"],
                                         "since_boot": ["under-voltage", "throttled"]}
    assert decode_throttled(0x20002) == {"now": ["arm frequency capped"], "since_boot": ["arm frequency capped"]}
    assert decode_throttled(0x80000) == {"now": [], "since_boot": ["soft temperature limit"]}
    assert decode_throttled(0) == {"now": [], "since_boot": []}
    assert decode_throttled(None) == {"now": [], "since_boot": []}


def test_quiet_big_little_run_has_no_flags():
    verdict = host_verdict(snap("rk3576-before.txt"), snap("rk3576-after-calm.txt"))
    assert verdict.flags == []
    assert verdict.facts.max_celsius == 61.2
    clocks = verdict.facts.clocks
    assert clocks is not None
    # schedutil idles low between cells: reported, not flagged
    assert clocks["policy4"].governor == "schedutil"
    assert clocks["policy4"].top_khz == 2304000
    assert 0 < (clocks["policy4"].below_top or 0) < 0.02


def test_hot_and_capped_big_cluster_is_flagged():
    verdict = host_verdict(snap("rk3576-before.txt"), snap("rk3576-after-hot-capped.txt"))
    assert THROTTLED in verdict.flags and HOT in verdict.flags
    assert any("policy4 max clock lowered 2304 -> 1800 MHz" in r for r in verdict.reasons)
    assert any("bigcore-thermal" in r and "86.1" in r for r in verdict.reasons)
    assert any("swap use grew 0 -> 30000 kB" in r for r in verdict.reasons)
    assert BUSY not in verdict.flags and CORES_OFFLINE not in verdict.flags


def test_raspberry_pi_firmware_bits():
    verdict = host_verdict(snap("pi4-before.txt"), snap("pi4-after-capped.txt"))
    assert verdict.flags == [THROTTLED]
    assert verdict.reasons[0] == "throttled: get_throttled=0x20002: arm frequency capped"
    # 79.4 °C is under the 80 °C limit; a stricter limit flags it
    assert HOT in host_verdict(snap("pi4-before.txt"), snap("pi4-after-capped.txt"), th=Thresholds(hot_celsius=75)).flags
    undervolt = snap("pi4-undervoltage.txt")
    verdict = host_verdict(undervolt, undervolt)
    assert "under-voltage, throttled" in verdict.reasons[0]


def test_sticky_bits_only_count_when_they_appear_during_the_run():
    before, after = snap("pi4-before.txt"), snap("pi4-before.txt")
    before.throttled, after.throttled = 0x80000, 0x80000  # soft limit hit before we started
    assert THROTTLED not in host_verdict(before, after).flags
    after.throttled = 0xA0000
    verdict = host_verdict(before, after)
    assert THROTTLED in verdict.flags and "arm frequency capped during the run" in verdict.reasons[0]


def test_performance_governor_below_top_is_throttling():
    before, after = snap("rk3576-before.txt"), snap("rk3576-after-calm.txt")
    for s in (before, after):
        s.policy("policy4").scaling_governor = "performance"
    # the calm run spent ~1 % of its time low: with performance that is still 1 % below 2 %
    assert THROTTLED not in host_verdict(before, after).flags
    steps = after.policy("policy4").time_in_state
    assert steps is not None
    steps[7] = (steps[7][0], steps[7][1] + 3000)  # 30 s at 1.8 GHz
    verdict = host_verdict(before, after)
    assert THROTTLED in verdict.flags
    assert any("policy4 (performance) spent" in r for r in verdict.reasons)


def test_cores_offline_only_counts_present_cpus():
    vm = snap("vm-cores-offline.txt")
    assert offline_cpus(vm) == [2, 3]  # 4-7 are possible, not present
    verdict = host_verdict(vm, vm)
    assert verdict.flags == [CORES_OFFLINE]
    assert "CPUs 2,3 offline" in verdict.reasons[0]
    calm = snap("rk3576-before.txt")
    dropped = snap("rk3576-after-calm.txt")
    assert dropped.cpus is not None
    dropped.cpus.online = [0, 1, 2, 3, 4, 5]
    assert CORES_OFFLINE in host_verdict(calm, dropped).flags


def test_idle_gate_that_timed_out_makes_the_host_busy():
    gate = read_idle("@@ begin sslbench-idle 1 gate\nparams max=60 load=0.3 quiet=30 sample=5 cpu_limit=0.25\n"
                      "sample waited=5 load1=112 cpu_centicores=101\nidle no waited=60 reason=timeout\n@@ end sslbench-idle\n")
    verdict = host_verdict(Snapshot(), Snapshot(), gate)
    assert verdict.flags == [BUSY]
    assert "not idle after 60 s (load 1.12, 1.01 cores busy)" in verdict.reasons[0]
    assert gate is not None
    ok = dataclasses.replace(gate, outcome=IdleOutcome.IDLE)
    assert host_verdict(Snapshot(), Snapshot(), ok).flags == []


def test_router_without_cpufreq_or_thermal_gets_no_false_flags():
    router = snap("openwrt-mips-1core.txt")
    verdict = host_verdict(router, router)
    assert verdict.flags == []
    assert verdict.facts.clocks is None and verdict.facts.max_celsius is None


def test_clean_pinned_cell():
    c = cell("rk3576-cell-cpu7-ok.txt")
    host_before = snap("rk3576-before.txt")
    verdict = cell_verdict(c, threads=1, nominal_seconds=3, pinned_cpu=7, host_before=host_before)
    assert verdict.flags == []
    assert verdict.facts.cpus == [7]
    assert verdict.facts.pinning and verdict.facts.pinning.held is True
    assert (verdict.facts.background_cores or 0) < 0.05
    assert verdict.facts.clock_khz == {"policy4": 2288287}  # (1795 ticks at 2304 MHz + 15 at 408 MHz) / 1810


def test_throttled_cell_on_the_big_cluster():
    verdict = cell_verdict(cell("rk3576-cell-cpu7-throttled.txt"), threads=1, pinned_cpu=7,
                           host_before=snap("rk3576-before.txt"))
    assert THROTTLED in verdict.flags and HOT in verdict.flags
    assert any("policy4 spent 34% of the cell below 2304 MHz" in r for r in verdict.reasons)
    # the idle LITTLE cluster sat at 408 MHz the whole time: not judged, the cell never ran there
    assert "policy0" not in (verdict.facts.clock_khz or {})


def test_pinning_that_did_not_hold():
    verdict = cell_verdict(cell("rk3576-cell-pin-failed.txt"), threads=1, pinned_cpu=7)
    assert verdict.flags == [PIN_FAILED]
    assert verdict.facts.pinning and verdict.facts.pinning.held is False
    assert "allowed on CPUs 4-7, not only 7" in verdict.reasons[0]


def test_background_hog_makes_the_cell_busy():
    c = cell("rk3576-cell-busy-hog.txt")
    assert background_cores(c) == pytest.approx(1.0, abs=0.02)
    verdict = cell_verdict(c, threads=1, pinned_cpu=7)
    assert verdict.flags == [BUSY]
    assert "other processes used 1.00 cores" in verdict.reasons[0]


def test_progress_line_with_little_cpu_time_is_busy():
    good = Measurement("aes-128-gcm", 16, 1e8, seconds=2.97)
    starved = Measurement("aes-128-gcm", 1024, 1e8, seconds=1.52)
    assert not short_cpu_time(good, 3)
    assert short_cpu_time(starved, 3)
    assert not short_cpu_time(starved, None)  # nominal unknown: no judgement
    verdict = cell_verdict(CellEvidence(), measurements=[good, starved], nominal_seconds=3)
    assert verdict.flags == [BUSY]
    assert verdict.reasons == ["busy: aes-128-gcm 1024 got 1.52s of CPU in 3s"]


def test_unpinned_single_thread_is_judged_on_its_busiest_policy():
    c = cell("rk3576-cell-cpu7-ok.txt")
    assert c.run is not None
    c.run.samples, c.run.allowed_cpus = [], None
    assert cell_verdict(c, threads=1).flags == []  # policy0 idled low, policy4 ran at the top
    assert THROTTLED in cell_verdict(c, threads=8).flags  # all-core: the idle LITTLE cluster counts


def test_below_top_and_mean_clock():
    before = Policy(time_in_state=[(600000, 100), (1500000, 100)], scaling_max_freq=1500000)
    after = Policy(time_in_state=[(600000, 150), (1500000, 250)])
    assert below_top(before, after) == pytest.approx(0.25)
    assert mean_khz(before, after) == pytest.approx((600000 * 50 + 1500000 * 150) / 200)
    assert below_top(before, before) is None


def test_flag_merging():
    m = Measurement("sha256", 1024, 1.0, flags=["custom", PIN_FAILED])
    apply_flags([m], [BUSY, THROTTLED, "custom"])
    assert m.flags == [THROTTLED, BUSY, PIN_FAILED, "custom"]  # ALL_FLAGS' order, then others, each once


def test_thresholds_live_in_one_place():
    assert THRESHOLDS.hot_celsius == 80.0
    assert THRESHOLDS.cpu_seconds_ratio == 0.90


# --- glue used by the run -----------------------------------------------------------------------

def test_nominal_seconds_from_the_cell_arguments():
    from orchestrator.evidence.validity import nominal_seconds

    assert nominal_seconds(["speed", "-mr", "-seconds", "2", "-evp", "aes-128-gcm"]) == 2
    assert nominal_seconds(["speed", "-mr", "-evp", "aes-128-gcm"]) == 3
    assert nominal_seconds(["speed", "-mr", "rsa2048"], pubkey=True) == 10


def test_flag_cell_from_a_log_with_evidence_appended():
    from orchestrator.parse.protocol import split_evidence
    from orchestrator.evidence.validity import flag_cell

    speed = "+DT:AES-128-GCM:3:16\n+R:100:AES-128-GCM:1.40\n+H:16\n+F:22:AES-128-GCM:1000.00\n"
    log = speed + (DATA / "rk3576-cell-busy-hog.txt").read_text()
    head, evidence = split_evidence(log)
    assert head == speed and evidence.startswith("@@ begin sslbench-conditions 1 cell-before")
    assert split_evidence(speed) == (speed, "")
    ok = Measurement("aes-128-gcm", 16, 1000.0, seconds=1.4)
    failed = Measurement("aes-128-gcm", 64, None, status="error")
    verdict = flag_cell([ok, failed], evidence, threads=1, nominal=3, pinned_cpu=7)
    assert verdict.flags == [BUSY]
    assert len(verdict.reasons) == 2  # background CPU and the short progress line
    assert ok.flags == [BUSY] and failed.flags == []


def test_flag_host_stores_evidence_and_flags():
    from orchestrator.model import HostResult
    from orchestrator.evidence.validity import flag_host

    result = HostResult(host="sige5", cpu=CpuFacts(cores=["Cortex-A53"] * 4 + ["Cortex-A72"] * 4))
    gate = "@@ begin sslbench-idle 1 gate\nidle yes waited=5 reason=load\n@@ end sslbench-idle\n"
    verdict = flag_host(result, (DATA / "rk3576-before.txt").read_text(),
                        (DATA / "rk3576-after-hot-capped.txt").read_text(), gate)
    assert result.flags == [THROTTLED, HOT] == verdict.flags
    assert result.conditions["idle"]["idle"] is True
    assert [c["label"] for c in result.conditions["clusters"]] == ["Cortex-A72", "Cortex-A53"]
    assert result.conditions["verdict"]["flags"] == [THROTTLED, HOT]
    assert result.conditions["before"]["label"] == "before"
    again = HostResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.conditions == result.conditions
    empty = HostResult(host="old-log")
    assert flag_host(empty).flags == [] and "before" not in empty.conditions


def test_crypto_evidence_prefers_the_highest_priority_driver():
    from orchestrator.evidence.validity import crypto_evidence

    board = crypto_evidence(snap("rk3576-before.txt"))
    assert board.kernel_drivers == {"cbc(aes)": "cbc-aes-ce", "gcm(aes)": "gcm-aes-ce", "sha256": "sha256-ce"}
    assert board.kernel_accelerated == ["cbc(aes)", "gcm(aes)", "sha256"]
    vm = crypto_evidence(snap("debian12-x86_64-vm-snapshot.txt"))  # real: generic/lib drivers only
    assert vm.kernel_drivers["aes"] == "aes-fixed-time"  # priority 101 beats aes-generic's 100
    assert vm.kernel_accelerated == []
    assert vm.openssl_providers == ["default"] and vm.openssl_engines == []
    router = crypto_evidence(snap("openwrt-mips-1core.txt"))
    assert router.kernel_accelerated == [] and router.openssl_engines == []


def test_flag_cell_checks_the_pin_its_command_asked_for():
    from orchestrator.evidence.validity import flag_cell

    moved = (DATA / "rk3576-cell-pin-failed.txt").read_text()  # command: taskset -c 7 openssl ...
    m = Measurement("aes-128-gcm", 16, 1.0)
    verdict = flag_cell([m], moved, threads=1)
    assert verdict.flags == [PIN_FAILED] and m.flags == [PIN_FAILED]
    ok = flag_cell([Measurement("aes-128-gcm", 16, 1.0)], (DATA / "rk3576-cell-cpu7-ok.txt").read_text())
    assert ok.facts.pinning and ok.facts.pinning.held is True


def test_real_pinned_cell_on_the_fleet_armhf_host():
    # raspbian1 of tests/rig (qemu-arm, OpenSSL 1.1.1w) while this shared VM was busy:
    # openssl got 1.19 s of CPU in 2 s, pinned to CPU 1 and seen there
    from orchestrator.parse.protocol import split_evidence
    from orchestrator.parse.speed import parse_speed
    from orchestrator.evidence.validity import flag_cell

    speed, evidence = split_evidence((DATA / "rig-raspbian1-cell-taskset.txt").read_text())
    measurements = parse_speed(speed).measurements
    assert [(m.algorithm, m.block_size, m.seconds) for m in measurements] == [("aes-128-gcm", 1024, 1.19)]
    verdict = flag_cell(measurements, evidence, threads=1, nominal=2)
    assert verdict.facts.pinning and verdict.facts.pinning.held is True and verdict.facts.cpus == [1]
    assert BUSY in verdict.flags and measurements[0].flags == [BUSY]
    assert "aes-128-gcm 1024 got 1.19s of CPU in 2s" in " ".join(verdict.reasons)


@pytest.mark.parametrize("name", ["rig-raspbian1-armhf-qemu.txt", "rig-ddwrt1-busybox-readonly.txt",
                                  "rig-openwrt1-busybox-dropbear.txt"])
def test_real_fleet_snapshots_raise_no_false_flags(name):
    s = snap(name)
    assert host_verdict(s, s).flags == []
    assert any("no sysfs" in n for n in s.notes)


def test_measured_clock_for_per_mhz_figures():
    from orchestrator.model import HostResult
    from orchestrator.evidence.validity import flag_host, measured_mhz

    result = HostResult(host="sige5")
    flag_host(result, (DATA / "rk3576-before.txt").read_text(), (DATA / "rk3576-after-calm.txt").read_text())
    assert measured_mhz(result.conditions) == 2304.0  # no cell evidence: the fastest policy's top clock
    ok = cell_verdict(cell("rk3576-cell-cpu7-ok.txt"), host_before=snap("rk3576-before.txt"))
    hot = cell_verdict(cell("rk3576-cell-cpu7-throttled.txt"), host_before=snap("rk3576-before.txt"))
    result.conditions["cells"] = {"a": ok.to_dict(), "b": hot.to_dict()}
    assert ok.facts.clock_khz and hot.facts.clock_khz
    clocks = [ok.facts.clock_khz["policy4"], hot.facts.clock_khz["policy4"]]
    assert measured_mhz(result.conditions) == round(sum(clocks) / 2 / 1000, 1)
    assert measured_mhz({}) is None
    assert measured_mhz(HostResult(host="router").conditions) is None


# --- the table of checks ------------------------------------------------------------------------

def test_every_check_names_what_it_reads_its_limit_and_a_flag_from_the_model():
    from orchestrator.evidence.checks import CELL_CHECKS, HOST_CHECKS
    from orchestrator.evidence.conditions import SECTION_READERS
    from orchestrator.model import EVIDENCE_FLAGS

    limits = {f.name for f in dataclasses.fields(Thresholds)}
    for check in [*HOST_CHECKS, *CELL_CHECKS]:
        for section in (check.section, *check.extra_sections):
            assert section in SECTION_READERS or section in ("idle", "cell"), (check.name, section)
        assert check.threshold is None or check.threshold in limits, check.name
        assert check.flag is None or check.flag in EVIDENCE_FLAGS, check.name
    raised = {c.flag for c in [*HOST_CHECKS, *CELL_CHECKS]}
    assert set(EVIDENCE_FLAGS) <= raised  # no flag the model names that no check raises


def test_a_new_check_is_one_entry(monkeypatch):
    # a check over evidence the snapshot already holds: one entry in the list, nothing else
    from orchestrator.evidence import checks
    from orchestrator.evidence.checks import Check, Finding

    def many_tasks(ev, th, facts):
        if (ev.after.tasks or 0) > 200:
            yield Finding(f"{ev.after.tasks} tasks")

    monkeypatch.setattr(checks, "HOST_CHECKS", [*checks.HOST_CHECKS, Check("tasks", "loadavg", many_tasks, None, BUSY)])
    from orchestrator.evidence import validity
    monkeypatch.setattr(validity, "HOST_CHECKS", checks.HOST_CHECKS)
    after = snap("rk3576-after-calm.txt")
    after.tasks = 250
    verdict = host_verdict(snap("rk3576-before.txt"), after)
    assert verdict.flags == [BUSY]
    assert [r for r in verdict.reasons if not r.startswith("note:")] == ["busy: 250 tasks"]


def test_flag_host_and_flag_cell_store_what_they_always_stored():
    # stored-verdicts.json: HostResult.to_dict of three hosts judged with every cell capture, as the judges before
    # the table of checks wrote it; byte for byte (store.py's compact json.dumps)
    from orchestrator.evidence.validity import StoredConditions, flag_cell, flag_host
    from orchestrator.model import HostResult

    gate = ("@@ begin sslbench-idle 1 gate\nparams max=60 load=0.3 quiet=30 sample=5 cpu_limit=0.25\n"
            "sample waited=5 load1=112 cpu_centicores=101\nidle no waited=60 reason=timeout\n@@ end sslbench-idle\n")
    out = {}
    for before, after in [("rk3576-before.txt", "rk3576-after-hot-capped.txt"), ("pi4-before.txt", "pi4-after-capped.txt"),
                          ("vm-cores-offline.txt", "vm-cores-offline.txt")]:
        result = HostResult(host="h", cpu=CpuFacts(cores=["Cortex-A53"] * 4 + ["Cortex-A72"] * 4))
        flag_host(result, (DATA / before).read_text(), (DATA / after).read_text(), gate)
        for name in sorted(p.name for p in DATA.glob("*cell*.txt")):
            for threads in (1, 8):
                found = [Measurement("aes-128-gcm", 16, 1.0, seconds=1.2), Measurement("sha256", 64, 2.0, seconds=2.99)]
                verdict = flag_cell(found, (DATA / name).read_text(), threads=threads, nominal=3,
                                    host_before=StoredConditions.from_dict(result.conditions).before)
                result.conditions.setdefault("cells", {})[f"{name} threads={threads}"] = verdict.to_dict()
        out[f"{before} {after}"] = result.to_dict()
    assert json.dumps(out, separators=(",", ":")) + "\n" == (DATA / "stored-verdicts.json").read_text()
