"""A run stopped before its end (#37: a signal, a stop of its own) is said as such by every reader that lists runs:
`report` (the hosts it caught: failed, with the stage), `history --runs` and `trend`."""
from __future__ import annotations

import json

from fleet_store import WRT3200, measure, save

from orchestrator import cli
from orchestrator.model import HOST_FAILED, HostResult, Run

FIRST, STOPPED = "20260105T090000.000000Z-a1f3", "20260302T101500.000000Z-b7e2"
SIGTERM = "interrupted (SIGTERM)"


def sslbench(capsys, *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


def stored(tmp_path):
    """Two runs of wrt3200; the second stopped by SIGTERM while its cells ran, catching r2 still in detect."""
    cut = measure(WRT3200)
    cut.measurements = cut.measurements[:5]
    cut.status, cut.interrupted, cut.reason = HOST_FAILED, "cells", f"{SIGTERM} during cells"
    caught = HostResult("r2", status=HOST_FAILED, reason=f"{SIGTERM} during detect", interrupted="detect")
    return save([Run(FIRST, "2026-01-05T09:00:00+00:00", hosts=[measure(WRT3200)]),
                 Run(STOPPED, "2026-03-02T10:15:00+00:00", hosts=[cut, caught], interrupted=SIGTERM)],
                tmp_path / "results")


def test_history_runs_marks_the_interrupted_run(tmp_path, capsys):
    results = str(stored(tmp_path))
    code, out = sslbench(capsys, "history", "wrt3200", "--runs", "--results", results)
    lines = out.splitlines()
    assert code == 0 and "interrupted" in lines[0]
    assert SIGTERM in next(line for line in lines if STOPPED in line)
    assert SIGTERM not in next(line for line in lines if FIRST in line)
    code, out = sslbench(capsys, "history", "wrt3200", "--runs", "--format", "json", "--results", results)
    assert [run.get("interrupted") for run in json.loads(out)] == [None, SIGTERM]


def test_trend_says_which_run_stopped_before_its_end_and_where(tmp_path, capsys):
    results = str(stored(tmp_path))
    code, out = sslbench(capsys, "trend", "wrt3200", "--results", results)
    assert code == 0
    assert f"run {STOPPED} stopped before its end ({SIGTERM} during cells)" in out
    assert f"run {FIRST} stopped" not in out
    code, out = sslbench(capsys, "trend", "wrt3200", "--format", "json", "--results", results)
    assert any(STOPPED in note and "during cells" in note for note in json.loads(out)["notes"])


def test_report_lists_a_host_caught_in_detect_as_failed_with_the_stage(tmp_path, capsys):
    results = stored(tmp_path)
    code, text = sslbench(capsys, "report", str(results / STOPPED), "--view", "hosts")
    row = next(line for line in text.splitlines() if line.lstrip().startswith("r2"))
    assert HOST_FAILED in row and f"{SIGTERM} during detect" in row


def test_a_host_stopped_during_its_tunnels_says_tunnels_not_fetch():
    """The runner's count of what ran takes the tunnels (measured after the cells) too: a stop after every cell
    and before every tunnel is a stop during the tunnels; only all of both ran is a stop during the fetch."""
    from orchestrator.run.fleet import HostState
    from orchestrator.run.flow import HostFlow, Phase, interrupted_stage
    from orchestrator.run.matrix import CellPlan, HostPlan, capabilities
    from orchestrator.run.tunnels import TunnelPlan

    cells = [CellPlan(id=f"00{i}-sha256-t1", algorithm="sha256", kind="digest", api=None, threads=1, sizes=(16,),
                      args=["speed", "sha256"], seconds=1.0) for i in (1, 2)]
    tunnels = [TunnelPlan(tunnel=name, seconds=1, streams=1, repeats=1)
               for name in ("wireguard", "openvpn-aes-256-gcm")]
    plan = HostPlan(host="r1", capabilities=capabilities("3.0.19"), cells=cells, tunnels=tunnels)
    flow = HostFlow(state=HostState(name="r1", result=HostResult("r1"), plan=plan), step=None, phase=Phase.LAUNCHED)
    assert [interrupted_stage(flow, ran) for ran in range(5)] == ["cells", "cells", "tunnels", "tunnels", "fetch"]
    plan.tunnels = []
    assert [interrupted_stage(flow, ran) for ran in range(3)] == ["cells", "cells", "fetch"]
