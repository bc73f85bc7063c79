"""playbooks/files/sslbench-run.sh under BusyBox ash with a stand-in `openssl` (a test fixture that
prints its arguments): arguments arrive intact, progress and logs are shipped in bounded polls, and
`stop` leaves no process behind."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.evidence.conditions import parse_cell, parse_conditions, parse_idle
from orchestrator.parse.protocol import exit_codes, progress_part, split_evidence, split_logs

SCRIPT = Path(__file__).resolve().parents[2] / "playbooks" / "files" / "sslbench-run.sh"
CONDITIONS = SCRIPT.parent / "conditions.sh"
ASH = shutil.which("busybox")
pytestmark = pytest.mark.skipif(ASH is None, reason="busybox (Debian busybox or busybox-static) is needed")

FAKE_OPENSSL = """#!/bin/sh
# stand-in for openssl: prints each argument on its own line; `speed fail` exits 1; `speed sleep` forks a
# child (like -multi) and both sleep; `speed big N` prints N bytes; `speed table` sleeps 2 s and prints a
# -mr result of sha256 at 16 bytes (1000 runs in 1 s); `speed burn` keeps a CPU busy for a moment.
for a in "$@"; do echo "arg:$a"; done
case "$2" in
  table) sleep 2; printf '+DT:sha256:1:16\n+R:1000:sha256:1.000000\n+H:16\n+F:6:sha256:16000.00\n' ;;
  fail) echo "speed: Unknown algorithm fail" >&2; exit 1 ;;
  sleep) sleep 30 & sleep 30; wait ;;
  big) head -c "$3" /dev/zero | tr '\\0' x ;;
  burn) i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done ;;
esac
exit 0
"""


def workdir(tmp_path, cells, conditions=False):
    """cells: (id, args) or (id, pin, args); with conditions=True the evidence script is there too."""
    work = tmp_path / "sslbench.run1"
    work.mkdir()
    shutil.copy(SCRIPT, work / "run.sh")
    if conditions:
        shutil.copy(CONDITIONS, work / "conditions.sh")
    (work / "cells.txt").write_text("".join("\t".join(c if len(c) == 3 else (c[0], "-", c[1])) + "\n" for c in cells))
    odd = tmp_path / "dir with space;$x"
    odd.mkdir()
    fake = odd / "openssl"
    fake.write_text(FAKE_OPENSSL)
    fake.chmod(0o755)
    return work, fake


def sh(work, *args, **kw):
    return subprocess.run([ASH, "ash", str(work / "run.sh"), *args], capture_output=True, text=True, timeout=20, **kw)


def test_cells_run_in_order_with_their_arguments_and_exit_codes(tmp_path):
    work, fake = workdir(tmp_path, [("001-a", "speed -mr -seconds 1 -evp aes-128-gcm"), ("002-b", "speed fail")])
    assert sh(work, "start", str(fake)).returncode == 0
    out = sh(work, "poll").stdout
    assert exit_codes(progress_part(out)) == {"001-a": 0, "002-b": 1}
    logs = dict(split_logs(out))
    assert logs["001-a"].splitlines() == ["arg:speed", "arg:-mr", "arg:-seconds", "arg:1", "arg:-evp",
                                          "arg:aes-128-gcm"]
    assert "Unknown algorithm fail" in logs["002-b"]  # stderr is in the log too
    assert out.rstrip().endswith("@@sslbench-state finished")
    # shipped logs are not sent twice
    again = sh(work, "poll").stdout
    assert split_logs(again) == [] and "@@sslbench-state finished" in again


def test_polls_ship_a_bounded_amount_and_say_when_more_is_pending(tmp_path):
    work, fake = workdir(tmp_path, [(f"00{i}-c", "speed big 7000") for i in range(1, 4)])
    sh(work, "start", str(fake))
    shipped = []
    states = []
    for _ in range(5):
        out = sh(work, "poll").stdout
        shipped += [cell for cell, _ in split_logs(out)]
        states.append(out.strip().splitlines()[-1])
        assert len(out) < 14000  # dropbear cuts long outputs around 14 KB
        if "finished" in states[-1]:
            break
    assert shipped == ["001-c", "002-c", "003-c"]
    assert states[0] == "@@sslbench-state pending" and states[-1] == "@@sslbench-state finished"


def alive(pid):
    try:
        os.kill(pid, 0)
        # (it can end between the two: then /proc says ENOENT, or ESRCH mid-read)
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def descendants(pid):
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid):
            kids.append(int(stat.parent.name))
            kids += descendants(int(stat.parent.name))
    return kids


def test_stop_kills_the_runner_and_every_openssl_child(tmp_path):
    work, fake = workdir(tmp_path, [("001-s", "speed sleep"), ("002-s", "speed sleep")])
    runner = subprocess.Popen(["setsid", ASH, "ash", str(work / "run.sh"), "start", str(fake)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline and len(descendants(runner.pid)) < 3:
        time.sleep(0.05)
    tree = descendants(runner.pid)
    assert len(tree) >= 3  # openssl stand-in, its forked child, sleeps
    assert "@@sslbench-state running" in sh(work, "poll").stdout
    assert "@@sslbench-state stopped" in sh(work, "stop").stdout
    assert [pid for pid in tree if alive(pid)] == []  # `stop` returns only when they are gone
    runner.wait(timeout=10)
    out = sh(work, "poll").stdout
    assert "@@sslbench-state stopped" in out and "002-s" not in progress_part(out)


def test_each_progress_line_is_printed_once(tmp_path):
    work, fake = workdir(tmp_path, [(f"00{i}-p", "speed -mr") for i in range(1, 4)])
    sh(work, "start", str(fake))
    first = progress_part(sh(work, "poll").stdout)
    assert len(first.split()) > 0 and "done 3 3 003-p 0" in first
    (work / "progress").open("a").write("start 9 9 009-x\n")
    assert progress_part(sh(work, "poll").stdout).strip() == "start 9 9 009-x"
    assert progress_part(sh(work, "poll").stdout).strip() == ""


# --- with conditions.sh in the work dir (what the playbook sends): gate, snapshots, wrapped cells --------

def poll_until_finished(work):
    """Every log the runner ships, over as many polls as it takes."""
    logs = []
    for _ in range(10):
        out = sh(work, "poll").stdout
        logs += split_logs(out)
        if "@@sslbench-state finished" in out:
            return dict(logs)
    raise AssertionError("the runner never said finished")


TASKSET = shutil.which("taskset")


@pytest.mark.skipif(TASKSET is None, reason="taskset (util-linux) is needed to pin")
def test_with_conditions_every_cell_is_wrapped_pinned_ones_through_taskset(tmp_path):
    pin = 1 if (os.cpu_count() or 1) > 1 else 0  # CPU 1 is mask 0x2: a list "1" would mean CPU 1 too, a mask CPU 0
    work, fake = workdir(tmp_path, [("001-t", "speed table -seconds 1"), ("002-t", str(pin), "speed table -seconds 1")],
                         conditions=True)
    started = sh(work, "start", str(fake), "0", env={"PATH": f"{Path(TASKSET).parent}:/usr/bin:/bin"})
    assert started.returncode == 0, started.stderr
    logs = poll_until_finished(work)
    assert set(logs) == {"conditions-idle", "conditions-before", "001-t", "002-t", "conditions-after"}
    assert parse_idle(logs["conditions-idle"])["reason"] == "disabled"  # IDLE_MAX 0: no gate
    assert parse_conditions(logs["conditions-before"])["label"] == "before"
    assert parse_conditions(logs["conditions-after"])["label"] == "after"
    for cell_id, pinned in (("001-t", False), ("002-t", True)):
        output, evidence = split_evidence(logs[cell_id])
        assert output.splitlines()[:2] == ["arg:speed", "arg:table"] and "+F:6:sha256:16000.00" in output
        run = parse_cell(evidence)["run"]
        assert run["exit"] == 0 and run["samples"], run
        assert run["command"].startswith(f"taskset {1 << pin:x} {fake}" if pinned else str(fake))
        if pinned:
            assert run["allowed_cpus"] == [pin] and {s["cpu"] for s in run["samples"][1:]} == {pin}
    assert not list(work.glob("cell-*.txt")) and not list(work.glob("run-*.log"))  # nothing left half-done


def test_the_collector_stores_conditions_apart_and_flags_every_cell(tmp_path):
    """The poll output of a real runner with conditions.sh, through sslbench run's Collector."""
    import io

    from orchestrator.run.fleet import Collector
    from orchestrator.run.matrix import Capabilities, CellPlan, HostPlan
    from orchestrator.model import OK, Run
    from orchestrator.run.progress import ProgressView
    from orchestrator.model import ALL_FLAGS

    work, fake = workdir(tmp_path, [("001-t", "speed table -seconds 1"), ("002-t", "speed table -seconds 1")],
                         conditions=True)
    sh(work, "start", str(fake), "0")
    logs = poll_until_finished(work)
    run_dir = tmp_path / "results" / "run1"
    run_dir.mkdir(parents=True)
    collector = Collector(Run(run_id="run1", created=""), run_dir, ProgressView(live=False, stream=io.StringIO()))
    state = collector.host("box")
    cells = [CellPlan(id=i, algorithm="sha256", kind="digest", api="evp", threads=1, sizes=(16,),
                      args=["speed", "table", "-seconds", "1"], seconds=1.0) for i in ("001-t", "002-t")]
    state.plan = HostPlan(host="box", capabilities=Capabilities(label="OpenSSL 3.0.0", version=(3, 0, 0)), cells=cells)
    for cell_id, text in logs.items():
        collector.add_log(state, cell_id, text)
    collector.add_log(state, "../../evil", "x")  # a host cannot choose our file names
    collector.finish(state)
    result = state.result
    host_dir = run_dir / "box"
    assert sorted(p.name for p in host_dir.glob("*.log")) == ["001-t.log", "002-t.log"]
    assert sorted(p.name for p in host_dir.glob("conditions-*.txt")) == [
        "conditions-after.txt", "conditions-before.txt", "conditions-idle.txt"]
    assert {"before", "after", "idle", "verdict", "cells"} <= set(result.conditions)
    assert set(result.conditions["cells"]) == {"001-t", "002-t"}
    ok = [m for m in result.measurements if m.status == OK]
    assert [(m.algorithm, m.block_size, m.bytes_per_second) for m in ok] == [("sha256", 16, 16000.0)] * 2
    for m, cell_id in zip(ok, ("001-t", "002-t")):
        verdict = result.conditions["cells"][cell_id]
        assert m.flags == verdict["flags"] and set(m.flags) <= set(ALL_FLAGS)
        assert "background_cores" in verdict["facts"]  # judged from the evidence, not skipped
    assert result.status == "ok" and "incomplete" not in result.flags


def test_stop_during_a_wrapped_cell_leaves_nothing_running(tmp_path):
    work, fake = workdir(tmp_path, [("001-s", "speed sleep"), ("002-s", "speed sleep")], conditions=True)
    runner = subprocess.Popen(["setsid", ASH, "ash", str(work / "run.sh"), "start", str(fake), "0"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline and len(descendants(runner.pid)) < 5:
        time.sleep(0.05)
    tree = descendants(runner.pid)
    assert len(tree) >= 5  # wrapper, sampler (and its sleep), openssl stand-in, its child, sleeps
    assert "@@sslbench-state stopped" in sh(work, "stop").stdout
    # when stop returns only the evidence sampler's 1-s tick may be left (orphaned when the sampler died)
    left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes() for pid in tree if alive(pid)}
    assert set(left.values()) <= {b"sleep\x001\x00"}, left
    time.sleep(1.2)
    assert [pid for pid in tree if alive(pid)] == []
    runner.wait(timeout=10)


def test_the_idle_gate_runs_first_and_the_progress_says_so(tmp_path):
    work, fake = workdir(tmp_path, [("001-t", "speed table -seconds 1")], conditions=True)
    sh(work, "start", str(fake), "2")  # at most 2 s: one sample
    out = sh(work, "poll").stdout
    lines = progress_part(out).split()
    assert progress_part(out).strip().splitlines()[0] == "start 0 1 idle-gate" and "001-t" in lines
    assert exit_codes(progress_part(out)) == {"001-t": 0}
    logs = dict(split_logs(out))
    gate = parse_idle(logs["conditions-idle"])
    assert gate["params"]["max"] == 2 and gate["params"]["cpu_limit"] == 0.5 and len(gate["samples"]) == 1
    assert gate["idle"] in (True, False) and gate["reason"] in ("load", "quiet", "timeout")


def test_detect_sent_in_one_command_fits_dropbear():
    # the playbook sends detect.sh in one raw command inside sh -c '...' (every ' becomes '"'"'); dropbear refuses
    # commands over 9000 bytes (MAX_CMD_LEN), and the task adds the two list variables around it. The runner and
    # its conditions script travel as one launcher file (ansible.builtin.script): no such limit.
    text = (SCRIPT.parent / "detect.sh").read_text()
    assert len(text.encode()) + 4 * text.count("'") < 7500
    for marker in ("{{", "{%", "{#"):  # Jinja would eat them
        assert marker not in text, marker


# --- launch: detached from the SSH session with nothing but POSIX sh --------------------------------------------

# What a router's BusyBox has and the product may use (no setsid, no nohup: OpenWrt 19.07); dash is the shell,
# since Debian's busybox-static ash runs its own setsid even without a link to it.
SH_ONLY_TOOLS = ("sh", "cat", "mv", "rm", "mkdir", "wc", "tail", "sleep")


def sh_only_path(tmp_path, extra: dict[str, str] | None = None) -> str:
    bin_dir = tmp_path / "sh-only-bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in SH_ONLY_TOOLS:
        if tool not in (extra or {}):  # a stand-in is a file of its own: never written through a link to the real
            (bin_dir / tool).symlink_to(shutil.which(tool))
    for name, text in (extra or {}).items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return str(bin_dir)


def launch_in_a_session_that_hangs_up(work, fake, path, wait="0"):
    """`sh run.sh launch` on a pty in a session of its own, as sshd runs a raw task; then the pty is closed
    (the SSH connection ends: SIGHUP to the session). Returns what the launch printed and its exit status."""
    import pty

    pid, master = pty.fork()
    if pid == 0:  # the child: the session leader on the pty, as the user's shell under sshd
        os.chdir(work)
        os.execve("/bin/sh", ["sh", "./run.sh", "launch", str(fake), "0", wait], {"PATH": path})
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(master)  # the hang-up
    return out.decode(errors="replace"), os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("conditions", [False, True], ids=["bare", "with-conditions"])
def test_launch_without_setsid_or_nohup_survives_the_session_hangup(tmp_path, conditions):
    """With conditions.sh, the cells and their samplers are subshells of the runner, which could trap the HUP
    their shell ignores: the hang-up comes while the first cell runs, and both cells must end as they would."""
    work, fake = workdir(tmp_path, [("001-t", "speed table"), ("002-t", "speed table")], conditions=conditions)
    path = sh_only_path(tmp_path)
    assert subprocess.run(["/bin/sh", "-c", "command -v setsid || command -v nohup"], env={"PATH": path},
                          capture_output=True).returncode != 0  # provably absent
    # the launch waits 1 s, so the hang-up comes while the first cell (2 s) runs
    out, code = launch_in_a_session_that_hangs_up(work, fake, path, wait="1")
    assert code == 0 and "@@sslbench-state running" in out, out
    runner = int((work / "pid").read_text())
    assert alive(runner)
    deadline = time.time() + 20
    while time.time() < deadline and alive(runner):
        time.sleep(0.2)
    poll = subprocess.run(["/bin/sh", str(work / "run.sh"), "poll"], capture_output=True, text=True,
                          env={"PATH": path}).stdout
    logs = dict(split_logs(poll))
    assert "@@sslbench-state finished" in poll and [c for c in logs if not c.startswith("conditions")] == [
        "001-t", "002-t"]
    for cell in ("001-t", "002-t"):
        assert "+F:6:sha256:16000.00" in logs[cell]
        if conditions:
            run = parse_cell(split_evidence(logs[cell])[1])["run"]
            assert run["exit"] == 0 and len(run["samples"]) >= 2, run  # the sampler too lived on


def test_a_runner_that_cannot_start_shows_the_hosts_own_words(tmp_path):
    work, fake = workdir(tmp_path, [("001-t", "speed table")])
    broken = "#!/bin/sh\necho 'setsid: failed to execute sh: Operation not permitted' >&2\nexit 1\n"
    path = sh_only_path(tmp_path, {"setsid": broken})
    out, code = launch_in_a_session_that_hangs_up(work, fake, path)
    assert code == 0 and "@@sslbench-state started" in out  # launch returns at once; the poll finds out
    launched = int((work / "pid").read_text())
    deadline = time.time() + 10
    while time.time() < deadline and alive(launched):
        time.sleep(0.05)
    poll = subprocess.run(["/bin/sh", str(work / "run.sh"), "poll"], capture_output=True, text=True,
                          env={"PATH": path}).stdout
    assert "@@sslbench-state died" in poll and "setsid: failed to execute sh: Operation not permitted" in poll


def test_a_runner_that_finished_between_two_looks_is_not_dead(tmp_path):
    # the poll reads the state, then finds the pid gone: it looks at the state again before saying "died"
    work, fake = workdir(tmp_path, [("001-a", "speed -mr")])
    assert sh(work, "start", str(fake)).returncode == 0
    (work / "pid").write_text("999999\n")  # no such process
    assert "@@sslbench-state finished" in sh(work, "poll").stdout
    (work / "progress").write_text("start 1 1 001-a\n")  # not finished, and its pid gone: dead
    (work / "runner.out").write_text("sh: ./run.sh: line 80: openssl: Input/output error\n")
    out = sh(work, "poll").stdout
    assert "@@sslbench-state died" in out and "Input/output error" in out


# --- the launcher: one file that ships the runner, its conditions script and cells, and starts it --------------

def test_the_launcher_writes_the_work_dir_and_starts_the_runner_and_a_second_launch_finds_it(tmp_path):
    from orchestrator.run import stages
    from orchestrator.run.matrix import Capabilities, CellPlan, HostPlan

    _, fake = workdir(tmp_path, [])
    plan = HostPlan(host="h", capabilities=Capabilities(label="OpenSSL 3.0.0", version=(3, 0, 0)))
    plan.cells.append(CellPlan(id="001-t", algorithm="sha256", kind="digest", api=None, threads=1, sizes=(16,),
                               args=["speed", "table"], seconds=2.0))
    run_id = f"unit{os.getpid()}"
    script = tmp_path / "launcher.sh"
    script.write_text(stages.launcher_script(run_id, plan, str(fake), 0))
    work = Path(stages.work_dir(run_id, plan.host))
    path = sh_only_path(tmp_path)
    try:
        # as the sslbench_step action runs it: `sh -s`, the script on stdin
        first = subprocess.run(["/bin/sh", "-s"], input=script.read_text(), capture_output=True, text=True,
                               env={"PATH": path}, timeout=30)
        assert first.returncode == 0 and "@@sslbench-state started" in first.stdout, first.stdout + first.stderr
        for name, source in (("run.sh", SCRIPT), ("conditions.sh", CONDITIONS)):
            assert (work / name).read_text() == source.read_text()  # shipped byte for byte
        assert (work / "cells.txt").read_text() == "001-t\t-\tspeed table\n"
        # asked again (its first answer was lost): the runner is found, nothing is started twice
        again = subprocess.run(["/bin/sh", "-s"], input=script.read_text(), capture_output=True, text=True,
                               env={"PATH": path}, timeout=30)
        assert again.returncode == 0 and "@@sslbench-state started" in again.stdout
        deadline = time.time() + 20
        progress = work / "progress"
        while time.time() < deadline and not (progress.exists() and "finished" in progress.read_text()):
            time.sleep(0.2)
        poll = subprocess.run(["/bin/sh", str(work / "run.sh"), "poll"], capture_output=True, text=True,
                              env={"PATH": path}).stdout
        assert sorted(cell for cell, _ in split_logs(poll)) == ["001-t", "conditions-after", "conditions-before",
                                                               "conditions-idle"] and "@@sslbench-state finished" in poll
        assert (work / "progress").read_text().count("start 1 1 001-t") == 1
        # only once the controller has that output does the work dir go
        subprocess.run(["/bin/sh", str(work / "run.sh"), "forget"], env={"PATH": path}, check=True)
        assert not work.exists()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_a_launcher_that_cannot_write_its_files_stops_says_why_and_leaves_no_work_dir(tmp_path):
    """/tmp full on the host: `cat > run.sh` writes part of the file and fails. The cut script must never run
    (it did: `run.sh: Syntax error: end of file unexpected`), and the half work dir must not stay in /tmp."""
    from orchestrator.run import stages
    from orchestrator.run.matrix import Capabilities, CellPlan, HostPlan

    _, fake = workdir(tmp_path, [])
    plan = HostPlan(host="h", capabilities=Capabilities(label="OpenSSL 3.0.0", version=(3, 0, 0)))
    plan.cells.append(CellPlan(id="001-t", algorithm="sha256", kind="digest", api=None, threads=1, sizes=(16,),
                               args=["speed", "table"], seconds=2.0))
    run_id = f"unitfull{os.getpid()}"
    work = Path(stages.work_dir(run_id, plan.host))
    bin_dir = tmp_path / "full-bin"
    bin_dir.mkdir()
    for tool in SH_ONLY_TOOLS:
        if tool != "cat":
            (bin_dir / tool).symlink_to(shutil.which(tool))
    (bin_dir / "cat").write_text('#!/bin/sh\nhead -c 4000\necho "cat: write error: No space left on device" >&2\n'
                                 'exit 1\n')
    (bin_dir / "cat").chmod(0o755)
    try:
        out = subprocess.run(["/bin/sh", "-s"], input=stages.launcher_script(run_id, plan, str(fake), 0),
                             capture_output=True, text=True, env={"PATH": str(bin_dir)}, timeout=30)
        assert out.returncode == 1 and "@@sslbench-state started" not in out.stdout
        assert "cannot write run.sh" in out.stderr and "No space left on device" in out.stderr
        assert "Syntax error" not in out.stderr and not work.exists()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_forget_keeps_a_work_dir_with_logs_not_yet_shipped(tmp_path):
    work, fake = workdir(tmp_path, [("001-a", "speed -mr")])
    assert sh(work, "start", str(fake)).returncode == 0  # finished, its log not yet polled
    sh(work, "forget")
    assert (work / "logs" / "001-a.log").exists()
    assert "@@sslbench-state finished" in sh(work, "poll").stdout
    sh(work, "forget")
    assert not work.exists()


def test_no_poll_removes_the_work_dir_only_forget_does_once_every_log_was_shipped(tmp_path):
    """#37 failure 2: a poll that removed the work dir with its last logs lost them all when its controller died
    before saving them. The poll that ships a finished run's last logs keeps the dir; `forget` (sent once the
    controller has saved them) removes it. A word the controller no longer sends (`forget`) is not read by poll."""
    work, fake = workdir(tmp_path, [(f"00{i}-c", "speed big 7000") for i in range(1, 4)])  # three polls' worth
    assert sh(work, "start", str(fake)).returncode == 0
    shipped, states = [], []
    for _ in range(3):
        out = sh(work, "poll", "forget").stdout
        shipped += [cell for cell, _ in split_logs(out)]
        states.append(protocol_state(out))
        assert work.is_dir() and "@@sslbench-forgotten" not in out
    assert states == ["pending", "pending", "finished"] and shipped == ["001-c", "002-c", "003-c"]
    sh(work, "forget")
    assert not work.exists()


def test_a_poll_told_again_ships_what_a_lost_answer_carried(tmp_path):
    """The controller lost a poll's output: `poll again` prints the progress lines and the logs that poll had
    shipped (moved to shipped/), then carries on as a poll; later polls do not repeat them."""
    work, fake = workdir(tmp_path, [("001-a", "speed -mr"), ("002-b", "speed fail")])
    assert sh(work, "start", str(fake)).returncode == 0
    first = sh(work, "poll").stdout  # the answer lost on the way
    assert [c for c, _ in split_logs(first)] == ["001-a", "002-b"] and not list((work / "logs").iterdir())
    again = sh(work, "poll", "again").stdout
    assert split_logs(again) == split_logs(first)
    assert exit_codes(progress_part(again)) == exit_codes(progress_part(first)) == {"001-a": 0, "002-b": 1}
    assert protocol_state(again) == "finished" and work.exists() and len(again) < 14000
    assert split_logs(sh(work, "poll").stdout) == []


def test_forget_keeps_the_work_dir_of_a_runner_that_died(tmp_path):
    work, fake = workdir(tmp_path, [("001-a", "speed sleep")])
    (work / "progress").write_text("start 1 1 001-a\n")
    (work / "pid").write_text("999999999\n")  # no such process: gone without `finished`
    assert protocol_state(sh(work, "poll").stdout) == "died"
    sh(work, "forget")
    assert work.is_dir()


def test_a_launch_told_to_wait_returns_with_the_finished_poll_and_leaves_nothing_waiting(tmp_path):
    """`launch OPENSSL IDLE WAIT`: a short matrix comes back in the launch's own exec, as soon as the runner
    ended (not after WAIT), and nothing of the wait is left on the router."""
    work, fake = workdir(tmp_path, [("001-t", "speed table")])
    began = time.monotonic()
    out = sh(work, "launch", str(fake), "0", "15").stdout
    assert time.monotonic() - began < 10  # the runner's 2 s, not the 15 s cap
    assert protocol_state(out) == "finished" and "started" in out
    assert "+F:6:sha256:16000.00" in dict(split_logs(out))["001-t"]
    # everything shipped, and the work dir stays until the controller, having saved it, says forget
    assert "@@sslbench-forgotten" not in out and work.is_dir()
    time.sleep(0.3)
    assert not [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p.name) == "sleep 15"]


def test_a_launch_that_waited_keeps_its_work_dir_while_logs_are_left_to_ship(tmp_path):
    work, fake = workdir(tmp_path, [(f"00{i}-c", "speed big 7000") for i in range(1, 4)])  # more than one poll
    out = sh(work, "launch", str(fake), "0", "15").stdout
    assert protocol_state(out) == "pending" and "@@sslbench-forgotten" not in out
    assert (work / "logs").is_dir() and len(split_logs(out)) < 3


def test_a_launch_told_to_wait_sees_the_end_at_once_where_sleep_takes_whole_seconds_only(tmp_path):
    """OpenWrt's BusyBox `sleep` refuses fractions: the launch must not learn of the runner's end a second late
    (looking once a second did), nor leave its wait behind."""
    whole_seconds = ('#!/bin/sh\ncase $1 in *[!0-9]*) echo "sleep: invalid number \'$1\'" >&2; exit 1 ;; esac\n'
                     f'exec {os.path.realpath(shutil.which("sleep"))} "$1"\n')
    path = sh_only_path(tmp_path, {"sleep": whole_seconds})
    assert subprocess.run(["sleep", "0.1"], env={"PATH": path}, capture_output=True).returncode != 0  # provably
    work, fake = workdir(tmp_path, [("001-t", "speed table")])  # the runner takes 2 s (its `sleep 2`)
    began = time.monotonic()
    out = subprocess.run(["/bin/sh", str(work / "run.sh"), "launch", str(fake), "0", "15"], capture_output=True,
                         text=True, env={"PATH": path}, timeout=30).stdout
    took = time.monotonic() - began
    assert protocol_state(out) == "finished" and "+F:6:sha256:16000.00" in dict(split_logs(out))["001-t"]
    assert took < 2.7, took  # 2 s of runner; a look once a second came back at 3 s
    time.sleep(0.3)
    assert not [p for p in Path("/proc").glob("[0-9]*") if _cmdline(p.name).endswith("sleep 15")]


def test_a_launch_whose_wait_runs_out_says_running_and_the_runner_goes_on(tmp_path):
    work, fake = workdir(tmp_path, [("001-t", "speed table")])  # a 2-s runner
    out = sh(work, "launch", str(fake), "0", "1").stdout
    assert protocol_state(out) == "running"  # back after the 1-s wait, before the runner ended
    logs = dict(split_logs(out))
    for _ in range(40):  # the runner was not stopped by the end of the wait
        out = sh(work, "poll").stdout
        logs.update(split_logs(out))  # a log can come with a poll that still said running
        if protocol_state(out) != "running":
            break
        time.sleep(0.1)
    assert protocol_state(out) == "finished" and "+F:6:sha256:16000.00" in logs["001-t"]


def protocol_state(stdout):
    from orchestrator.parse.protocol import state

    return state(stdout)


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""


def test_a_one_cell_launch_starts_few_processes_on_the_host(tmp_path):
    """Every process a router starts costs it (a dynamic load, ~10-30 ms on a 560 MHz MIPS) and, on a rig whose
    hosts share the controller's cores, the controller too. A one-cell launch that waits, as the controller sends
    it (the launcher on `sh -s`, OpenWrt's tools: no setsid), each tool logging its start: the cell's openssl,
    the two probes of the snapshot before, and the file moves and copies it needs, no shell started per cell or
    per log, no copy per log shipped, one move for the idle gate's log and the snapshot before, none for logs
    shipped by the launch's last poll (issue 15: 24 besides the sleeps before, 14 now)."""
    from orchestrator.run import stages
    from orchestrator.run.matrix import Capabilities, CellPlan, HostPlan

    _, fake = workdir(tmp_path, [])
    started = tmp_path / "started.txt"
    logging = {tool: f'#!/bin/sh\necho {tool} >> "{started}"\nexec {os.path.realpath(shutil.which(tool))} "$@"\n'
               for tool in (*SH_ONLY_TOOLS, "date")}
    logging["openssl"] = f"#!/bin/sh\necho \"openssl $1\" >> '{started}'\nexec '{fake}' \"$@\"\n"
    path = sh_only_path(tmp_path, logging)
    plan = HostPlan(host="h", capabilities=Capabilities(label="OpenSSL 3.0.0", version=(3, 0, 0)))
    plan.cells.append(CellPlan(id="001-t", algorithm="sha256", kind="digest", api=None, threads=1, sizes=(16,),
                               args=["speed", "table"], seconds=2.0))
    run_id = f"unitcount{os.getpid()}"
    work = Path(stages.work_dir(run_id, plan.host))
    try:
        out = subprocess.run(["/bin/sh", "-s"], input=stages.launcher_script(run_id, plan, "openssl", 0, 15),
                             capture_output=True, text=True, env={"PATH": path}, timeout=30)
        assert protocol_state(out.stdout) == "finished" and "@@sslbench-forgotten" not in out.stdout, out
        logs = dict(split_logs(out.stdout))
        assert sorted(logs) == ["001-t", "conditions-after", "conditions-before", "conditions-idle"]
        output, evidence = split_evidence(logs["001-t"])
        assert "+F:6:sha256:16000.00" in output and parse_cell(evidence)["run"]["exit"] == 0
        commands = started.read_text().split("\n")[:-1]
        assert commands.count("openssl speed") == 1 and "sh" not in commands
        others = [c for c in commands if c != "sleep"]  # the wait's and the sampler's (one per cell-second)
        assert len(others) <= 14, commands
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_a_cell_run_in_the_runners_subshell_counts_the_cpu_of_its_command(tmp_path):
    """The cells run in subshells of the runner (no sh per cell), where $$ is the runner's pid: the children CPU
    must be the subshell's own (/proc/self), which has reaped the command, not the runner's, which has not."""
    work, fake = workdir(tmp_path, [("001-b", "speed burn")], conditions=True)
    assert sh(work, "start", str(fake), "0").returncode == 0
    out = sh(work, "poll").stdout
    run = parse_cell(split_evidence(dict(split_logs(out))["001-b"])[1])["run"]
    used = run["children_after"] - run["children_before"]
    assert used >= 10, run  # clock ticks (1/100 s): the shell loop's CPU, a few tenths of a second


def test_the_cells_after_snapshot_is_taken_before_the_tunnels(tmp_path):
    """The host-wide "after" snapshot closes the openssl cells: taken before the tunnels, whose minutes of iperf3
    would otherwise heat and throttle the board into the cells' evidence. The stand-in tunnel.sh says what the
    work dir held when it ran."""
    work, fake = workdir(tmp_path, [("001-t", "speed quick")], conditions=True)
    (work / "tunnels.txt").write_text("tunnel-wireguard\twireguard 1 1 1\n")
    (work / "tunnel.sh").write_text('for f in logs/*.log shipped/*.log; do [ -f "$f" ] && echo "had:${f#*/}"; done\n'
                                    'echo "args:$*"\n')
    started = sh(work, "start", str(fake), "0")
    assert started.returncode == 0, started.stderr
    logs = poll_until_finished(work)
    assert set(logs) == {"conditions-idle", "conditions-before", "001-t", "conditions-after", "tunnel-wireguard"}
    assert parse_conditions(logs["conditions-after"])["label"] == "after"
    had = [line.removeprefix("had:") for line in logs["tunnel-wireguard"].splitlines() if line.startswith("had:")]
    assert "conditions-after.log" in had and "001-t.log" in had
    assert f"args:measure {work} run1 wireguard 1 1 1" in logs["tunnel-wireguard"]
