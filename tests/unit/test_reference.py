"""Known boards: every shipped entry read by sslbench's parser, the API and cluster corrections, import --reference,
and report --against known."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from orchestrator import cli, reference, store
from orchestrator.analysis.cells import Key, key_of
from orchestrator.errors import UserError
from orchestrator.model import HostResult, Measurement, Run
from orchestrator.render import report

KNOWN = reference.KNOWN_DIR


def boards() -> dict[str, reference.Board]:
    return {board.entry.id: board for board in reference.shipped()}


def test_every_entry_has_its_log_source_and_figures():
    entries = tomllib.loads((KNOWN / "boards.toml").read_text())["board"]
    logs = {p.stem for p in KNOWN.glob("*.txt")}
    assert {e["id"] for e in entries if e.get("kind", "log") == "log"} == logs and len(logs) >= 18
    read = boards()
    for entry in entries:
        assert entry["source"].startswith(("https://", "http://")), entry["id"]
        board = read[entry["id"]]
        if entry.get("kind") == "figures":  # a table row or single figures: at least one figure kept as published
            assert board.entry.figures or board.entry.table and board.result.measurements, entry["id"]
        else:
            assert any(m.status == "ok" for m in board.result.measurements), entry["id"]
        assert board.notes == []


def test_api_comes_from_the_published_options():
    read = boards()
    # sbc-bench lower-cased OpenSSL 3.0.7's -evp output: the parser alone reads legacy names
    rpi3 = read["rpi3b-sbcbench"].result
    assert {m.api for m in rpi3.measurements} == {"evp"}
    assert {m.api for m in read["rpi1b-finnie-2015"].result.measurements if m.algorithm.startswith("aes")} == {"legacy"}
    assert reference.api_of("openssl speed -elapsed -evp aes-128-cbc") == "evp"
    assert reference.api_of("openssl speed aes-128-cbc") == "legacy"
    assert reference.api_of("unknown") is None


def test_repeated_rows_are_samples_and_unlabelled_cluster_rows_get_their_cluster():
    read = boards()
    rpi3 = read["rpi3b-sbcbench"].result
    samples = [m.bytes_per_second for m in rpi3.measurements if key_of(m) == Key("aes-128-cbc", "evp", None, 1, 16)]
    assert samples == [29835390.0, 29860930.0]  # the two published rows, repeats 0 and 1
    m4 = {(m.cpu, m.block_size): m.bytes_per_second for m in read["nanopi-m4v2-rk3399-sbcbench"].result.measurements
          if m.algorithm == "aes-128-cbc"}
    assert m4["Cortex-A53", 16] == 98891710.0 and m4["Cortex-A72", 16] == 361931430.0
    assert len(m4) == 12


def test_per_cluster_rows_without_clusters_are_left_out_with_a_note():
    entry = reference.Entry("m4", "NanoPi M4V2", "https://example.org/log",
                            options="taskset -c <cluster> openssl speed -elapsed -evp aes-128-cbc (once per cluster)")
    text = (KNOWN / "nanopi-m4v2-rk3399-sbcbench.txt").read_text()
    with pytest.raises(UserError, match="unlabelled per-cluster rows of 18 cells left out"):
        reference.read(entry, text)
    rpi4 = (KNOWN / "rpi4b-armhf-aes256gcm-openssl300.txt").read_text()  # rows not repeated: nothing to leave out
    board = reference.read(reference.Entry("x", "Pi 4", "https://e.org", options="<cluster> -evp"), rpi4)
    assert board.notes == [] and len(board.result.measurements) == 6


def test_import_reference_stores_outside_the_runs_and_report_shows_it(tmp_path, capsys):
    log = KNOWN / "nanopi-m4v2-rk3399-sbcbench.txt"
    args = ["import", str(log), "--reference", "--host", "my-m4", "--results", str(tmp_path)]
    assert cli.main(args) == 2
    assert "--source URL" in capsys.readouterr().err
    args += ["--source", "https://example.org/m4", "--options", "openssl speed -evp aes-128-cbc (once per cluster)",
             "--clusters", "Cortex-A53,Cortex-A72", "--board", "NanoPi M4V2"]
    assert cli.main(args) == 0
    assert "stored reference 'my-m4' (NanoPi M4V2): 36 measurements" in capsys.readouterr().out
    assert cli.main(args) == 2  # already there
    assert store.list_runs(tmp_path) == []  # not a run: report/diff/trend never mistake it for one
    run_dir = store.new_run_dir(tmp_path, "20260101T000000Z-0001")
    store.save_run(run_dir, Run(run_dir.name, "2026-01-01T00:00:00+00:00", hosts=[HostResult(
        "router", measurements=[Measurement("aes-128-cbc", 16384, 50e6, api="evp")])]))
    assert cli.main(["report", "--results", str(tmp_path), "--against", "known"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    assert ["aes-128-cbc", "evp", "1", "router"] in [row[:4] for row in rows]  # the user's host, by name alone
    assert ["20260101T000000Z-0001", "2026-01-01", "00:00", "run", "router"] in rows  # its run said once
    assert "my-m4 (reference)" in out and "rpi5b-sbcbench (reference)" in out


def test_html_report_marks_reference_boards(tmp_path):
    known, _ = reference.known_run()
    mine = Run("20260101T000000Z-0001", "2026-01-01T00:00:00+00:00", hosts=[HostResult(
        "router", measurements=[Measurement("aes-128-cbc", b, 50e6, api="evp") for b in (16, 16384)])])
    page = report.render_html([mine, known], tmp_path / "r.html").read_text()
    assert "rpi4b-arm64-sbcbench (reference)" in page and ">router<" in page
