"""publish: the pages, what they say, and that every link and image of the site is a file of the site."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from orchestrator import cli, reference, store
from orchestrator.errors import UserError
from orchestrator.model import HostResult, Run
from orchestrator.render import site



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
