"""Whole outputs of `sslbench diff`, as benchstat's tests check theirs: the real CLI over a store of a few months
(fleet_store.py), compared with golden files (tests/golden/diff-*)."""
from __future__ import annotations

from pathlib import Path

import pytest

from fleet_store import APU2, RUN_JAN, RUN_MAR, measure, nightly_runs, fleet_runs, save, upgraded
from orchestrator import cli
from orchestrator.model import OsFacts, Run

APU2_MITIGATED = upgraded(APU2, OsFacts("debian", "Debian GNU/Linux 12 (bookworm)", "12", kernel="6.1.0-31-amd64",
                                        machine="x86_64"), "3.0.15")
BEFORE = "20260401T020000.000000Z-e001"
AFTER = "20260402T020000.000000Z-e002"


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save(fleet_runs(), Path("results"))


@pytest.fixture
def nightly(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save(nightly_runs(), Path("results"))


@pytest.fixture
def kernel_update(tmp_path, monkeypatch):
    """apu2 measured 5 times before and after a kernel update that costs 9 %: significant, a regression."""
    monkeypatch.chdir(tmp_path)
    save([Run(BEFORE, "2026-04-01T02:00:00+00:00", hosts=[measure(APU2, repeats=5)]),
          Run(AFTER, "2026-04-02T02:00:00+00:00", hosts=[measure(APU2_MITIGATED, scale=0.91, repeats=5)])],
         Path("results"))


def sslbench(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_two_runs_without_repeats_say_there_is_no_verdict(fleet, capsys, golden):
    code, out, err = sslbench(capsys, "diff", RUN_JAN, RUN_MAR)
    assert (code, err) == (0, "")
    golden("diff-jan-mar.txt", out)


@pytest.mark.parametrize("fmt", ["markdown", "csv", "json"])
def test_one_host_in_every_format(fleet, capsys, golden, fmt):
    code, out, err = sslbench(capsys, "diff", RUN_JAN, RUN_MAR, "--host", "wrt3200", "--format", fmt)
    assert (code, err) == (0, "")
    golden(f"diff-jan-mar-wrt3200.{fmt}", out)


def test_by_firmware_names_both_sides(fleet, capsys, golden):
    code, out, _ = sslbench(capsys, "diff", "--host", "pi4", "--by", "firmware")
    assert code == 0
    golden("diff-pi4-by-firmware.txt", out)


def test_a_firmware_of_many_nights_is_said_by_its_count_and_ends(nightly, capsys, golden):
    code, out, _ = sslbench(capsys, "diff", "--host", "router", "--by", "firmware", "--fail-on-regression", "5")
    assert code == 0 and max(map(len, out.splitlines())) < 200  # was every run id, 3,600 characters
    golden("diff-router-by-firmware.txt", out)


def test_a_significant_drop_fails_ci(kernel_update, capsys, golden):
    code, out, _ = sslbench(capsys, "diff", BEFORE, AFTER, "--fail-on-regression", "5")
    assert code == 3
    golden("diff-kernel-update-regression.txt", out)
    code, out, _ = sslbench(capsys, "diff", BEFORE, AFTER, "--fail-on-regression", "5", "--format", "junit")
    assert code == 3
    golden("diff-kernel-update-regression.junit.xml", out)


def test_a_drop_within_the_allowance_passes(kernel_update, capsys):
    code, out, _ = sslbench(capsys, "diff", BEFORE, AFTER, "--fail-on-regression", "10")
    assert code == 0 and "no significant regression worse than -10%" in out
