"""Host text reaches a reader through one rule (orchestrator/textsafe.py, docs/trust.md "Text from hosts").

One hostile host (tests/data/hostile/hostile1.detect.txt: detect.sh's output of a Debian box whose os-release
NAME/PRETTY_NAME, /proc/cpuinfo model and uname nodename carry `<script>`, `onerror=`, `=HYPERLINK(…)`, `@SUM(…)`,
`ESC ]0;title BEL` and `ESC [2J`) goes through every format of `hosts`, and, stored beside boards with CJK and
case-only-different aliases, through every view and format of `report`, `diff`, `trend`, `history` and `publish`.
"""
from __future__ import annotations

import dataclasses
import io
import os
import re
import tempfile
import warnings
from pathlib import Path

import pytest

from orchestrator import textsafe
from orchestrator.cli import build_parser, main
from orchestrator.commands.options import plan_options_from_args
from orchestrator.model import Run
from orchestrator.parse import parse_cpuinfo, protocol
from orchestrator.parse.osinfo import detect_os
from orchestrator.render.report import VIEWS
from orchestrator.run import fleet
from orchestrator.run.progress import ProgressView

from fleet_store import PI4, Board, cpu, measure, save

HOSTILE = Path(__file__).resolve().parents[1] / "data" / "hostile" / "hostile1.detect.txt"
ESC, BEL = "\x1b", "\x07"
# anything a terminal acts on: C0 but newline, DEL, C1 (ESC among them), bidi overrides

# ---- the rule ------------------------------------------------------------------------------------------------

def test_terminal_shows_escapes_and_keeps_printable_unicode(check_inert):
    text = f"a{ESC}]0;title{BEL}b{ESC}[2Jc\x9b31m\u202eevil\tok\n路由器 café 🙂"
    safe = textsafe.terminal(text)
    check_inert(safe.replace("\t", ""), "table")
    assert safe == "a\\x1b]0;title\\x07b\\x1b[2Jc\\x9b31m\\u202eevil\tok\n路由器 café 🙂"
    assert textsafe.terminal(safe) == safe  # applied twice (a table's cell, then the CLI's stream): the same
    assert textsafe.cell("a\tb\r\nc") == "a\\x09b\r\nc"  # a table keeps its lines, never a tab


@pytest.mark.parametrize("value, cell", [
    ("=HYPERLINK(A1)", "'=HYPERLINK(A1)"), ("@SUM(1+1)", "'@SUM(1+1)"), ("+cmd", "'+cmd"), ("-2+3", "'-2+3"),
    ("\tx", "'\\x09x"), ("\r=1", "'\r=1"), ("-12.5", "-12.5"), ("+3.1%", "+3.1%"), ("-1,639.5", "-1,639.5"),
    ("-", "-"), ("pi4", "pi4"), (-12.5, -12.5), (3, 3), (None, None), ("a=b", "a=b"),
])
def test_csv_cells_as_owasp_says_numbers_stay_numbers(value, cell):
    assert textsafe.csv_cell(value) == cell


def test_markdown_renders_nothing_of_the_text():
    text = "<script>x</script> **b** _i_ `c` [l](u) ![i](u) a|b &lt; ~~s~~ \\"
    assert textsafe.markdown(text) == ("\\<script>x\\</script> \\*\\*b\\*\\* \\_i\\_ \\`c\\` \\[l\\](u) "
                                       "!\\[i\\](u) a\\|b &amp;lt; \\~\\~s\\~\\~ \\\\")
    assert textsafe.markdown("aes-128-cbc 1,639.5 MB/s ~ p<0.001") == "aes-128-cbc 1,639.5 MB/s ~ p<0.001"


@pytest.mark.parametrize("text, width", [("abc", 3), ("路由器-1", 8), ("ｆｕｌｌ", 8), ("cafe\u0301", 4),
                                          ("a\u200bb", 2), ("", 0)])
def test_display_width(text, width):
    assert textsafe.width(text) == width
    assert textsafe.width(textsafe.ljust(text, 10)) == 10


def test_file_names_unique_for_non_ascii_and_case():
    names = ["路由器-1", "交换机-1", "Pi4", "pi4", "apu2", "my host"]
    files = textsafe.file_names(names)
    assert len({f.casefold() for f in files.values()}) == len(names)
    assert files["apu2"] == "apu2"  # a name that is a harmless file name stays as it is
    assert files["路由器-1"].startswith("-1-") and files["Pi4"].startswith("Pi4-") and files["my host"].startswith("my_host-")
    assert textsafe.file_names(["路由器-1"]) == {"路由器-1": files["路由器-1"]}  # from the name, not its neighbours
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", f) and not f.startswith(".") for f in files.values())


def test_plot_labels_draw_with_the_default_font_and_stay_apart():
    assert textsafe.plot_label("router-1 café") == "router-1 café"
    one, two = textsafe.plot_label("路由器-1"), textsafe.plot_label("交换机-1")
    assert one != two and one.isascii() and one.startswith("~-1 #")
    assert textsafe.plot_label("a$x$") == r"a\$x\$"  # no mathtext from a host's name
    assert textsafe.plot_legend(["pi4", "路由器-1"]) == [f"{one} = 路由器-1"]


# ---- `sslbench hosts`: the hostile host as detect.sh describes it ----------------------------------------------

def hostile_hosts(fmt: str) -> tuple[str, list[str]]:
    from fake_fleet import FakeDriver, config_for
    from orchestrator.run import engine
    from orchestrator.commands.hosts import render_hosts
    from orchestrator.run.hostlink import Outcome
    from orchestrator.run.runner import Interrupt

    args = build_parser("hosts").parse_args(["hosts"])
    text = HOSTILE.read_text()
    hosts = {"=cmd|' /C calc'!A0": lambda kind, script: Outcome("ok", stdout=text),
             "路由器-1": lambda kind, script: Outcome("ok", stdout=text)}
    with tempfile.TemporaryDirectory() as scratch:
        os.makedirs(f"{scratch}/run")
        collector = fleet.Collector(Run(run_id="hosts", created=""), Path(scratch) / "run",
                                    ProgressView(live=False, stream=io.StringIO()), store_results=False)
        plans = engine.Engine(FakeDriver(Path(scratch), hosts), collector, config_for(plan_options_from_args(args)),
                             Interrupt(), bench=False).run()
    return render_hosts(collector.hosts, plans, fmt, width=None)


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_hosts_every_format(fmt, check_inert):
    text, notes = hostile_hosts(fmt)
    assert "HYPERLINK" in text and "SUM" in text  # the host's text is shown ...
    check_inert(text, fmt)  # ... as data
    for note in notes:
        check_inert(note, "table")


# ---- a planted store through every command ---------------------------------------------------------------------

def hostile_board(name: str) -> Board:
    sections = protocol.split_sections(HOSTILE.read_text())
    return Board(name, cpu(parse_cpuinfo(sections["/proc/cpuinfo"]).model or "", "x86", 2, ["aes"]),
                 detect_os(sections), "3.0.15", dict(PI4.mbytes), dict(PI4.pk))


ALIASES = ["=cmd|' /C calc'!A0", "路由器-1", "交换机-1", "Pi4", "pi4"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from orchestrator.model import Run as RunModel
    results = tmp_path_factory.mktemp("results")
    runs = []
    for index, (stamp, scale) in enumerate([("20260105T090000.000000Z-a1f3", 1.0), ("20260302T101500.000000Z-b7e2", 0.8),
                                            ("20260310T184200.000000Z-c4d9", 0.79)]):
        boards = [hostile_board(alias) for alias in ALIASES]
        if index == 2:  # a firmware step: `diff --by firmware` and trend's segments name the hostile OS twice
            boards = [dataclasses.replace(board, openssl="3.0.16") for board in boards]
        hosts = [measure(board, scale=scale * (1 + i / 10), repeats=4) for i, board in enumerate(boards)]
        runs.append(RunModel(run_id=stamp, created=f"2026-0{index + 1}-05T09:00:00+00:00", hosts=hosts))
    save(runs, results)
    return results


def cli(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no library warning reaches the user
        code = main(list(words))
    out, err = capsys.readouterr()
    return code, out, err




@pytest.mark.parametrize("view", list(VIEWS))
def test_report_every_view(capsys, store, view, check_inert):
    code, out, err = cli(capsys, "report", "--results", str(store), "--all", "--view", view, "--width", "100")
    assert code == 0, err
    if view in ("hosts", "all"):
        assert "\\x1b]0;cpu\\x07" in out  # the model as the host printed it, its escape shown
    check_inert(out + err, "table")


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_report_every_format(capsys, store, fmt, check_inert):
    code, out, err = cli(capsys, "report", "--results", str(store), "--all", "--format", fmt)
    assert code == 0, err
    assert "路由器-1" in out or "\\u8def\\u7531\\u5668-1" in out  # JSON: as \\u escapes
    check_inert(out, fmt)
    check_inert(err, "table")


@pytest.mark.parametrize("fmt, suffix", [("html", "html"), ("markdown", "md")])
def test_report_pages_and_their_plots(capsys, store, tmp_path, fmt, suffix, check_inert):
    page = tmp_path / f"report.{suffix}"
    code, out, err = cli(capsys, "report", "--results", str(store), "--all", "--format", fmt, "-o", str(page))
    assert code == 0, err
    text = page.read_text()
    check_inert(text, fmt)
    if fmt == "markdown":  # a real renderer (markdown-it-py, rich's own dependency) shows the text, runs no HTML
        from markdown_it import MarkdownIt

        rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
        assert "<script" not in rendered and "<img src=x" not in rendered
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered and "=cmd|' /C calc'!A0" in rendered
    if fmt == "markdown":  # one plot per board, the CJK boards and the case-twins too
        plots = sorted(p.name for p in tmp_path.glob("report-blocks-*.png"))
        assert len({p.casefold() for p in plots}) == len(ALIASES), plots
        for alias in ALIASES:
            assert textsafe.markdown(alias) in text
    assert "路由器-1" in text and "labelled" in text  # the plots' legend names the CJK boards


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json", "junit"])
def test_diff_every_format(capsys, store, tmp_path, fmt, check_inert):
    words = ["diff", "--results", str(store), "20260105T090000.000000Z-a1f3", "20260310T184200.000000Z-c4d9",
             "--format", fmt]
    if fmt == "junit":
        words += ["-o", str(tmp_path / "junit.xml")]
    code, out, err = cli(capsys, *words)
    assert code == 0, err
    check_inert(out + err, fmt)
    if fmt == "junit":
        check_inert((tmp_path / "junit.xml").read_text(), "html")


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_diff_by_firmware_every_format(capsys, store, fmt, check_inert):
    code, out, err = cli(capsys, "diff", "--results", str(store), "--host", "=cmd|' /C calc'!A0", "--by", "firmware",
                         "--format", fmt)
    assert code == 0, err
    check_inert(out + err, fmt)
    if fmt == "markdown":
        assert "\\<script>alert(1)\\</script>" in out  # the firmware's OS name, shown as text


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json", "junit"])
@pytest.mark.parametrize("host", ["=cmd|' /C calc'!A0", "路由器-1"])
def test_trend_every_format(capsys, store, fmt, host, check_inert):
    code, out, err = cli(capsys, "trend", "--results", str(store), host, "--format", fmt)
    assert code == 0, err
    check_inert(out + err, fmt)


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
@pytest.mark.parametrize("runs", [[], ["--runs"]])
def test_history_every_format(capsys, store, fmt, runs, check_inert):
    code, out, err = cli(capsys, "history", "--results", str(store), "=cmd|' /C calc'!A0", "--format", fmt, *runs)
    assert code == 0, err
    assert "HYPERLINK" in out or fmt != "json" or "SUM" in out
    check_inert(out + err, fmt)


def test_publish_one_page_per_board(capsys, store, tmp_path, check_inert):
    site = tmp_path / "site"
    code, out, err = cli(capsys, "publish", str(store), "-o", str(site), "--no-known")
    assert code == 0, err
    pages = sorted(site.glob("host-*.html"))
    assert len({p.name.casefold() for p in pages}) == len(ALIASES)  # 路由器-1 / 交换机-1, Pi4 / pi4: apart
    for page in site.glob("*.html"):
        check_inert(page.read_text(), "html")
    index = (site / "index.html").read_text()
    for alias in ALIASES:  # each link leads to the page of the board it names
        file = f"host-{textsafe.file_names(ALIASES)[alias]}.html"
        assert f'href="{file}">{alias.replace(chr(39), "&#x27;")}<' in index
        assert f"<title>{alias.replace(chr(39), '&#x27;')}: trend</title>" in (site / file).read_text()
    assert len({d.name.casefold() for d in (site / "img").iterdir() if d.is_dir()}) == len(ALIASES)


def test_site_plots_of_cjk_hosts_warn_nothing(tmp_path):
    from orchestrator.render import site_plots

    made = site_plots.bars_figure([site_plots.Bar("路由器-1", 1e8, False), site_plots.Bar("交换机-1", 2e8, False),
                                   site_plots.Bar("Pi4", 3e8, True)], "aes-256-gcm", "B/s")
    # drawn again without site_plots' own filter: the labels themselves must be drawable by the default font
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "Glyph … missing from font" would raise here
        made.savefig(tmp_path / "bars.png", format="png")
    assert (tmp_path / "bars.png").stat().st_size > 1000


def test_store_keeps_cjk_and_case_twins_apart(tmp_path):
    collector = fleet.Collector(Run(run_id="r", created=""), tmp_path, ProgressView(live=False, stream=io.StringIO()))
    dirs = [collector.host_path(collector.host(alias)).name for alias in ALIASES]
    assert len({d.casefold() for d in dirs}) == len(ALIASES), dirs


def test_terminal_tables_align_wide_characters():
    from orchestrator.render import tables

    rows = [["路由器-1", "ok", "1,639 MB/s"], ["pi4", "failed", "12 MB/s"], ["ｆｕｌｌ", "ok", "3 MB/s"]]
    for width in (None, 30, 18):
        text = tables.render(["host", "status", "aes-256-gcm 16384 B"], rows, "table", width)
        lines = text.splitlines()[:5]  # the table (the note below wraps at 20 at least)
        assert all(textsafe.width(line) <= (width or 99) for line in lines), text
        starts = {textsafe.width(line[:line.index(word)]) for line in lines for word in ("ok", "failed") if word in line}
        assert len(starts) == 1, text  # the second column starts at one display column in every row
    md = tables.render(["host", "status"], rows, "markdown")
    assert len({textsafe.width(line) for line in md.splitlines()}) == 1  # every Markdown line as wide
