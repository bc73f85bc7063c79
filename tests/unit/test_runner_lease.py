"""The runner's lease (playbooks/files/sslbench-run.sh, #37 failure 1): a `kill -9` of the controller left the host
running the rest of the matrix (8m36s of openssl), its logs in a work dir no command collected. The runner lives
only as long as its controller renews the lease, or keeps the step session the lease names: then its openssl stops
within seconds, finished cells' logs stay (stranded, for the next run), and nothing else is left. Under dash, bash
and BusyBox ash, with only the tools OpenWrt has (no setsid, nohup, timeout)."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from test_runner_script import alive, protocol_state, sh_only_path, workdir

from orchestrator.parse.protocol import split_logs

SHELLS = [[str(shutil.which(s[0])), *s[1:]] for s in (["/bin/sh"], ["bash"], ["busybox", "ash"]) if shutil.which(s[0])]
# a cell that ends at once, then one whose openssl (and its child, as -multi forks) sleeps 30 s: the bounds below
# are generous (a loaded CI box), but far under what the runner would take without its lease
CELLS = [("001-a", "speed -mr"), ("002-s", "speed sleep")]


def processes_in(work: Path) -> list[str]:
    """Processes whose working directory is the work dir, or that run the stand-in openssl of the test."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cwd = os.readlink(proc / "cwd")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(str(work)) or f"{work.parent}/dir with space" in cmdline:
            found.append(f"{proc.name} {cmdline.strip()}")
    return found


def wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def launch(shell, work, fake, path, lease, session_seconds=None):
    """`run.sh launch` as the launcher runs it, renewing SSLBENCH_LEASE; within a session shell that lives
    `session_seconds` (SSLBENCH_SESSION set to it, as sslbench_step's Session does), or in a single exec."""
    env = {"PATH": path, "SSLBENCH_LEASE": lease}
    if session_seconds is None:
        return subprocess.run([*shell, str(work / "run.sh"), "launch", str(fake), "0"], env=env,
                              capture_output=True, text=True, timeout=20)
    script = (f'SSLBENCH_SESSION=$$; export SSLBENCH_SESSION\n( {" ".join(shell)} {work}/run.sh launch {shlex.quote(str(fake))} 0 )\n'
              f"sleep {session_seconds}\n")
    return subprocess.Popen([*shell, "-c", script], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: Path(s[-1]).name)
def test_a_lease_not_renewed_stops_openssl_within_seconds_and_strands_only_the_finished_logs(tmp_path, shell):
    work, fake = workdir(tmp_path, CELLS)
    path = sh_only_path(tmp_path)
    began = time.monotonic()
    out = launch(shell, work, fake, path, "1 4 4")  # TTL 4 s, no session: nobody renews it
    assert protocol_state(out.stdout) == "started", out
    assert wait_for(lambda: (work / "stranded").exists(), 25), (work, list(work.iterdir()))
    assert time.monotonic() - began < 25  # TTL 4 s: well before the second cell's 30 s
    assert wait_for(lambda: not processes_in(work), 10), processes_in(work)
    # what stays: the runner (to ship them), the finished cell's log, the progress; not the cells, conditions,
    # nor the log of the cell cut short
    assert sorted(p.name for p in work.iterdir()) == ["logs", "progress", "run.sh", "shipped", "stranded"]
    assert [p.name for p in (work / "logs").iterdir()] == ["001-a.log"]
    # a controller (the next run) collects it: `poll again` ships it, says stranded, and `forget` removes the dir
    poll = subprocess.run([*shell, str(work / "run.sh"), "poll", "again"], env={"PATH": path},
                          capture_output=True, text=True)
    assert [c for c, _ in split_logs(poll.stdout)] == ["001-a"] and protocol_state(poll.stdout) == "stranded"
    subprocess.run([*shell, str(work / "run.sh"), "forget"], env={"PATH": path}, check=True)
    assert not work.exists()


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: Path(s[-1]).name)
def test_the_session_holds_the_lease_while_it_lives_and_its_end_leaves_the_grace(tmp_path, shell):
    work, fake = workdir(tmp_path, CELLS)
    path = sh_only_path(tmp_path)
    session = launch(shell, work, fake, path, "1 2 4", session_seconds=8)  # TTL 2 s, held by an 8 s session
    try:
        assert wait_for(lambda: (work / "pid").exists(), 10)
        runner = int((work / "pid").read_text())
        time.sleep(6)
        assert alive(runner) and not (work / "stranded").exists()  # 6 s > TTL: held by the session alone
        session.wait(timeout=10)
        ended = time.monotonic()
        assert wait_for(lambda: (work / "stranded").exists(), 20)
        assert time.monotonic() - ended < 20  # GRACE 4 s, a tick, the stop's own wait: not the 30-s cell
        assert wait_for(lambda: not alive(runner) and not processes_in(work), 10), processes_in(work)
    finally:
        session.kill()
        subprocess.run([*shell, str(work / "run.sh"), "stop"], env={"PATH": path}, capture_output=True)


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: Path(s[-1]).name)
def test_polls_that_renew_the_lease_keep_the_runner_going(tmp_path, shell):
    work, fake = workdir(tmp_path, [("001-s", "speed sleep")])
    path = sh_only_path(tmp_path)
    assert protocol_state(launch(shell, work, fake, path, "1 3 3").stdout) == "started"
    runner = int((work / "pid").read_text())
    try:
        for serial in range(2, 8):  # a poll every second for 6 s: twice the TTL
            time.sleep(1)
            poll = subprocess.run([*shell, str(work / "run.sh"), "poll"], capture_output=True, text=True,
                                  env={"PATH": path, "SSLBENCH_LEASE": f"{serial} 3 3"})
            assert protocol_state(poll.stdout) == "running"
        assert alive(runner) and not (work / "stranded").exists()
    finally:
        subprocess.run([*shell, str(work / "run.sh"), "stop"], env={"PATH": path}, capture_output=True)


@pytest.mark.parametrize("shell", SHELLS[:1], ids=lambda s: Path(s[-1]).name)
def test_a_lapsed_run_with_nothing_to_collect_leaves_no_work_dir(tmp_path, shell):
    work, fake = workdir(tmp_path, [("001-s", "speed sleep")])
    path = sh_only_path(tmp_path)
    assert protocol_state(launch(shell, work, fake, path, "1 2 2").stdout) == "started"
    assert wait_for(lambda: not work.exists(), 20), list(work.iterdir())
    assert wait_for(lambda: not processes_in(work), 10), processes_in(work)


def test_a_launch_asked_again_renews_the_lease_of_the_runner_it_finds(tmp_path):
    """The launch's answer was lost (its session broke): the launch asked again finds the runner and must renew its
    lease, which named the broken session and would lapse before the first poll."""
    from orchestrator.run import stages
    from orchestrator.run.matrix import Capabilities, CellPlan, HostPlan

    _, fake = workdir(tmp_path, [])
    plan = HostPlan(host="h", capabilities=Capabilities(label="OpenSSL 3.0.0", version=(3, 0, 0)))
    plan.cells.append(CellPlan(id="001-s", algorithm="sha256", kind="digest", api=None, threads=1, sizes=(16,),
                               args=["speed", "sleep"], seconds=30.0))
    run_id = f"unitlease{os.getpid()}"
    work = Path(stages.work_dir(run_id, plan.host))
    path = sh_only_path(tmp_path)
    try:
        for serial in ("7 2 2", "8 300 30"):
            out = subprocess.run(["/bin/sh", "-s"], input=stages.launcher_script(run_id, plan, str(fake), 0,
                                                                                  lease_words=serial),
                                 capture_output=True, text=True, env={"PATH": path}, timeout=30)
            assert protocol_state(out.stdout) == "started", out
            assert (work / "lease").read_text().startswith(serial + " ")
        runner = int((work / "pid").read_text())
        time.sleep(5)  # past the first lease's 2 s: the second one holds
        assert alive(runner) and not (work / "stranded").exists()
    finally:
        if (work / "run.sh").exists():
            subprocess.run(["/bin/sh", str(work / "run.sh"), "stop"], env={"PATH": path}, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
