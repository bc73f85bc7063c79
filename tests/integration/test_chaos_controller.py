"""Chaos on the controller side (#37): `kill -9` of `sslbench run` at each stage, a results disk that fills mid-run,
a damaged run.json. Afterwards nothing is left running on the host (no runner, no openssl, no watchdog), no work
dir but a stranded one holding only logs to collect, no finished cell is lost (the next run collects the ones that
never came back), and every reader still answers. This machine is the host (ansible_connection: local): the runner,
its lease and its session are the real ones; `kill -9` is SIGKILL to sslbench's pid alone, as a crash or the OOM
killer does it."""
from __future__ import annotations

import glob
import json
import os
import re
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
# 3 cells of 6 sizes x 1 s: longer than a launch waits for, so cells come back at polls
MATRIX = ["--algorithms", "aes-128-gcm,sha256,sha1", "--threads", "1", "--api", "evp", "--seconds", "1",
          "--idle-wait", "0"]
TINY = ["--algorithms", "sha256", "--threads", "1", "--api", "evp", "--seconds", "1", "--sizes", "16",
        "--idle-wait", "0"]
# 3 cells of 1 s at one size: under 10 s, so the launch waits for it (#37 failure 2: that launch printed the logs
# to a dead controller, then removed its work dir)
SHORT = ["--algorithms", "aes-128-gcm,sha256,sha1", "--threads", "1", "--api", "evp", "--seconds", "1", "--sizes",
         "1024", "--idle-wait", "0"]
LAPSE = 30 + 2 + 10  # the lease's grace once the session is gone, a tick, and the stop's own wait


def left_in(run_id: str) -> list[str]:
    """Processes whose working directory is the run's work dir on this host (runner, openssl, watchdog)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if os.readlink(proc / "cwd").startswith(work_dir(run_id, "localhost")):
                found.append(f"{proc.name} {(proc / 'comm').read_text().strip()}")
        except OSError:
            continue
    return found


def done_on_host(run_id: str) -> set[str]:
    try:
        progress = (Path(work_dir(run_id, "localhost")) / "progress").read_text()
    except OSError:
        return set()
    return set(re.findall(r"^done \d+ \d+ (\S+) 0$", progress, flags=re.MULTILINE))


def stored_cells(run_dir: Path) -> set[str]:
    return {Path(p).stem for p in glob.glob(str(run_dir / "localhost" / "0*.log"))}


@pytest.fixture
def fleet(tmp_path):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(json.dumps({"all": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    return inventory, {**os.environ, "TMPDIR": str(tmpdir)}, tmpdir


def sslbench(env, *args, timeout=240):
    return subprocess.run([SSLBENCH, *args], capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.parametrize("moment", ["detect", "cells", "fetch", "short"])
def test_kill_9_of_the_controller_leaves_nothing_running_and_loses_no_finished_cell(tmp_path, fleet, moment):
    inventory, env, tmpdir = fleet
    results = tmp_path / "results"
    matrix = SHORT if moment == "short" else MATRIX
    proc = subprocess.Popen([SSLBENCH, "run", "-i", str(inventory), *matrix, "--results", str(results)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_for(lambda: store.list_runs(results), "the run dir")
        run_dir = store.list_runs(results)[0]
        run_id = run_dir.name
        work = Path(work_dir(run_id, "localhost"))
        if moment == "detect":  # ansible-playbook is starting or detecting (on a fast box it may have launched)
            time.sleep(1.0)
        elif moment == "cells":  # the first cell is here, the second runs
            wait_for(lambda: stored_cells(run_dir), "the first cell's log here")
        else:  # a cell finished on the host whose log has not come back (short: the launch still waits)
            wait_for(lambda: done_on_host(run_id) - stored_cells(run_dir), "a cell finished on the host, not here")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # within the lease's grace: no runner, no openssl, no watchdog; the work dir stranded (logs only) or gone
        wait_for(lambda: not left_in(run_id), f"the end of every process in {work}", timeout=LAPSE + 20)
        finished = done_on_host(run_id)
        if work.exists():
            assert (work / "stranded").exists()
            assert sorted(p.name for p in work.iterdir()) <= ["logs", "progress", "run.sh", "shipped", "stranded"]
        assert [p for p in tmpdir.iterdir() if p.name.startswith("sslbench-runner-")]  # the killed run's
        # the next run on the host collects what never came back, into the run it belongs to
        after = sslbench(env, "run", "-i", str(inventory), *TINY, "--results", str(results))
        assert after.returncode == 0, after.stderr
        assert not work.exists() and not left_in(run_id)
        assert len([p for p in tmpdir.iterdir() if p.name.startswith("sslbench-runner-")]) == 0
        if moment != "detect":
            assert finished and finished <= stored_cells(run_dir), (finished, stored_cells(run_dir))
            old = store.load_run(run_dir)
            (host,) = old.hosts
            assert old.complete and old.interrupted and host.status == HOST_FAILED
            kept = {m.repeat for m in host.measurements if m.status == OK}
            assert kept, host.reason
        for reader in (["report", "--all", "--results", str(results)],
                       ["history", "localhost", "--runs", "--results", str(results)],
                       ["trend", "localhost", "--results", str(results)]):
            said = sslbench(env, *reader, timeout=120)
            assert said.returncode == 0 and "Traceback" not in said.stderr, (reader, said.stderr)
    finally:
        if proc.poll() is None:
            proc.kill()
        for run in store.list_runs(results) if results.exists() else []:
            script = Path(work_dir(run.name, "localhost")) / "run.sh"
            if script.exists():
                subprocess.run(["sh", str(script), "stop"], capture_output=True, timeout=30)
            shutil.rmtree(work_dir(run.name, "localhost"), ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs for the results")
def test_a_results_disk_that_fills_mid_run_stops_the_host_first_and_the_next_run_collects_the_rest(tmp_path, fleet):
    inventory, env, _ = fleet
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], check=True)
    run_id = ""
    try:
        results = disk / "results"
        proc = subprocess.Popen([SSLBENCH, "run", "-i", str(inventory), *MATRIX, "--results", str(results)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        wait_for(lambda: store.list_runs(results), "the run dir")
        run_dir = store.list_runs(results)[0]
        run_id = run_dir.name
        wait_for(lambda: stored_cells(run_dir), "the first cell's log here")
        with open(disk / "filler", "wb", buffering=0) as filler:  # someone else takes the last of the room
            try:
                while True:
                    filler.write(b"x" * 65536)
            except OSError:
                pass
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 2, err
        assert "Traceback" not in err and work_dir(run_id, "localhost") in err  # where the unsaved logs are
        time.sleep(1)
        assert not left_in(run_id) or all(p.endswith(("sleep", "sh")) for p in left_in(run_id))
        wait_for(lambda: not left_in(run_id), "the end of every process on the host", timeout=LAPSE + 20)
        (disk / "filler").unlink()
        after = sslbench(env, "run", "-i", str(inventory), *TINY, "--results", str(results))
        assert after.returncode == 0, after.stderr
        assert not Path(work_dir(run_id, "localhost")).exists() and not left_in(run_id)
        report = sslbench(env, "report", "--all", "--results", str(results), timeout=120)
        assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr
    finally:
        if run_id:
            script = Path(work_dir(run_id, "localhost")) / "run.sh"
            if script.exists():
                subprocess.run(["sh", str(script), "stop"], capture_output=True, timeout=30)
            shutil.rmtree(work_dir(run_id, "localhost"), ignore_errors=True)
        subprocess.run(["umount", "-l", str(disk)], check=False)


HOLDS = {  # damage to the file itself: the run is skipped or said unreadable, in one line
    "truncated": lambda text: text[: len(text) // 2],
    "garbage": lambda text: "\x00\xff not json at all",
    "empty": lambda text: "",
}
# a field of the wrong type (#37 item 5: one schema check when a run is read)
FIELDS = {
    "schema-string": lambda d: d.update(schema="3"),
    "created-null": lambda d: d.update(created=None),
    "hosts-string": lambda d: d.update(hosts="x"),
    "firmware-number": lambda d: d["hosts"][0].update(firmware=42),
    "host-null": lambda d: d["hosts"].append(None),
}


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    """A real run of this machine, stored: each case damages a copy of it."""
    base = tmp_path_factory.mktemp("chaos-store")
    inventory = base / "hosts.yml"
    inventory.write_text(json.dumps({"all": {"hosts": {"localhost": {"ansible_connection": "local"}}}}))
    done = subprocess.run([SSLBENCH, "run", "-i", str(inventory), *TINY, "--results", str(base / "results")],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    return base / "results"


def damaged_store(tmp_path, one_run, damage) -> tuple[Path, str]:
    """The run twice: once whole (its id returned), once damaged."""
    results = tmp_path / "results"
    shutil.copytree(one_run, results)
    (run,) = store.list_runs(results)
    shutil.copytree(run, results / (run.name[:-4] + "dmg0"))
    path = results / (run.name[:-4] + "dmg0") / "run.json"
    text = path.read_text()
    if damage in HOLDS:
        path.write_text(HOLDS[damage](text))
    else:
        data = json.loads(text)
        FIELDS[damage](data)
        path.write_text(json.dumps(data))
    return results, run.name


def readers_answer(results: Path, whole: str) -> list[str]:
    """Each reader answers with the whole run (its figures, or its id), whatever the damaged one holds."""
    failed = []
    for reader, shows in ((["report", "--all"], "sha256"), (["history", "localhost", "--runs"], whole),
                          (["trend", "localhost"], "sha256")):
        said = subprocess.run([SSLBENCH, *reader, "--results", str(results)], capture_output=True, text=True,
                              timeout=120)
        if said.returncode != 0 or "Traceback" in said.stderr or shows not in said.stdout:
            failed.append(f"{' '.join(reader)}: exit {said.returncode}: {said.stderr.strip()[-300:]}")
    return failed


@pytest.mark.parametrize("damage", sorted(HOLDS))
def test_a_damaged_run_json_never_stops_a_reader(tmp_path, one_run, damage):
    assert readers_answer(*damaged_store(tmp_path, one_run, damage)) == []


@pytest.mark.parametrize("damage", sorted(FIELDS))
def test_a_run_json_with_a_field_of_the_wrong_type_never_stops_a_reader(tmp_path, one_run, damage):
    assert readers_answer(*damaged_store(tmp_path, one_run, damage)) == []
