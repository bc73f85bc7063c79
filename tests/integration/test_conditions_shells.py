"""conditions.sh timing paths on this machine, in dash, bash and BusyBox ash: the idle gate's
sampling loop and the cell wrapper watching a real process (seconds each, so not unit tests),
and a CPU hog started on purpose that must come out as the `busy` flag."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.evidence.conditions import parse_cell, parse_idle, read_cell
from orchestrator.evidence.validity import cell_verdict
from orchestrator.model import BUSY
from orchestrator.parse.speed import parse_speed

# posix_shell, make_sysroot, rk3576 and run_script: tests/conftest.py
ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "playbooks" / "files" / "conditions.sh"

pytestmark = pytest.mark.slow

TASKSET = shutil.which("taskset")
OPENSSL = shutil.which("openssl")

def test_idle_gate_passes_on_a_quiet_host(posix_shell, tmp_path, make_sysroot, run_script, rk3576):
    # a frozen /proc/stat never moves: zero CPU use; load 0.04 is under 0.3
    root = make_sysroot(tmp_path / "quiet", rk3576)
    out = run_script(posix_shell, root, "idle-wait", "10", "0.3", "30", "1", "0.25")
    gate = parse_idle(out.stdout)
    assert gate["idle"] is True and gate["reason"] == "load" and gate["waited"] == 1
    assert gate["samples"] == [{"waited": 1, "load1": 0.04, "cpu_cores": 0.0}]
    assert gate["params"]["max"] == 10


def test_idle_gate_gives_up_after_its_timeout_when_load_stays_high(posix_shell, tmp_path, make_sysroot, run_script,
                                                                 rk3576):
    spec = dict(rk3576, loadavg="3.90 2.10 1.00 5/243 1822")
    root = make_sysroot(tmp_path / "loaded", spec)
    # CPU quiet (frozen stat) but load high: idle only after QUIET seconds; 2 s max < 30 s quiet
    out = run_script(posix_shell, root, "idle-wait", "2", "0.3", "30", "1")
    gate = parse_idle(out.stdout)
    assert gate["idle"] is False and gate["reason"] == "timeout" and gate["waited"] == 2
    assert [s["load1"] for s in gate["samples"]] == [3.9, 3.9]
    # ... and with a short quiet window the quiet CPU wins over the load
    out = run_script(posix_shell, root, "idle-wait", "10", "0.3", "2", "1")
    gate = parse_idle(out.stdout)
    assert gate["idle"] is True and gate["reason"] == "quiet" and gate["waited"] == 2


def test_cell_wrapper_records_the_cpu_and_passes_the_exit_code(posix_shell, tmp_path):
    evidence = tmp_path / "cell.cond"
    taskset = shutil.which("taskset")
    if not taskset:
        pytest.skip("no taskset here")
    # a pure-shell busy loop for 2-3 s (whole seconds of `date`), pinned to CPU 0: the sampler reads the mask at its
    # second sample, a second in; a loop of 1-2 s ended before it once, on a loaded 2-core CI machine
    busy = "i=0; end=$(( $(date +%s) + 3 )); while [ $(date +%s) -lt $end ]; do i=$((i+1)); done; exit 3"
    out = subprocess.run([*posix_shell, str(SCRIPT), "cell", str(evidence), "--", taskset, "-c", "0", "sh", "-c", busy],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 3  # the command's own status
    cell = parse_cell(evidence.read_text())
    run = cell["run"]
    assert run["exit"] == 3
    assert run["allowed_cpus"] == [0]
    assert {s["cpu"] for s in run["samples"][1:]} == {0}
    assert run["children_after"] - run["children_before"] >= 50  # ~1-2 s of CPU, in 1/100 s ticks
    assert run["uptime_after"] > run["uptime_before"]
    assert "cpu" in cell["before"]["cpu_times"] and "cpu" in cell["after"]["cpu_times"]



@pytest.fixture
def cpu_hogs():
    """Start busy loops (optionally pinned), always killed in teardown; each also dies by itself after 60 s."""
    procs: list[subprocess.Popen] = []

    def start(count: int = 1, cpu: int | None = None) -> None:
        for _ in range(count):
            cmd = ["timeout", "60", "sh", "-c", "while :; do :; done"]
            if cpu is not None and TASKSET:
                cmd = [TASKSET, "-c", str(cpu), *cmd]
            procs.append(subprocess.Popen(cmd, start_new_session=True))
        time.sleep(0.3)  # let them get going

    yield start
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


def test_idle_gate_does_not_pass_while_every_core_is_hogged(posix_shell, cpu_hogs, run_script):
    cpu_hogs(count=os.cpu_count() or 2)
    out = run_script(posix_shell, None, "idle-wait", "4", "0.3", "30", "2", "0.25")
    gate = parse_idle(out.stdout)
    assert gate["idle"] is False and gate["reason"] == "timeout"
    assert all(s["cpu_cores"] >= 0.9 for s in gate["samples"]), gate["samples"]


@pytest.mark.skipif(not (TASKSET and OPENSSL), reason="needs taskset and openssl")
def test_hog_on_the_pinned_core_flags_the_cell_busy(posix_shell, cpu_hogs, tmp_path):
    cpu_hogs(count=1, cpu=0)
    evidence = tmp_path / "cell.cond"
    cmd = [TASKSET, "-c", "0", OPENSSL, "speed", "-seconds", "1", "-bytes", "1024", "-evp", "aes-128-gcm"]
    out = subprocess.run([*posix_shell, str(SCRIPT), "cell", str(evidence), "--", *cmd],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    cell = read_cell(evidence.read_text())
    measurements = parse_speed(out.stdout + out.stderr).measurements
    assert measurements and measurements[0].seconds is not None
    verdict = cell_verdict(cell, threads=1, measurements=measurements, nominal_seconds=1, pinned_cpu=0)
    assert verdict.facts.pinning and verdict.facts.pinning.held is True
    assert BUSY in verdict.flags
    # openssl shared its core with the hog: its own CPU seconds show it, and so does the host's
    assert any("of CPU in 1s" in r for r in verdict.reasons), verdict.reasons
    assert (verdict.facts.background_cores or 0) >= 0.3


def test_a_changing_proc_file_is_read_whole_in_every_shell(posix_shell, cpu_hogs):
    # /proc writes a file anew whenever its reader seeks, and bash's `read` seeks back after every line: read line
    # by line, the status of a process flipping between running and sleeping (its State line changes length)
    # came out with Cpus_allowed_list cut or lost in 1 read in 200 under load (CI failed on it). Every core busy,
    # a target forking all the time, and a thousand reads of its status and of /proc/stat.
    cpu_hogs(count=os.cpu_count() or 2)
    target = subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"], start_new_session=True)
    try:
        allowed = sorted(os.sched_getaffinity(target.pid))
        want = f"{allowed[0]}-{allowed[-1]}" if len(allowed) > 1 else str(allowed[0])
        assert allowed == list(range(allowed[0], allowed[-1] + 1))  # one range, as the kernel writes it
        script = (f'. "{SCRIPT}"; n=0; while [ $n -lt 1000 ]; do allowed_cpus {target.pid}; sec_stat; '
                  'read_stat && echo "ncpu $NCPU"; n=$((n + 1)); done')
        out = subprocess.run([*posix_shell, "-c", script], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "SSLBENCH_CONDITIONS_LIB": "1"})
    finally:
        os.killpg(target.pid, signal.SIGKILL)
        target.wait(timeout=10)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines.count(f"allowed {want}") == 1000, [l for l in lines if l.startswith("allowed")][:5]
    ncpu = os.cpu_count()
    assert lines.count(f"ncpu {ncpu}") == 1000
    stat = [l for l in lines if l.startswith("cpu")]
    assert len(stat) == 1000 * (ncpu + 1)
    assert all(len(l.split()) >= 8 and all(f.isdigit() for f in l.split()[1:]) for l in stat)
