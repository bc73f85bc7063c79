"""Issue 38, item 1: a format for programs is byte for byte the same on stdout (a pipe) and in `-o FILE`, and each
escapes host text by its own rules, never by the terminal's (`\\u202e` as text is an invalid escape to promtool,
and InfluxDB stored the host as that text). The store is hostile_store's: a bidi override in a host name, 0x01 and
an escape sequence in a firmware label, quotes and a backslash in another host, two runs of one time."""
from __future__ import annotations

import csv
import io
import json
import os
import pty
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import hostile_store
from hostile_store import FIRMWARE, GATEWAY, ROUTER, sslbench
from orchestrator import cli, store, textsafe
from orchestrator.render import formats, tables

DATA_FORMATS = ("json", "csv", "markdown")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hostile_store.make(tmp_path_factory.mktemp("hostile") / "results")


def runs_of(results: Path) -> tuple[str, str]:
    ids = sorted((p.name for p in results.iterdir() if p.is_dir()), key=store.run_order)
    gateway = [i for i in ids if any(h.host == GATEWAY for h in store.load_run(results / i).hosts)]
    return gateway[0], gateway[1]


@pytest.mark.parametrize("fmt, extra", [("openmetrics", ()), ("openmetrics", ("--timestamps",)), ("influx", ())])
def test_figures_on_stdout_are_the_file(results: Path, tmp_path: Path, fmt: str, extra: tuple[str, ...]) -> None:
    out = tmp_path / "figures"
    args = ("report", "--all", "--results", str(results), "--format", fmt, *extra)
    piped = sslbench(*args).stdout
    sslbench(*args, "-o", str(out))
    assert piped == out.read_bytes()
    text = piped.decode("utf-8")
    assert GATEWAY in text and "\\u202e" not in text and "\\x01" not in text  # the host as it is, not as shown


@pytest.mark.parametrize("command", ["diff", "trend"])
def test_junit_on_stdout_is_the_file_and_xml_reads_back_every_name(results: Path, tmp_path: Path,
                                                                   command: str) -> None:
    old, new = runs_of(results)
    args = ("diff", old, new) if command == "diff" else ("trend", GATEWAY)
    out = tmp_path / "junit.xml"
    piped = sslbench(*args, "--results", str(results), "--format", "junit").stdout
    sslbench(*args, "--results", str(results), "--format", "junit", "-o", str(out))
    assert piped == out.read_bytes()
    root = ET.fromstring(piped)  # well-formed XML 1.0: 0x01 cannot be in it, even as a reference
    classes = {case.get("classname") for case in root.iter("testcase")}
    assert classes == {GATEWAY}  # the bidi override as the character itself (a reference in the file)
    assert "\u202e" not in piped.decode("utf-8") and "&#x202e;" in piped.decode("utf-8")  # inert in a terminal


def report_written(fmt: str, results: Path) -> str:
    """What the format writes for `report --all`, in this process (what a file of it would hold)."""
    runs = store.latest_of_each_host(store.load_all(results), ())
    return tables.render_runs(runs, fmt, None, legend=True) + "\n"


@pytest.mark.parametrize("fmt", DATA_FORMATS)
def test_table_formats_on_stdout_are_what_the_format_writes(results: Path, fmt: str) -> None:
    piped = sslbench("report", "--all", "--results", str(results), "--format", fmt).stdout.decode("utf-8")
    assert piped == report_written(fmt, results)
    if fmt == "json":  # JSON's own escapes: the names come back exactly
        hosts = {record["host"] for record in json.loads(piped)}
        assert hosts == {GATEWAY, ROUTER}


@pytest.mark.parametrize("fmt", DATA_FORMATS)
@pytest.mark.parametrize("command", ["history", "diff", "trend"])
def test_every_command_writes_its_format_unaltered(results: Path, command: str, fmt: str) -> None:
    old, new = runs_of(results)
    args = {"history": ("history", GATEWAY), "diff": ("diff", old, new), "trend": ("trend", GATEWAY)}[command]
    piped = sslbench(*args, "--results", str(results), "--format", fmt).stdout.decode("utf-8")
    if fmt == "json":
        data = json.loads(piped)  # JSON's own escapes: a name comes back exactly, never as the terminal shows it
        if command == "history":
            assert data[0]["firmware"] == FIRMWARE
    elif fmt == "csv":
        cells = [cell for row in csv.reader(io.StringIO(piped)) for cell in row]
        assert any(textsafe.cell(GATEWAY) in cell or textsafe.cell(FIRMWARE) in cell for cell in cells)
    assert not textsafe.CONTROL.search(piped)  # CSV and Markdown: textsafe.cell's escapes; JSON: ASCII


CASES = [(command, fmt) for command in ("report", "history", "diff", "trend")
         for fmt in DATA_FORMATS + (("junit",) if command in ("diff", "trend") else ())]  # junit: diff's and trend's


@pytest.mark.parametrize("command, fmt", CASES)
def test_stdout_is_what_the_format_wrote(results: Path, command: str, fmt: str, monkeypatch: pytest.MonkeyPatch,
                                         capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """Every command, every format for programs: stdout holds, byte for byte, the text the format's writer gave
    (what a file of it holds), whatever host text is in it; nothing between them rewrites it."""
    old, new = runs_of(results)
    args = {"report": ("report", "--all"), "history": ("history", GATEWAY), "diff": ("diff", old, new),
            "trend": ("trend", GATEWAY)}[command]
    written: list[str] = []
    original = formats.write

    def recording(doc: object, name: str, width: int | None = None) -> str:
        text = original(doc, name, width)  # type: ignore[arg-type]
        written.append(text)
        return text

    monkeypatch.setattr(formats, "write", recording)
    monkeypatch.setattr(tables.formats, "write", recording)
    assert cli.main([*args, "--results", str(results), "--format", fmt]) == 0
    out = capsysbinary.readouterr().out
    assert written and out == (written[-1] + "\n").encode("utf-8")


def test_a_terminal_still_gets_the_terminal_rule(results: Path) -> None:
    """stdout a terminal: a person reads the figures there, and no escape sequence of a host runs."""
    main, child = pty.openpty()
    done = subprocess.run([hostile_store.SSLBENCH, "report", "--all", "--results", str(results), "--format",
                           "influx"], stdout=child, stderr=subprocess.PIPE, timeout=120)
    os.close(child)
    said = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        said += chunk
    os.close(main)
    assert done.returncode == 0
    assert b"\x1b]0;owned" not in said and b"\\x1b]0;owned" in said and "\u202e".encode() not in said
