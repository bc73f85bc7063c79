"""Issue 36 item 4: published measured tunnels of the known boards' SoCs (known/tunnels.toml), each with its
source; `report --against known` ranks a user's measured WireGuard beside them, and a board whose tunnels were not
measured shows the published measured range of its SoC beside its prediction, with the source."""
from __future__ import annotations

import re

import pytest

from orchestrator import reference
from orchestrator.errors import UserError
from orchestrator.model import FORWARD, REVERSE, TUNNEL, CpuFacts, HostResult, Measurement, Run, TunnelMethod
from orchestrator.render import report

WG_BENCH = "https://github.com/cyyself/wg-bench/blob/eaa66c33c7f12fb96d7cb894b74a7784280edf47/README.md"
MBIT = 1e6 / 8


def test_at_least_20_rows_load_each_with_a_source_and_a_known_boards_soc():
    rows = reference.load_tunnels()
    assert len(rows) >= 20
    cpus = [entry.cpu for entry in reference.load_entries()]
    for row in rows:
        assert row.source == WG_BENCH and row.retrieved
        assert (row.tunnel, row.implementation, row.streams) == ("wireguard", "kernel", 1)
        assert row.direction == (REVERSE if "-R" in row.system else FORWARD)
        assert any(row in reference.of_cpu(cpu, rows) for cpu in cpus), row.device  # a SoC of known/
        assert row.mbit > 0


def test_speeds_are_read_as_printed():
    rows = {(r.device, r.system): r for r in reference.load_tunnels()}
    assert rows["NanoPi R2S / RK3328", "OpenWrt 23.05.2 / 5.15.137"].mbit == 234.0
    assert rows["GL-iNet MT1300 / MT7621A", "OpenWrt 23.05.2 / 5.15.137"].mbit == 82.5


def test_a_soc_matches_at_the_start_of_a_word_and_never_in_a_note():
    rows = reference.load_tunnels()
    assert {r.soc for r in reference.of_cpu("MT7621AT (频率 0.88 x 2 GHz, 架构 MIPS 1004Kc)", rows)} == {"MT7621"}
    # the Armada 388 entries say in a note that Results.md calls them "Armada 385": not the 385's rows
    assert reference.of_cpu('Marvell Armada 388 (Sorted-Results.md; Results.md: "Armada 385"), Cortex-A9', rows) == []
    assert reference.of_cpu("AMT7621", rows) == []


@pytest.mark.parametrize("text, message", [
    ('[[tunnel]]\ndevice = "x"\n', "lacks one of"),
    ('[[tunnel]]\ndevice = "x"\nsystem = "s"\nspeed = "fast"\nnote = ""\nsoc = "MT7621"\ntunnel = "wireguard"\n'
     'implementation = "kernel"\ndirection = "forward"\nstreams = 1\nsource = "https://e.org"\nretrieved = "d"\n',
     "speed in Mbits/sec"),
    ('[[tunnel]]\ndevice = "x"\nsystem = "s"\nspeed = "9 Mbits/sec"\nnote = ""\nsoc = "MT7621"\n'
     'tunnel = "wireguard"\nimplementation = "kernel"\ndirection = "forward"\nstreams = 1\nsource = ""\n'
     'retrieved = "d"\n', "an https source"),
])
def test_a_row_without_a_source_or_a_readable_speed_is_refused(tmp_path, text, message):
    (tmp_path / "tunnels.toml").write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        reference.load_tunnels(tmp_path)


def _r2s(*tunnels: Measurement) -> HostResult:
    speed = [Measurement("aes-256-gcm", block, 500e6, api="evp") for block in (1024, 16384)]
    measured = [TunnelMethod(t, i or "") for t, i in dict.fromkeys((m.algorithm, m.implementation) for m in tunnels)]
    return HostResult("my-r2s", cpu=CpuFacts(model="Cortex-A53", logical_cpus=4), measurements=speed + list(tunnels),
                      tunnels=measured)  # measured by `sslbench run --tunnels`: a TunnelMethod each


def _wireguard(mbit: float, streams: int = 1) -> Measurement:
    return Measurement("wireguard", None, mbit * MBIT, operation=FORWARD, threads=streams, kind=TUNNEL,
                       implementation="kernel")


def _runs(result: HostResult) -> list[Run]:
    known, _ = reference.known_run()
    return [Run(run_id="20260105T090000.000000Z-a1f3", created="2026-01-05T09:00:00+00:00", hosts=[result]), known]


def test_against_known_ranks_the_users_measured_wireguard_among_the_published_rows():
    text = report.render_text(_runs(_r2s(_wireguard(300.0), _wireguard(900.0, streams=4))), "line-rate")
    ranking = text.split("Measured WireGuard beside known boards (reference)")[1]
    lines = [line for line in ranking.splitlines() if re.match(r"\d+ ", line)]
    names = [re.split(r"\s{2,}", line)[1] for line in lines]
    assert len(lines) == len(reference.load_tunnels()) + 1
    mine = names.index("my-r2s (yours)")
    # 300 Mbit/s: below the NanoPi R5S's 318, above the NanoPi R2S's 234
    assert names.index("NanoPi R5S / RK3568") < mine < names.index("NanoPi R2S / RK3328")
    assert WG_BENCH in lines[0] and "run 20260105T090000.000000Z-a1f3" in lines[mine]
    assert "Not ranked (measured otherwise than the published rows): my-r2s: WireGuard (kernel) 900" in ranking


def test_a_board_without_measured_tunnels_shows_its_socs_published_range_beside_its_prediction():
    text = report.render_text(_runs(_r2s()), "line-rate")
    known = text.split("Known boards beside them (reference)")[1]
    assert "Measured WireGuard beside known boards" not in text  # nothing of the user's to rank
    rows = {line.split()[0]: line for line in known.splitlines() if line.strip()}
    r2s = rows["nanopi-r2s-openwrt"]
    assert "aes-128-gcm" in r2s  # the prediction it published ...
    assert "WireGuard (kernel) 234 Mbit/s measured, 1 stream, 1 published row (SoC RK3328)" in r2s  # ... the tunnel
    assert WG_BENCH in r2s
    assert "WireGuard (kernel) 730-946 Mbit/s measured, 1 stream, 9 published rows (SoC MT7986)" in \
        rows["redmi-ax6000-mt7986a-routermap"]
    assert "WireGuard" not in rows["rpi5b-sbcbench"]  # no published row of its SoC: nothing is made up


def test_the_users_own_measured_tunnel_stands_beside_its_prediction_among_known_boards():
    text = report.render_text(_runs(_r2s(_wireguard(300.0))), "line-rate")
    known = text.split("Known boards beside them (reference)")[1].split("Measured WireGuard")[0]
    mine = next(line for line in known.splitlines() if line.startswith("my-r2s"))
    assert "your host" in mine and "WireGuard (kernel) 300 Mbit/s, 1 stream, both ends on this board" in mine


def test_a_users_host_without_measured_tunnels_shows_its_socs_published_range():
    router = HostResult("er-x", cpu=CpuFacts(model="MIPS 1004Kc V2.15", system_type="MediaTek MT7621 ver:1 eco:3"),
                        measurements=[Measurement("aes-256-gcm", 1024, 8e6, api="evp")])
    text = report.render_text(_runs(router), "line-rate")
    known = text.split("Known boards beside them (reference)")[1]
    mine = " ".join(known.split("er-x", 1)[1].split("\n\n", 1)[0].split())  # its row, wrapped cells joined
    assert "not measured here; its SoC: WireGuard (kernel) 82.5-122 Mbit/s measured, 1 stream, 10 published rows" \
        in mine, mine
