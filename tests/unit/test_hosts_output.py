"""`sslbench hosts` output as a whole, against golden files: the rig's hosts as detect.sh described them
(tests/data/detect/, captured over SSH), the build VM's topology, and a host that could not be reached."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from orchestrator.analysis.identity import os_label
from orchestrator.cli import build_parser
from orchestrator.commands.hosts import render_hosts
from orchestrator.commands.options import plan_options_from_args
from orchestrator.model import HOST_UNREACHABLE, HostResult, OsFacts, Run
from orchestrator.run import fleet
from orchestrator.run.progress import ProgressView

DATA = Path(__file__).resolve().parents[1] / "data"
DETECTED = sorted((DATA / "detect").glob("*.detect.txt")) + [
    DATA / "topology" / "x86_64-vm-2cpu-cluster-id-per-core.detect.txt"]


def detected_fleet(*words: str) -> tuple[dict[str, fleet.HostState], dict[str, tuple[fleet.HostState, object]]]:
    """What `sslbench hosts WORDS` decides once detect.sh has answered: its engine, over a fleet without SSH."""
    import os
    import tempfile

    from fake_fleet import FakeDriver, config_for
    from orchestrator.run import engine
    from orchestrator.run.hostlink import Outcome
    from orchestrator.run.runner import Interrupt

    args = build_parser("hosts").parse_args(["hosts", *words])

    def answers(text: str):
        return lambda kind, script: Outcome("ok", stdout=text)

    hosts = {path.name.split(".")[0]: answers(path.read_text()) for path in DETECTED}
    hosts["router-attic"] = lambda kind, script: Outcome(
        "unreachable", stderr="ssh: connect to host 192.0.2.7 port 22: No route to host")
    with tempfile.TemporaryDirectory() as scratch:
        os.makedirs(f"{scratch}/run")
        driver = FakeDriver(Path(scratch), hosts)
        collector = fleet.Collector(Run(run_id="hosts", created=""), Path(scratch) / "run",
                                    ProgressView(live=False, stream=io.StringIO()), store_results=False)
        config = config_for(plan_options_from_args(args), no_provision=args.no_provision,
                            upgrade_openssl=args.upgrade_openssl)
        plans = engine.Engine(driver, collector, config, Interrupt(), bench=False).run()
    return collector.hosts, plans


def test_the_fixtures_cover_what_the_table_distinguishes():
    hosts, plans = detected_fleet()
    assert {s.openssl_path is None for s in hosts.values()} == {True, False}  # missing and present
    assert {bool(s.provision) for s in hosts.values() if s.result.status == "ok"} == {True, False}
    assert len({s.result.os.family for s in hosts.values()}) >= 5


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_hosts_output_of_a_detected_fleet(fmt, golden):
    hosts, plans = detected_fleet()
    text, notes = render_hosts(hosts, plans, fmt)
    golden(f"hosts-rig.{fmt}", text + "\n" + "".join(f"stderr: {n}\n" for n in notes))


@pytest.mark.parametrize("width", [80, 120])
def test_hosts_table_fitted_to_a_terminal(width, golden):
    hosts, plans = detected_fleet()
    text, _ = render_hosts(hosts, plans, "table", width)
    assert max(len(line) for line in text.splitlines()) <= width
    golden(f"hosts-rig-{width}-columns.table", text + "\n")


def test_hosts_output_with_a_budget_and_no_provisioning(golden):
    hosts, plans = detected_fleet("--budget", "2m", "--no-provision")
    text, notes = render_hosts(hosts, plans, "table")
    golden("hosts-rig-budget-no-provision.table", text + "\n" + "".join(f"stderr: {n}\n" for n in notes))


@pytest.mark.parametrize("os_facts, label", [
    ({"family": "centos", "name": "CentOS Linux 7 (Core)", "version": "7.9.2009"}, "CentOS Linux 7.9.2009"),
    ({"family": "ddwrt", "name": "DD-WRT", "revision": "55630"}, "DD-WRT r55630"),
    ({"family": "ddwrt", "name": "DD-WRT v3.0", "version": "v3.0", "revision": "44715"}, "DD-WRT v3.0"),
    ({"family": "openwrt", "name": "OpenWrt 23.05.5 r24106-10cc5fcd00", "version": "23.05.5"}, "OpenWrt 23.05.5"),
    ({"family": "ubuntu", "name": "Ubuntu 22.04.4 LTS", "version": "22.04"}, "Ubuntu 22.04.4 LTS"),
    ({"family": "arch"}, "Arch Linux"),
    ({}, "?"),
])
def test_os_label_is_the_name_and_release_once(os_facts, label):
    assert os_label(HostResult(host="h", os=OsFacts(**os_facts))) == label


def test_hosts_shows_the_tunnels_plan_their_packages_and_eta():
    """--tunnels: a column of the tunnels, their packages in `would install` (the rig's captured detect outputs
    predate the `tunnel tools` section, so every host lacks the tools), the ETA with them, JSON keys of their own;
    without --tunnels none of it (the golden files above)."""
    import json

    from orchestrator.run import platforms

    hosts, plans = detected_fleet("--tunnels", "all", "--seconds", "2")
    _, plain = detected_fleet("--seconds", "2")
    text, _ = render_hosts(hosts, plans, "table")
    assert "tunnels" in text.splitlines()[0].split()
    assert plans and all(name in plain for name in plans)
    for name, (state, plan) in plans.items():
        assert [t.tunnel for t in plan.tunnels] == ["wireguard", "openvpn-aes-256-gcm", "openvpn-chacha20-poly1305",
                                                    "openvpn-dco-aes-256-gcm"]
        assert plan.eta_seconds == plain[name][1].eta_seconds + sum(t.eta_seconds for t in plan.tunnels)
        manager = platforms.choose_package_manager(state.package_managers)
        if manager is not None and manager.tunnels is not None:
            assert state.tunnel_install == manager.tunnels.packages(("wireguard", "openvpn"))
            assert ", ".join(state.tunnel_install) in text
    records = json.loads(render_hosts(hosts, plans, "json")[0])
    planned = [r for r in records if r["host"] in plans]
    assert all(len(r["tunnels"]) == 4 and r["tunnels"][0]["seconds"] == 2 for r in planned)
