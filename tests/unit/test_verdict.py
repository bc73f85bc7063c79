"""CI verdicts: exit codes of --fail-on-regression (diff and trend) and JUnit XML valid against the CI schema."""
from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from orchestrator import cli, store
from orchestrator.analysis import verdict
from orchestrator.model import HostResult, Measurement, Run

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "junit" / "junit-10.xsd"
XMLLINT = shutil.which("xmllint")


def cells(gcm: list[float], sha: list[float], sign: list[float]) -> list[Measurement]:
    ms = [Measurement("aes-256-gcm", 1024, v, api="evp", repeat=r) for r, v in enumerate(gcm)]
    ms += [Measurement("sha256", 16384, v, api="evp", repeat=r) for r, v in enumerate(sha)]
    ms += [Measurement("rsa2048", operation="sign", ops_per_second=v, repeat=r) for r, v in enumerate(sign)]
    return ms


def save(root: Path, run_id: str, created: str, hosts: list[HostResult]) -> Path:
    run_dir = store.new_run_dir(root, run_id)
    store.save_run(run_dir, Run(run_id, created, hosts=hosts))
    return run_dir


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    """router: gcm -10 % (significant, n=4+4), sha256 -2 % (significant), rsa2048 one sample (no verdict);
    pi: nothing changed; "odd & <host>" names need escaping in XML."""
    save(tmp_path, "20260101T000000Z-0001", "2026-01-01T00:00:00+00:00", [
        HostResult("router", measurements=cells([100e6, 101e6, 99e6, 100.5e6], [50e6, 50.1e6, 49.9e6, 50.05e6], [600])),
        HostResult('odd & <host> "1"', measurements=cells([10e6, 10.1e6, 9.9e6, 10e6], [5e6] * 4, [60])),
    ])
    save(tmp_path, "20260102T000000Z-0002", "2026-01-02T00:00:00+00:00", [
        HostResult("router", measurements=cells([90e6, 90.5e6, 89.5e6, 90.2e6], [49e6, 49.1e6, 48.9e6, 49.05e6], [500])),
        HostResult('odd & <host> "1"', measurements=cells([10e6, 10.1e6, 9.9e6, 10.05e6], [5e6] * 4, [60])),
    ])
    return tmp_path


def diff_args(root: Path, *more: str) -> list[str]:
    return ["diff", "20260101T000000Z-0001", "20260102T000000Z-0002", "--results", str(root), *more]


def test_diff_exit_codes(two_runs, capsys):
    assert cli.main(diff_args(two_runs)) == 0  # no threshold: never 3
    assert cli.main(diff_args(two_runs, "--fail-on-regression", "5")) == verdict.EXIT_REGRESSION == 3
    out = capsys.readouterr().out
    assert "1 significant regression(s) worse than -5%: exit code 3" in out
    assert cli.main(diff_args(two_runs, "--fail-on-regression", "1")) == 3  # -2 % counts too
    assert cli.main(diff_args(two_runs, "--fail-on-regression", "15")) == 0
    assert "no significant regression worse than -15%" in capsys.readouterr().out
    assert cli.main(diff_args(two_runs, "--fail-on-regression", "-1")) == 2
    assert cli.main(diff_args(two_runs, "-o", "x.xml")) == 2  # -o only with --format junit
    assert "--format junit" in capsys.readouterr().err


def validate(path: Path) -> None:
    if XMLLINT is None:
        if os.environ.get("CI"):
            pytest.fail("xmllint missing: tests/rig/packages.txt lists libxml2-utils")
        pytest.skip("xmllint is not installed (apt-get install libxml2-utils)")
    done = subprocess.run([XMLLINT, "--noout", "--schema", str(SCHEMA), str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "validates" in done.stderr


def test_diff_junit_file_validates_and_fails_the_regressed_cell(two_runs, tmp_path, capsys):
    out = tmp_path / "sslbench.xml"
    assert cli.main(diff_args(two_runs, "--fail-on-regression", "5", "--format", "junit", "-o", str(out))) == 3
    assert "aes-256-gcm" in capsys.readouterr().out  # the table is printed as well
    validate(out)
    root = ET.parse(out).getroot()
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "6", "1")
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    failed = cases["router", "aes-256-gcm 1024 B evp t1"].find("failure")
    assert failed is not None and "-10.1% (p=0.029), worse than -5%" in failed.get("message", "")
    assert cases["router", "sha256 16384 B evp t1"].find("failure") is None
    skipped = cases["router", "rsa2048 sign t1"].find("skipped")
    assert skipped is not None and "no verdict" in skipped.get("message", "")
    assert ('odd & <host> "1"', "aes-256-gcm 1024 B evp t1") in cases


def test_diff_junit_to_stdout_validates(two_runs, tmp_path, capsys):
    assert cli.main(diff_args(two_runs, "--format", "junit")) == 0
    path = tmp_path / "stdout.xml"
    path.write_text(capsys.readouterr().out)
    validate(path)
    # without --fail-on-regression nothing fails (exit 0, as the XML says): each significant drop is reported in
    # its case's system-out, and the suite's properties say there was no threshold
    root = ET.parse(path).getroot()
    assert root.get("failures") == "0" and not list(root.iter("failure"))
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    said = cases["router", "aes-256-gcm 1024 B evp t1"].findtext("system-out") or ""
    assert said.startswith("significant drop -10.1% (p=0.029), not judged: no --fail-on-regression PCT"), said
    assert "significant drop" in (cases["router", "sha256 16384 B evp t1"].findtext("system-out") or "")
    assert "significant drop" not in (cases['odd & <host> "1"', "aes-256-gcm 1024 B evp t1"].findtext("system-out")
                                      or "")
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["sslbench.fail_on_regression"] == "none" and props["sslbench.significant_drops"] == "2"


def nightly(root: Path, versions: list[str], gcm_levels: list[float], board: list[float] | None = None) -> None:
    """One run a night; `board` scales every cell of a night (a board-wide cause), gcm_levels the gcm cell."""
    for i, (version, level) in enumerate(zip(versions, gcm_levels)):
        b = board[i] if board else 1.0
        host = HostResult("router", firmware=version, measurements=cells(
            [b * level * f for f in (1.0, 1.004, 0.996, 1.002)], [b * 50e6 * f for f in (1.0, 1.004, 0.996, 1.002)],
            [b * 600] * 4))
        save(root, f"202601{i + 1:02d}T000000Z-{i:04x}", f"2026-01-{i + 1:02d}T00:00:00+00:00", [host])


def test_trend_fails_on_the_newest_step_only(tmp_path, capsys):
    old = tmp_path / "old"
    nightly(old, ["a"] * 3 + ["b"] * 3 + ["c"] * 3, [100e6] * 3 + [80e6] * 3 + [80e6] * 3)  # a→b: -20 %, then flat
    assert cli.main(["trend", "router", "--results", str(old), "--fail-on-regression", "5"]) == 0
    assert "no significant regression worse than -5%" in capsys.readouterr().out
    new = tmp_path / "new"
    nightly(new, ["a"] * 3 + ["b"] * 3 + ["c"] * 3, [100e6] * 6 + [80e6] * 3)  # b→c: -20 %, the newest step
    assert cli.main(["trend", "router", "--results", str(new), "--fail-on-regression", "5"]) == 3
    xml = tmp_path / "trend.xml"
    assert cli.main(["trend", "router", "--results", str(new), "--fail-on-regression", "25",
                     "--format", "junit", "-o", str(xml)]) == 0
    validate(xml)
    assert cli.main(["trend", "router", "--results", str(new), "--fail-on-regression", "5",
                     "--format", "junit", "-o", str(xml)]) == 3
    validate(xml)
    assert cli.main(["trend", "router", "--results", str(new), "--format", "junit", "-o", str(xml)]) == 0
    validate(xml)  # no threshold: exit 0 and no failed case, the drop reported in system-out
    assert not list(ET.parse(xml).getroot().iter("failure"))
    assert any((out.text or "").startswith("significant drop -20.0% at b → c")
               for out in ET.parse(xml).getroot().iter("system-out"))
    assert cli.main(["trend", "router", "--results", str(new), "--fail-on-regression", "5",
                     "--format", "junit", "-o", str(xml)]) == 3
    root = ET.parse(xml).getroot()
    assert {p.get("name"): p.get("value") for p in root.iter("property")}["sslbench.fail_on_regression"] == "5"
    (failure,) = list(root.iter("failure"))
    assert failure.get("message", "").startswith("aes-256-gcm 1024 B evp t1: -20.0% at b → c (p<0.001), worse than -5%")


def test_trend_fails_when_the_latest_run_drifted(tmp_path):
    nightly(tmp_path, ["a"] * 9, [100e6] * 9, board=[1.0] * 8 + [0.7])
    assert cli.main(["trend", "router", "--results", str(tmp_path), "--fail-on-regression", "50"]) == 0
    assert cli.main(["trend", "router", "--results", str(tmp_path), "--fail-on-regression", "5"]) == 3
