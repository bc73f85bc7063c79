"""Issue 38, item 5: `publish` takes its store as `--results DIR`, as every other command does; the positional
RESULTS of before still works, and two different stores are refused, not one silently picked."""
from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import cli

LOG = Path(__file__).resolve().parents[1] / "data" / "speed" / "openssl-1.1.1w-x86_64-evp-aes-128-gcm.txt"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("store") / "results"
    assert cli.main(["import", str(LOG), "--host", "pi4", "--date", "2026-01-01", "--results", str(where)]) == 0
    return where


@pytest.mark.parametrize("how", ["--results", "positional"])
def test_publish_reads_the_store_it_is_given(results: Path, tmp_path: Path, how: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    given = ["--results", str(results)] if how == "--results" else [str(results)]
    assert cli.main(["publish", *given, "-o", str(site), "--no-known"]) == 0
    assert "pi4" in (site / "index.html").read_text(encoding="utf-8")
    assert "wrote " in capsys.readouterr().out


def test_two_different_stores_are_refused(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["publish", str(tmp_path / "other"), "--results", str(results), "-o", str(tmp_path / "s")])
    assert code == 2 and "two stores given" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
