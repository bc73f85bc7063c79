"""orchestrator/parse/iperf3.py on real iperf3 3.12 outputs (tests/data/iperf3/, made by its make.sh between two
namespaces): -J JSON and plain text, client and server, forward, reverse, several streams, refused; several runs
saved one after the other; every cut of every file never raises."""
import json
from pathlib import Path

import pytest

from orchestrator.parse.iperf3 import JSON, TEXT, Side, parse_iperf3, parse_json, parse_text

DATA = Path(__file__).resolve().parents[1] / "data" / "iperf3"
OUTPUTS = sorted(p for p in DATA.iterdir() if p.name.startswith(("client-", "server-")))


def read(name: str) -> str:
    return (DATA / name).read_text()


@pytest.mark.parametrize("name, reverse, streams", [("client-forward-1.json", False, 1),
                                                    ("client-reverse-1.json", True, 1),
                                                    ("client-forward-2.json", False, 2),
                                                    ("client-reverse-2.json", True, 2)])
def test_a_json_client_is_read_whole(name, reverse, streams):
    raw = json.loads(read(name))
    [result] = parse_iperf3(read(name))
    assert (result.form, result.side, result.version, result.protocol) == (JSON, Side.CLIENT, "3.12", "TCP")
    assert (result.reverse, result.streams, result.error) == (reverse, streams, None)
    # the figures are iperf3's own sums: the receiver's is what went through
    assert result.receiver_bits_per_second == raw["end"]["sum_received"]["bits_per_second"]
    assert result.sender_bits_per_second == raw["end"]["sum_sent"]["bits_per_second"]
    assert result.receiver_bytes_per_second == result.receiver_bits_per_second / 8
    assert result.retransmits == raw["end"]["sum_sent"]["retransmits"]
    assert result.duration_seconds == raw["end"]["sum_received"]["seconds"]
    assert result.cpu_local_percent is not None and result.cpu_remote_percent is not None


def test_a_json_server_has_only_its_own_end():
    [result] = parse_iperf3(read("server-jsonserver-forward-1.json"))
    [client] = parse_iperf3(read("client-jsonserver-forward-1.json"))
    assert result.side is Side.SERVER and result.reverse is False
    assert result.sender_bits_per_second is None and result.cpu_remote_percent is None  # zeros, not figures
    assert result.receiver_bits_per_second == client.receiver_bits_per_second  # the same test, both ends


@pytest.mark.parametrize("client, server, reverse, streams", [
    ("client-forward-1.txt", "server-forward-1.txt", False, 1),
    ("client-reverse-2.txt", "server-reverse-2.txt", True, 2)])
def test_plain_text_client_and_server_of_the_same_test_agree(client, server, reverse, streams):
    [c] = parse_iperf3(read(client))
    [s] = parse_iperf3(read(server))
    assert (c.form, c.side, c.reverse, c.streams) == (TEXT, Side.CLIENT, reverse, streams)
    assert (s.form, s.side, s.reverse, s.streams) == (TEXT, Side.SERVER, reverse, streams)
    assert c.receiver_bits_per_second and c.sender_bits_per_second and c.retransmits is not None
    if reverse:  # the server sent: its summary is the sender's, with the retransmits
        assert s.receiver_bits_per_second is None
        assert (s.sender_bits_per_second, s.retransmits) == (c.sender_bits_per_second, c.retransmits)
    else:
        assert s.sender_bits_per_second is None and s.retransmits is None
        assert s.receiver_bits_per_second == c.receiver_bits_per_second


def test_the_plain_text_rate_is_read_in_its_unit():
    line = next(line for line in read("client-forward-1.txt").splitlines() if line.endswith("receiver"))
    rate, unit = line.split()[6:8]  # "[  5]   0.00-2.02   sec  1.57 GBytes  6.71 Gbits/sec   receiver"
    [result] = parse_text(read("client-forward-1.txt"))
    assert unit == "Gbits/sec" and result.receiver_bits_per_second == pytest.approx(float(rate) * 1e9)


@pytest.mark.parametrize("name", ["client-refused.json", "client-refused.txt"])
def test_a_refused_client_is_an_error_without_figures(name):
    [result] = parse_iperf3(read(name))
    assert result.error == "unable to connect to server: Connection refused"
    assert result.receiver_bits_per_second is None and result.sender_bits_per_second is None


def test_runs_saved_one_after_the_other_are_read_apart():
    both = read("client-forward-1.json") + "\n" + read("client-reverse-2.json")
    assert [(r.reverse, r.streams) for r in parse_json(both)] == [(False, 1), (True, 2)]
    text = "$ iperf3 -c x\n" + read("client-forward-1.txt") + "$ iperf3 -c x -R -P 2\n" + read("client-reverse-2.txt")
    assert [(r.reverse, r.streams) for r in parse_text(text)] == [(False, 1), (True, 2)]


@pytest.mark.parametrize("path", OUTPUTS, ids=lambda p: p.name)
def test_every_cut_of_every_output_reads_without_raising(path):
    text = path.read_text()
    for cut in range(0, len(text), max(len(text) // 150, 1)):
        for result in parse_iperf3(text[:cut]):
            assert result.form in (JSON, TEXT)
    assert parse_iperf3("") == [] and parse_iperf3("{not json") == [] and parse_iperf3('{"start": []}') != []


def test_a_saved_iperf3_log_imports_as_tunnel_measurements(tmp_path, capsys):
    from orchestrator import cli, store
    from orchestrator.model import FORWARD, REVERSE, TUNNEL

    # a client and a server of the same test in one log count once (the client's)
    log = tmp_path / "wg.txt"
    log.write_text(read("client-forward-1.txt") + read("server-forward-1.txt") + read("client-reverse-2.txt"))
    assert cli.main(["import", "--host", "r1", "--tunnel", "wireguard:kernel", str(log),
                     str(DATA / "client-forward-2.json"),
                     "--results", str(tmp_path / "results")]) == 0
    [run_dir] = store.list_runs(tmp_path / "results")
    [host] = store.load_run(run_dir).hosts
    got = sorted((m.kind, m.algorithm, m.implementation, m.operation, m.threads) for m in host.measurements)
    assert got == [(TUNNEL, "wireguard", "kernel", FORWARD, 1), (TUNNEL, "wireguard", "kernel", FORWARD, 2),
                   (TUNNEL, "wireguard", "kernel", REVERSE, 2)]
    [text] = parse_text(read("client-forward-1.txt"))
    forward = next(m for m in host.measurements if (m.operation, m.threads) == (FORWARD, 1))
    assert forward.bytes_per_second == text.receiver_bits_per_second / 8
    assert cli.main(["import", "--host", "r1", "--tunnel", "wireguard", str(DATA / "client-refused.txt"),
                     "--results", str(tmp_path / "results")]) == 2
    assert "no iperf3 results found" in capsys.readouterr().err
