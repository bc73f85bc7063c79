"""Issue 15 against loopback fleets: two site workers make one merged run, a worker that dies loses only its own
hosts, and 64 cheap routers (tests/rig/scale.py) all come back ok."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE, OK

pytestmark = pytest.mark.rig

RIG_DIR = Path(__file__).resolve().parents[1] / "rig"
sys.path.insert(0, str(RIG_DIR))
import rig  # noqa: E402
import scale  # noqa: E402

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
ONE_CELL = ["--algorithms", "sha256", "--sizes", "1024", "--threads", "1", "--api", "evp", "--idle-wait", "0"]


def workers_config(tmp_path: Path) -> Path:
    """Two workers, this machine over SSH (tests/rig: worker1, worker2), each running one group of the fleet."""
    runner = Path(sys.executable).parent / "ansible-runner"
    config = tmp_path / "sslbench.toml"
    config.write_text("".join(
        f'[workers.{name}]\nssh = "{target}"\nssh_args = "-F {rig.STATE / "ssh_config"}"\nhosts = "{group}"\n'
        f'runner = "{runner}"\n\n' for name, target, group in (("lab", "worker1", "openwrt"), ("home", "worker2", "ddwrt"))))
    return config


def only_run(results: Path):
    [run_dir] = store.list_runs(results)
    return run_dir, store.load_run(run_dir)


def test_two_site_workers_make_one_merged_run(rig_inventory, tmp_path):
    results = tmp_path / "results"
    result = subprocess.run([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", "openwrt1,ddwrt1,centos1",
                             "--config", str(workers_config(tmp_path)), *ONE_CELL, "--seconds", "1",
                             "--results", str(results)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    _, run = only_run(results)
    assert {h.host: h.status for h in run.hosts} == {"openwrt1": HOST_OK, "ddwrt1": HOST_OK, "centos1": HOST_OK}
    assert all(any(m.status == OK for m in h.measurements) for h in run.hosts)
    # which machine ran each host: the worker whose group it is, this machine the rest
    assert run.matrix["host_workers"] == {"openwrt1": "lab", "ddwrt1": "home"}
    assert set(run.matrix["workers"]) == {"lab", "home"}


def test_a_worker_that_dies_loses_only_its_own_hosts(rig_inventory, rig_control, tmp_path):
    results = tmp_path / "results"
    # 4 cells of 5 s: launched, then polled after 10 s; the home worker is gone by then
    proc = subprocess.Popen([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", "openwrt1,ddwrt1,centos1",
                             "--config", str(workers_config(tmp_path)), "--algorithms", "sha256,sha512,sha1,md5",
                             "--sizes", "1024", "--threads", "1", "--api", "evp", "--idle-wait", "0", "--seconds", "5",
                             "--results", str(results)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not list(results.glob("*/ddwrt1/facts.txt")):
            time.sleep(0.2)
        time.sleep(4)  # launched
        rig_control.stop_host("worker2", sessions=True)
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err[-3000:]
    _, run = only_run(results)
    by_host = {h.host: h for h in run.hosts}
    assert by_host["openwrt1"].status == HOST_OK and by_host["centos1"].status == HOST_OK
    assert len([m for m in by_host["openwrt1"].measurements if m.status == OK]) == 4
    lost = by_host["ddwrt1"]
    assert lost.status in (HOST_UNREACHABLE, HOST_FAILED) and "no answer" in lost.reason
    assert "worker home" in err


@pytest.fixture
def scale_fleet():
    subprocess.run([sys.executable, str(scale.__file__), "up", "64"], check=True, capture_output=True, timeout=300)
    yield scale.INVENTORY
    subprocess.run([sys.executable, str(scale.__file__), "down"], capture_output=True, timeout=300)


@pytest.mark.slow
def test_64_hosts_all_ok(rig_inventory, scale_fleet, tmp_path):
    results = tmp_path / "results"
    result = subprocess.run([SSLBENCH, "run", "-i", str(scale_fleet), *ONE_CELL, "--seconds", "1",
                             "--results", str(results)], capture_output=True, text=True, timeout=900,
                            env={**os.environ, "SSLBENCH_KEEP_RUNNER_DIR": "1"})
    kept = re.search(r"kept ansible-runner's data in (\S+)", result.stderr)
    assert kept, result.stderr[-2000:]
    passes = sorted(p.name for p in Path(kept.group(1), "artifacts").iterdir())
    shutil.rmtree(kept.group(1))
    # 64 hosts through the default 50 forks: the 14 beyond them did not make a second ansible-playbook pass, nor
    # did the polls: each host's later steps ran over its session's SSH command line, from the controller
    assert passes == ["01-sslbench.yml"]
    run_dir, run = only_run(results)
    bad = [(h.host, h.status, h.reason) for h in run.hosts if h.status != HOST_OK]
    assert result.returncode == 0 and not bad, (bad, result.stderr[-2000:])
    assert len(run.hosts) == 64 and all(len([m for m in h.measurements if m.status == OK]) == 1 for h in run.hosts)
    # each host stored as it finished, the run written whole at the end
    assert len(list(run_dir.glob("*/host.json"))) == 64
    assert json.loads((run_dir / "run.json").read_text())["complete"] is True
    # a fleet this size gets summary lines, not a line per host change (a line per host at the very end: the report)
    progress = [line for line in result.stderr.splitlines() if "figures" not in line]
    assert "64 hosts: 64 done" in progress and sum(line.startswith("scale") for line in progress) <= 30
    # no work dir left on any host (each has its own /tmp): every one was polled from here, the last poll removing it
    left = [p for n in range(1, 65) for p in (scale.ROOTS / scale.name(n) / "tmp").glob("sslbench.*")]
    assert not left, left
