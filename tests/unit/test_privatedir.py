"""#37: each `kill -9` of a run left a 150 KB `sslbench-runner-*` dir in $TMPDIR. The next run removes those whose
owner is gone, and only those."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from orchestrator import privatedir


def test_the_dir_of_a_run_killed_with_sigkill_goes_at_the_next_start_a_living_ones_stays(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    killed = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom orchestrator import privatedir\n"
                               "print(privatedir.make(), flush=True)\ntime.sleep(60)"],
                              stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    stale = Path(killed.stdout.readline().strip())
    (stale / "project").mkdir()
    (stale / "project" / "sslbench.yml").write_text("- hosts: all\n")
    living = privatedir.make()  # while the other still runs: its dir is not touched
    assert stale.is_dir() and living.parent == tmp_path
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    foreign = tmp_path / "sslbench-runner-notours"  # no owner file: not ours to judge
    foreign.mkdir()
    again = privatedir.make()
    assert not stale.exists() and living.is_dir() and again.is_dir() and foreign.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([living.name, again.name, foreign.name])


def test_a_pid_reused_by_another_process_does_not_keep_a_dead_runs_dir(tmp_path):
    stale = tmp_path / "sslbench-runner-x"
    stale.mkdir()
    (stale / privatedir.OWNER).write_text(f"{os.getpid()} 1\n")  # our pid, another start time: another process
    assert privatedir.clean_stale(tmp_path) == [stale] and not stale.exists()
