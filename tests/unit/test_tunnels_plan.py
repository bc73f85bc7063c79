"""`--tunnels` (and `tunnels =` in --config) into each host's tunnel plan, its ETA and the launcher's files."""
from pathlib import Path

import pytest

from orchestrator import cli
from orchestrator.errors import UserError
from orchestrator.run import stages, tunnels
from orchestrator.run.matrix import Capabilities, HostPlan
from orchestrator.run.tunnels import TunnelPlan, parse_tunnels, plan_tunnels, requested, tunnels_text


@pytest.mark.parametrize("given, groups", [(None, ()), ("none", ()), ("", ()), ("wireguard", ("wireguard",)),
                                           ("openvpn,wireguard", ("wireguard", "openvpn")),
                                           ("all", ("wireguard", "openvpn")), (" WireGuard ", ("wireguard",)),
                                           (["openvpn"], ("openvpn",))])
def test_the_request(given, groups):
    assert parse_tunnels(given) == groups


@pytest.mark.parametrize("bad", ["ipsec", "wireguard,none", "wg"])
def test_a_bad_request_says_what_is_allowed(bad):
    with pytest.raises(UserError, match="--tunnels takes wireguard, openvpn"):
        parse_tunnels(bad)


def test_the_config_file_gives_the_default_and_the_option_wins(tmp_path):
    config = tmp_path / "sslbench.toml"
    config.write_text('tunnels = ["wireguard"]\n[workers.lab]\nssh = "pi@lab"\n')
    assert requested(None, str(config)) == ("wireguard",)
    assert requested("none", str(config)) == ()
    config.write_text("tunnels = 3\n")
    with pytest.raises(UserError, match="tunnels must be a string"):
        requested(None, str(config))
    args = cli.build_parser("run").parse_args(["run", "--tunnels", "all"])
    assert args.tunnels == "all"


def test_each_tunnel_of_the_groups_is_planned_with_its_streams_and_eta():
    plans = plan_tunnels(("wireguard", "openvpn"), logical_cpus=4, seconds=None, repeat=2)
    assert [p.tunnel for p in plans] == ["wireguard", "openvpn-aes-256-gcm", "openvpn-chacha20-poly1305",
                                         "openvpn-dco-aes-256-gcm"]
    wg = plans[0]
    assert (wg.id, wg.seconds, wg.streams, wg.repeats, wg.tests) == ("tunnel-wireguard", 10, 4, 2, 8)
    assert wg.eta_seconds == tunnels.SETUP_SECONDS + 8 * (10 + tunnels.PER_TEST_SECONDS)
    [one] = plan_tunnels(("wireguard",), logical_cpus=1, seconds=2, repeat=1)
    assert one.tests == 2  # one core: no -P test, it would be the single stream again
    assert tunnels_text(plans[:1]) == "tunnel-wireguard\twireguard 10 4 2\n"


def test_the_launcher_ships_tunnel_sh_only_with_tunnels_and_the_eta_counts_them():
    plan = HostPlan(host="h", capabilities=Capabilities(label="OpenSSL 3.0.0", version=(3, 0, 0)))
    assert "cat > tunnel.sh" not in stages.launcher_script("r1", plan, "openssl", 0)
    plan.tunnels = [TunnelPlan("wireguard", 1, 2, 1)]
    script = stages.launcher_script("r1", plan, "openssl", 0)
    assert "cat > tunnel.sh <<'SSLBENCH_TUNNEL_EOF'" in script
    assert "echo 'tunnel-wireguard\twireguard 1 2 1' > tunnels.txt" in script
    assert plan.eta_seconds == plan.tunnels[0].eta_seconds
    assert Path(stages.PLAYBOOK_DIR / "files" / "tunnel.sh").read_text().rstrip("\n") in script


def test_a_bad_tunnels_value_is_a_message_not_a_traceback(capsys):
    for command in ("run", "hosts"):
        assert cli.main([command, "--tunnels", "ipsec"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sslbench: --tunnels takes wireguard, openvpn") and "Traceback" not in err
