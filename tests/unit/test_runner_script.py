"""playbooks/files/sslbench-run.sh under BusyBox ash with a stand-in `openssl` (a test fixture that
prints its arguments): arguments arrive intact, progress and logs are shipped in bounded polls, and
`stop` leaves no process behind."""
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.commands.run import exit_codes, progress_part, split_logs

SCRIPT = Path(__file__).resolve().parents[2] / "playbooks" / "files" / "sslbench-run.sh"
ASH = shutil.which("busybox")
pytestmark = pytest.mark.skipif(ASH is None, reason="busybox (Debian busybox or busybox-static) is needed")

FAKE_OPENSSL = """#!/bin/sh
# stand-in for openssl: prints each argument on its own line; `speed fail` exits 1; `speed sleep` forks a
# child (like -multi) and both sleep; `speed big N` prints N bytes.
for a in "$@"; do echo "arg:$a"; done
case "$2" in
  fail) echo "speed: Unknown algorithm fail" >&2; exit 1 ;;
  sleep) sleep 30 & sleep 30; wait ;;
  big) head -c "$3" /dev/zero | tr '\\0' x ;;
esac
exit 0
"""


def workdir(tmp_path, cells):
    work = tmp_path / "sslbench.run1"
    work.mkdir()
    shutil.copy(SCRIPT, work / "run.sh")
    (work / "cells.txt").write_text("".join(f"{i}\t{a}\n" for i, a in cells))
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
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


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
