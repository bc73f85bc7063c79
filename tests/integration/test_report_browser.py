"""The HTML report opened in a real browser (headless Chromium): its tables and plots are there and render.

Needs Debian's `chromium` (tests/rig/packages.txt); skipped with a reason only when it is not installed.
"""
from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from orchestrator.model import CpuFacts, HostResult, Measurement, Run
from orchestrator.render import report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"),
]
MATPLOTLIB_BLUE = (31, 119, 180)  # tab:blue, the first line/bar of every plot


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )


def sample_runs() -> list[Run]:
    def host(name: str, scale: float) -> HostResult:
        ms = [Measurement(alg, block, scale * rate * block ** 0.1, threads=threads, api="evp", repeat=r)
              for alg, rate in (("aes-256-gcm", 8e6), ("chacha20-poly1305", 5e6))
              for threads in (1, 2) for block in (16, 64, 256, 1024, 8192, 16384) for r in range(4)]
        ms.append(Measurement("rsa2048", operation="sign", ops_per_second=500 * scale))
        return HostResult(name, cpu=CpuFacts(model="Cortex-A72", logical_cpus=2, crypto=["aes"]), measurements=ms)

    return [Run("20260101T000000Z-0001", "2026-01-01T00:00:00+00:00", hosts=[host("router", 1.0), host("pi", 2.0)]),
            Run("20260102T000000Z-0002", "2026-01-02T00:00:00+00:00", hosts=[host("router", 0.9)])]


class Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_chromium_sees_tables_and_embedded_images(tmp_path):
    page = report.render_html(sample_runs(), tmp_path / "report.html")
    result = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = Elements()
    dom.feed(result.stdout)
    tables = [t for t, _ in dom.tags if t == "table"]
    images = [a for t, a in dom.tags if t == "img"]
    assert len(tables) >= 6
    assert len(images) >= 5  # 3 block-size plots, 2 per-algorithm bar charts, the diff bars
    assert all(a["src"].startswith("data:image/png;base64,") for a in images)
    assert "carries" in result.stdout and "handshakes/s" in result.stdout


def test_chromium_screenshot_shows_the_plots(tmp_path):
    import matplotlib.image
    import numpy as np

    page = report.render_html(sample_runs(), tmp_path / "report.html")
    shot = tmp_path / "shot.png"
    result = chromium(tmp_path, "--window-size=1280,9000", f"--screenshot={shot}", page.as_uri())
    assert shot.exists(), result.stderr[-2000:]
    pixels = (matplotlib.image.imread(str(shot))[..., :3] * 255).astype(int)
    blue = np.all(np.abs(pixels - np.array(MATPLOTLIB_BLUE)) < 12, axis=-1)
    # The plots' lines and bars are drawn, not broken-image icons: thousands of tab:blue pixels,
    # spread over several figures down the page.
    assert blue.sum() > 5000
    rows = np.where(blue.any(axis=1))[0]
    assert rows[-1] - rows[0] > 1000
