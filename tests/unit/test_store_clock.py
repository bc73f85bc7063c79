"""A controller whose clock is wrong never hides the newest run: "latest" is the run written last, the clock's
disagreement is warned about when the run is written, and `report` says where dates and write order disagree
(issue 37, item 10). The wrong clock is a real one: the import runs under faketime."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import store

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "speed"
OLD, NEW = DATA / "openssl-1.1.1w-armv7l-qemu-evp-aes-128-gcm.txt", DATA / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"

pytestmark = pytest.mark.skipif(shutil.which("faketime") is None, reason="needs faketime (tests/rig/packages.txt)")


def _import(log: Path, firmware: str, results: Path, clock: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "orchestrator", "import", str(log), "--host", "router", "--firmware", firmware,
               "--results", str(results)]
    return subprocess.run((["faketime", "-f", clock] if clock else []) + command, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_run_from_a_clock_73_years_ahead_does_not_stay_the_latest(tmp_path: Path):
    results = tmp_path / "results"
    ahead = _import(OLD, "old-fw", results, clock="+73y")
    assert ahead.returncode == 0 and "warning" not in ahead.stderr, ahead.stderr
    assert store.load_run(store.list_runs(results)[0]).created > "2090"  # the clock was wrong indeed
    right = _import(NEW, "new-fw", results)
    assert right.returncode == 0, right.stderr
    (warning,) = [line for line in right.stderr.splitlines() if "warning" in line]
    assert "later than this controller's clock" in warning and "one of the two clocks is wrong" in warning
    assert store.resolve_run("latest", results) == store.list_runs(results)[-1]
    assert store.load_run(store.resolve_run("latest", results)).hosts[0].firmware == "new-fw"
    (run,) = store.latest_of_each_host(store.load_all(results))
    assert run.hosts[0].firmware == "new-fw"
    report = subprocess.run([sys.executable, "-m", "orchestrator", "report", "--all", "--results", str(results)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    (note,) = [line for line in report.stdout.splitlines() if "clock was wrong" in line]
    assert note.startswith("note: run ") and "was written after run" in note
    newest, ahead_id = store.list_runs(results)[-1].name, store.list_runs(results)[0].name
    shown = [line for line in report.stdout.splitlines() if not line.startswith("note: ")]
    assert any(line.startswith(newest) for line in shown) and not any(ahead_id in line for line in shown)


def test_a_clock_that_agrees_says_nothing(tmp_path: Path):
    results = tmp_path / "results"
    for log, firmware in ((OLD, "old-fw"), (NEW, "new-fw")):
        done = _import(log, firmware, results)
        assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    report = subprocess.run([sys.executable, "-m", "orchestrator", "report", "--all", "--results", str(results)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "clock" not in report.stdout + report.stderr
