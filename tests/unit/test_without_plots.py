"""Without the `plots` extra (no matplotlib): HTML/Markdown reports and the site are complete but for their plots,
and say in one line how to get them. matplotlib is made unimportable here as on a lean install (sys.modules entry
None: `import matplotlib` raises ImportError, find_spec answers None); the real lean install is
tests/integration/test_lean_install.py."""
from __future__ import annotations

import sys

import fleet_store
from orchestrator import extras
from orchestrator.render import report, site


def no_matplotlib(monkeypatch) -> None:
    for name in [n for n in sys.modules if n == "matplotlib" or n.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert not extras.have_plots()


def test_html_report_is_complete_but_for_its_plots(tmp_path, monkeypatch):
    runs = fleet_store.fleet_runs()
    with_plots = (report.render_html(runs, tmp_path / "full.html")).read_text()
    no_matplotlib(monkeypatch)
    page = report.render_html(runs, tmp_path / "lean.html").read_text()
    assert "<img" not in page and page.count(extras.PLOTS_HINT.replace("'", "&#x27;")) == 1
    assert "<img" in with_plots
    # every table of the full report is there
    assert page.count("<table") == with_plots.count("<table") > 3


def test_markdown_report_and_a_diff_without_plots(tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    runs = fleet_store.fleet_runs()
    out = report.render_markdown(runs[:2], tmp_path / "r.md")
    text = out.read_text()
    assert "Plots need matplotlib: pip install 'sslbench\\[plots\\]'" in text and "![" not in text  # (md escapes [])
    assert not list(tmp_path.glob("*.png"))


def test_site_is_complete_but_for_its_plots(tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    pages = site.publish(fleet_store.fleet_runs(), tmp_path / "site", jobs=1)
    assert pages and not list((tmp_path / "site").rglob("*.png"))
    hint = extras.PLOTS_HINT.replace("'", "&#x27;")
    host_pages = [p for p in pages if p.name.startswith("host-")] or [p for p in pages if "pi4" in p.name]
    assert host_pages and all(hint in p.read_text() for p in host_pages)
    index = (tmp_path / "site" / "index.html").read_text()
    assert "pi4" in index
