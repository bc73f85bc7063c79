"""publish: the pages, what they say, and that every link and image of the site is a file of the site."""
from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from orchestrator import cli, reference, stats, store, textsafe
from orchestrator.analysis import trend
from orchestrator.errors import UserError
from orchestrator.model import FORWARD, TUNNEL, HostResult, Measurement, Run
from orchestrator.render import site, site_plots
from orchestrator.units import fmt_rate



class Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if (tag, name) in (("a", "href"), ("img", "src")) and value:
                self.refs.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def read(path: Path) -> Refs:
    refs = Refs()
    refs.feed(path.read_text())
    return refs


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory, fleet_history) -> Path:
    """A store of 12 nights of 3 hosts over several firmware versions."""
    root = tmp_path_factory.mktemp("small")
    fleet_history.generate(root, runs=12, hosts=3)
    return root


@dataclass
class Planted:
    """A site published from `small` with what the index and the comparisons must show planted in its runs."""

    out: Path
    runs: list[Run]
    busy: str  # the host whose latest one-core AES-GCM figures are flagged busy
    tunnel: str  # the host with measured tunnels


@pytest.fixture(scope="module")
def planted(small: Path, tmp_path_factory: pytest.TempPathFactory) -> Planted:
    runs = store.load_all(small)
    for run in runs:  # aes-256-cbc measured by the hosts only at 1024 B, by the known boards at 16384 B too
        for host in run.hosts:
            host.measurements.append(Measurement("aes-256-cbc", 1024, 5e7, api="evp", threads=1))
    busy, tunnel = runs[-1].hosts[-1], runs[-1].hosts[0]
    for m in busy.measurements:
        if m.algorithm == "aes-256-gcm" and m.threads == 1:
            m.flags = ["busy"]
    for repeat, rate in enumerate((110e6, 117e6, 118e6)):  # bytes/s the receiver counted
        tunnel.measurements.append(Measurement("wireguard", None, rate, FORWARD, None, 1, kind=TUNNEL,
                                               implementation="kernel", repeat=repeat,
                                               flags=["busy"] * (repeat == 2)))
    tunnel.measurements.append(Measurement("openvpn-aes-256-gcm", None, None, FORWARD, None, 1, kind=TUNNEL,
                                           implementation="openvpn-dco", status="unsupported",
                                           reason="not measurable: no ovpn-dco module"))
    out = tmp_path_factory.mktemp("planted") / "site"
    known, _ = reference.known_run()
    site.publish(runs, out, known)
    return Planted(out, runs, busy.host, tunnel.host)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, fleet_history) -> Path:
    root = tmp_path_factory.mktemp("results")
    fleet_history.generate(root, runs=150, hosts=5)
    return root


def test_pages_links_and_images(results, tmp_path, capsys):
    out = tmp_path / "site"
    assert cli.main(["publish", str(results), "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    pages = sorted(p.name for p in out.glob("*.html"))
    hosts = [p for p in pages if p.startswith("host-")]
    assert "index.html" in pages and len(hosts) == 5
    assert "compare-aes-256-gcm.html" in pages
    for name in pages:
        for ref in read(out / name).refs:
            if ref.startswith(("http://", "https://")):
                continue
            target = out / ref
            assert target.is_file(), f"{name}: {ref}"
            if ref.endswith(".png"):
                assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    index = " ".join(read(out / "index.html").text)
    assert "5 hosts, 150 runs" in index
    host = out / "host-mt7621-00.html"  # 4 cores: every cell of benchmarks/fleet_history.py
    images = [r for r in read(host).refs if r.endswith(".png")]
    assert len(images) == 16  # a plot per cell
    text = " ".join(read(host).text)
    assert "Firmware versions" in text and "OpenWrt 23.05.0" in text


def test_comparison_pages_mark_the_known_boards(results, tmp_path):
    out = tmp_path / "site"
    known, _ = reference.known_run()
    site.publish(store.load_all(results), out, known)
    page = (out / "compare-aes-128-cbc.html").read_text()
    assert '<tr class="reference"><td>rpi4b-arm64-sbcbench (reference)</td>' in page
    assert 'href="host-rk3328-02.html"' in page
    no_known = tmp_path / "plain"
    site.publish(store.load_all(results), no_known, None)
    assert "(reference)" not in (no_known / "compare-aes-128-cbc.html").read_text()


def test_nothing_to_publish(tmp_path):
    empty = Run("20260101T000000Z-0001", "2026-01-01T00:00:00+00:00", hosts=[HostResult("r", status="unreachable")])
    with pytest.raises(UserError, match="nothing to publish"):
        site.publish([empty], tmp_path / "site")
    assert cli.main(["publish", str(tmp_path / "none"), "-o", str(tmp_path / "site")]) == 2


# ---- charts that fit their text (site_plots) ------------------------------------------------------------------

HOSTILE = "gw\u202e1 $x$ \x01 \u65e5\u672c \\$"
NAMES = {
    "short": lambda i: f"h{i}",
    "unbroken": lambda i: "x" * 70 + str(i),  # one word: wraps inside it
    "long": lambda i: f"router {i} in the basement rack " * 5,
    "hostile": lambda i: f"{HOSTILE} {i}",
}


@pytest.mark.parametrize("bars", [1, 2, 6, 10, 30])
@pytest.mark.parametrize("names", sorted(NAMES))
def test_bar_charts_fit_their_text_at_any_name_length_and_bar_count(bars, names, tmp_path):
    chart = [site_plots.Bar(NAMES[names](i) + (" (reference)" if i % 3 == 0 else ""), 10.0 ** (i % 6) * 1e5,
                            i % 3 == 0) for i in range(bars)]
    made = site_plots.bars_figure(chart, "aes-256-cbc 16384 B evp t1 " + "long title " * (bars % 7), "B/s")
    assert site_plots.text_outside(made) == []
    shown = [t.get_text().replace("\n", "").replace(" ", "") for t in made.axes[0].get_yticklabels()]
    assert shown == [textsafe.plot_label(b.name).replace(" ", "") for b in chart]  # every name whole, in order
    labels = {t.get_text() for t in site_plots.texts(made)}
    assert {"MB/s (log scale)", made.axes[0].get_title()} <= labels  # the axis label and title are drawn
    width, height = site_plots.save(made, tmp_path / "chart.png")
    assert (width, height) == tuple(int(v) for v in made.get_size_inches() * made.dpi)


def test_wrapped_labels_never_split_an_escaped_dollar():
    for offset in range(45):
        text = "a" * offset + r"\$" + "b" * 60
        for line in site_plots.wrap_label(text).split("\n"):
            assert not line.endswith("\\") and not line.startswith("$"), (offset, line)
        assert site_plots.wrap_label(text).replace("\n", "") == text


def png_pixels(path: Path):
    import matplotlib.image

    return (matplotlib.image.imread(str(path))[..., :3] * 255).astype(int)


def test_published_plots_have_no_text_at_their_edges(planted):
    out = planted.out
    images = sorted((out / "img").rglob("*.png"))
    assert len(images) > 20
    for image in images:
        pixels = png_pixels(image)
        edge = np.concatenate([pixels[:3].reshape(-1, 3), pixels[-3:].reshape(-1, 3),
                               pixels[:, :3].reshape(-1, 3), pixels[:, -3:].reshape(-1, 3)])
        assert (edge > 250).all(), f"{image.relative_to(out)}: ink within 3 px of its edge (text cut off)"
    sizes = {}
    for page in out.glob("*.html"):  # every <img> says the PNG's own size: no page stretches a chart
        for src, width, height in re.findall(r'<img src="([^"]+)" width="(\d+)" height="(\d+)"', page.read_text()):
            shape = png_pixels(out / src).shape
            sizes[src] = (int(width), int(height)) == (shape[1], shape[0])
    assert sizes and all(sizes.values()), [s for s, ok in sizes.items() if not ok]


def bar_rows(pixels, color: tuple[int, int, int]) -> int:
    """How many bars of `color` the chart has: runs of image rows holding that colour (bars are separated by white)."""
    match = (np.abs(pixels - np.array(color)) < 8).all(axis=-1)
    run = np.ones(match.shape[0], dtype=bool)[:, None] & match[:, :-5]
    for shift in range(1, 6):  # 6 pixels side by side: a bar, not the antialiased edge of a letter
        run &= match[:, shift:match.shape[1] - 5 + shift]
    rows = run.any(axis=1)
    return int(np.count_nonzero(rows[1:] & ~rows[:-1]) + rows[0])


def rgb(color: str) -> tuple[int, int, int]:
    import matplotlib.colors

    red, green, blue = matplotlib.colors.to_rgb(color)
    return round(red * 255), round(green * 255), round(blue * 255)


def test_comparison_charts_hold_every_host_their_caption_promises(planted):
    """The hosts measured aes-256-cbc only at 1024 B, the known boards at 16384 B too: the chart is of the cell the
    hosts have. In every chart, a bar in colour per host of the page, and grey bars only where the caption says."""
    out = planted.out
    for page in sorted(out.glob("compare-*.html")):
        text = page.read_text()
        hosts = set(re.findall(r'<a href="(host-[^"]+)"', text))
        image = re.search(r'<img src="(img/[^"]+)".*?<figcaption>([^<]*)', text)
        assert image, page.name
        pixels = png_pixels(out / image.group(1))
        assert bar_rows(pixels, rgb(site_plots.BAR_COLOR)) == len(hosts), page.name
        grey = bar_rows(pixels, rgb(site_plots.REFERENCE_COLOR))
        assert ("hosts in colour, known boards in grey" in image.group(2)) == (grey > 0), (page.name, grey)
    assert "aes-256-cbc 1024 B evp t1: hosts in colour" in (out / "compare-aes-256-cbc.html").read_text()


def test_host_plot_ticks_sit_in_the_middle_of_their_runs(small):
    runs = store.load_all(small)
    host = runs[-1].hosts[0].host
    result = trend.trend(runs, host)
    assert len(result.segments) > 1
    cell = result.cells[0]
    points = site._series(result, cell.key)
    made = site_plots.cell_figure(result.segments, cell, points, {s.letter: "#000" for s in result.segments})
    ticks = list(made.axes[0].get_xticks())
    start = 0
    middles = []
    for segment in result.segments:
        middles.append((start + start + len(segment.runs) - 1) / 2)  # first and last run's index
        start += len(segment.runs)
    assert ticks == pytest.approx(middles)
    assert site_plots.text_outside(made) == []


# ---- the index at a glance ----------------------------------------------------------------------------------

class Rows(HTMLParser):
    """The index's table: per row, each cell's text, data-sort and HTML-less text by its data-label."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, tuple[str, str | None]]] = []
        self.headers: list[str] = []
        self._cell: tuple[str, str | None] | None = None
        self._text: list[str] = []
        self._th = False
        self.circles = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and self.headers:
            self.rows.append({})
        if tag == "th":
            self._th, self._text = True, []
        if tag == "td" and "data-label" in found:
            self._cell, self._text = (found["data-label"] or "", found.get("data-sort")), []
        if tag == "circle" and self._cell is not None:
            self.circles += 1
        if tag == "br":
            self._text.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "th" and self._th:
            self.headers.append("".join(self._text).strip())
            self._th = False
        if tag == "td" and self._cell is not None:
            label, sort = self._cell
            self.rows[-1][label] = (" ".join("".join(self._text).split()), sort)
            self._cell = None

    def handle_data(self, data: str) -> None:
        self._text.append(data)


def index_rows(out: Path) -> Rows:
    rows = Rows()
    rows.feed((out / "index.html").read_text())
    return rows


def test_index_reads_at_a_glance_with_flags_beside_the_figures(planted):
    runs, out = planted.runs, planted.out
    table = index_rows(out)
    assert table.headers[:7] == ["host", "board / CPU", "CPUs", "AES / SHA instructions", "AES-GCM, 1 core",
                                 "AES-GCM, all cores", "VPN tunnel, measured"]
    rows = {row["host"][0]: row for row in table.rows}
    assert set(rows) == {h.host for h in runs[-1].hosts}
    for run in runs[-1:]:
        for host in run.hosts:
            row = rows[host.host]
            assert host.cpu.model in row["board / CPU"][0]
            assert row["CPUs"] == (str(host.cpu.logical_cpus), str(host.cpu.logical_cpus))
            samples: dict[tuple[str, int | None], list[float]] = {}
            for m in host.measurements:
                if m.algorithm.endswith("-gcm") and m.threads == 1 and m.status == "ok" and m.bytes_per_second:
                    samples.setdefault((m.algorithm, m.block_size), []).append(m.bytes_per_second)
            best = max(stats.median(values) for values in samples.values())
            assert row["AES-GCM, 1 core"][0].startswith(fmt_rate(best))
            assert float(row["AES-GCM, 1 core"][1]) == pytest.approx(best, rel=1e-5)
            if host.host != planted.tunnel:
                assert row["VPN tunnel, measured"] == ("–", "")  # nothing measured: a dash, sorted last
            assert row["AES / SHA instructions"][0].startswith("AES: ")
    assert "busy" in rows[planted.busy]["AES-GCM, 1 core"][0]
    assert '<span class="flag">busy</span>' in (out / "index.html").read_text()
    assert all("busy" not in row["AES-GCM, 1 core"][0] for name, row in rows.items() if name != planted.busy)


def test_index_shows_measured_tunnels(planted):
    rows = {row["host"][0]: row for row in index_rows(planted.out).rows}
    text, sort = rows[planted.tunnel]["VPN tunnel, measured"]
    assert text.startswith("936 Mbit/s busy wireguard (kernel, forward, 1 stream)")  # median 117e6 B/s in Mbit/s
    assert "openvpn-aes-256-gcm (openvpn-dco, forward, 1 stream): not measurable: no ovpn-dco module" in text
    assert sort is not None and float(sort) == pytest.approx(117e6)
    assert all(row["VPN tunnel, measured"] == ("–", "") for name, row in rows.items() if name != planted.tunnel)


def test_a_cell_measured_in_one_run_has_a_mark(tmp_path, fleet_history):
    results = tmp_path / "results"
    fleet_history.generate(results, runs=1, hosts=2)
    out = tmp_path / "site"
    site.publish(store.load_all(results), out)
    table = index_rows(out)
    sparks = [row[h] for row in table.rows for h in table.headers[len(site.INDEX_COLUMNS):]]
    assert len(sparks) == 2 * len(site._HEADLINE) and table.circles == len(sparks)


def test_the_sorting_script_is_the_one_the_page_policy_allows(planted):
    page = (planted.out / "index.html").read_text()
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert len(scripts) == 1 and policy
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert policy.group(1).startswith(f"script-src 'sha256-{digest}';")
    assert "<script src" not in page and "<link" not in page  # nothing from outside the page


def test_known_board_sources_are_safe_links(planted):
    page = (planted.out / "compare-aes-128-cbc.html").read_text()
    links = re.findall(r'<a href="(https://github\.com/ThomasKaiser/[^"]+)" rel="noopener noreferrer">', page)
    assert len(links) >= 5
    assert site.source_link("javascript:alert(1)") == "javascript:alert(1)"
    assert "<a" not in site.source_link("data:text/html,<script>alert(1)</script>")
    hostile = site.source_link('https://example.org/"><script>alert(1)</script>')
    assert hostile.startswith('<a href="https://example.org/&quot;&gt;&lt;script&gt;') and "<script>" not in hostile
    assert "<a" not in site.source_link("https://example.org/a\nb") and "<a" not in site.source_link("//host/x")
