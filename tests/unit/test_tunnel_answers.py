"""Issue 36 item 2: the line rate from measured tunnels, beside the `openssl speed` prediction.

The runs are planted with tunnel Measurements as the contract (docs: TUNNEL_CONTRACT) has the host side write them:
kind "tunnel", the receiver's bytes/s, direction as the operation, iperf3's streams as threads, a tunnel the host
cannot run as unsupported with "not measurable: why". The openssl figures are the NanoPi R2S's published ones
(aes-128-gcm ≈ 4.65 Gbit/s at 1024 B is what issue 36 quotes) scaled to AEADs, the WireGuard figure wg-bench's.
"""
from __future__ import annotations

import re

import pytest

from orchestrator.analysis import insights, tunnel_answers
from orchestrator.model import (BUSY, FORWARD, REVERSE, TUNNEL, UNSUPPORTED, CpuFacts, HostResult, Measurement, Run,
                                TunnelMethod)
from orchestrator.render import report

MBIT = 1e6 / 8  # bytes/s of one Mbit/s


def speed(mbit_at_1024: dict[str, float], cores: int = 4) -> list[Measurement]:
    out = []
    for algorithm, mbit in mbit_at_1024.items():
        for block, scale in ((1024, 1.0), (16384, 1.1)):
            out.append(Measurement(algorithm, block, mbit * scale * MBIT, api="evp", seconds=3.0))
            out.append(Measurement(algorithm, block, mbit * scale * cores * 0.9 * MBIT, threads=cores, api="evp",
                                   seconds=3.0))
    return out


def tunnel(algorithm: str, implementation: str | None, mbit: float | None, *, direction: str = FORWARD,
           streams: int = 1, repeat: int = 0, flags: list[str] | None = None, reason: str | None = None
           ) -> Measurement:
    if mbit is None:
        return Measurement(algorithm, None, None, operation=direction, threads=streams, status=UNSUPPORTED,
                           reason=reason, kind=TUNNEL, implementation=implementation)
    return Measurement(algorithm, None, mbit * MBIT, operation=direction, threads=streams, repeat=repeat,
                       flags=flags or [], kind=TUNNEL, implementation=implementation)


def r2s(*tunnels: Measurement, imported: bool = False) -> HostResult:
    """The host measured its tunnels (`sslbench run --tunnels`: a TunnelMethod for each, as parse/tunnel.py reads
    them from tunnel.sh), or, imported, has only the figures of an iperf3 log."""
    methods = [] if imported else [TunnelMethod(tunnel=t, implementation=i) for t, i in
                                   dict.fromkeys((m.algorithm, m.implementation) for m in tunnels if m.implementation)]
    return HostResult("r2s", cpu=CpuFacts(model="Cortex-A53", logical_cpus=4, crypto=["aes"]), tunnels=methods,
                      measurements=speed({"aes-256-gcm": 4000.0, "chacha20-poly1305": 1200.0}) + list(tunnels))


def run(*hosts: HostResult) -> Run:
    return Run(run_id="20260105T090000.000000Z-a1f3", created="2026-01-05T09:00:00+00:00",
               matrix={"seconds": 3}, hosts=list(hosts))


def answers(result: HostResult, links=(100, 1000)) -> list[tunnel_answers.TunnelAnswer]:
    return tunnel_answers.host_tunnels(result, insights.grouped(run(result), result), links)


def test_the_measured_figure_beside_its_prediction_and_their_ratio():
    (wg,) = answers(r2s(tunnel("wireguard", "kernel", 230.0, repeat=0), tunnel("wireguard", "kernel", 234.0, repeat=1),
                        tunnel("wireguard", "kernel", 240.0, repeat=2)))
    assert wg.figure.said == "WireGuard (kernel) 234 Mbit/s, 1 stream, both ends on this board"
    assert wg.figure.samples == 3
    # WireGuard's cipher is ChaCha20-Poly1305: its openssl cell on one core for one stream
    assert wg.prediction is not None and wg.prediction.said == \
        "predicted 1,200 Mbit/s (chacha20-poly1305, 1024 B, 1 core, user space)"
    assert wg.ratio == pytest.approx(234 / 1200)
    assert wg.verdicts == ["carries 100 Mbit/s (measured 234 Mbit/s)", "does not carry 1000 Mbit/s (measured 234 Mbit/s)"]
    assert wg.carried == [True, False]


def test_several_streams_are_predicted_from_all_cores_and_openvpn_from_its_own_cipher():
    (gcm,) = answers(r2s(tunnel("openvpn-aes-256-gcm", "openvpn-tun", 120.0, direction=REVERSE, streams=4)))
    assert gcm.figure.said == "OpenVPN AES-256-GCM (tun) 120 Mbit/s, 4 streams, reverse, both ends on this board"
    assert gcm.prediction is not None
    assert (gcm.prediction.algorithm, gcm.prediction.cores) == ("aes-256-gcm", 4)
    assert gcm.prediction.mbit == pytest.approx(4000 * 4 * 0.9)


def test_a_tunnel_not_measurable_says_why_and_never_carries():
    (wg,) = answers(r2s(tunnel("wireguard", None, None, reason="not measurable: no wireguard module or wireguard-go")))
    assert wg.figure.mbit is None and wg.ratio is None and wg.carried == [None, None]
    assert wg.verdicts[0] == "100 Mbit/s: not measured (not measurable: no wireguard module or wireguard-go)"


def test_a_busy_tunnel_says_so_in_its_figure_and_verdict():
    (wg,) = answers(r2s(tunnel("wireguard", "wireguard-go", 300.0, flags=[BUSY])))
    assert wg.flags == (BUSY,) and "[flagged busy]" in wg.figure.said and "[flagged busy]" in wg.verdicts[0]


def test_without_a_measured_tunnel_the_openssl_figure_is_a_crypto_ceiling_never_carries():
    text = report.render_text([run(r2s())], "line-rate")
    assert "crypto ceiling above 100 Mbit/s on 1 core" in text
    assert "carries" not in text.replace("says a host carries a link", "") and "Measured tunnels" not in text


def test_the_line_rate_view_and_the_page_show_the_measured_tunnel(tmp_path):
    runs = [run(r2s(tunnel("wireguard", "kernel", 234.0), tunnel("wireguard", "kernel", 610.0, streams=4)))]
    text = report.render_text(runs, "line-rate")
    assert "Measured tunnels" in text
    row = next(line for line in text.splitlines() if line.startswith("r2s") and "WireGuard (kernel) 234" in line)
    assert "predicted 1,200 Mbit/s" in row and "0.20" in row and "carries 100 Mbit/s (measured 234 Mbit/s)" in row
    page = report.render_html(runs, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "WireGuard (kernel) 610 Mbit/s, 4 streams, both ends on this board" in page
    assert "predicted 4,320 Mbit/s (chacha20-poly1305, 1024 B, 4 cores, user space)" in page


def test_dashboards_carry_each_measured_tunnel_in_mbit_per_second_and_no_openssl_cell_of_it():
    from orchestrator.render import dashboards

    runs = [run(r2s(tunnel("wireguard", "kernel", 234.0), tunnel("wireguard", "kernel", 240.0, repeat=1),
                    tunnel("openvpn-aes-256-gcm", "openvpn-tun", 150.0, direction=REVERSE, flags=[BUSY]),
                    tunnel("openvpn-chacha20-poly1305", None, None, reason="not measurable: no openvpn")))]
    tunnels = [f for f in dashboards.figures(runs) if f.family == dashboards.TUNNEL_RATE]
    assert [(dict(f.labels)["tunnel"], dict(f.labels)["implementation"], dict(f.labels)["direction"],
             dict(f.labels)["streams"], dict(f.labels)["flags"], f.value, f.samples) for f in tunnels] == [
        ("wireguard", "kernel", "forward", "1", "", 237.0, 2),
        ("openvpn-aes-256-gcm", "openvpn-tun", "reverse", "1", "busy", 150.0, 1)]
    assert all(tuple(k for k, _ in f.labels) == dashboards.HOST_LABELS + dashboards.TUNNEL_LABELS for f in tunnels)
    others = [dict(f.labels).get("algorithm") for f in dashboards.figures(runs) if f.family != dashboards.TUNNEL_RATE]
    assert not {"wireguard", "openvpn-aes-256-gcm", "openvpn-chacha20-poly1305"} & set(others)
    text = dashboards.openmetrics(runs)
    assert ('sslbench_tunnel_megabits_per_second{host="r2s",board="Cortex-A53",firmware="unknown firmware",'
            'openssl_version="",tunnel="wireguard",implementation="kernel",direction="forward",streams="1",flags=""}'
            ' 237\n') in text
    line = next(line for line in dashboards.influx(runs).splitlines() if line.startswith("sslbench_tunnel,"))
    assert "tunnel=wireguard" in line and " mbits_per_second=237.0,samples=2i " in line


def test_report_tables_json_and_csv_carry_the_tunnels_in_mbit_per_second_never_as_openssl_cells():
    import csv
    import io
    import json

    from orchestrator.render import tables

    runs = [run(r2s(tunnel("wireguard", "kernel", 234.0), tunnel("wireguard", "kernel", 240.0, repeat=1),
                    tunnel("openvpn-aes-256-gcm", "openvpn-tun", 120.0, direction=REVERSE, streams=4, flags=[BUSY]),
                    tunnel("openvpn-chacha20-poly1305", None, None, reason="not measurable: no openvpn")))]
    text = tables.render_runs(runs, "table")
    assert "error" not in text and "forward/s" not in text  # a tunnel is no public-key cell
    assert re.search(r"^r2s +wireguard +kernel +forward +1 +237 *$", text, re.M)
    assert re.search(r"^r2s +openvpn-aes-256-gcm +openvpn-tun +reverse +4 +120 +busy$", text, re.M)
    assert re.search(r"^r2s +openvpn-chacha20-poly1305 +forward +1 +not measurable: no openvpn", text, re.M)
    records = [r for r in json.loads(tables.render_runs(runs, "json")) if r.get("kind") == TUNNEL]
    assert [(r["tunnel"], r["implementation"], r["direction"], r["streams"], r["mbits_per_second"])
            for r in records] == [("wireguard", "kernel", "forward", 1, 234.0), ("wireguard", "kernel", "forward", 1, 240.0),
                                  ("openvpn-aes-256-gcm", "openvpn-tun", "reverse", 4, 120.0),
                                  ("openvpn-chacha20-poly1305", None, "forward", 1, None)]
    speed = [r for r in json.loads(tables.render_runs(runs, "json")) if r.get("kind") != TUNNEL]
    assert speed and all("kind" not in r for r in speed)  # an openssl record as it always was
    table = tables.render_runs(runs, "csv").split("\n\n")[-1]
    rows = list(csv.DictReader(io.StringIO(table)))
    assert {(r["tunnel"], r["Mbit/s"]) for r in rows} >= {("wireguard", "237.0"), ("openvpn-aes-256-gcm", "120.0")}


def test_the_openssl_answers_leave_tunnels_to_their_own_section():
    runs = [run(r2s(tunnel("wireguard", "kernel", 234.0)))]
    cells = insights.grouped(runs[0], runs[0].hosts[0])
    assert cells and all(key.algorithm in ("aes-256-gcm", "chacha20-poly1305") for key in cells)
    answers = report.render_text(runs, "answers")
    per_core = answers.split("Per core")[1]
    assert "wireguard" not in per_core.lower() and "Measured tunnels" in answers
    # the measurement table lists every figure, the tunnel in its own unit
    assert re.search(r"^wireguard .*forward .*234 Mbit/s", report.render_text(runs, "measurements"), re.M)


def test_an_imported_iperf3_figure_never_claims_both_ends_on_the_board(tmp_path):
    """Only a tunnel the host measured itself (its TunnelMethod: `sslbench run --tunnels`) was iperf3 between two
    namespaces of the board; an imported log's figure says it is one, and that how it was measured is unknown."""
    (wg,) = answers(r2s(tunnel("wireguard", "kernel", 234.0), imported=True))
    assert wg.figure.said == ("WireGuard (kernel) 234 Mbit/s, 1 stream, imported iperf3 log (how it was measured "
                              "is not recorded)")
    runs = [run(r2s(tunnel("wireguard", "kernel", 234.0), imported=True))]
    text = " ".join(report.render_text(runs, "line-rate").split())
    assert "both ends on this board" not in text
    assert "a figure from an imported iperf3 log says so: where its ends were is not recorded" in text
    page = report.render_html(runs, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "imported iperf3 log (how it was measured is not recorded)" in page
    assert "both ends on this board" not in page
    (own,) = answers(r2s(tunnel("wireguard", "kernel", 234.0)))
    assert own.figure.said.endswith("1 stream, both ends on this board")
    measured = " ".join(report.render_text([run(r2s(tunnel("wireguard", "kernel", 234.0)))], "line-rate").split())
    assert "imported iperf3 log" not in measured
