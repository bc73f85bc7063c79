"""Ctrl-C as a terminal sends it: SIGINT to sslbench's whole process group (sslbench, ansible-runner's
ansible-playbook where it shares the group, the local connection's shells, openssl), not to sslbench's pid alone,
at several moments of a run on this machine (ansible_connection: local). Every cell that reached the controller,
or finished on the host before the stop, is kept; run.json and `sslbench report` say the run was interrupted."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.model import HOST_FAILED, OK
from orchestrator.run.stages import work_dir
from waiting import wait_for

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl on this machine")]

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
# 3 cells of 6 sizes x 1 s (18 s: longer than a launch waits for, so the cells come back at polls)
MATRIX = ["--algorithms", "aes-128-gcm,sha256,sha1", "--threads", "1", "--api", "evp", "--seconds", "1",
          "--idle-wait", "0"]
FIRST = "001-evp-aes-128-gcm-t1-r0"


def host_logs(run_id: str, pattern: str) -> list[str]:
    return glob.glob(os.path.join(work_dir(run_id, "localhost"), "logs", pattern))


def openssl_of(run_id: str, *, sleepers: bool = True) -> list[str]:
    """Processes left in this run's work dir (its runner, its openssl), by their cwd, as `pid name`. A launch
    that waits for a short matrix sleeps in a `sleep WAIT` of its own, which a stop leaves to end by itself
    (it burns nothing): `sleepers=False` leaves those out."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if os.readlink(proc / "cwd").startswith(work_dir(run_id, "localhost")):
                name = (proc / "comm").read_text().strip()
                if sleepers or name != "sleep":
                    found.append(f"{proc.name} {name}")
        except OSError:
            continue
    return found


@pytest.mark.parametrize("moment", ["detect", "cell-2", "between-polls", "twice"])
def test_ctrl_c_to_the_process_group_keeps_every_finished_cell(tmp_path, moment):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(json.dumps({"all": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
    results = tmp_path / "results"
    proc = subprocess.Popen([SSLBENCH, "run", "-i", str(inventory), *MATRIX, "--results", str(results)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    run_id = ""
    try:
        wait_for(lambda: store.list_runs(results), "the run dir")
        run_id = store.list_runs(results)[0].name
        came_back = lambda: glob.glob(str(results / run_id / "localhost" / f"{FIRST}.log"))  # noqa: E731
        if moment == "detect":
            time.sleep(1.0)  # ansible-playbook is starting or detecting: no cell has run
            assert not came_back()
        elif moment == "between-polls":  # finished on the host, not yet shipped
            wait_for(lambda: host_logs(run_id, f"{FIRST}.log"), "the first cell's end on the host")
            assert not came_back()
        else:  # cell 2 is running: the field's case
            wait_for(came_back, "the first cell's log here")
        os.killpg(proc.pid, signal.SIGINT)
        if moment == "twice":  # the user presses again while the hosts are being cleaned up
            time.sleep(0.3)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        if run_id and moment == "twice":  # aborted at once: the runner was left at work on purpose; stop it here
            script = os.path.join(work_dir(run_id, "localhost"), "run.sh")
            if os.path.exists(script):
                subprocess.run(["sh", script, "stop"], capture_output=True, timeout=30)
            shutil.rmtree(work_dir(run_id, "localhost"), ignore_errors=True)
    assert proc.returncode == 130, err
    run_dir = results / run_id
    assert f"sslbench report {run_dir}" in err  # the last line names where the kept cells are
    raw = json.loads((run_dir / "run.json").read_text())
    assert raw["complete"] is True and raw["interrupted"].startswith("interrupted (Ctrl-C)")
    run = store.load_run(run_dir)
    kept = {m.algorithm for h in run.hosts for m in h.measurements if m.status == OK}
    if moment == "detect":
        assert kept == set()
    else:
        [host] = run.hosts
        assert host.status == HOST_FAILED and host.reason.startswith("interrupted (Ctrl-C)")
        assert "aes-128-gcm" in kept and "sha1" not in kept, kept
        assert len([m for m in host.measurements if m.algorithm == "aes-128-gcm" and m.status == OK]) == 6
        assert (run_dir / "localhost" / f"{FIRST}.log").exists()
    report = subprocess.run([SSLBENCH, "report", "--results", str(results)], capture_output=True, text=True,
                            timeout=60)
    assert report.returncode == 0, report.stderr
    assert f"run {run_id} stopped early (interrupted (Ctrl-C)" in report.stdout
    if moment != "detect":
        assert "aes-128-gcm" in report.stdout and "(no measurements)" not in report.stdout
    if moment != "twice":  # the stop on the host: no openssl left, the work dir gone
        time.sleep(0.5)
        assert openssl_of(run_id, sleepers=False) == []
        assert not Path(work_dir(run_id, "localhost")).exists()
        wait_for(lambda: openssl_of(run_id) == [], "the end of the launch's own sleep", timeout=30)
