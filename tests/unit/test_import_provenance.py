"""Imported logs are measurements with a provenance: the same log twice is one sample, not two; a backfilled log
is placed at the date it was measured (`import --date`), not at the day it was imported."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from orchestrator import cli, store

FIELD = Path(__file__).resolve().parents[1] / "data" / "speed" / "field-repeats"
A = [FIELD / f"a{i}.log" for i in range(1, 6)]  # AES-NI, ~6,870 MB/s
B = [FIELD / f"b{i}.log" for i in range(1, 6)]  # AES-NI masked, ~330 MB/s


def sslbench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_one_log_imported_five_times_is_one_sample_not_a_significant_change(tmp_path, capsys):
    results = str(tmp_path / "r")
    code, out = sslbench(capsys, "import", *[str(A[0])] * 5, "--host", "n", "--firmware", "1", "--results", results)
    assert code == 0
    assert "duplicate" in out and "a1.log" in out
    code, out = sslbench(capsys, "import", *[str(A[1])] * 5, "--host", "n", "--firmware", "2", "--results", results)
    assert code == 0
    code, out = sslbench(capsys, "diff", "--host", "n", "--by", "firmware", "--fail-on-regression", "1",
                         "--results", results)
    assert code == 0, out  # one measurement per side: no verdict
    assert "n=1+1" in out and "p=0.008" not in out


def test_a_log_already_in_the_store_is_skipped_naming_the_stored_run(tmp_path, capsys):
    results = tmp_path / "r"
    assert sslbench(capsys, "import", str(A[0]), str(A[1]), "--host", "n", "--firmware", "1",
                    "--results", str(results))[0] == 0
    (first,) = store.list_runs(results)
    copy = tmp_path / "renamed-and-crlf.log"  # another name, Windows line ends: the same measurement
    copy.write_bytes(A[0].read_bytes().replace(b"\n", b"\r\n"))
    code, out = sslbench(capsys, "import", str(copy), str(A[2]), "--host", "n", "--firmware", "1",
                         "--results", str(results))
    assert code == 0
    assert "renamed-and-crlf.log" in out and first.name in out and "duplicate" in out
    second = store.list_runs(results)[-1]
    (host,) = store.load_run(second).hosts
    assert len(host.measurements) == 1 and len(host.logs) == 1
    # nothing new at all: refused, nothing stored
    code, out = sslbench(capsys, "import", str(A[1]), "--host", "n", "--results", str(results))
    assert code == 2 and first.name in out
    assert len(store.list_runs(results)) == 2


def test_the_same_log_is_one_measurement_per_host_not_per_store(tmp_path, capsys):
    """A published log kept as a reference beside a board, or one log two hosts' names were given: each host's
    figures once; only the same host taking it again is a repeat. Names that share a store directory (CJK
    letters dropped alike) are still told apart by the run's own host names."""
    results = str(tmp_path / "r")
    for host in ("路由器", "交换机", "路由器"):
        code, out = sslbench(capsys, "import", str(A[0]), "--host", host, "--results", results)
    assert code == 2 and "duplicate" in out
    hosts = sorted(h.host for run_dir in store.list_runs(results) for h in store.load_run(run_dir).hosts)
    assert hosts == ["交换机", "路由器"]


def test_duplicates_already_in_an_older_store_are_counted_once(tmp_path, capsys):
    """A store written before duplicates were refused: the same measurement five times per side."""
    results = tmp_path / "r"
    for label, log in (("1", A[0]), ("2", A[1])):
        assert sslbench(capsys, "import", str(log), "--host", "n", "--firmware", label,
                        "--results", str(results))[0] == 0
    for run_dir in store.list_runs(results):  # as an older version wrote `import a1.log a1.log ...`
        data = json.loads((run_dir / "run.json").read_text())
        (host,) = data["hosts"]
        data.pop("schema")
        host.pop("log_hashes", None)
        row = host["measurements"][0]
        assert len(row) <= 12  # trailing defaults cut: status, reason, repeat 0
        host["measurements"] = [row] + [(row + ["ok", None])[:12] + [r] for r in range(1, 5)]
        (run_dir / "run.json").write_text(json.dumps(dict(data, schema=3)))
    code, out = sslbench(capsys, "diff", "--host", "n", "--by", "firmware", "--fail-on-regression", "1",
                         "--results", str(results))
    assert code == 0, out
    assert "n=1+1" in out and "duplicate" in out
    code, out = sslbench(capsys, "trend", "n", "--fail-on-regression", "1", "--results", str(results))
    assert code == 0, out


def test_backfilled_history_is_ordered_by_the_date_given(tmp_path, capsys):
    results = str(tmp_path / "r")
    assert sslbench(capsys, "import", *map(str, A), "--host", "bf", "--firmware", "2.0", "--date", "2026-06-01",
                    "--results", results)[0] == 0
    assert sslbench(capsys, "import", *map(str, B), "--host", "bf", "--firmware", "1.0",
                    "--date", "2025-01-15T10:00:00Z", "--results", results)[0] == 0
    code, out = sslbench(capsys, "trend", "bf", "--fail-on-regression", "5", "--results", results)
    assert code == 0, out
    assert "at 1.0 → 2.0" in out and "2.0 → 1.0" not in out
    assert "import time" not in out
    code, out = sslbench(capsys, "diff", "--host", "bf", "--by", "firmware", "--results", results)
    assert "old = 1.0" in out and "new = 2.0" in out
    code, out = sslbench(capsys, "history", "bf", "--runs", "--format", "json", "--results", results)
    assert [r["firmware"] for r in json.loads(out)] == ["1.0", "2.0"]


def test_without_a_date_trend_and_diff_say_the_order_is_import_time(tmp_path, capsys):
    results = str(tmp_path / "r")
    assert sslbench(capsys, "import", *map(str, A), "--host", "bf", "--firmware", "2.0", "--results", results)[0] == 0
    assert sslbench(capsys, "import", *map(str, B), "--host", "bf", "--firmware", "1.0", "--results", results)[0] == 0
    code, out = sslbench(capsys, "trend", "bf", "--results", results)
    assert "import time" in out
    code, out = sslbench(capsys, "diff", "--host", "bf", "--by", "firmware", "--results", results)
    assert "import time" in out


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "2999-01-01"])
def test_a_bad_date_is_a_clear_error_and_stores_nothing(tmp_path, capsys, bad):
    results = tmp_path / "r"
    code, out = sslbench(capsys, "import", str(A[0]), "--host", "n", "--date", bad, "--results", str(results))
    assert code == 2 and "--date" in out and "Traceback" not in out
    assert store.list_runs(results) == []


def test_interleaved_firmware_is_said_to_interleave(tmp_path, capsys):
    """1.0, then 2.0, then back to 1.0: trend has three segments; diff --by firmware pools 1.0's runs from both
    sides of 2.0 and says so."""
    results = str(tmp_path / "r")
    for label, logs, date in (("1.0", B[:2], "2025-01-01"), ("2.0", A[:3], "2025-02-01"),
                              ("1.0", B[2:], "2025-03-01")):
        assert sslbench(capsys, "import", *map(str, logs), "--host", "x", "--firmware", label, "--date", date,
                        "--results", results)[0] == 0
    code, out = sslbench(capsys, "trend", "x", "--results", results)
    assert "A = 1.0" in out and "B = 2.0" in out and "C = 1.0" in out
    code, out = sslbench(capsys, "diff", "--host", "x", "--by", "firmware", "--results", results)
    assert "before and after" in out


def test_report_all_takes_the_latest_measured_not_the_latest_imported(tmp_path, capsys):
    results = tmp_path / "r"
    assert sslbench(capsys, "import", str(A[0]), "--host", "bf", "--firmware", "2.0", "--date", "2026-06-01",
                    "--results", str(results))[0] == 0
    assert sslbench(capsys, "import", str(B[0]), "--host", "bf", "--firmware", "1.0", "--date", "2025-01-15",
                    "--results", str(results))[0] == 0
    (run,) = store.latest_of_each_host(store.load_all(results))
    assert [h.firmware for h in run.hosts] == ["2.0"]
