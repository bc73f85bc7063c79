"""Measured tunnels across firmware, through the real `sslbench diff` and `sslbench trend` over planted stores: a
slower WireGuard after a kernel update is a regression, an iperf3 update is a change of method, a busy figure is
never called a regression; the outputs show tunnel rows in Mbit/s with their implementation."""
from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from orchestrator import cli, store
from orchestrator.model import BUSY, FORWARD, REVERSE, TUNNEL, HostResult, Measurement, OsFacts, Run, TunnelMethod
from test_verdict import validate

OLD, NEW = "20260301T020000.000000Z-a001", "20260308T020000.000000Z-a002"
KERNEL_OLD = TunnelMethod("wireguard", "kernel", "6.6.73", "3.12", 1420, 1500, 10.0, None, "6.6.73")
KERNEL_NEW = dataclasses.replace(KERNEL_OLD, implementation_version="6.6.86", kernel="6.6.86")
# 5 repeats per side, the receiver's throughput as iperf3 reports it (bits/s) stored in bytes/s
WG_OLD = [234e6, 236e6, 232e6, 235e6, 233e6]
WG_NEW = [180e6, 182e6, 179e6, 181e6, 178e6]
GCM = [50e6, 50.2e6, 49.9e6, 50.1e6, 50e6]  # openssl speed, unchanged across the update


def wireguard(mbits: list[float], operation: str = FORWARD, flags: tuple[str, ...] = ()) -> list[Measurement]:
    return [Measurement("wireguard", bytes_per_second=v / 8, operation=operation, repeat=i, kind=TUNNEL,
                        implementation="kernel", flags=list(flags)) for i, v in enumerate(mbits)]


def router(firmware: str, kernel: str, method: TunnelMethod, tunnels: list[Measurement]) -> HostResult:
    speed = [Measurement("aes-256-gcm", 1024, v, api="evp", repeat=i) for i, v in enumerate(GCM)]
    return HostResult("router", firmware=firmware, os=OsFacts("openwrt", kernel=kernel),
                      measurements=[*speed, *tunnels], tunnels=[method])


def plant(root: Path, new_method: TunnelMethod, new_tunnels: list[Measurement]) -> Path:
    for run_id, created, host in (
            (OLD, "2026-03-01T02:00:00+00:00", router("OpenWrt 24.10.0", "6.6.73", KERNEL_OLD,
                                                       [*wireguard(WG_OLD), *wireguard(WG_OLD, REVERSE)])),
            (NEW, "2026-03-08T02:00:00+00:00", router("OpenWrt 24.10.1", "6.6.86", new_method,
                                                       [*new_tunnels, *wireguard(WG_OLD, REVERSE)]))):
        store.save_run(store.new_run_dir(root, run_id), Run(run_id, created, hosts=[host]))
    return root


@pytest.fixture
def kernel_update(tmp_path: Path) -> Path:
    """Kernel WireGuard forward 234 -> 180 Mbit/s after 6.6.73 -> 6.6.86; reverse and openssl speed unchanged."""
    return plant(tmp_path, KERNEL_NEW, wireguard(WG_NEW))


def sslbench(capsys, *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


def test_a_slower_wireguard_after_a_kernel_update_is_a_regression(kernel_update, capsys, tmp_path):
    code, out = sslbench(capsys, "diff", OLD, NEW, "--results", str(kernel_update), "--fail-on-regression", "5")
    assert code == 3, out
    assert "router: wireguard (kernel): kernel 6.6.73 → 6.6.86" in out  # the firmware judged, said as such
    assert "1 significant regression(s) worse than -5%: exit code 3" in out
    line = next(line for line in out.splitlines() if "forward" in line)
    assert line.split()[:5] == ["router", "wireguard", "kernel", "1", "forward"]
    assert "234 Mbit/s" in line and "180 Mbit/s" in line and "-23.1%" in line and "n=5+5" in line
    assert "method" not in line
    # the same pair by firmware: the sides are the firmware versions of the host
    code, out = sslbench(capsys, "diff", "--host", "router", "--by", "firmware", "--results", str(kernel_update),
                         "--fail-on-regression", "5")
    assert code == 3 and "wireguard" in out
    xml = tmp_path / "tunnels.xml"
    assert cli.main(["diff", OLD, NEW, "--results", str(kernel_update), "--fail-on-regression", "5",
                     "--format", "junit", "-o", str(xml)]) == 3
    validate(xml)
    cases = {c.get("name"): c for c in ET.parse(xml).getroot().iter("testcase")}
    failed = cases["wireguard kernel forward t1"].find("failure")
    assert failed is not None and "wireguard kernel forward t1: -23.1%" in failed.get("message", "")
    assert "old 234 Mbit/s, new 180 Mbit/s" in (cases["wireguard kernel forward t1"].findtext("system-out") or "")
    assert cases["wireguard kernel reverse t1"].find("failure") is None
    assert cases["aes-256-gcm 1024 B evp t1"].find("failure") is None


def test_tunnel_rows_as_data_say_their_kind_implementation_and_unit(kernel_update, capsys):
    code, out = sslbench(capsys, "diff", OLD, NEW, "--results", str(kernel_update), "--format", "json")
    speed, forward, reverse = json.loads(out)
    assert "kind" not in speed and speed["unit"] == "B/s"  # openssl speed's records as ever
    assert (forward["kind"], forward["implementation"], forward["operation"], forward["unit"]) == (
        TUNNEL, "kernel", FORWARD, "bit/s")
    assert (forward["old"], forward["new"], forward["significant"]) == (234e6, 180e6, True)
    assert list(forward)[:9] == ["host", "algorithm", "api", "operation", "block_size", "threads", "cpu", "kind",
                                 "implementation"]
    code, out = sslbench(capsys, "diff", OLD, NEW, "--results", str(kernel_update), "--format", "csv")
    header, *rows = out.splitlines()
    assert header.split(",")[7:10] == ["kind", "implementation", "unit"]
    assert rows[0].split(",")[7:10] == ["", "", "B/s"] and rows[1].split(",")[7:10] == [TUNNEL, "kernel", "bit/s"]


def test_an_iperf3_update_is_a_change_of_method_never_a_regression(tmp_path, capsys):
    root = plant(tmp_path, dataclasses.replace(KERNEL_NEW, iperf3_version="3.16"), wireguard(WG_NEW))
    code, out = sslbench(capsys, "diff", OLD, NEW, "--results", str(root), "--fail-on-regression", "5")
    assert code == 0, out
    line = next(line for line in out.splitlines() if "forward" in line)
    assert " method " in line and "method-changed" in line
    # both directions: one TunnelMethod per tunnel
    assert ("2 cell(s) set aside, not judged: measuring method changed (the tunnel's method may have changed: "
            "iperf3 3.12 → 3.16; not judged)") in out
    code, out = sslbench(capsys, "trend", "router", "--results", str(root), "--fail-on-regression", "5")
    assert code == 0, out
    said = "2 cell(s) at OpenWrt 24.10.0 → OpenWrt 24.10.1: the tunnel's method may have changed: iperf3 3.12 → 3.16"
    assert said in out


def test_a_busy_tunnel_figure_is_never_called_a_regression(tmp_path, capsys):
    root = plant(tmp_path, KERNEL_NEW, wireguard(WG_NEW, flags=(BUSY,)))
    code, out = sslbench(capsys, "diff", OLD, NEW, "--results", str(root), "--fail-on-regression", "5")
    assert code == 0, out
    assert "busy-new" in next(line for line in out.splitlines() if "forward" in line)
    code, out = sslbench(capsys, "diff", OLD, NEW, "--results", str(root), "--format", "junit")
    cases = {c.get("name"): c for c in ET.fromstring(out).iter("testcase")}
    skipped = cases["wireguard kernel forward t1"].find("skipped")
    assert skipped is not None and skipped.get("message") == "not judged: a figure that may be wrong (busy-new)"
    code, out = sslbench(capsys, "trend", "router", "--results", str(root), "--fail-on-regression", "5")
    assert code == 0, out


def test_trend_judges_the_tunnel_step_and_shows_it_in_mbits(kernel_update, capsys, tmp_path):
    code, out = sslbench(capsys, "trend", "router", "--results", str(kernel_update), "--fail-on-regression", "5")
    assert code == 3, out
    row = next(line for line in out.splitlines() if line.startswith("wireguard kernel forward t1"))
    assert "234 Mbit/s" in row and "180 Mbit/s" in row and "-23.1%" in row
    assert "wireguard kernel forward t1: -23.1% at OpenWrt 24.10.0 → OpenWrt 24.10.1" in out
    code, out = sslbench(capsys, "trend", "router", "--results", str(kernel_update), "--format", "json")
    data = json.loads(out)
    forward = next(c for c in data["cells"] if c.get("operation") == FORWARD)
    assert (forward["kind"], forward["implementation"], forward["unit"]) == (TUNNEL, "kernel", "bit/s")
    assert [m["median"] for m in forward["medians"]] == [234e6, 180e6]
    assert "kind" not in data["cells"][0]  # openssl speed's cell as ever
    code, out = sslbench(capsys, "trend", "router", "--results", str(kernel_update), "--format", "csv")
    header, *rows = out.splitlines()
    assert header.split(",")[6:10] == ["cpu", "kind", "implementation", "unit"]
    xml = tmp_path / "trend.xml"
    assert cli.main(["trend", "router", "--results", str(kernel_update), "--fail-on-regression", "5",
                     "--format", "junit", "-o", str(xml)]) == 3
    validate(xml)
    failed = {c.get("name"): c.find("failure") for c in ET.parse(xml).getroot().iter("testcase")}
    assert failed["wireguard kernel forward t1"] is not None and failed["wireguard kernel reverse t1"] is None
