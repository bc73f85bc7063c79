"""The wheel without the `plots` extra, in a fresh venv (its dependencies from the package index, as a user's
`pip install sslbench` gets them): `run` on this machine, `report --format html` and `publish` work there, the
pages complete but for their plots and saying how to get them. Prints the size of the install (README states it)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl on this machine")]

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--algorithms", "sha256,ed25519", "--sizes", "1024", "--threads", "1", "--seconds", "1", "--idle-wait", "0"]


def site_packages_mb(venv: Path) -> float:
    [site] = venv.glob("lib/python*/site-packages")
    total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file() and not p.is_symlink())
    return total / 1e6


def test_a_lean_install_runs_reports_and_publishes(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(ROOT)],
                   check=True, capture_output=True)
    [wheel] = (tmp_path / "dist").glob("sslbench-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], capture_output=True,
                               text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr[-2000:]
    python = str(venv / "bin" / "python")
    assert subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode != 0
    print(f"\nlean install: {site_packages_mb(venv):.0f} MB of site-packages")

    sslbench = str(venv / "bin" / "sslbench")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "SSLBENCH_", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '')}"
    work = tmp_path / "work"
    work.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sslbench, *args], cwd=work, env=env, capture_output=True, text=True, timeout=300)

    done = run("run", *TINY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "localhost: ok" in done.stderr and "sha256" in done.stdout
    page = run("report", "--format", "html", "-o", "report.html")
    assert page.returncode == 0, page.stderr
    html = (work / "report.html").read_text()
    assert "<img" not in html and "pip install &#x27;sslbench[plots]&#x27;" in html and "sha256" in html
    published = run("publish", "-o", "site")
    assert published.returncode == 0, published.stderr
    assert (work / "site" / "index.html").is_file() and not list((work / "site").rglob("*.png"))
    host_page = next(p for p in (work / "site").glob("*.html")
                     if "localhost" in p.read_text() and p.name != "index.html")
    assert "sslbench[plots]" in host_page.read_text()
    dashboards = run("report", "--format", "openmetrics")
    assert dashboards.returncode == 0 and "sslbench_throughput_bytes_per_second{host=\"localhost\"" in dashboards.stdout
