"""docs/ci-example.sh, the documented CI job, run over generated stores: exit 0 when the newest firmware is fine,
3 with a JUnit file naming the cell when it regressed, and the site published either way."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.model import HostResult, Measurement, OsFacts, Run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "ci-example.sh"


def nightly(root: Path, levels: list[float]) -> None:
    """Router and pi, 4 nights each of OpenWrt 23.05.3, 23.05.4, 23.05.5; router's gcm at levels[i] of 100 MB/s."""
    for night in range(12):
        version = ("23.05.3", "23.05.4", "23.05.5")[night // 4]
        hosts = []
        for name, level in (("router", levels[night // 4]), ("pi", 1.0)):
            ms = [Measurement("aes-256-gcm", 1024, 100e6 * level * f, api="evp", repeat=r)
                  for r, f in enumerate((1.0, 1.003, 0.997, 1.001))]
            ms += [Measurement("sha256", 16384, 80e6 * f, api="evp", repeat=r) for r, f in enumerate((1.0, 1.002, 0.998, 1.001))]
            hosts.append(HostResult(name, os=OsFacts("openwrt", "OpenWrt", version), measurements=ms))
        run_id = f"202601{night + 1:02d}T000000Z-{night:04x}"
        store.save_run(store.new_run_dir(root, run_id), Run(run_id, f"2026-01-{night + 1:02d}T00:00:00+00:00", hosts=hosts))


def run_job(tmp_path: Path, results: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    wrapper = bin_dir / "sslbench"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m orchestrator "$@"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ, SKIP_RUN="1", RESULTS=str(results), SITE=str(tmp_path / "public"), PCT="5",
               PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    return subprocess.run(["sh", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX sh")
def test_ci_example_passes_a_fine_build_and_fails_a_regression_with_junit(tmp_path):
    fine = tmp_path / "fine"
    nightly(fine, [1.0, 0.8, 0.8])  # the -20 % step is old news: 23.05.3 → 23.05.4
    done = run_job(tmp_path, fine)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "public" / "index.html").is_file()
    assert sorted(p.name for p in (tmp_path / "junit").iterdir()) == ["sslbench-pi.xml", "sslbench-router.xml"]
    bad = tmp_path / "bad"
    nightly(bad, [1.0, 1.0, 0.8])  # the newest firmware is 20 % slower
    done = run_job(tmp_path, bad)
    assert done.returncode == 3, done.stderr
    (failure,) = ET.parse(tmp_path / "junit" / "sslbench-router.xml").getroot().iter("failure")
    assert "aes-256-gcm 1024 B evp t1: -20.0% at OpenWrt 23.05.4 → OpenWrt 23.05.5" in failure.get("message", "")
    assert list(ET.parse(tmp_path / "junit" / "sslbench-pi.xml").getroot().iter("failure")) == []
