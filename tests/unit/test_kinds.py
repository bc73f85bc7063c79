"""The registry of benchmark kinds: what each kind declares, its hooks, and a third kind as one module and one entry
carried through cells, diff and verdicts without touching them."""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
from pathlib import Path

import pytest

from orchestrator import cli, kinds, methods
from orchestrator.analysis import cells, diff, verdict
from orchestrator.errors import UserError
from orchestrator.kinds import Kind, Needs, Option, RunContext, speed, tunnel
from orchestrator.methods import MethodChange
from orchestrator.model import FORWARD, SPEED, TUNNEL, HostResult, Measurement, Run, TunnelMethod
from orchestrator.parse.speed import parse_speed
from orchestrator.render import dashboards, tables
from orchestrator.run import matrix, platforms
from orchestrator.units import fmt_rate


def test_the_registry_holds_openssl_speed_and_tunnels_by_their_measurement_kind():
    assert list(kinds.KINDS) == [SPEED, TUNNEL]
    assert kinds.REGISTERED == tuple(kinds.KINDS.values())  # every kind module listed is registered, in order
    assert kinds.get(SPEED) is speed.SPEED_KIND and kinds.get(TUNNEL) is tunnel.TUNNEL_KIND
    with pytest.raises(UserError, match="unknown benchmark kind 'latency'; known: openssl-speed, tunnel"):
        kinds.get("latency")


def test_openssl_speed_goes_through_its_kind():
    kind = kinds.get(SPEED)
    assert kinds.hook(kind.planner) is matrix.plan_host
    assert kinds.hook(kind.parser) is parse_speed
    assert kind.script == "files/sslbench-run.sh"
    assert kind.nominal_seconds(None) == methods.FIXED_SECONDS and kind.nominal_seconds(2) == 2.0
    assert [o.flag for o in kind.options] == ["--algorithms", "--sizes", "--threads", "--api", "--seconds", "--repeat"]
    assert kind.higher_is_better and kind.compare is methods.compare
    gcm = Measurement("aes-256-gcm", 1024, 5e7, api="evp")
    sign = Measurement("rsa2048", operation="sign", ops_per_second=300.0)
    assert (kind.value(gcm), kind.unit_of(gcm), kind.value(sign), kind.unit_of(sign)) == (5e7, "B/s", 300.0, "ops/s")
    assert kind.label(cells.key_of(gcm)) == "aes-256-gcm 1024 B evp t1"
    assert kind.key_cells(cells.key_of(sign)) == ("rsa2048", "", 1, "sign")


def test_openssl_speed_packages_are_the_ones_the_platforms_table_installs():
    """The kind says what a host needs; run/platforms.py how each package manager installs it: they agree."""
    declared = {need.family: need.packages for need in kinds.get(SPEED).needs}
    installs = {pm.name: pm.package for pm in platforms.PACKAGE_MANAGERS}
    assert declared["openwrt"] == (installs["apk"],) == (installs["opkg"],)
    assert declared["debian"] == (installs["apt-get"],)
    assert declared["redhat"] == (installs["dnf"],) and declared["arch"] == (installs["pacman"],)


def test_the_tunnel_kind_declares_its_request_needs_time_unit_and_hooks():
    kind = kinds.get(TUNNEL)
    assert [o.flag for o in kind.options] == ["--tunnels", "--seconds", "--repeat"]
    needs = {need.family: need for need in kind.needs}
    assert needs["openwrt"].packages == ("ip-full", "kmod-veth", "kmod-wireguard", "wireguard-tools", "iperf3",
                                         "openvpn-openssl")
    assert needs["debian"].packages == ("iproute2", "wireguard-tools", "iperf3", "openvpn")
    assert needs["debian"].lacking == {"kernel wireguard": ("wireguard-go",)}
    # per tunnel: 4 iperf3 runs of --seconds (10 without it) and its setup
    assert kind.nominal_seconds(None) == 4 * 10 + tunnel.SETUP_SECONDS
    assert kind.nominal_seconds(30) == 4 * 30 + tunnel.SETUP_SECONDS
    assert (kind.planner, kind.script, kind.parser) == (
        "orchestrator.run.tunnels:plan_tunnels", "files/tunnel.sh", "orchestrator.parse.tunnel:parse_tunnel")
    assert kind.higher_is_better
    m = Measurement("wireguard", bytes_per_second=29.25e6, operation=FORWARD, kind=TUNNEL, implementation="kernel")
    assert (kind.value(m), kind.unit_of(m)) == (234e6, "bit/s")  # the receiver's bytes/s, shown in Mbit/s
    assert fmt_rate(kind.value(m) or 0.0, kind.unit_of(m)) == "234 Mbit/s"
    assert kind.label(cells.key_of(m)) == "wireguard kernel forward t1"
    assert kind.key_cells(cells.key_of(m)) == ("wireguard", "kernel", 1, "forward")
    assert m.value == 29.25e6  # the stored figure, though a tunnel has an operation (its direction)


def test_a_hook_not_written_yet_is_a_user_error_when_called_for_not_at_import():
    with pytest.raises(UserError, match="hook orchestrator.nowhere:plan is not available"):
        kinds.hook("orchestrator.nowhere:plan")
    with pytest.raises(UserError, match="is not a function"):
        kinds.hook("orchestrator.model:SPEED")


def test_a_tunnel_method_splits_method_fields_from_the_firmware_judged():
    kernel = TunnelMethod("wireguard", "kernel", "6.6.73", "3.16", 1420, 1500, 10.0, None, "6.6.73")
    go = dataclasses.replace(kernel, implementation="wireguard-go", implementation_version="0.0.20230223")
    assert tunnel.method_id(kernel) == ("tunnel;iperf3_version=3.16;mtu=1420;veth_mtu=1500;duration_seconds=10;"
                                        "socket_buffer=?")
    assert tunnel.method_id(go).endswith(";kernel=6.6.73")  # in user space the kernel is part of the method
    assert (tunnel.firmware(kernel), tunnel.firmware(go)) == ("kernel 6.6.73", "wireguard-go 0.0.20230223")
    newer_kernel = dataclasses.replace(kernel, kernel="6.6.80", implementation_version="6.6.80")
    same = {tunnel.method_id(kernel): tunnel.firmware(kernel)}
    assert tunnel.compare(same, {tunnel.method_id(newer_kernel): tunnel.firmware(newer_kernel)}) is None
    change = tunnel.compare(same, {tunnel.method_id(dataclasses.replace(kernel, iperf3_version="3.17")): None})
    assert change == MethodChange("iperf3_version", "the tunnel's method may have changed: iperf3 3.16 → 3.17; "
                                                    "not judged", tunnel.COMPARABLE, maybe=True)
    unknown = {tunnel.method_id(dataclasses.replace(kernel, mtu=None, iperf3_version=None)): None}
    assert tunnel.compare(same, unknown) is None  # what a side did not say changes nothing by itself
    assert tunnel.compare(same, {tunnel.TUNNEL: None}) is None
    go_newer_kernel = dataclasses.replace(go, kernel="6.6.80")
    assert tunnel.compare({tunnel.method_id(go): None}, {tunnel.method_id(go_newer_kernel): None}).cause == "kernel"


# A third kind, as a newcomer adds one: a module's worth of functions and one registry entry. Lower is better.
def _latency_value(m: Measurement) -> float | None:
    return m.seconds


def _latency_methods(result: HostResult, keys, context: RunContext):
    return {key: (f"ping-{result.os.kernel or '?'}", None) for key in keys}


LATENCY = Kind(
    name="latency", summary="round trip through the tunnel, seconds", options=(Option("--pings", "N", "pings"),),
    needs=(Needs("debian", ("iputils-ping",)),), nominal_seconds=lambda seconds: float(seconds or 5),
    planner="tests.nowhere:plan", script="files/latency.sh", parser="tests.nowhere:parse",
    value=_latency_value, unit_of=lambda figure: "ops/s", label=lambda key: f"{key.algorithm} rtt",
    key_cells=lambda key: (key.algorithm, "", key.threads, "rtt"), cell_methods=_latency_methods,
    compare=lambda old, new: None if set(old) == set(new) else MethodChange("ping", "another ping", "none"),
    higher_is_better=False)


@pytest.fixture
def latency_kind(monkeypatch):
    monkeypatch.setitem(kinds.KINDS, LATENCY.name, LATENCY)
    return LATENCY


def _rtt(values: list[float]) -> list[Measurement]:
    return [Measurement("wireguard", seconds=v, kind="latency", repeat=i) for i, v in enumerate(values)]


def test_a_third_kind_is_one_entry_and_runs_through_cells_diff_and_verdicts(latency_kind):
    speed_figures = [Measurement("wireguard", 1024, 1e6, repeat=i) for i in range(5)]  # same name, another kind
    old = Run("a", "2026-01-01T00:00:00+00:00", hosts=[HostResult("r", measurements=[*_rtt([1.0, 1.01, 0.99, 1.0,
                                                                                           1.02]), *speed_figures])])
    new = Run("b", "2026-01-02T00:00:00+00:00", hosts=[HostResult("r", measurements=[*_rtt([1.5, 1.51, 1.49, 1.5,
                                                                                           1.52]), *speed_figures])])
    grouped = cells.host_cells(old.hosts[0])
    rtt = cells.Key("wireguard", None, None, 1, None, kind="latency")
    assert set(grouped) == {rtt, cells.Key("wireguard", None, None, 1, 1024)}  # never one cell with the speed figure
    assert grouped[rtt].methods == {"ping-?": None} and cells.label(rtt) == "wireguard rtt"
    rows = diff.diff_runs(old, new)
    assert [(r.key.kind, r.significant) for r in rows] == [(SPEED, False), ("latency", True)]  # speed first
    (case,) = verdict.failures(verdict.diff_cases(rows, 10.0))  # up is worse where lower is better
    assert case.failure == "wireguard rtt: +50.0% (p=0.008), worse than +10%"
    faster = Run("c", "2026-01-03T00:00:00+00:00", hosts=[HostResult("r", measurements=_rtt([0.5, 0.51, 0.49, 0.5,
                                                                                            0.52]))])
    assert not verdict.failures(verdict.diff_cases(diff.diff_runs(old, faster), 10.0))


def test_views_made_for_openssl_speed_never_show_a_tunnel_as_one_of_its_figures():
    """A tunnel has an operation (its direction): openssl's public-key table and the dashboards' public-key family
    must not take it for one."""
    tunnel_figure = Measurement("wireguard", bytes_per_second=29.25e6, operation=FORWARD, kind=TUNNEL,
                                implementation="kernel")
    sign = Measurement("rsa2048", operation="sign", ops_per_second=300.0)
    host = HostResult("r", measurements=[sign, tunnel_figure])
    headers, rows = tables.pk_table(tables.records([host]))
    assert headers == ["algorithm", "api", "threads", "host", "sign/s"] and len(rows) == 1
    assert tables.throughput_table(tables.records([host]))[1] == []
    exposed = dashboards.figures([Run("a", "2026-01-01T00:00:00+00:00", hosts=[host])])
    assert [dict(f.labels)["algorithm"] for f in exposed if f.family != dashboards.RUN_TIME] == ["rsa2048"]


def test_a_tunnel_figure_and_an_openssl_cell_never_share_a_key_whatever_their_fields():
    """Even spelled alike field by field, a tunnel and an openssl figure are two cells, never compared."""
    as_speed = Measurement("wireguard", bytes_per_second=30e6, operation=FORWARD)
    as_tunnel = dataclasses.replace(as_speed, kind=TUNNEL)
    kernel = dataclasses.replace(as_tunnel, implementation="kernel")
    grouped = cells.host_cells(HostResult("r", measurements=[as_speed, as_tunnel, kernel]))
    assert len(grouped) == 3
    assert {cell.unit for cell in grouped.values()} == {"ops/s", "bit/s"}  # an openssl operation: ops/s
    old = Run("a", "2026-01-01T00:00:00+00:00", hosts=[HostResult("r", measurements=[as_speed])])
    new = Run("b", "2026-01-02T00:00:00+00:00", hosts=[HostResult("r", measurements=[kernel])])
    assert [r.flags for r in diff.diff_runs(old, new)] == [["missing-new"], ["missing-old"]]


def test_openssl_speeds_request_is_the_run_commands_matrix_options():
    """The options a kind says its request takes are options `sslbench run` has (the tunnel helper adds --tunnels)."""
    parser = cli.build_parser("run")
    run = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    flags = {flag for action in run._actions for flag in action.option_strings}
    assert {option.flag for option in kinds.get(SPEED).options} <= flags


@pytest.mark.parametrize("name", [SPEED, TUNNEL])
def test_every_kinds_hooks_and_script_exist_once_their_wings_have_them(name):
    """The names a kind declares are the ones its helpers wrote: on a branch without the tunnel helper's modules
    the tunnel kind is skipped here (the registry still imports: hooks load lazily); merged, it must agree."""
    kind = kinds.get(name)
    modules = [hook.partition(":")[0] for hook in (kind.planner, kind.parser)]
    script = Path(__file__).resolve().parents[2] / "playbooks" / kind.script
    if name != SPEED and not (all(importlib.util.find_spec(m) for m in modules) and script.exists()):
        pytest.skip(f"the {name} kind's planner, parser or script is not on this branch yet")
    assert callable(kinds.hook(kind.planner)) and callable(kinds.hook(kind.parser))
    assert script.is_file()
