"""Provisioning the tunnels' packages (orchestrator/run/platforms.py's `Tunnels`, fleet's `tunnel_packages` and
`install_script`) and run.json's record of what was installed, read from what the package manager says."""
import shutil
import subprocess

import pytest

from orchestrator.model import HostResult, InstalledPackage
from orchestrator.parse import protocol
from orchestrator.parse.packages import installed_versions
from orchestrator.run import platforms
from orchestrator.run.fleet import Collector, HostState, install_script, installed_names, tunnel_packages

ALL_TOOLS = {"ip", "ip-netns", "iperf3", "openvpn", "wg", "wireguard-go"}


def host(managers, tools=frozenset(), openssl=True):
    state = HostState(name="h", result=HostResult(host="h"), package_managers=list(managers),
                      tunnel_tools=set(tools))
    state.openssl_path = "/usr/bin/openssl" if openssl else None
    return state


def test_what_is_installed_follows_the_request_the_host_and_no_provision():
    both = ("wireguard", "openvpn")
    assert tunnel_packages(host(["opkg"]), both, no_provision=False) == (
        "ip-full", "kmod-veth", "iperf3", "kmod-wireguard", "wireguard-tools", "openvpn-openssl")
    assert tunnel_packages(host(["apt-get"]), ("openvpn",), no_provision=False) == ("iproute2", "iperf3", "openvpn")
    assert tunnel_packages(host(["opkg"]), both, no_provision=True) == ()
    assert tunnel_packages(host(["opkg"]), (), no_provision=False) == ()
    assert tunnel_packages(host([]), both, no_provision=False) == ()
    assert tunnel_packages(host(["apt-get"], ALL_TOOLS), both, no_provision=False) == ()
    # BusyBox's ip, without netns: ip-full is what is missing
    assert tunnel_packages(host(["opkg"], ALL_TOOLS - {"ip-netns"}), ("wireguard",), no_provision=False)


def test_the_install_script_fails_for_openssl_only_and_ends_with_the_versions():
    state = host(["apt-get"], openssl=False)
    state.provision = platforms.choose_package_manager(state.package_managers)
    state.tunnel_install = tunnel_packages(state, ("openvpn",), no_provision=False)
    script = install_script(state)
    first, second, third = script.strip().split("\n")
    assert first == f"{state.provision.install} || exit $?"
    assert second.endswith("openvpn || echo 'sslbench: not every tunnel package installed' >&2")
    assert protocol.INSTALLED in third and third.endswith("openssl iproute2 iperf3 openvpn 2>/dev/null; :")
    assert installed_names(state) == ("openssl", "iproute2", "iperf3", "openvpn")


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="needs a Debian machine")
def test_the_versions_read_from_this_machines_dpkg_are_recorded(tmp_path):
    state = host(["apt-get"])
    state.tunnel_install = ("iproute2", "iperf3", "no-such-package-here")
    query = install_script(state).strip().split("\n")[-1]
    out = subprocess.run(["sh", "-c", query], capture_output=True, text=True, timeout=60).stdout
    Collector._installed(state, out)
    dpkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "iproute2"], capture_output=True,
                          text=True).stdout
    assert state.result.installed[0] == InstalledPackage("iproute2", dpkg, "apt-get")
    assert [p.name for p in state.result.installed] == ["iproute2", "iperf3"]  # not what is not there


def test_each_managers_listing_is_read():
    assert installed_versions("iperf3 - 3.17.1-r3\nip-full - 6.11.0-r1\n", ["iperf3", "ip-full"]) == {
        "iperf3": "3.17.1-r3", "ip-full": "6.11.0-r1"}  # opkg list-installed
    assert installed_versions("wireguard-tools-1.0.20250521-r1 x86_64 {wireguard-tools} (GPL-2.0) [installed]\n"
                              "iperf3-3.18-r1 x86_64 {iperf3} (BSD) [installed]\n",
                              ["wireguard-tools", "iperf3", "wireguard"]) == {
        "wireguard-tools": "1.0.20250521-r1", "iperf3": "3.18-r1"}  # apk list --installed
    assert installed_versions("package openvpn is not installed\niperf3 3.1.7-2.el7\n", ["openvpn", "iperf3"]) == {
        "iperf3": "3.1.7-2.el7"}  # rpm -q
    assert installed_versions("openssl 1:3.0.2\n", ["openssl"]) == {"openssl": "1:3.0.2"}
    assert installed_versions("", ["x"]) == {} and installed_versions("x\n- -\n\x00", ["x"]) == {}
