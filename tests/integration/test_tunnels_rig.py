"""Measured tunnels on the rig's x86 hosts (tests/rig): debian1, a chroot logged into as a user with sudo, gets its
tunnel packages from apt through the run's provisioning and measures wireguard-go and both OpenVPN ciphers for real
in namespaces made from inside its chroot; centos1, whose yum repository has none of them, says "not measurable"
per tunnel while its openssl cells stand. Afterwards no namespace of the run (their bind mounts are this machine's
mounts) and no wireguard-go / openvpn / iperf3 process of its work dirs is left. Figures are never checked."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.model import OK, TUNNEL, UNSUPPORTED

pytestmark = pytest.mark.rig

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
TINY = ["--algorithms", "aes-128-gcm", "--sizes", "1024", "--threads", "1", "--api", "evp", "--seconds", "1",
        "--idle-wait", "0"]
NAMES = ("wireguard-go", "openvpn", "iperf3")


def leftovers(run_id: str) -> list[str]:
    """This run's namespaces still mounted, and tunnel processes still running in its work dirs (in any chroot)."""
    tag = "".join(c for c in run_id if c.isalnum() or c == "-")
    found = [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if f"/sb-{tag}." in line]
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (proc / "comm").read_text().strip() in NAMES and f"sslbench.{tag}." in os.readlink(proc / "cwd"):
                found.append(f"{proc.name} {(proc / 'comm').read_text().strip()}")
        except OSError:
            continue
    return found


def has_command(host: str, *names: str) -> bool:
    """The host has one of these commands already: an earlier run installed it (`rig.py up` gives the pristine
    fleet, but earlier tests of the same suite provision its hosts)."""
    config = Path(__file__).resolve().parents[1] / "rig" / "state" / "ssh_config"
    out = subprocess.run(["ssh", "-F", str(config), host, " || ".join(f"command -v {n}" for n in names)],
                         capture_output=True, text=True, timeout=60)
    return bool(out.stdout.strip())


def provisioned_before(host: str) -> bool:
    """The host has tunnel tools already: an earlier run installed them."""
    return has_command(host, "iperf3", "openvpn")


def test_debian_measures_both_tunnels_centos_says_why_not_and_nothing_is_left(rig_inventory, tmp_path):
    if provisioned_before("debian1"):
        pytest.skip("debian1 has tunnel tools from an earlier run: this test needs the pristine fleet (rig.py up)")
    had_openssl = has_command("debian1", "openssl")  # then this run installs none, and records none
    results = tmp_path / "results"
    done = subprocess.run([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", "debian1,centos1", *TINY,
                           "--tunnels", "wireguard,openvpn", "--results", str(results)],
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    [run_dir] = store.list_runs(results)
    hosts = {h.host: h for h in store.load_run(run_dir).hosts}
    debian, centos = hosts["debian1"], hosts["centos1"]
    measured = {(m.algorithm, m.implementation, m.operation) for m in debian.measurements
                if m.kind == TUNNEL and m.status == OK}
    for name, implementation in (("wireguard", "wireguard-go"), ("openvpn-aes-256-gcm", "openvpn-tun"),
                                 ("openvpn-chacha20-poly1305", "openvpn-tun")):
        assert {(name, implementation, "forward"), (name, implementation, "reverse")} <= measured
    installed = {p.name: p for p in debian.installed}
    assert {"iperf3", "openvpn", "wireguard-go", "wireguard-tools"} <= set(installed)
    assert ("openssl" in installed) is not had_openssl
    assert all(p.manager == "apt-get" and p.version for p in installed.values())
    assert {t.implementation_version for t in debian.tunnels if t.tunnel == "openvpn-aes-256-gcm"} == {
        installed["openvpn"].version.split("-")[0]}
    reasons = {m.reason for m in centos.measurements if m.kind == TUNNEL}
    assert all(m.status == UNSUPPORTED for m in centos.measurements if m.kind == TUNNEL)
    assert reasons == {"not measurable: no ip command"}
    assert [m.status for m in centos.measurements if m.kind != TUNNEL] == [OK]  # its openssl cell stands
    assert leftovers(run_dir.name) == []


def test_a_busybox_router_says_its_ip_has_no_netns_and_its_openssl_cells_stand(rig_inventory, tmp_path):
    """ddwrt1: DD-WRT's BusyBox (its ip applet has no netns), OpenSSL in the firmware, read-only root, nothing to
    install with: every tunnel "not measurable" in BusyBox's own words; the openssl cell is measured."""
    results = tmp_path / "results"
    done = subprocess.run([SSLBENCH, "run", "-i", str(rig_inventory), "--limit", "ddwrt1", "--no-provision", *TINY,
                           "--tunnels", "all", "--results", str(results)], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    [run_dir] = store.list_runs(results)
    [host] = store.load_run(run_dir).hosts
    tunnels = [m for m in host.measurements if m.kind == TUNNEL]
    assert sorted((m.algorithm, m.implementation or "") for m in tunnels) == [
        ("openvpn-aes-256-gcm", ""), ("openvpn-aes-256-gcm", "openvpn-dco"), ("openvpn-chacha20-poly1305", ""),
        ("wireguard", "")]
    for m in tunnels:
        assert m.status == UNSUPPORTED and m.reason.startswith("not measurable: no ip netns (OpenWrt: ip-full): BusyBox")
    assert [m.status for m in host.measurements if m.kind != TUNNEL] == [OK]
    assert host.installed == [] and leftovers(run_dir.name) == []
