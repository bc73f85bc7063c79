"""`kill -9` of the controller while a router of the rig runs its cells (#37): openwrt1 is BusyBox ash behind
dropbear (no setsid, nohup or timeout), under qemu. Within the lease's grace nothing of the run is left running on
it; only a stranded work dir with finished cells' logs stays, and the next run on it collects every one of them
into the killed run and leaves nothing behind."""
from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.model import HOST_FAILED, OK
from orchestrator.run.stages import work_dir
from waiting import wait_for

pytestmark = [pytest.mark.rig, pytest.mark.slow]

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
SSH_CONFIG = Path(__file__).resolve().parents[1] / "rig" / "state" / "ssh_config"
HOST = "openwrt1"
# 24 cells of ~1 s: polled every 10 s, so the first cells come back well before the last ones have run
MATRIX = ["--algorithms", "sha256,sha1,md5", "--sizes", "16", "--threads", "1", "--api", "evp", "--seconds", "1",
          "--repeat", "8", "--idle-wait", "0"]
TINY = ["--algorithms", "sha256", "--sizes", "16", "--threads", "1", "--api", "evp", "--seconds", "1",
        "--idle-wait", "0"]


def on_host(script: str) -> str:
    return subprocess.run(["ssh", "-F", str(SSH_CONFIG), HOST, script], capture_output=True, text=True,
                          timeout=60).stdout


def left_on_host(work: str) -> list[str]:
    """Processes on the router whose working directory is the work dir (BusyBox: no pgrep, /proc read by hand)."""
    out = on_host(f'for p in /proc/[0-9]*; do c=$(readlink "$p/cwd" 2>/dev/null); '
                  f'case $c in {work}*) echo "${{p#/proc/}} $(cat "$p/comm")" ;; esac; done')
    return [line for line in out.splitlines() if line.strip()]


def test_kill_9_while_a_router_runs_its_cells(rig_inventory, rig_hosts, tmp_path):
    if HOST not in rig_hosts:
        pytest.skip(f"the fleet has no {HOST}")
    results = tmp_path / "results"
    proc = subprocess.Popen([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", HOST, *MATRIX,
                             "--results", str(results)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    work = ""
    try:
        wait_for(lambda: list(results.glob(f"*/{HOST}/0*.log")), "the first cell's log here", 600, every=1.0)
        run_dir = store.list_runs(results)[0]
        work = work_dir(run_dir.name, HOST)
        assert proc.poll() is None, "the run ended before it could be killed mid-matrix"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        wait_for(lambda: not left_on_host(work), f"the end of every process in {work} on {HOST}", 120, every=1.0)
        listing = on_host(f"ls {work} 2>/dev/null; cat {work}/progress 2>/dev/null")
        finished = set(re.findall(r"^done \d+ \d+ (\S+) 0$", listing, flags=re.MULTILINE))
        if on_host(f"[ -d {work} ] && echo there").strip():
            assert "stranded" in listing and "cells.txt" not in listing and "conditions.sh" not in listing
        after = subprocess.run([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", HOST, *TINY,
                                "--results", str(results)], capture_output=True, text=True, timeout=600)
        assert after.returncode == 0, after.stderr
        assert not on_host(f"[ -d {work} ] && echo there").strip() and not left_on_host(work)
        old = store.load_run(run_dir)
        (host,) = old.hosts
        stored = {Path(log).stem for log in host.logs if Path(log).name.startswith("0")}
        assert finished <= stored, (finished, stored)
        assert old.complete and old.interrupted and host.status == HOST_FAILED
        assert any(m.status == OK for m in host.measurements)
    finally:
        if proc.poll() is None:
            proc.kill()
        if work:
            on_host(f"[ -f {work}/run.sh ] && sh {work}/run.sh stop; rm -rf {work}")
