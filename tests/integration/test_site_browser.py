"""The site of `sslbench publish` in a real headless Chromium, from file:// and from a loopback web server:
every page's images load, every link resolves, nothing is cut off (no page wider than the window, no box clipping
its text), and the screenshots show the plots.

Not a rig test: it needs only Debian's `chromium` (tests/rig/packages.txt). Chromium is driven through its DevTools
protocol over a pipe (--remote-debugging-pipe: JSON messages ending in NUL on file descriptors 3 and 4), from the
standard library alone: no Playwright, no npm.
"""
from __future__ import annotations

import base64
import fcntl
import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from orchestrator import reference, store
from orchestrator.render import site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                       reason="chromium is not installed (apt-get install chromium)"),
]
WIDTH = 1280

CHECK = """
(async () => {
  const images = [...document.images];
  await Promise.all(images.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
  const broken = images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src'));
  const view = document.documentElement.clientWidth;
  const cut = [];
  if (document.documentElement.scrollWidth > view + 1) cut.push('page wider than the window: ' + document.documentElement.scrollWidth);
  for (const el of document.body.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.right > view + 1 || box.left < -1) cut.push('outside the window: ' + el.tagName + ' ' + (el.textContent || '').slice(0, 40));
    const style = getComputedStyle(el);
    if (el.scrollWidth > el.clientWidth + 1 && style.overflowX !== 'visible')
      cut.push('scrolls or clips its content: ' + el.tagName + '.' + el.className + ' ' + el.scrollWidth + ' > ' + el.clientWidth);
    if (el.tagName === 'IMG' && (box.width < 50 || box.height < 20)) cut.push('image shown too small: ' + el.getAttribute('src'));
  }
  return {title: document.title, images: images.length, broken, cut, links: [...document.links].map(a => a.href),
          height: document.documentElement.scrollHeight};
})()
"""


class Chromium:
    """Headless Chromium, spoken to over --remote-debugging-pipe."""

    def __init__(self, profile: Path):
        to_child, self._to_child = os.pipe()
        self._from_child, from_child = os.pipe()
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child)]
        for fd in (to_child, from_child):
            os.close(fd)

        def plumb() -> None:  # the child reads commands on fd 3 and writes answers on fd 4
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.process = subprocess.Popen(
            [CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
             f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"],
            preexec_fn=plumb, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in high:
            os.close(fd)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=WIDTH, height=900, deviceScaleFactor=1,
                  mobile=False)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def open(self, url: str) -> dict[str, Any]:
        """Navigate, wait for the load event, run CHECK in the page; the answer of CHECK."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + 60
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._read(deadline))
        value = self.call("Runtime.evaluate", session=True, expression=CHECK, awaitPromise=True, returnByValue=True)
        return value["result"]["value"]

    def screenshot(self, height: int) -> bytes:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=WIDTH, height=min(height, 16000),
                  deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=WIDTH, height=900, deviceScaleFactor=1,
                  mobile=False)
        return base64.b64decode(data)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_child)
        os.close(self._from_child)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, fleet_history) -> Path:
    """A site of 60 nights of 6 hosts over 6 firmware versions (the benchmark store's generator, smaller)."""
    results = tmp_path_factory.mktemp("results")
    fleet_history.generate(results, runs=60, hosts=6)
    out = tmp_path_factory.mktemp("site")
    known, _ = reference.known_run()
    site.publish(store.load_all(results), out, known)
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    if CHROMIUM is None:
        pytest.fail("chromium missing: tests/rig/packages.txt lists it")
    chromium = Chromium(tmp_path_factory.mktemp("profile"))
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def server(published: Path) -> Iterator[str]:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(published))
    handler.log_message = lambda *args: None  # type: ignore[assignment]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def pages(published: Path) -> list[str]:
    names = sorted(p.name for p in published.glob("*.html"))
    assert "index.html" in names and any(n.startswith("host-") for n in names)
    assert any(n.startswith("compare-") for n in names)
    return names


def resolves(link: str, base: str) -> bool:
    url = urllib.parse.urlsplit(link)
    if url.scheme == "file":
        return Path(urllib.parse.unquote(url.path)).is_file()
    if link.startswith(base):
        with urllib.request.urlopen(link.split("#")[0], timeout=10) as answer:  # loopback only
            return bool(answer.status == 200)
    return False


@pytest.mark.parametrize("where", ["file", "http"])
def test_every_page_loads_its_images_resolves_its_links_and_cuts_nothing_off(published, browser, server, where):
    base = published.as_uri() + "/" if where == "file" else server
    seen_links: set[str] = set()
    for name in pages(published):
        found = browser.open(base + name)
        assert found["title"], name
        assert found["broken"] == [], f"{name}: images that did not load: {found['broken']}"
        assert found["cut"] == [], f"{name}: {found['cut'][:5]}"
        if name.startswith(("host-", "compare-")):
            assert found["images"] >= 1, name
        seen_links.update(found["links"])
    unresolved = [link for link in sorted(seen_links) if not resolves(link, base)]
    assert unresolved == []
    assert len(seen_links) > 10


def test_screenshots_show_the_plots_and_sparklines(published, browser, tmp_path):
    import matplotlib.image
    import numpy as np

    for name in ("index.html", next(p for p in pages(published) if p.startswith("host-"))):
        found = browser.open(published.as_uri() + "/" + name)
        png = browser.screenshot(found["height"])
        shot = tmp_path / f"{name}.png"
        shot.write_bytes(png)
        pixels = (matplotlib.image.imread(str(shot))[..., :3] * 255).astype(int)
        assert pixels.shape[1] == WIDTH
        blue = np.all(np.abs(pixels - np.array((31, 119, 180))) < 12, axis=-1)  # the first firmware's colour
        rows = np.where(blue.any(axis=1))[0]
        if name == "index.html":  # a sparkline per host
            assert blue.sum() > 100 and rows[-1] - rows[0] > 100, name
        else:  # the first firmware's points in every plot, down the page
            assert blue.sum() > 300 and rows[-1] - rows[0] > 1000, name
        if os.environ.get("SSLBENCH_KEEP_SCREENSHOTS"):
            shutil.copy(shot, Path(os.environ["SSLBENCH_KEEP_SCREENSHOTS"]) / shot.name)
