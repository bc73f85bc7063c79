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


# --- real outputs written by other people (tests/data/iperf3/field/, README says where each is from) --------------

FIELD = DATA / "field"


def field_log(name: str):
    from orchestrator.parse.iperf3 import tunnel_log
    return tunnel_log((FIELD / name).read_text(), "wireguard", "kernel")


def figures(name: str) -> list[tuple[str, int, float]]:
    return [(m.operation, m.threads, m.bytes_per_second * 8 / 1e6) for m in field_log(name).measurements]


@pytest.mark.parametrize("name", ["f41_8814au_readme_recv_zero.txt", "f42_rtw_server_R_then_interrupt.txt",
                                  "f44_ids_pi_server_recv_zero.txt"])
def test_a_receiver_of_zero_bits_is_skipped_with_why_never_a_figure(name):
    log = field_log(name)
    assert log.measurements == []
    assert "iperf3: the receiver's rate is 0 bits/sec: nothing measured" in log.skipped


@pytest.mark.parametrize("rate", ["0.00", "-5.0", "inf", "nan", "1e400"])
def test_a_rate_that_is_no_rate_is_never_a_figure(rate):
    from orchestrator.parse.iperf3 import tunnel_log
    text = (FIELD / "f41_8814au_readme_recv_zero.txt").read_text()
    line = "[  5]   0.00-23.15  sec  0.00 Bytes  0.00 bits/sec                  receiver"
    assert line in text
    log = tunnel_log(text.replace(line, line.replace("0.00 bits/sec", f"{rate} Mbits/sec")), "wireguard")
    assert log.measurements == [] and log.skipped[0].startswith("iperf3: the receiver's rate is ")
    raw = json.loads(read("client-forward-1.json"))
    raw["end"]["sum_received"]["bits_per_second"] = float(rate)
    log = tunnel_log(json.dumps(raw), "wireguard")
    assert log.measurements == [] and log.skipped[0].startswith("iperf3: the receiver's rate is ")


def test_a_server_whose_sender_line_has_the_retransmits_sent_it_was_reverse():
    text = (FIELD / "f42_rtw_server_R_then_interrupt.txt").read_text()
    # the server's summary of an -R test, with its interrupt after it: the server sent
    [sent, interrupted] = parse_text("Server listening on 5201\n" + text)
    assert (sent.side, sent.reverse, sent.retransmits) == (Side.SERVER, True, 4)
    assert sent.sender_bits_per_second == 29.2e6 and interrupted.error == "interrupt - the server has terminated"


def test_runs_pasted_without_their_start_lines_are_read_apart():
    # four runs (one, -P 10, -P 10 -R, UDP) after `$ iperf3 -c …` lines only
    assert figures("f18_tanezky_unraid_blog_full.md") == [("forward", 1, 941.0), ("forward", 10, 941.0),
                                                          ("reverse", 10, 940.0)]
    assert "iperf3: a UDP test: not a TCP tunnel measurement" in field_log("f18_tanezky_unraid_blog_full.md").skipped
    # two -R runs, the second's only start is its interval table
    assert figures("f35_cn_bbr_blog_two_R_runs_full.txt") == [("reverse", 1, 12.0), ("reverse", 1, 14.1)]
    assert figures("f23_smartnic_P24_sum_only.txt") == [("forward", 24, 22500.0), ("forward", 24, 22500.0)]


@pytest.mark.parametrize("name, streams", [("f22_japanese_notes_P4_sum_only.txt", 4),
                                           ("f24_shellsession_P3_sum.txt", 3),
                                           ("f18_tanezky_unraid_blog_full.md", 10)])
def test_streams_are_counted_without_connected_lines(name, streams):
    assert streams in [m.threads for m in field_log(name).measurements]


def test_a_sum_line_alone_without_the_count_is_not_one_stream():
    from orchestrator.parse.iperf3 import tunnel_log
    text = (FIELD / "f22_japanese_notes_P4_sum_only.txt").read_text().replace(" -P 4", "")
    log = tunnel_log(text, "wireguard")
    assert log.measurements == [] and log.skipped == ["iperf3: several streams ([SUM]) but not how many"]


def test_bytes_per_second_units_of_dash_f_are_read_times_eight_binary():
    # `-f M`: 4209 MBytes/sec received; iperf3 prints bytes in 2^20 (41.3 GBytes in 10 s is 4229 MiB/s, not 4435)
    [(operation, streams, mbits)] = figures("f37_k8s_cn_fM_MBytes.txt")
    assert (operation, streams) == ("forward", 1) and mbits * 1e6 == 4209 * 8 * 2 ** 20


def test_get_server_output_the_clients_receiver_line_wins():
    results = parse_text((FIELD / "f32_esnet476_get_server_output_314.txt").read_text())
    client = [r for r in results if r.side is not Side.SERVER]
    assert [(r.receiver_bits_per_second, r.reverse) for r in client] == [(3.77e6, False)]
    assert any(r.side is Side.SERVER and r.receiver_bits_per_second == 3768e3 for r in results)
    assert figures("f32_esnet476_get_server_output_314.txt") == [("forward", 1, 3.77)]


def test_a_quoted_paste_is_read_without_its_quote_marks():
    assert figures("f40_netdev_quoted_before_after.txt") == [("forward", 1, 152.0), ("forward", 1, 777.0)]


@pytest.mark.parametrize("name", ["f27_openwisp_json_udp_39.json", "f04_esnet841_udp_summary.txt"])
def test_udp_is_never_a_tcp_tunnel_figure(name):
    log = field_log(name)
    assert log.measurements == [] and log.skipped[0] == "iperf3: a UDP test: not a TCP tunnel measurement"


def test_rates_are_scaled_exactly_from_the_printed_number():
    got = [m.bytes_per_second for m in field_log("f21_wgbench_teelfox_5tests.md").measurements]
    assert 4140e6 / 8 in got and all(rate == int(rate) for rate in got)  # never 4139.999999999999 Mbit/s


@pytest.mark.parametrize("name, why", [
    ("f10_esnet1751_error_3171.txt", "iperf3: unable to connect to server - server may have stopped running"),
    ("f41_8814au_readme_recv_zero.txt", "iperf3: the receiver's rate is 0 bits/sec"),
    ("f04_esnet841_udp_summary.txt", "iperf3: a UDP test: not a TCP tunnel measurement")])
def test_a_refused_import_says_why(tmp_path, capsys, name, why):
    from orchestrator import cli
    assert cli.main(["import", "--host", "r1", "--tunnel", "wireguard:kernel", str(FIELD / name),
                     "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert "no iperf3 results found in it: " + why in err and "Traceback" not in err


@pytest.mark.parametrize("tunnel", ["foo", "wg:kernel", "wireguard:foo", "wireguard\n", "", "wireguard:",
                                    "wire\x1bguard"])
def test_a_tunnel_not_measured_by_sslbench_is_refused_with_the_allowed_ones(tmp_path, capsys, tunnel):
    from orchestrator import cli
    assert cli.main(["import", "--host", "r1", "--tunnel", tunnel, str(DATA / "client-forward-1.txt"),
                     "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert "wireguard, openvpn-aes-256-gcm, openvpn-chacha20-poly1305" in err and "openvpn-dco" in err
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_a_tunnel_name_is_lower_cased():
    from orchestrator.analysis.imported import tunnel_name
    assert tunnel_name("WireGuard:Kernel") == "wireguard:kernel"
    assert tunnel_name("OpenVPN-AES-256-GCM:openvpn-dco") == "openvpn-aes-256-gcm:openvpn-dco"


@pytest.mark.parametrize("tunnel, fits", [("wireguard:openvpn-dco", "kernel or wireguard-go"),
                                          ("openvpn-chacha20-poly1305:kernel", "openvpn-tun or openvpn-dco")])
def test_a_tunnel_and_an_implementation_that_do_not_go_together_are_refused(tunnel, fits):
    from orchestrator.analysis.imported import tunnel_name
    from orchestrator.errors import UserError
    with pytest.raises(UserError, match=fits):
        tunnel_name(tunnel)


def test_a_test_left_out_of_an_import_is_said(tmp_path, capsys):
    from orchestrator import cli
    assert cli.main(["import", "--host", "r1", "--tunnel", "wireguard:kernel",
                     str(FIELD / "f18_tanezky_unraid_blog_full.md"), "--results", str(tmp_path / "results")]) == 0
    err = capsys.readouterr().err
    assert "a test left out: iperf3: a UDP test: not a TCP tunnel measurement" in err


@pytest.mark.parametrize("path", sorted(FIELD.glob("f*")), ids=lambda p: p.name)
def test_every_cut_of_every_field_output_reads_without_raising(path):
    from orchestrator.parse.iperf3 import tunnel_log
    text = path.read_text()
    for cut in range(0, len(text), max(len(text) // 60, 1)):
        tunnel_log(text[:cut], "wireguard")
        tunnel_log(text[cut:], "wireguard")


def test_a_table_without_retr_is_reverse_only_where_the_sender_had_them():
    text = (FIELD / "f35_cn_bbr_blog_two_R_runs_full.txt").read_text()
    second = text[text.index("[  5] local 192.168.101.81 port 62600"):]
    # the second -R run alone: its sender counted retransmits, so a table without them was the receiver's
    [result] = parse_text(second)
    assert (result.reverse, result.retransmits, result.streams) == (True, 3443, 1)
    # a sender without retransmits (Windows, macOS): the same table says nothing of the direction
    no_retr = second.replace("  3443             sender", "                   sender")
    [result] = parse_text(no_retr)
    assert result.retransmits is None and result.reverse is False


@pytest.mark.parametrize("command", ["iperf3 --client 172.31.2.221 -t 10 --parallel 4",
                                     "iperf3 -t 10 --parallel=4 --client=172.31.2.221",
                                     "iperf3 -c 172.31.2.221 -P4"])
def test_the_pasted_command_says_the_streams_in_each_spelling(command):
    text = (FIELD / "f22_japanese_notes_P4_sum_only.txt").read_text()
    [result] = parse_text(text.replace("iperf3 -c 172.31.2.221 -t 10 -P 4", command))
    assert (result.side, result.streams, result.reverse) == (Side.CLIENT, 4, False)


def test_a_cut_run_before_the_next_adds_none_of_its_streams():
    # a -P 2 run cut before its summary, then a whole one-stream run: one stream, not three
    forward = read("client-forward-1.txt")
    cut = "[  5] local 10.0.0.1 port 1 connected to 10.0.0.2 port 5201\n[  7] local 10.0.0.1 port 2 connected to " \
          "10.0.0.2 port 5201\n"
    [result] = parse_text("Connecting to host 10.0.0.2, port 5201\n" + cut + forward)
    assert result.streams == 1 and result.reverse is False
    # a UDP command without output is a run of its own, refused; its -u does not reach the next run
    udp_then_tcp = "$ iperf3 -c 10.0.0.2 -u\n$ iperf3 -c 10.0.0.2 -R -P 2\n" + read("client-reverse-2.txt")
    assert [(r.protocol, r.reverse, r.streams) for r in parse_text(udp_then_tcp)] == [("UDP", False, None),
                                                                                      (None, True, 2)]


def test_a_quoted_json_is_read_as_the_json():
    quoted = "".join("> " + line + "\n" for line in read("client-forward-2.json").splitlines())
    [result] = parse_iperf3(quoted)
    [plain] = parse_iperf3(read("client-forward-2.json"))
    assert result == plain and result.form == JSON


def test_a_bidir_test_is_refused_as_neither_direction():
    log = field_log("f08_esnet1866_udp_bidir_server_311.txt")  # UDP --bidir: the UDP reason comes first
    assert log.measurements == [] and log.skipped == ["iperf3: a UDP test: not a TCP tunnel measurement"]
    tcp = "$ iperf3 -c 10.0.0.2 --bidir\n" + read("client-forward-1.txt")
    [result] = parse_text(tcp)
    from orchestrator.parse.iperf3 import refusal
    assert refusal(result) == "a --bidir test: both ways at once, neither forward nor reverse"
