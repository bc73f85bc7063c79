"""Issue 17, listings and tables that read at a glance: `history` per firmware, `report` labels and legend, the
latest run said and `--all`, `--view` (the HTML report's sections as terminal tables), tables fitted to the terminal.

Whole outputs of the real CLI over a store of a few months (fleet_store.py) are golden files (tests/golden/).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fleet_store import RUN_JAN, RUN_MAR, RUN_NEW, RUN_PI, fleet_runs, nightly_runs, save
from orchestrator import cli, terminal
from orchestrator.render import report, tables


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    """The fleet's store as results/ in the working directory (outputs name it as the user typed it)."""
    monkeypatch.chdir(tmp_path)
    save(fleet_runs(), Path("results"))
    return Path("results")


@pytest.fixture
def nightly(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save(nightly_runs(), Path("results"))
    return Path("results")


def sslbench(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def widest(text: str) -> int:
    return max(map(len, text.splitlines()))


# ---- history: per firmware, not every run id on one line ----------------------------------------------------

def test_history_of_250_runs_is_a_line_per_firmware(nightly, capsys, golden):
    code, out, err = sslbench(capsys, "history", "router")
    assert (code, err) == (0, "")
    golden("history-router-250-runs.txt", out)
    assert len(out.splitlines()) == 2 + 4 and widest(out) < 170  # was one line of 250 run ids (7,500 characters)


def test_history_fitted_to_80_columns_keeps_the_latest_run(nightly, capsys, golden):
    code, out, _ = sslbench(capsys, "history", "router", "--width", "80")
    assert code == 0 and widest(out) <= 80
    golden("history-router-250-runs-80-columns.txt", out)


def test_history_runs_lists_every_run_with_its_firmware(nightly, capsys, golden):
    code, out, _ = sslbench(capsys, "history", "router", "--runs")
    assert code == 0 and len(out.splitlines()) == 2 + 250
    golden("history-router-runs.txt", out)


def test_history_json_has_the_summary_and_every_run_id(nightly, capsys):
    code, out, _ = sslbench(capsys, "history", "router", "--format", "json")
    history = json.loads(out)
    assert code == 0 and [h["run_count"] for h in history] == [3, 97, 120, 30]
    assert sum(len(h["runs"]) for h in history) == 250
    last = history[-1]
    assert (last["firmware"], last["first_run"], last["last_run"], last["runs"][0], last["runs"][-1]) == (
        "OpenWrt 23.05.3 r23809-234f1a2efa · Linux 5.15.150 · OpenSSL 3.0.13",
        "20251007T023000.000000Z-00dc", "20251105T023000.000000Z-00f9",
        "20251007T023000.000000Z-00dc", "20251105T023000.000000Z-00f9")
    code, out, _ = sslbench(capsys, "history", "router", "--runs", "--format", "json")
    runs = json.loads(out)
    assert len(runs) == 250 and runs[0] == {"run": "20250301T023000.000000Z-0000", "created": "2025-03-01T02:30:00+00:00",
                                            "firmware": "stock 21.02 (imported)"}


def test_history_of_a_host_with_two_firmwares(fleet, capsys, golden):
    code, out, _ = sslbench(capsys, "history", "pi4")
    assert code == 0
    golden("history-pi4.txt", out)


# ---- report RUN_A RUN_B: the run in a label only where a host is in several runs -------------------------------

def test_two_runs_without_a_common_host_label_hosts_by_name(fleet, capsys, golden):
    code, out, err = sslbench(capsys, "report", RUN_JAN, RUN_NEW)
    assert (code, err) == (0, "")
    golden("report-two-runs-hosts-apart.txt", out)
    assert " @ " not in out  # each host is in one run: the legend above says which


def test_a_host_in_both_runs_is_labelled_with_each_run(fleet, capsys, golden):
    code, out, _ = sslbench(capsys, "report", RUN_MAR, RUN_PI)
    assert code == 0
    golden("report-two-runs-pi4-in-both.txt", out)
    assert f"pi4 @ {RUN_MAR}" in out and f"pi4 @ {RUN_PI}" in out and "wrt3200 @" not in out
    assert re.search(rf"r7000 +{RUN_MAR} +unreachable", out)  # a failed host: which run it failed in


def test_labels_are_the_same_in_tables_and_the_html_report():
    runs = fleet_runs()
    picked = [runs[1], runs[3]]
    assert [s.label for s in report.series_of(picked)] == ["wrt3200", f"pi4 @ {RUN_MAR}", f"pi4 @ {RUN_PI}"]
    assert tables.host_labels(picked)[RUN_MAR, "r7000"] == "r7000"  # no figures there: nothing to tell apart


# ---- report: the latest run said in one line; --all and --host: the latest run of every host -----------------

def test_the_default_says_it_shows_the_latest_run(fleet, capsys, golden):
    code, out, err = sslbench(capsys, "report")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (f"the latest of 4 runs in results: {RUN_PI} (2026-03-11 07:00, 1 host); "
                                   "--all: the latest run of every host")
    golden("report-latest.txt", out)


def test_the_latest_line_fits_the_width_too(fleet, capsys):
    code, out, _ = sslbench(capsys, "report", "--width", "100")
    assert code == 0 and widest(out) <= 100 and out.splitlines()[1] == "latest run of every host"


def test_the_latest_line_goes_to_stderr_when_stdout_is_data(fleet, capsys):
    code, out, err = sslbench(capsys, "report", "--format", "csv")
    assert code == 0 and out.startswith("algorithm,api,threads,host,16 B MB/s")
    assert err.startswith(f"the latest of 4 runs in results: {RUN_PI}")


def test_a_store_of_one_run_needs_no_word_on_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    save(fleet_runs()[:1], Path("results"))
    code, out, err = sslbench(capsys, "report")
    assert code == 0 and out.startswith("algorithm ") and err == ""


def test_all_compares_the_latest_run_of_every_host(fleet, capsys, golden):
    code, out, err = sslbench(capsys, "report", "--all")
    assert (code, err) == (0, "")
    golden("report-all.txt", out)
    assert " @ " not in out  # labelled by host
    legend = out.split("\n\n")[0]
    # r7000: its figures from January, its failure since from March; each other host its latest run
    assert re.search(rf"{RUN_JAN} .* r7000\n", legend) and re.search(rf"{RUN_MAR} .* wrt3200, r7000 \(unreachable\)\n", legend)
    assert re.search(rf"{RUN_NEW} .* rock5b, apu2\n", legend) and re.search(rf"{RUN_PI} .* pi4$", legend)


def test_host_patterns_pick_the_latest_run_of_each_matching_host(fleet, capsys, golden):
    code, out, _ = sslbench(capsys, "report", "--host", "r*", "--host", "pi?")
    assert code == 0
    golden("report-host-patterns.txt", out)
    assert {"rock5b", "r7000", "pi4"} <= set(out.split()) and "apu2" not in out and "wrt3200" not in out


def test_host_pattern_within_given_runs(fleet, capsys):
    code, out, _ = sslbench(capsys, "report", RUN_JAN, RUN_MAR, "--host", "pi4", "--format", "json")
    assert code == 0 and {(r["run_id"], r["host"]) for r in json.loads(out)} == {(RUN_JAN, "pi4"), (RUN_MAR, "pi4")}


@pytest.mark.parametrize("argv, message", [
    (["--all", RUN_JAN], "sslbench: --all takes the latest run of each host from the store: give no RUN_DIR\n"),
    (["--host", "ap*x"], "sslbench: no host matches 'ap*x'; the hosts are: apu2, pi4, r7000, rock5b, wrt3200\n"),
    (["--view", "answers", "--format", "csv"],
     "sslbench: --view prints terminal tables: leave out --format and -o (the page with -o has every view)\n"),
])
def test_bad_choices_are_one_line_and_exit_2(fleet, capsys, argv, message):
    assert sslbench(capsys, "report", *argv) == (2, "", message)


def test_all_writes_the_html_page_of_every_host(fleet, capsys, tmp_path):
    code, out, _ = sslbench(capsys, "report", "--all", "--format", "html", "-o", "all.html")
    page = Path("all.html").read_text(encoding="utf-8")
    assert code == 0 and out == "all.html\n"
    assert all(f"<td>{host}</td>" in page for host in ("apu2", "pi4", "r7000", "rock5b", "wrt3200"))
    assert "Diff:" not in page  # two runs of --all share no host: nothing to diff


# ---- --view: the HTML report's sections as terminal tables --------------------------------------------------

VIEW_WIDTHS = {"answers": 100, "hosts": 80, "line-rate": 80, "crypto": 80, "handshakes": 80, "per-core": 120,
               "all-core": 80, "measurements": 120, "all": 0}


@pytest.mark.parametrize("view", list(report.VIEWS))
def test_each_view_of_every_host(fleet, capsys, golden, view):
    width = VIEW_WIDTHS[view]
    code, out, err = sslbench(capsys, "report", "--all", "--view", view, "--width", str(width))
    assert (code, err) == (0, "")
    golden(f"report-view-{view}.txt", out)
    if width:
        assert widest(out) <= width


def test_the_terminal_says_what_the_page_says(tmp_path):
    """Every section of the HTML page but its plots is in the view `all`, with the same figures."""
    runs = fleet_runs()
    page = report.render_html(runs, tmp_path / "r.html").read_text(encoding="utf-8")
    text = report.render_text(runs, "all")
    headings = re.findall(r"<h2>([^<]+)</h2>", page)
    assert "Per core" in headings and "All cores" in headings and "VPN / TLS line rate" in headings
    for heading in headings:
        if heading != "Plots":
            assert f"\n{heading.replace('&gt;', '>')}\n" in f"\n{text}\n"
    for figure in ("1,639 MB/s (13,110 Mbit/s)", "12,193 MB/s (97,540 Mbit/s)", "697 kB/s", "2,352 MHz (measured)"):
        assert figure in page and figure in text
    assert "Plots" not in text


def test_view_per_core_of_one_board_pinned_per_cluster(fleet, capsys):
    code, out, _ = sslbench(capsys, "report", "--host", "rock5b", "--view", "per-core")
    rows = [line.split() for line in out.splitlines() if line.startswith("rock5b ")]
    assert code == 0 and ["rock5b", "aes-256-gcm", "evp", "16384", "1,639", "MB/s", "(13,110", "Mbit/s)", "2,352",
                          "MHz", "(measured)", "697", "kB/s"] in rows  # the A76 cluster, not the A55 (557 MB/s)


# ---- width: never wrap mid-row, say what was dropped --------------------------------------------------------

@pytest.mark.parametrize("width", [80, 120])
def test_all_fitted_to_the_terminal(fleet, capsys, golden, width):
    code, out, _ = sslbench(capsys, "report", "--all", "--width", str(width))
    assert code == 0 and widest(out) <= width
    golden(f"report-all-{width}-columns.txt", out)


def test_every_width_gives_lines_no_longer_than_it():
    runs = fleet_runs()
    for width in (20, 33, 47, 60, 79, 80, 81, 100, 119, 120, 150):
        for text in (tables.render_runs(runs, width=width), report.render_text(runs, "all", width=width)):
            assert widest(text) <= width, width


def test_what_a_narrow_table_lost_is_said_below_it():
    headers = ["algorithm", "api", "threads", "host", "16 B MB/s", "1024 B MB/s", "8192 B MB/s", "16384 B MB/s"]
    rows = [["chacha20-poly1305", "evp", 1, "router-livingroom", "30.8", "93.5", "98.5", "99.5"]]
    drop = tables._throughput_drop(headers)
    assert drop == ["16 B MB/s", "8192 B MB/s", "1024 B MB/s", "api"]  # VPN and TLS sizes last, the largest never
    assert tables.render(headers, rows, "table", 80, drop) == (
        "algorithm          api  threads  host               1024 B  8192 B  16384 B\n"
        "                                                    MB/s    MB/s    MB/s\n"
        "-----------------  ---  -------  -----------------  ------  ------  -------\n"
        "chacha20-poly1305  evp  1        router-livingroom  93.5    98.5    99.5\n"
        "fitted to 80 columns: dropped 16 B MB/s (--width 0 shows all)")
    assert tables.render(headers, rows, "table", 72, drop).splitlines()[-2:] == [
        "chacha20-poly1305  evp  1        router-livingroom  93.5    99.5",
        "fitted to 72 columns: dropped 16 B MB/s, 8192 B MB/s"]  # the way back only where it fits the line
    assert tables.render(headers, rows, "table", 200, drop) == tables.render(headers, rows, "table")  # fits: as is
    for fmt in ("markdown", "csv", "json"):  # data and pages are never cut
        assert tables.render(headers, rows, fmt, 40, drop) == tables.render(headers, rows, fmt)


def test_text_wraps_inside_its_column_and_a_long_name_is_abbreviated():
    rows = [["router-in-the-living-room-upstairs", "carries 100 Mbit/s on 2 cores, not on 1 core (chacha20-poly1305: "
             "150 Mbit/s on 2 cores, 80 on 1 core)"], ["pi4", "carries 100 Mbit/s on 1 core"]]
    assert tables.render(["host", "100 Mbit/s"], rows, "table", 50) == (
        "host                          100 Mbit/s\n"
        "----------------------------  -------------------\n"
        "router-in-the-living-room-u…  carries 100 Mbit/s\n"
        "                              on 2 cores, not on\n"
        "                              1 core\n"
        "                              (chacha20-poly1305:\n"
        "                              150 Mbit/s on\n"
        "                              2 cores, 80 on\n"
        "                              1 core)\n"
        "\n"  # a row of several lines stands apart
        "pi4                           carries 100 Mbit/s\n"
        "                              on 1 core\n"
        "fitted to 50 columns: abbreviated host")


def test_output_width_from_option_terminal_or_none(monkeypatch):
    class Tty:
        def isatty(self) -> bool:
            return True

    class Pipe:
        def isatty(self) -> bool:
            return False

    monkeypatch.setenv("COLUMNS", "97")
    assert terminal.output_width(None, Tty()) == 97
    assert terminal.output_width(None, Pipe()) is None  # a pipe or a file: never cut
    assert terminal.output_width(80, Pipe()) == 80
    assert terminal.output_width(0, Tty()) is None  # --width 0: never cut


@pytest.mark.parametrize("command", ["run", "report", "history"])
def test_width_option_everywhere_tables_are_printed(command, capsys):
    args = cli.build_parser(command).parse_args([command, *(["router"] if command == "history" else []),
                                                 "--width", "80"])
    assert args.width == 80
    with pytest.raises(SystemExit):
        cli.build_parser(command).parse_args([command, "--width", "wide"])
    assert "argument --width: a number of columns, like 80 (got 'wide')" in capsys.readouterr().err
