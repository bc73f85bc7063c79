"""conditions.sh on the loopback fleet (tests/rig): BusyBox ash behind dropbear, Debian/CentOS userlands
behind OpenSSH, some under qemu.  Each host lacks most of /sys: every missing file must be a note, never
an error; the idle gate must see a CPU hog started by the test; the cell wrapper must work there too."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.evidence.conditions import parse_cell, parse_conditions, parse_idle
from orchestrator.evidence.records import IdleGate, Snapshot
from orchestrator.evidence.validity import host_verdict
from orchestrator.model import BUSY

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "playbooks" / "files" / "conditions.sh"
SSH_CONFIG = ROOT / "tests" / "rig" / "state" / "ssh_config"
FLEET = ("raspbian1", "armbian1", "openwrt1", "openwrt2", "ddwrt1", "ddwrt2", "centos1", "debian1")

pytestmark = pytest.mark.rig


def on_host(host: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run conditions.sh on `host` fed through stdin (`sh -s`): nothing is copied, no sftp needed."""
    command = " ".join(["sh", "-s", *args])
    return subprocess.run(["ssh", "-F", str(SSH_CONFIG), host, command], input=SCRIPT.read_text(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def cpu_hogs():
    """Busy loops on this machine (the fleet's chroots share its CPUs and /proc/stat); killed in teardown."""
    procs: list[subprocess.Popen] = []

    def start(count: int) -> None:
        for _ in range(count):
            procs.append(subprocess.Popen(["timeout", "90", "sh", "-c", "while :; do :; done"],
                                          start_new_session=True))
        time.sleep(0.3)

    yield start
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


@pytest.mark.parametrize("host", FLEET)
def test_snapshot_on_every_fleet_host(host, rig_hosts):
    if host not in rig_hosts:
        pytest.skip(f"{host} is not in the fleet inventory")
    out = on_host(host, "snapshot", host)
    assert out.returncode == 0, out.stderr
    snap = parse_conditions(out.stdout)
    assert snap["label"] == host
    assert len(snap["loadavg"]) == 3 and "cpu" in snap["cpu_times"]
    assert snap["swap"]["total_kb"] >= 0
    # every host sees this machine's /sys, read-only: its real topology; what it lacks (cpufreq, thermal zones
    # on a VM) is a note, not a failure
    notes = snap["notes"]
    assert len(snap["topology"]) == os.cpu_count(), snap["topology"]
    assert snap.get("policies") or any(n.startswith("no /sys/devices/system/cpu/cpufreq policies") for n in notes)
    assert snap.get("thermal") or any(n.startswith("no /sys/class/thermal zones") for n in notes), notes
    # nothing the script printed is lost: every line is in a section or a note
    assert "@@ end sslbench-conditions" in out.stdout
    assert host_verdict(Snapshot.from_dict(snap), Snapshot.from_dict(snap)).flags == []


@pytest.mark.parametrize("host", ["openwrt1", "raspbian1"])
def test_idle_gate_on_a_fleet_host_sees_a_cpu_hog(host, rig_hosts, cpu_hogs):
    if host not in rig_hosts:
        pytest.skip(f"{host} is not in the fleet inventory")
    cpu_hogs(os.cpu_count() or 2)
    gate = parse_idle(on_host(host, "idle-wait", "4", "0.3", "30", "2").stdout)
    assert gate["idle"] is False and gate["reason"] == "timeout"
    assert host_verdict(Snapshot(), Snapshot(), IdleGate.from_dict(gate)).flags == [BUSY]


@pytest.mark.parametrize("host", ["raspbian1", "ddwrt1"])  # Debian userland and BusyBox, both with openssl
def test_cell_wrapper_on_a_fleet_host(host, rig_hosts):
    if host not in rig_hosts:
        pytest.skip(f"{host} is not in the fleet inventory")
    out = on_host(host, "cell", "-", "--", "openssl", "speed", "-seconds", "1", "-bytes", "64", "sha256")
    cell = parse_cell(out.stdout)
    run = cell["run"]
    assert run["exit"] == 0, out.stdout[-2000:]
    assert run["samples"] and isinstance(run["samples"][0]["cpu"], int)
    assert run["children_after"] > run["children_before"]
    assert "cpu" in cell["before"]["cpu_times"] and "cpu" in cell["after"]["cpu_times"]
