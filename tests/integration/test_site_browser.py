"""The site of `sslbench publish` in a real headless Chromium, from file:// and from a loopback web server:
every page's images load, every link within the site resolves and every link out of it is a plain http(s) link that
cannot reach back (rel="noopener"), nothing is cut off (no page wider than the window, no box clipping its text),
every comparison chart has a bar in colour for each host of its page (read from the image's pixels in the page),
the index reads at 1280 px and at a phone's 390 px without sideways scrolling, a click on a column's name sorts it,
and the screenshots show the plots. Screenshots are kept under pytest's tmp dir (their paths printed; also copied
to $SSLBENCH_KEEP_SCREENSHOTS when set).

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
from orchestrator.model import FORWARD, TUNNEL, Measurement
from orchestrator.render import site, site_plots

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                       reason="chromium is not installed (apt-get install chromium)"),
]
WIDTH = 1280
PHONE = 390

# A comparison chart's bars of one colour, counted from the image's pixels inside the page (same origin: served
# over http): runs of image rows with at least 6 pixels of that colour side by side.
BARS = """
((src, rgb) => {
  const img = [...document.images].find(i => i.getAttribute('src') === src);
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
  const context = canvas.getContext('2d');
  context.drawImage(img, 0, 0);
  const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let bars = 0, before = false;
  for (let y = 0; y < canvas.height; y++) {
    let run = 0, found = false;
    for (let x = 0; x < canvas.width && !found; x++) {
      const at = (y * canvas.width + x) * 4;
      const near = Math.abs(data[at] - rgb[0]) < 8 && Math.abs(data[at + 1] - rgb[1]) < 8 && Math.abs(data[at + 2] - rgb[2]) < 8;
      run = near ? run + 1 : 0;
      found = run >= 6;
    }
    if (found && !before) bars++;
    before = found;
  }
  return bars;
})
"""

# The index's rows as the reader sees them: each row's host and the data-sort of one column.
ROWS = """
((column) => [...document.querySelectorAll('table.sortable tbody tr')].map(r => [r.cells[0].textContent.trim(),
  r.cells[column].getAttribute('data-sort') ?? r.cells[column].textContent.trim()]))
"""

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
          rels: Object.fromEntries([...document.links].map(a => [a.href, a.rel])),
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

    def screenshot(self, height: int, width: int = WIDTH) -> bytes:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=min(height, 16000),
                  deviceScaleFactor=1, mobile=width < 600)
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        self.resize(width)
        return base64.b64decode(data)

    def resize(self, width: int) -> None:
        """The window `width` px wide (a phone's below 600 px: mobile emulation, as a phone lays a page out)."""
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=900, deviceScaleFactor=1,
                  mobile=width < 600)

    def evaluate(self, expression: str) -> Any:
        answer = self.call("Runtime.evaluate", session=True, expression=expression, awaitPromise=True,
                           returnByValue=True)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"{expression[:60]}: {answer['exceptionDetails']}")
        return answer["result"]["value"]

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) in the middle of the element."""
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView();"
                            " const b = e.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1], button="left",
                      clickCount=1)

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
    """A site of 60 nights of 6 hosts over 6 firmware versions (the benchmark store's generator, smaller), one host
    with a measured WireGuard tunnel and a host name longer than any column."""
    results = tmp_path_factory.mktemp("results")
    fleet_history.generate(results, runs=60, hosts=6)
    runs = store.load_all(results)
    latest = runs[-1].hosts[0]
    latest.measurements += [Measurement("wireguard", None, rate, FORWARD, None, 1, kind=TUNNEL,
                                        implementation="kernel", repeat=i) for i, rate in enumerate((95e6, 97e6))]
    long_name = "gateway-in-the-basement-rack-of-the-second-building-" * 2
    for run in runs:
        for host in run.hosts:
            if host.host == runs[-1].hosts[1].host:
                host.host = long_name
    out = tmp_path_factory.mktemp("site")
    known, _ = reference.known_run()
    site.publish(runs, out, known)
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
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            pass

    handler = functools.partial(Quiet, directory=str(published))
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


def resolves(link: str, base: str, rel: str) -> bool:
    """A link of the site is a file of it; a link out of it (a known board's source) a plain http(s) address that
    opens without a way back into the site. Links out are not fetched: tests reach no address but loopback."""
    url = urllib.parse.urlsplit(link)
    if url.scheme in ("http", "https") and url.netloc and not link.startswith(base):
        return "noopener" in rel.split()
    if url.scheme == "file":
        return Path(urllib.parse.unquote(url.path)).is_file()
    if link.startswith(base):
        with urllib.request.urlopen(link.split("#")[0], timeout=10) as answer:  # loopback only
            return bool(answer.status == 200)
    return False


@pytest.mark.parametrize("where", ["file", "http"])
def test_every_page_loads_its_images_resolves_its_links_and_cuts_nothing_off(published, browser, server, where):
    base = published.as_uri() + "/" if where == "file" else server
    seen_links: dict[str, str] = {}
    for name in pages(published):
        found = browser.open(base + name)
        assert found["title"], name
        assert found["broken"] == [], f"{name}: images that did not load: {found['broken']}"
        assert found["cut"] == [], f"{name}: {found['cut'][:5]}"
        if name.startswith(("host-", "compare-")):
            assert found["images"] >= 1, name
        seen_links.update(found["rels"])
    unresolved = [link for link in sorted(seen_links) if not resolves(link, base, seen_links[link])]
    assert unresolved == []
    assert len(seen_links) > 10
    assert any(link.startswith("https://github.com/") for link in seen_links)  # the known boards' sources


def test_every_comparison_chart_holds_the_hosts_of_its_page(published, browser, server):
    host_colour = [int(site_plots.BAR_COLOR[i:i + 2], 16) for i in (1, 3, 5)]
    charts = 0
    for name in (n for n in pages(published) if n.startswith("compare-")):
        browser.open(server + name)
        hosts = browser.evaluate("new Set([...document.querySelectorAll('td a[href^=\"host-\"]')]"
                                 ".map(a => a.getAttribute('href'))).size")
        src = browser.evaluate("document.querySelector('figure img').getAttribute('src')")
        bars = browser.evaluate(f"{BARS}({json.dumps(src)}, {json.dumps(host_colour)})")
        assert bars == hosts, f"{name}: {bars} bars in colour for {hosts} hosts"
        charts += 1
    assert charts >= 5


@pytest.mark.parametrize("width", [WIDTH, PHONE])
def test_the_index_reads_at_a_desktop_and_a_phone_width(published, browser, width, tmp_path):
    browser.resize(width)
    try:
        found = browser.open(published.as_uri() + "/index.html")
        assert found["cut"] == [], found["cut"][:5]
        assert browser.evaluate("document.documentElement.scrollWidth") <= width
        table = browser.evaluate("(() => { const b = document.querySelector('table.sortable').getBoundingClientRect();"
                                 " return [b.left, b.right]; })()")
        assert 0 <= table[0] and table[1] <= width
        shot = tmp_path / f"index-{width}.png"
        shot.write_bytes(browser.screenshot(found["height"], width))
        print(f"screenshot: {shot}")
        keep(shot)
    finally:
        browser.resize(WIDTH)


def numbers(rows: list[list[str]]) -> list[float]:
    return [float(value) for _, value in rows if value != ""]


@pytest.mark.parametrize("width", [WIDTH, PHONE])
def test_a_click_on_a_column_name_sorts_the_index(published, browser, width):
    browser.resize(width)
    try:
        browser.open(published.as_uri() + "/index.html")
        headers = browser.evaluate("[...document.querySelectorAll('table.sortable th')].map(t => t.textContent)")
        column = headers.index("AES-GCM, 1 core")
        before = browser.evaluate(f"{ROWS}({column})")
        browser.click(f"table.sortable th:nth-child({column + 1}) button")
        ascending = browser.evaluate(f"{ROWS}({column})")
        assert sorted(ascending) == sorted(before) and numbers(ascending) == sorted(numbers(ascending))
        browser.click(f"table.sortable th:nth-child({column + 1}) button")
        descending = browser.evaluate(f"{ROWS}({column})")
        assert numbers(descending) == sorted(numbers(ascending), reverse=True)
        assert numbers(descending) != numbers(before) or numbers(ascending) != numbers(before)
        tunnel = headers.index("VPN tunnel, measured")
        browser.click(f"table.sortable th:nth-child({tunnel + 1}) button")
        rows = browser.evaluate(f"{ROWS}({tunnel})")
        assert rows[0][1] != "" and all(value == "" for _, value in rows[1:])  # the measured one first, dashes last
        browser.click("table.sortable th:nth-child(1) button")
        hosts = [host for host, _ in browser.evaluate(f"{ROWS}(0)")]
        assert hosts == sorted(hosts, key=str.casefold) or hosts == sorted(hosts)
    finally:
        browser.resize(WIDTH)


def keep(shot: Path) -> None:
    if os.environ.get("SSLBENCH_KEEP_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["SSLBENCH_KEEP_SCREENSHOTS"]) / shot.name)


def test_screenshots_show_the_plots_and_sparklines(published, browser, tmp_path):
    import matplotlib.image
    import numpy as np

    for name in ("index.html", next(p for p in pages(published) if p.startswith("host-")), "compare-aes-128-cbc.html"):
        found = browser.open(published.as_uri() + "/" + name)
        png = browser.screenshot(found["height"])
        shot = tmp_path / f"{name}.png"
        shot.write_bytes(png)
        pixels = (matplotlib.image.imread(str(shot))[..., :3] * 255).astype(int)
        assert pixels.shape[1] == WIDTH
        blue = np.all(np.abs(pixels - np.array((31, 119, 180))) < 12, axis=-1)  # the first firmware's colour
        rows = np.where(blue.any(axis=1))[0]
        print(f"screenshot: {shot}")
        keep(shot)
        if name == "index.html":  # a sparkline per host
            assert blue.sum() > 100 and rows[-1] - rows[0] > 100, name
        elif name.startswith("compare-"):  # the hosts' bars
            assert blue.sum() > 2000, name
        else:  # the first firmware's points in every plot, down the page
            assert blue.sum() > 300 and rows[-1] - rows[0] > 1000, name
