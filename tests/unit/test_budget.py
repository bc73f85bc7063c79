"""--budget: duration parsing and the drop order, with a planner that does matrix-like arithmetic."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from orchestrator.errors import UserError
from orchestrator.run.budget import CELL_OVERHEAD_SECONDS, fit_budget, parse_duration, planned_seconds

ALL_SIZES = (16, 64, 256, 1024, 8192, 16384)
OLD_SIZES = (16, 64, 256, 1024, 8192)
LEGACY = {"aes-128-cbc", "aes-256-cbc", "sha256", "sha512"}
PUBKEY = {"rsa2048", "ecdsap256", "ed25519"}


@dataclass(frozen=True)
class Request:  # the fields of matrix.MatrixRequest that budget changes
    algorithms: tuple = ("aes-128-cbc", "aes-256-cbc", "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305",
                         "sha256", "sha512", "rsa2048", "ecdsap256", "ed25519")
    sizes: tuple | None = None
    threads: tuple = ("1", "all")
    apis: tuple = ("evp", "legacy")
    seconds: int | None = None
    repeat: int = 1


@dataclass
class CellPlan:  # stands in for matrix.CellPlan
    seconds: float
    sizes: tuple


@dataclass
class Plan:
    cells: list


def planner(has_seconds: bool = True, sizes_available: tuple = ALL_SIZES, cpus: int = 4):
    """Independent arithmetic: symmetric cells len(sizes) x seconds, public-key 2 ops x seconds."""
    def plan(req: Request) -> Plan:
        sec = req.seconds if (req.seconds and has_seconds) else None
        sizes = tuple(s for s in (req.sizes or sizes_available) if s in sizes_available)
        threads = {1 if t == "1" else cpus for t in req.threads}
        cells = []
        for _ in range(req.repeat):
            for algo in req.algorithms:
                for _t in threads:
                    if algo in PUBKEY:
                        cells.append(CellPlan(2 * (sec or 10), ()))
                        continue
                    for api in req.apis:
                        if api == "legacy" and algo not in LEGACY:
                            continue
                        # without -seconds (1.0.x) the whole default table runs whatever sizes are kept
                        run_sizes = sizes if has_seconds else sizes_available
                        cells.append(CellPlan(len(run_sizes) * (sec or 3), sizes))
        return Plan(cells)
    return plan


@pytest.mark.parametrize("text, seconds", [("10m", 600), ("90s", 90), ("1h30m", 5400), ("45", 45),
                                           ("1h", 3600), ("2m30s", 150), (" 1.5m ", 90), ("1H", 3600)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "ten minutes", "10x", "m", "-5m", "0s", "1m1h"])
def test_bad_durations_say_what_to_write(text):
    with pytest.raises(UserError, match="10m|longer than 0"):
        parse_duration(text)


def test_a_plan_that_fits_is_left_alone():
    req = Request()
    result = fit_budget(req, planner(), 3600)
    assert result.fits and result.dropped == [] and result.request == req
    assert result.planned_seconds == planned_seconds(planner()(req))
    assert "plan fits the budget" in result.message


def test_five_minutes_on_a_modern_host_drops_sizes_then_legacy():
    full = planned_seconds(planner()(Request()))
    assert full > 300  # the default matrix takes ~9 minutes
    result = fit_budget(Request(), planner(), 300)
    assert result.fits and result.planned_seconds <= 300
    assert result.request.sizes == (16, 1024, 16384)
    assert result.dropped[0].startswith("sizes 64,256,8192 (kept 16,1024,16384) (saves ")
    assert result.dropped[1].startswith("legacy API cells")
    assert len(result.dropped) == 2
    # everything else the user asked for is still there
    assert len(result.request.algorithms) == 10 and result.request.threads == ("1", "all")
    assert result.message.startswith("to fit 5m00s; dropped: sizes 64,256,8192")


def test_drop_order_goes_legacy_then_seconds_then_repeats():
    req = Request(repeat=3, seconds=3)
    steps = fit_budget(req, planner(), 120).dropped
    kinds = [s.split(" ")[0] for s in steps]
    assert kinds[:6] == ["sizes", "legacy", "-seconds", "-seconds", "repeat", "repeat"], steps
    assert steps[2].startswith("-seconds 3 s -> 2 s") and steps[3].startswith("-seconds 2 s -> 1 s")
    assert "repeat 3 -> 2" in steps[4]


def test_seconds_shrink_one_step_at_a_time_so_the_plan_stays_as_big_as_fits():
    # default times (3 s per size, 10 s per public-key op): a modest cut only goes to -seconds 3
    result = fit_budget(Request(apis=("evp",)), planner(), 200)
    assert result.fits and result.request.seconds == 3
    assert [s.split(" (saves")[0] for s in result.dropped] == [
        "sizes 64,256,8192 (kept 16,1024,16384)", "-seconds default time -> 3 s"]


def test_algorithms_go_least_asked_first_and_one_always_stays():
    result = fit_budget(Request(), planner(), 1)
    assert not result.fits
    assert result.request.algorithms == ("aes-128-gcm",)
    dropped_algos = [s.split()[1] for s in result.dropped if s.startswith("algorithm")]
    assert dropped_algos[:3] == ["sha512", "ed25519", "ecdsap256"]
    assert dropped_algos[-1] == "chacha20-poly1305"
    assert result.request.threads == ("all",)
    assert result.request.sizes == (1024,)
    assert "cannot fit 1s: the smallest plan takes" in result.message and "raise --budget" in result.message


def test_user_named_algorithms_outlast_the_defaults():
    req = Request(algorithms=("camellia-128-cbc", "sha512", "aes-128-gcm"))
    result = fit_budget(req, planner(), 4)
    assert result.request.algorithms == ("camellia-128-cbc",)
    assert result.fits


def test_a_host_without_seconds_keeps_its_fixed_time():
    # OpenSSL 1.0.x: -seconds does not exist, and filtering sizes saves nothing (the table runs anyway)
    plan = planner(has_seconds=False, sizes_available=OLD_SIZES)
    result = fit_budget(Request(repeat=2), plan, 400)
    kinds = [s.split(" ")[0] for s in result.dropped]
    assert "-seconds" not in kinds and "sizes" not in kinds
    assert kinds[:2] == ["legacy", "repeat"]


def test_overheads_count():
    plan = planner()(Request(algorithms=("aes-128-gcm",), threads=("1",), apis=("evp",), sizes=(1024,), seconds=1))
    assert planned_seconds(plan) == 1 + CELL_OVERHEAD_SECONDS
    assert planned_seconds(plan, cell_overhead=0, fixed=30) == 31
    tight = fit_budget(Request(algorithms=("aes-128-gcm",), threads=("1",), apis=("evp",)), planner(), 20,
                       fixed_seconds=15)
    assert tight.fits and tight.planned_seconds <= 20
    assert tight.to_dict()["fits"] is True


# --- in `sslbench run` / `hosts`: the real planner per host, the options checked up front ---------------

def host_state(version="OpenSSL 3.0.19", cpus=4, pins=()):
    from orchestrator.run.fleet import HostState
    from orchestrator.model import HostResult, OpenSSLBuild

    state = HostState(name="box", result=HostResult(host="box", openssl=OpenSSLBuild(version=version)),
                      logical_cpus=cpus)
    state.pins = list(pins)
    return state


def test_run_fits_each_hosts_real_plan_and_says_what_went():
    from orchestrator.run.config import PlanOptions
    from orchestrator.run.fleet import SNAPSHOT_SECONDS, plan_for
    from orchestrator.run.matrix import MatrixRequest

    state = host_state()
    full = plan_for(host_state(), MatrixRequest())
    plan = plan_for(state, PlanOptions(request=MatrixRequest(), budget_seconds=300, idle_wait=60))
    assert full.eta_seconds > 300 and state.budget is not None and state.budget.fits
    # the idle gate and the snapshots are part of the budget
    assert planned_seconds(plan) + 60 + 2 * SNAPSHOT_SECONDS <= 300 < planned_seconds(full)
    assert state.plan is plan and any(n.startswith("budget: to fit 5m00s; dropped: sizes") for n in plan.notes)
    # an old OpenSSL gets its own fit: no -seconds to shorten, so more has to go
    old = host_state("OpenSSL 1.0.2u  20 Dec 2019")
    plan_for(old, PlanOptions(request=MatrixRequest(), budget_seconds=300, idle_wait=60))
    assert old.budget.dropped != state.budget.dropped


def test_a_budget_too_small_says_so_and_runs_the_smallest_plan():
    from orchestrator.run.config import PlanOptions
    from orchestrator.run.fleet import plan_for
    from orchestrator.run.matrix import MatrixRequest

    state = host_state()
    plan = plan_for(state, PlanOptions(request=MatrixRequest(), budget_seconds=5, idle_wait=60))
    assert not state.budget.fits and len(plan.cells) == 1
    assert any("cannot fit 5s" in n and "raise --budget" in n for n in plan.notes)


def test_big_little_pins_count_in_the_budget_and_are_noted():
    from orchestrator.run.config import PlanOptions
    from orchestrator.run.fleet import plan_for
    from orchestrator.run.matrix import MatrixRequest

    pinned = host_state(pins=[(7, "Cortex-A72"), (3, "Cortex-A53")])
    request = MatrixRequest(algorithms=("sha256",), sizes=(1024,), seconds=1, apis=("evp",))
    plan = plan_for(pinned, PlanOptions(request=request, idle_wait=0))
    assert sorted(c.pin for c in plan.cells if c.threads == 1) == [3, 7]
    assert "single-thread cells pinned to CPU 7 (Cortex-A72), CPU 3 (Cortex-A53)" in plan.notes


@pytest.mark.parametrize("argv, said", [
    (["run", "--idle-wait", "-5"], "--idle-wait takes whole seconds"),
    (["run", "--idle-wait", "1m"], "--idle-wait takes whole seconds"),
    (["run", "--idle-wait", "99999"], "--idle-wait takes whole seconds"),
    (["run", "--budget", "ten minutes"], "--budget takes a duration like 10m"),
    (["hosts", "--budget", "0s"], "--budget must be longer than 0 seconds"),
])
def test_bad_idle_wait_and_budget_are_one_clear_line_before_anything_runs(argv, said, tmp_path, capsys):
    from orchestrator.cli import main

    assert main([*argv, "--results", str(tmp_path)] if argv[0] == "run" else argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # no run directory was made


def test_the_tunnels_count_in_the_budget_as_in_the_eta():
    """`--budget 2m --tunnels all` once said the plan fit (1m43s of 2m, the openssl cells alone) while the ETA,
    which counts the tunnels measured after them, was 3m37s: the fit counts what the host will run."""
    from orchestrator.run.config import PlanOptions
    from orchestrator.run.fleet import SNAPSHOT_SECONDS, plan_for
    from orchestrator.run.matrix import MatrixRequest

    fixed = 2 * SNAPSHOT_SECONDS
    fits = {}
    for seconds in (60, 120, 3600):
        state = host_state()
        plan = plan_for(state, PlanOptions(request=MatrixRequest(), budget_seconds=seconds, idle_wait=0,
                                           tunnels=("wireguard", "openvpn")))
        assert [t.tunnel for t in plan.tunnels][:1] == ["wireguard"] and state.budget is not None
        tunnel_seconds = sum(t.eta_seconds for t in plan.tunnels)
        assert state.budget.planned_seconds == planned_seconds(plan, fixed=fixed) >= plan.eta_seconds + fixed
        assert planned_seconds(plan) == planned_seconds(dataclasses.replace(plan, tunnels=[])) + tunnel_seconds
        assert state.budget.fits == (plan.eta_seconds <= state.budget.planned_seconds - fixed <= seconds)
        fits[seconds] = state.budget.fits
    # a minute: the tunnels alone (at -t 1) take longer, said so; two: fitted with them; an hour: all of it
    assert fits == {60: False, 120: True, 3600: True}
    assert "cannot fit 1m00s" not in state.budget.message and "plan fits the budget" in state.budget.message
