"""diff of crafted runs and stores: deltas, verdicts, flags, the JSON shape and the CLI."""
from __future__ import annotations

import json
import re

import pytest

from orchestrator import cli, store
from orchestrator.analysis import diff
from orchestrator.analysis.cells import Key
from orchestrator.errors import UserError
from orchestrator.model import HostResult, Measurement, OsFacts, Run
from orchestrator.render import diff_table


def throughput(values, algorithm="aes-256-gcm", block=1024, threads=1, api="evp", **extra):
    return [Measurement(algorithm, block, v, threads=threads, api=api, repeat=i, **extra) for i, v in enumerate(values)]


def make_run(run_id, hosts, created="2026-01-01T00:00:00+00:00", matrix=None):
    return Run(run_id=run_id, created=created, hosts=hosts, matrix=matrix or {})


def row_for(rows, **match):
    # a row's key fields are its cells.Key's
    found = [r for r in rows if all(getattr(r.key if k in Key._fields else r, k) == v for k, v in match.items())]
    assert len(found) == 1, found
    return found[0]


def test_significant_slowdown_with_repeats():
    old = make_run("a", [HostResult("r1", measurements=throughput([100e6, 101e6, 99e6, 100.5e6, 100.2e6]))])
    new = make_run("b", [HostResult("r1", measurements=throughput([80e6, 81e6, 79e6, 80.5e6, 80.2e6]))])
    (row,) = diff.diff_runs(old, new)
    assert (row.old, row.new) == (100.2e6, 80.2e6)
    assert row.delta_pct == pytest.approx((80.2 - 100.2) / 100.2 * 100)
    assert row.p_value == pytest.approx(2 / 252)  # complete separation, C(10,5) = 252 splits
    assert row.significant is True
    assert (row.old_n, row.new_n) == (5, 5)


def test_overlapping_samples_are_not_significant_and_show_tilde():
    old = make_run("a", [HostResult("r1", measurements=throughput([100, 102, 98, 101, 99]))])
    new = make_run("b", [HostResult("r1", measurements=throughput([101, 99, 100, 103, 97]))])
    (row,) = diff.diff_runs(old, new)
    assert row.significant is False
    text = diff_table.render([row], "table")
    assert "~" in text.splitlines()[-1]
    assert "n=5+5" in text


def test_single_samples_give_null_significance_in_json():
    old = make_run("a", [HostResult("r1", measurements=throughput([100e6]))])
    new = make_run("b", [HostResult("r1", measurements=throughput([110e6]))])
    (record,) = json.loads(diff_table.render(diff.diff_runs(old, new), "json"))
    for key in ("host", "algorithm", "block_size", "threads", "old", "new", "delta_pct", "significant", "api"):
        assert key in record
    assert record["significant"] is None
    assert record["delta_pct"] == pytest.approx(10.0)
    assert (record["host"], record["algorithm"], record["block_size"], record["threads"]) == (
        "r1", "aes-256-gcm", 1024, 1)


def test_cells_are_split_by_api_threads_block_and_operation():
    ms = (throughput([1.0, 2.0], api="evp") + throughput([3.0], api="legacy") + throughput([4.0], threads=2)
          + throughput([5.0], block=16384)
          + [Measurement("rsa2048", operation="sign", ops_per_second=300.0),
             Measurement("rsa2048", operation="verify", ops_per_second=9000.0)])
    rows = diff.diff_runs(make_run("a", [HostResult("h", measurements=ms)]),
                          make_run("b", [HostResult("h", measurements=ms)]))
    assert len(rows) == 6
    sign = row_for(rows, algorithm="rsa2048", operation="sign")
    assert (sign.unit, sign.old, sign.key.block_size) == ("ops/s", 300.0, None)
    assert row_for(rows, api="evp", threads=1, block_size=1024).old == 1.5


def test_busy_cells_flagged_from_progress_seconds_and_flags():
    busy_old = throughput([100.0, 100.0], seconds=2.1)  # asked for 3 s, got 2.1 s of CPU: busy
    flagged_new = throughput([100.0, 100.0], seconds=2.99, flags=["throttled"])
    rows = diff.diff_runs(make_run("a", [HostResult("h", measurements=busy_old)], matrix={"seconds": 3}),
                          make_run("b", [HostResult("h", measurements=flagged_new)], matrix={"seconds": 3}))
    assert rows[0].flags == ["busy-old", "throttled-new"]


def test_parser_flags_are_carried_into_the_diff():
    """A figure summed from some -multi children (openssl's summary missing) must not look like a clean one."""
    summed = throughput([100.0], threads=64, flags=["partial-children"])
    rows = diff.diff_runs(make_run("a", [HostResult("h", measurements=throughput([90.0], threads=64))]),
                          make_run("b", [HostResult("h", measurements=summed)]))
    assert rows[0].flags == ["partial-children-new"]


def test_unsupported_and_missing_cells_are_flagged():
    unsupported = Measurement("chacha20-poly1305", 1024, status="unsupported", reason="OpenSSL 1.0.2", api="evp")
    old = make_run("a", [HostResult("h", measurements=[unsupported] + throughput([1.0]))])
    new = make_run("b", [HostResult("h", measurements=throughput([2.0], algorithm="chacha20-poly1305"))])
    rows = diff.diff_runs(old, new)
    chacha = row_for(rows, algorithm="chacha20-poly1305")
    assert chacha.flags == ["unsupported-old"]
    assert chacha.old is None and chacha.new == 2.0 and chacha.delta_pct is None
    assert row_for(rows, algorithm="aes-256-gcm").flags == ["missing-new"]


def test_host_filter_and_unknown_host():
    old = make_run("a", [HostResult("h1", measurements=throughput([1.0])), HostResult("h2", measurements=throughput([1.0]))])
    assert {r.host for r in diff.diff_runs(old, old, host="h2")} == {"h2"}
    with pytest.raises(UserError, match="nope"):
        diff.diff_runs(old, old, host="nope")


def firmware_host(version, values, firmware=None):
    return HostResult("router", firmware=firmware, os=OsFacts(family="openwrt", name="OpenWrt", version=version),
                      measurements=throughput(values))


def test_diff_by_firmware_pools_runs_of_one_firmware_and_picks_two_latest():
    runs = [
        make_run("1", [firmware_host("21.02", [50.0, 51.0])], created="2026-01-01T00:00:00+00:00"),
        make_run("2", [firmware_host("22.03", [100.0, 101.0])], created="2026-02-01T00:00:00+00:00"),
        make_run("3", [firmware_host("22.03", [102.0, 99.0])], created="2026-02-02T00:00:00+00:00"),
        make_run("4", [firmware_host("23.05", [90.0, 91.0, 89.0, 90.5])], created="2026-03-01T00:00:00+00:00"),
    ]
    old, new, rows = diff.diff_by_firmware(runs, "router")
    assert (old.label, new.label) == ("OpenWrt 22.03", "OpenWrt 23.05")
    assert old.run_ids == ["2", "3"]
    (row,) = rows
    assert (row.old_n, row.new_n) == (4, 4)
    assert row.significant is True and row.delta_pct < 0
    old, new, _ = diff.diff_by_firmware(runs, "router", old_label="21.02", new_label="22.03")
    assert (old.label, new.label) == ("OpenWrt 21.02", "OpenWrt 22.03")
    with pytest.raises(UserError, match="several"):
        diff.diff_by_firmware(runs, "router", old_label="OpenWrt")
    with pytest.raises(UserError, match="one firmware only"):
        diff.diff_by_firmware(runs[1:3], "router")


def save(tmp_path, run):
    run_dir = store.new_run_dir(tmp_path, run.run_id)
    store.save_run(run_dir, run)
    return run_dir


def test_cli_diff_two_run_dirs_json_and_table(tmp_path, capsys):
    a = save(tmp_path, make_run("20260101T000000Z-aaaa", [HostResult("r1", measurements=throughput([10e6] * 4))]))
    b = save(tmp_path, make_run("20260102T000000Z-bbbb", [HostResult("r1", measurements=throughput([12e6, 12.1e6, 11.9e6, 12.2e6]))]))
    assert cli.main(["diff", str(a), "latest", "--results", str(tmp_path), "--format", "json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["significant"] is True and record["delta_pct"] == pytest.approx(20.5)
    assert cli.main(["diff", a.name, b.name, "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "10.0 MB/s" in out and "+20.5%" in out and "p=0.029 n=4+4" in out
    assert cli.main(["diff", a.name, b.name, "--results", str(tmp_path), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("host,algorithm,api,operation,block_size")


def test_cli_diff_errors_exit_2(tmp_path, capsys):
    assert cli.main(["diff", "only-one", "--results", str(tmp_path)]) == 2
    assert "two runs" in capsys.readouterr().err
    assert cli.main(["diff", "x", "y", "--results", str(tmp_path)]) == 2
    assert "no stored run 'x'" in capsys.readouterr().err
    assert cli.main(["diff", "--by", "firmware", "--results", str(tmp_path)]) == 2
    assert "--host" in capsys.readouterr().err


def test_cli_diff_by_firmware_and_history(tmp_path, capsys):
    save(tmp_path, make_run("20260101T000000Z-0001", [firmware_host("22.03", [100.0, 101.0, 99.0, 100.5])],
                            created="2026-01-01T00:00:00+00:00"))
    save(tmp_path, make_run("20260201T000000Z-0002", [firmware_host("23.05", [100.0, 99.5, 101.0, 100.2], "beta")],
                            created="2026-02-01T00:00:00+00:00"))
    assert cli.main(["history", "router", "--results", str(tmp_path), "--format", "json"]) == 0
    history = json.loads(capsys.readouterr().out)
    assert [h["firmware"] for h in history] == ["OpenWrt 22.03", "beta"]
    assert history[1]["runs"] == ["20260201T000000Z-0002"]
    assert cli.main(["diff", "--host", "router", "--by", "firmware", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "old = OpenWrt 22.03" in out and "new = beta" in out
    assert re.search(r"\s~\s+p=1\.000 n=4\+4", out)  # delta column: not significant
    assert cli.main(["history", "nobody", "--results", str(tmp_path)]) == 2


def test_host_wide_validity_flags_are_carried_and_no_busy_without_nominal_seconds():
    hot = HostResult("h", flags=["hot", "incomplete"], measurements=throughput([100.0], seconds=0.5))
    rows = diff.diff_runs(make_run("a", [hot]), make_run("b", [HostResult("h", measurements=throughput([100.0]))]))
    assert rows[0].flags == ["hot-old"]  # 0.5 s is not "short" when the run did not record its -seconds


def test_cli_diff_reports_line_rate_verdicts_that_changed(tmp_path, capsys):
    # aes-256-gcm at 1024 B on one core: 15 MB/s = 120 Mbit/s before, 10 MB/s = 80 Mbit/s after.
    a = save(tmp_path, make_run("20260101T000000Z-aaaa", [HostResult("r1", measurements=throughput([15e6] * 4))]))
    b = save(tmp_path, make_run("20260102T000000Z-bbbb", [HostResult("r1", measurements=throughput([10e6] * 4))]))
    assert cli.main(["diff", a.name, b.name, "--results", str(tmp_path), "--link", "100"]) == 0
    out = capsys.readouterr().out
    assert "- r1: was: carries 100 Mbit/s on 1 core" in out
    assert "now: cannot carry 100 Mbit/s (best 80 Mbit/s" in out
    assert cli.main(["diff", a.name, b.name, "--results", str(tmp_path), "--link", "50"]) == 0
    assert "line rate changes" not in capsys.readouterr().out  # 50 Mbit/s carried on 1 core before and after


def test_inf_and_nan_values_are_flagged_not_compared():
    bad = [Measurement("aes-256-gcm", 1024, float("inf"), api="evp"), Measurement("aes-256-gcm", 1024, float("nan"),
                                                                                 api="evp", repeat=1)]
    (row,) = diff.diff_runs(make_run("a", [HostResult("h", measurements=bad)]),
                            make_run("b", [HostResult("h", measurements=throughput([5.0]))]))
    assert row.flags == ["invalid-old"] and row.old is None and row.new == 5.0


def test_notes_explain_missing_and_weak_verdicts():
    rows = diff.diff_runs(
        make_run("a", [HostResult("h", measurements=throughput([1.0]) + throughput([1.0, 2.0], block=16))]),
        make_run("b", [HostResult("h", measurements=throughput([2.0]) + throughput([3.0, 4.0], block=16))]))
    assert diff_table.notes(rows) == [
        "1 of 2 cells has one sample on a side: no verdict (sslbench run --repeat 4 or more)",
        "1 cell has fewer than 4 samples on a side: need >= 4 to detect a change at alpha 0.05",
    ]


def test_too_few_repeats_are_counted_per_cluster_and_noted_not_flagged():
    # 2 repeats on the big core and 2 on the little one are not 4 samples of one cell: each cluster's cell has 2
    def board(big, little):
        return HostResult("rk3399", measurements=throughput(big, cpu="Cortex-A72") + throughput(little, cpu="Cortex-A53"))

    rows = diff.diff_runs(make_run("a", [board([100.0, 101.0], [40.0, 41.0])]),
                          make_run("b", [board([90.0, 91.0], [30.0, 31.0])]))
    assert [(r.key.cpu, r.old_n, r.new_n, r.flags) for r in rows] == [("Cortex-A53", 2, 2, []), ("Cortex-A72", 2, 2, [])]
    assert "p=0.333 n=2+2" in diff_table.render(rows, "table")
    assert diff_table.notes(rows) == [
        "2 cells have fewer than 4 samples on a side: need >= 4 to detect a change at alpha 0.05"]


def test_busy_from_progress_seconds_uses_validity_threshold():
    """diff flags a short progress line by validity.py's rule, not a copy of its own."""
    from orchestrator.evidence import validity

    nominal = 3.0
    for seconds in (2.0, 2.6, 2.69, 2.7, 2.75, 2.99, 3.0):
        m = throughput([100.0], seconds=seconds)
        (row,) = diff.diff_runs(make_run("a", [HostResult("h", measurements=m)], matrix={"seconds": nominal}),
                                make_run("b", [HostResult("h", measurements=throughput([100.0]))]))
        assert ("busy-old" in row.flags) == validity.short_cpu_time(m[0], nominal), seconds
    assert validity.short_cpu_time(Measurement("x", seconds=2.6), nominal)  # 0.8 (the old copy) would not flag it


DIFF_TABLE = """\
host      algorithm    api     threads    block    old            new            delta    p              flags
--------  -----------  ------  ---------  -------  -------------  -------------  -------  -------------  --------------------
router-1  aes-256-gcm  evp     1          1024     100 MB/s ± 1%  100 MB/s ± 1%  ~        p=1.000 n=4+3
router-1  aes-256-gcm  legacy  12         1024     5e-06 MB/s     -              -                       missing-new
router-1  rsa2048              1          sign     3,344 ops/s    -              -                       busy-old missing-new
x         aes-256-gcm  evp     1          1024     -              100 MB/s ± 1%  -                       missing-old
x         aes-256-gcm  legacy  12         1024     -              5e-06 MB/s     -                       missing-old
x         rsa2048              1          sign     -              3,344 ops/s    -                       missing-old busy-new"""

DIFF_MARKDOWN = """\
| host     | algorithm   | api    | threads   | block   | old           | new           | delta   | p             | flags                |
|----------|-------------|--------|-----------|---------|---------------|---------------|---------|---------------|----------------------|
| router-1 | aes-256-gcm | evp    | 1         | 1024    | 100 MB/s ± 1% | 100 MB/s ± 1% | ~       | p=1.000 n=4+3 |                      |
| router-1 | aes-256-gcm | legacy | 12        | 1024    | 5e-06 MB/s    | -             | -       |               | missing-new          |
| router-1 | rsa2048     |        | 1         | sign    | 3,344 ops/s   | -             | -       |               | busy-old missing-new |
| x        | aes-256-gcm | evp    | 1         | 1024    | -             | 100 MB/s ± 1% | -       |               | missing-old          |
| x        | aes-256-gcm | legacy | 12        | 1024    | -             | 5e-06 MB/s    | -       |               | missing-old          |
| x        | rsa2048     |        | 1         | sign    | -             | 3,344 ops/s   | -       |               | missing-old busy-new |"""


def test_table_and_markdown_layout():
    """The layouts tabulate's "simple" and "github" formats gave (its output, kept as the expected text)."""
    ms = (throughput([100e6, 101e6, 99e6, 100.5e6]) + throughput([5.0], api="legacy", threads=12)
          + [Measurement("rsa2048", operation="sign", ops_per_second=3344.0, flags=["busy"])])
    rows = diff.diff_runs(make_run("a", [HostResult("router-1", measurements=ms)]),
                          make_run("b", [HostResult("router-1", measurements=ms[:3]), HostResult("x", measurements=ms)]))
    assert diff_table.render(rows, "table") == DIFF_TABLE
    assert diff_table.render(rows, "markdown") == DIFF_MARKDOWN
    assert diff_table.render([], "table") == (
        "host    algorithm    api    threads    block    old    new    delta    p    flags\n"
        "------  -----------  -----  ---------  -------  -----  -----  -------  ---  -------")
    assert diff_table.render([], "markdown") == (
        "| host   | algorithm   | api   | threads   | block   | old   | new   | delta   | p   | flags   |\n"
        "|--------|-------------|-------|-----------|---------|-------|-------|---------|-----|---------|")


def test_line_rate_changes_need_cells_on_both_sides():
    old = make_run("a", [HostResult("r1", measurements=throughput([15e6] * 4))])
    gone = make_run("b", [HostResult("r2", measurements=throughput([10e6] * 4))])
    assert diff.line_rate_changes(diff.diff_runs(old, gone), [100]) == []
    slower = make_run("b", [HostResult("r1", measurements=throughput([10e6] * 4))])
    (line,) = diff.line_rate_changes(diff.diff_runs(old, slower), [100])
    assert line.startswith("r1: was: carries 100 Mbit/s on 1 core")


def test_history_orders_runs_of_the_same_second_by_the_time_in_their_ids():
    # Both runs were created in the same second; their ids say which came first (an id of an older store, with
    # whole seconds, counts as .000000; as plain strings "…000000Z-ffff" sorts after "…000000.900000Z-0000").
    created = "2026-01-01T00:00:00+00:00"
    first = make_run("20260101T000000Z-ffff", [firmware_host("22.03", [1.0])], created=created)
    second = make_run("20260101T000000.900000Z-0000", [firmware_host("23.05", [2.0])], created=created)
    for runs in ([first, second], [second, first]):
        assert [e.label for e in diff.firmware_history(runs, "router")] == ["OpenWrt 22.03", "OpenWrt 23.05"]
        old, new, _ = diff.diff_by_firmware(runs, "router")
        assert (old.label, new.label) == ("OpenWrt 22.03", "OpenWrt 23.05")
