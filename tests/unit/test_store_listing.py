"""What the store lists and how nothing-to-show is said (issue 37, "Also"): a `latest` symlink to a run is not a
second run; `report --format csv` with nothing to show writes no prose to stdout."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator import cli, store
from orchestrator.model import Run

LOG = Path(__file__).resolve().parents[1] / "data" / "speed" / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"


def test_a_latest_symlink_to_a_run_is_listed_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    results = tmp_path / "results"
    assert cli.main(["import", str(LOG), "--host", "router", "--results", str(results)]) == 0
    (run_dir,) = store.list_runs(results)
    (results / "latest").symlink_to(run_dir.name)  # what users (and other tools) keep beside their runs
    assert store.list_runs(results) == [run_dir]
    capsys.readouterr()
    assert cli.main(["history", "router", "--runs", "--format", "json", "--results", str(results)]) == 0
    assert [row["run"] for row in json.loads(capsys.readouterr().out)] == [run_dir.name]
    assert store.resolve_run("latest", results) == run_dir


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_nothing_to_show_is_no_prose_on_stdout_in_a_data_format(tmp_path: Path, fmt: str,
                                                                 capsys: pytest.CaptureFixture[str]):
    """A run stopped before any host was added: CSV writes nothing, JSON an empty list; the note goes to stderr."""
    run_dir = store.new_run_dir(tmp_path)
    store.save_run(run_dir, Run(run_id=run_dir.name, created=store.utc_now()))
    capsys.readouterr()
    assert cli.main(["report", "--results", str(tmp_path), "--format", fmt]) == 0
    out, err = capsys.readouterr()
    assert out == ("" if fmt == "csv" else "[]\n")
    assert err == "(no measurements)\n"


def test_nothing_to_show_is_said_in_place_in_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    run_dir = store.new_run_dir(tmp_path)
    store.save_run(run_dir, Run(run_id=run_dir.name, created=store.utc_now()))
    capsys.readouterr()
    assert cli.main(["report", "--results", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "(no measurements)" in out and err == ""
