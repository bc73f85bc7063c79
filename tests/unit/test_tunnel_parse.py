"""orchestrator/parse/tunnel.py on real tunnel.sh outputs (tests/data/tunnel/): the measurements, their method and
evidence, the busy rule, "not measurable"; a cut anywhere (a Ctrl-C, a lost connection) never raises and never
makes a figure of a test that did not end."""
from pathlib import Path

import pytest

from orchestrator.model import BUSY, ERROR, FORWARD, OK, REVERSE, TUNNEL, UNSUPPORTED
from orchestrator.parse import tunnel as tunnel_parse
from orchestrator.parse.tunnel import BUSY_FRACTION, parse_tunnel

DATA = Path(__file__).resolve().parents[1] / "data" / "tunnel"
MEASURED = [("wireguard", "wireguard-go"), ("openvpn-aes-256-gcm", "openvpn-tun"),
            ("openvpn-chacha20-poly1305", "openvpn-tun")]


def read(name: str) -> str:
    return (DATA / f"{name}.txt").read_text()


@pytest.mark.parametrize("name, implementation", MEASURED)
def test_a_measured_tunnel_gives_four_figures_its_method_and_evidence(name, implementation):
    out = parse_tunnel(read(name))
    keys = [(m.operation, m.threads) for m in out.measurements]
    assert keys == [(FORWARD, 1), (REVERSE, 1), (FORWARD, 2), (REVERSE, 2)]  # 2 cores: -P 2 both ways
    for m in out.measurements:
        assert (m.kind, m.algorithm, m.implementation, m.status, m.repeat) == (TUNNEL, name, implementation, OK, 0)
        assert m.bytes_per_second and m.bytes_per_second > 0 and m.block_size is None and m.ops_per_second is None
    [method] = out.methods
    assert (method.tunnel, method.implementation, method.iperf3_version) == (name, implementation, "3.12")
    assert method.kernel and method.mtu and method.veth_mtu == 1500 and method.duration_seconds == 1.0
    assert method.implementation_version == ("0.0.20220316" if implementation == "wireguard-go" else "2.6.14")
    assert method.socket_buffer == (None if name == "wireguard" else 1048576)
    assert [(e.operation, e.threads, e.algorithm, e.implementation) for e in out.evidence] == [
        (m.operation, m.threads, m.algorithm, m.implementation) for m in out.measurements]
    for m, e in zip(out.measurements, out.evidence):
        names = {p.name for p in e.cpu_seconds}
        process = "wireguard-go" if implementation == "wireguard-go" else "openvpn"
        assert names == {f"{process}-a", f"{process}-b", "iperf3-client", "iperf3-server"}
        assert e.udp_rcvbuf_errors is not None and e.udp_rcvbuf_errors >= 0 and e.retransmits is not None
        assert e.sender_bytes_per_second and 0 <= e.busy_fraction <= 1
        assert (BUSY in m.flags) == (e.busy_fraction > BUSY_FRACTION)


def test_dco_where_there_is_none_is_not_measurable():
    out = parse_tunnel(read("openvpn-dco-aes-256-gcm"))
    [m] = out.measurements
    assert (m.status, m.reason, m.kind, m.bytes_per_second) == (UNSUPPORTED, "not measurable: no ovpn-dco", TUNNEL,
                                                                 None)
    # the same cipher's tunnel, carried by DCO: a figure of its own by its implementation
    assert (m.algorithm, m.implementation) == ("openvpn-aes-256-gcm", "openvpn-dco")
    assert out.methods == [] and out.evidence == []


def test_the_busy_rule_counts_the_tunnel_and_iperf3_processes_as_the_tunnels_work():
    text = read("openvpn-aes-256-gcm")
    run = tunnel_parse._tunnels(text)[0].runs[0]
    before, after = tunnel_parse._stat(run.parts["stat before"]), tunnel_parse._stat(run.parts["stat after"])
    delta = [b - a for a, b in zip(before, after)]
    ours = sum(p.seconds for p in parse_tunnel(text).evidence[0].cpu_seconds) * 100
    expected = max(delta[0] + delta[1] + delta[2] - ours, 0) / sum(delta)
    assert parse_tunnel(text).evidence[0].busy_fraction == pytest.approx(expected, abs=1e-4)


def test_kernel_wireguard_is_never_judged_busy_by_the_process_rule():
    text = read("wireguard").replace("@@ implementation wireguard-go 0.0.20220316", "@@ implementation kernel 6.1.0")
    out = parse_tunnel(text)
    assert {m.implementation for m in out.measurements} == {"kernel"}
    assert all(e.busy_fraction is None for e in out.evidence) and not any(BUSY in m.flags for m in out.measurements)
    assert out.methods[0].implementation_version == "6.1.0"


@pytest.mark.parametrize("name", [n for n, _ in MEASURED])
def test_a_cut_output_keeps_the_finished_tests_and_never_raises(name):
    text = read(name)
    lines = text.split("\n")
    for cut in range(len(lines)):
        out = parse_tunnel("\n".join(lines[:cut]))
        for m in out.measurements:
            assert m.status in (OK, ERROR, UNSUPPORTED)
            assert (m.bytes_per_second is None) == (m.status != OK)
    # stopped in the middle of the third test: two figures, the third an error
    third = [i for i, line in enumerate(lines) if line.startswith("@@ run ")][2]
    out = parse_tunnel("\n".join(lines[:third + 5] + ["@@ stopped"]))
    assert [m.status for m in out.measurements] == [OK, OK, ERROR]
    assert out.measurements[2].reason == "iperf3: the tunnel stopped during the test"


def test_text_that_is_no_tunnel_output_gives_nothing():
    for text in ("", "garbage\n@@ run forward 1\n", "@@ tunnel x\n@@ run\n@@ iperf3 client\n{", "\x00@@ "):
        out = parse_tunnel(text)
        assert all(m.status != OK for m in out.measurements)
