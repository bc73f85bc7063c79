"""#37 failure 1, its second half: the logs a run whose controller died left on a host (its runner stopped by the
lapsed lease, playbooks/files/sslbench-run.sh) are collected by the next `sslbench run` on that host, into the run
they belong to, which then says it was interrupted. The stranded work dir is made by the real runner on this
machine, and collected through the real run.sh, by the engine over a fleet without SSH (tests/unit/fake_fleet.py)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from fake_fleet import DATA, MR_LOG, FakeDriver, config_for, router

from orchestrator import store
from orchestrator.model import HOST_FAILED, HOST_OK, OK, Run
from orchestrator.run import engine as bench, stages, stranded
from orchestrator.run.config import PlanOptions
from orchestrator.run.fleet import Collector
from orchestrator.run.hostlink import Outcome
from orchestrator.run.matrix import SIZES_NEW, CellPlan, HostPlan, MatrixRequest, capabilities
from orchestrator.run.progress import ProgressView
from orchestrator.run.runner import Interrupt
from orchestrator.run.tunnels import TunnelPlan

MR_FILE = DATA / "speed" / "openssl-3.0.19-x86_64-mr-chacha20-poly1305.txt"
# 001 came back before the controller died; 002 finished on the host after; 003 was cut short by the lapse
CELLS = [CellPlan(id=f"00{i}-evp-chacha20-poly1305-t1-r{i}", algorithm="chacha20-poly1305", kind="cipher", api="evp",
                  threads=1, sizes=SIZES_NEW, args=["speed", "-mr", "-evp", "chacha20-poly1305"], seconds=1.0,
                  repeat=i) for i in (1, 2, 3)]


def dead_run(results: Path, host: str, tunnels: tuple[TunnelPlan, ...] = ()) -> tuple[Path, str]:
    """A run as `kill -9` of its controller leaves it: run.json unfinished, the host planned (plan.json) with its
    first cell stored, and on the host a stranded work dir made by the real runner whose lease lapsed."""
    run_dir = store.new_run_dir(results)
    run = Run(run_id=run_dir.name, created=store.utc_now(), complete=False)
    store.save_run(run_dir, run)
    collector = Collector(run, run_dir, ProgressView(live=False, stream=open(results / "view.txt", "w")))
    state = collector.host(host)
    state.result.openssl.version = "3.0.19"
    state.plan = HostPlan(host=host, capabilities=capabilities("3.0.19"), cells=list(CELLS), tunnels=list(tunnels))
    stranded.save_plan(run_dir, state.dir_name, state.plan)
    collector.add_log(state, CELLS[0].id, MR_LOG)  # came back: host.json saved as unfinished
    work = Path(stages.work_dir(run.run_id, host))
    (work / "logs").mkdir(parents=True)
    (work / "shipped").mkdir()
    shutil.copy(stages.PLAYBOOK_DIR / "files" / "sslbench-run.sh", work / "run.sh")
    (work / "cells.txt").write_text("".join(f"{c.id}\t-\tspeed {'table' if c.repeat < 3 else 'sleep'}\n"
                                            for c in CELLS[1:]))
    fake = results / "openssl"
    fake.write_text(f"#!/bin/sh\ncase $2 in table) cat '{MR_FILE}' ;; *) sleep 30 ;; esac\n")
    fake.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "SSLBENCH_LEASE": "1 2 2"}  # no session, nobody renews it
    subprocess.run(["/bin/sh", str(work / "run.sh"), "launch", str(fake), "0"], env=env, check=True,
                   capture_output=True, timeout=20)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (work / "stranded").exists():
        time.sleep(0.2)
    assert (work / "stranded").exists() and [p.name for p in (work / "logs").iterdir()] == [f"{CELLS[1].id}.log"]
    return run_dir, str(work)


def next_run(tmp_path: Path, work: str) -> tuple[FakeDriver, Collector, Path]:
    """The next `sslbench run` on r1: detect lists the stranded work dir, the real run.sh left there ships it."""
    seen = router()

    def host(kind, script):
        if kind == "detect":  # detect's own output, with the section its stranded-dir listing prints
            out = seen(kind, script)
            listing = subprocess.run(["/bin/sh", "-c", stranded.DETECT_SNIPPET], capture_output=True, text=True)
            return Outcome("ok", stdout=out.stdout + listing.stdout)
        if work in script:  # the collection: the real run.sh left on the host
            ran = subprocess.run(["/bin/sh", "-s"], input=script, capture_output=True, text=True, timeout=20)
            return Outcome("ok" if ran.returncode == 0 else "failed", stdout=ran.stdout, stderr=ran.stderr,
                           rc=ran.returncode)
        return seen(kind, script)

    driver = FakeDriver(tmp_path, {"r1": host})
    run_dir = store.new_run_dir(tmp_path)
    collector = Collector(Run(run_id=run_dir.name, created=store.utc_now()), run_dir,
                          ProgressView(live=False, stream=open(tmp_path / "view2.txt", "w")))
    request = MatrixRequest(algorithms=["chacha20-poly1305"], sizes=[1024], threads=[1], apis=["evp"], seconds=1)
    engine = bench.Engine(driver, collector, config_for(PlanOptions(request=request, idle_wait=0)), Interrupt())
    engine.run()
    return driver, collector, run_dir


def test_the_next_run_collects_a_dead_runs_stranded_logs_into_that_run_and_says_so(tmp_path, clock):
    old_dir, work = dead_run(tmp_path, "r1")
    driver, collector, run_dir = next_run(tmp_path, work)
    assert driver.steps["r1"][:3] == ["detect", "poll", "forget"]  # collected, then its own cells
    assert collector.hosts["r1"].result.status == HOST_OK
    assert not Path(work).exists()  # nothing left on the host
    old = store.load_run(old_dir)
    assert old.complete and old.interrupted == "interrupted (its controller died)"
    (r1,) = old.hosts
    assert r1.status == HOST_FAILED and r1.interrupted == "cells"
    assert f"collected later by run {run_dir.name}" in r1.reason and "1 of 3 cells never finished" in r1.reason
    ok = {m.repeat for m in r1.measurements if m.status == OK}
    assert ok == {1, 2}  # the cell that came back before, and the one collected now; none twice
    assert len([m for m in r1.measurements if m.status == OK]) == 2 * len(SIZES_NEW)
    assert sorted(Path(log).name for log in r1.logs) == [f"{CELLS[0].id}.log", f"{CELLS[1].id}.log"]
    assert json.loads((old_dir / "run.json").read_text())["interrupted"] == old.interrupted


def test_a_stranded_tunnel_log_is_collected_as_the_tunnel_it_measured(tmp_path, clock):
    """A tunnel measured after the cells finished on the host after its controller died: its log is stored and
    read (measurements, method, evidence) like one that came back live, not skipped then deleted with the dir."""
    wireguard = TunnelPlan(tunnel="wireguard", seconds=1, streams=2, repeats=1)
    old_dir, work = dead_run(tmp_path, "r1", tunnels=(wireguard,))
    text = (DATA / "tunnel" / "wireguard.txt").read_text()  # framed as the runner's log_begin/log_end frame it
    (Path(work) / "logs" / f"{wireguard.id}.log").write_text(
        f"@@sslbench-log {wireguard.id}\n{text}\n@@sslbench-endlog {wireguard.id}\n")
    _driver, _collector, run_dir = next_run(tmp_path, work)
    assert not Path(work).exists()
    (r1,) = store.load_run(old_dir).hosts
    assert f"{wireguard.id}.log" in {Path(log).name for log in r1.logs}
    assert (old_dir / r1.logs[-1]).read_text() == text
    tunnel_ok = [m for m in r1.measurements if m.kind == "tunnel" and m.status == OK]
    assert tunnel_ok and {m.algorithm for m in tunnel_ok} == {"wireguard"}
    assert [t.tunnel for t in r1.tunnels] == ["wireguard"] and r1.tunnel_evidence
    assert "1 cells and 1 tunnels that finished on the host were collected later" in r1.reason
    assert "tunnels never finished" not in r1.reason


@pytest.fixture
def left_on_host():
    """The stranded work dirs a test read without the next run's `forget`: removed after it, as forget would."""
    left: list[str] = []
    yield left
    for work in left:
        shutil.rmtree(work, ignore_errors=True)


def test_a_plan_written_before_it_kept_the_tunnels_still_reads_and_takes_a_tunnel_log(tmp_path, left_on_host):
    """plan.json as sslbench wrote it before it kept the tunnels (cells only): read, and a tunnel-<name> log it
    ships is still a tunnel's, while a name sslbench never plans is not stored."""
    run_dir, work = dead_run(tmp_path, "r1")
    left_on_host.append(work)
    plan = next(run_dir.glob(f"*/{stranded.PLAN_FILE}"))
    data = json.loads(plan.read_text())
    del data["tunnels"]
    plan.write_text(json.dumps(data))
    one = stranded._load(run_dir, "r1", "/tmp/x")
    assert one is not None and list(one.cells) == [c.id for c in CELLS] and not one.tunnels
    text = (DATA / "tunnel" / "wireguard.txt").read_text()
    shipped = (f"@@sslbench-log tunnel-wireguard\n{text}\n@@sslbench-endlog tunnel-wireguard\n"
               f"@@sslbench-log tunnel-nosuch\n{text}\n@@sslbench-endlog tunnel-nosuch\n")
    stranded.take(one, shipped)
    assert one.collected_tunnels == ["tunnel-wireguard"] and not one.collected
    assert [t.tunnel for t in one.result.tunnels] == ["wireguard"]


def test_a_run_that_died_during_its_tunnels_says_so_and_counts_the_tunnel_missing(tmp_path, left_on_host):
    """Every cell finished, the tunnel measured after them did not: the host was caught during its tunnels."""
    wireguard = TunnelPlan(tunnel="wireguard", seconds=1, streams=2, repeats=1)
    run_dir, work = dead_run(tmp_path, "r1", tunnels=(wireguard,))
    left_on_host.append(work)
    one = stranded._load(run_dir, "r1", work)
    assert one is not None and list(one.tunnels) == [wireguard.id]
    stranded.take(one, "".join(f"@@sslbench-log {c.id}\n{MR_LOG}\n@@sslbench-endlog {c.id}\n" for c in CELLS[1:]))
    stranded.close(one, "20990101T000000Z-next")
    (r1,) = store.load_run(run_dir).hosts
    assert r1.interrupted == "tunnels" and "cells never finished" not in r1.reason
    assert "2 cells that finished on the host" in r1.reason and "1 of 1 tunnels never finished" in r1.reason
