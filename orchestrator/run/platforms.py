"""The one table of what sslbench knows about the hosts' operating systems: which files and commands tell the OS
(detect.sh prints them, orchestrator/parse/osinfo.py reads them) and which package managers install OpenSSL
(detect.sh looks for them, the install step runs their command). The model is ansible-core's OSDIST_LIST:
data, in order of preference, not if/elif chains.

detect.sh gets these lists (orchestrator/run/stages.py's `detect_script`): adding a package manager or a
release file is one line here. Pure data.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

# Files whose text says which OS or firmware a host runs, as detect.sh prints them (`@@sslbench:<path>`).
RELEASE_FILES = (
    "/etc/os-release",  # most distributions; OpenWrt 18.06+
    "/etc/openwrt_release",  # OpenWrt (DISTRIB_RELEASE, DISTRIB_REVISION)
    "/etc/redhat-release",  # CentOS / RHEL / Fedora: the minor version os-release lacks
    "/etc/armbian-release",  # Armbian (BOARD, VERSION)
    "/etc/rpi-issue",  # Raspberry Pi OS 64-bit, whose os-release says ID=debian
    "/etc/debian_version",
    "/etc/alpine-release",
    "/etc/arch-release",
    "/etc/motd", "/etc/banner", "/etc/issue",  # DD-WRT and other firmwares say who they are here
)
# Commands detect.sh runs for the same purpose (the section is named by the command).
RELEASE_COMMANDS = ("uname -a", "nvram get os_version")  # nvram: DD-WRT's build number


@dataclass(frozen=True)
class Tunnels:
    """The packages the measured tunnels need from one package manager (orchestrator/run/tunnels.py's groups):
    what every tunnel needs (ip with netns, veth, iperf3), and each group's own."""

    common: tuple[str, ...]
    wireguard: tuple[str, ...]
    openvpn: tuple[str, ...]
    add: str  # the command that installs packages, given as words after it
    query: str  # the command that prints the installed version of the packages given after it

    def packages(self, groups: tuple[str, ...]) -> tuple[str, ...]:
        chosen = list(self.common)
        for group in groups:
            chosen += getattr(self, group, ())
        return tuple(chosen)


_OPENWRT = ("ip-full", "kmod-veth", "iperf3"), ("kmod-wireguard", "wireguard-tools"), ("openvpn-openssl",)
_DEBIAN_QUERY = "dpkg-query -W -f '${Package} ${Version}\\n'"
_RPM_QUERY = "rpm -q --qf '%{NAME} %{VERSION}-%{RELEASE}\\n'"


@dataclass(frozen=True)
class PackageManager:
    """How one package manager installs the `openssl` command (first found wins, in PACKAGE_MANAGERS order), and
    the tunnels' packages."""

    name: str  # what detect.sh looks for with `command -v` (or a path it tests with -x)
    package: str
    install: str  # the shell command the install step runs (as the login user; with become when asked)
    tunnels: Tunnels | None = None


PACKAGE_MANAGERS = (
    # OpenWrt 25 moved to apk; --upgrade: an installed openssl-util is upgraded (--upgrade-openssl), as opkg install does
    PackageManager("apk", "openssl-util", "apk update && apk add --upgrade openssl-util",
                   Tunnels(*_OPENWRT, add="apk update && apk add", query="apk list --installed")),
    # OpenWrt keeps its package lists in RAM: always update first
    PackageManager("opkg", "openssl-util", "opkg update && opkg install openssl-util",
                   Tunnels(*_OPENWRT, add="opkg update && opkg install", query="opkg list-installed")),
    # Entware: user space only (the firmware's kernel has, or lacks, veth and WireGuard)
    PackageManager("/opt/bin/opkg", "openssl-util", "/opt/bin/opkg update && /opt/bin/opkg install openssl-util",
                   Tunnels(("ip-full", "iperf3"), ("wireguard-tools", "wireguard-go"), ("openvpn-openssl",),
                           add="/opt/bin/opkg update && /opt/bin/opkg install", query="/opt/bin/opkg list-installed")),
    # one unreachable index (a security mirror) must not stop the install: its error stays in the output
    PackageManager("apt-get", "openssl", "DEBIAN_FRONTEND=noninteractive apt-get update -qq; "
                                         "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                                         "--no-install-recommends openssl",
                   # wireguard-go: the kernel's WireGuard is used where it has it, this where it has not
                   Tunnels(("iproute2", "iperf3"), ("wireguard-tools", "wireguard-go"), ("openvpn",),
                           add="DEBIAN_FRONTEND=noninteractive apt-get update -qq; DEBIAN_FRONTEND=noninteractive "
                               "apt-get install -y -qq --no-install-recommends", query=_DEBIAN_QUERY)),
    # CentOS 7: iperf3 in base, openvpn and wireguard-tools from EPEL where enabled; what is missing is skipped
    PackageManager("dnf", "openssl", "dnf install -y openssl",
                   Tunnels(("iproute", "iperf3"), ("wireguard-tools",), ("openvpn",),
                           add="dnf install -y --skip-broken", query=_RPM_QUERY)),
    PackageManager("yum", "openssl", "yum install -y openssl",
                   Tunnels(("iproute", "iperf3"), ("wireguard-tools",), ("openvpn",),
                           add="yum install -y --skip-broken", query=_RPM_QUERY)),
    PackageManager("pacman", "openssl", "pacman -Sy --noconfirm --needed openssl",
                   Tunnels(("iproute2", "iperf3"), ("wireguard-tools",), ("openvpn",),
                           add="pacman -Sy --noconfirm --needed", query="pacman -Q")),
)


def choose_package_manager(found: Iterable[str]) -> PackageManager | None:
    """The first of the package managers the host has, in PACKAGE_MANAGERS order."""
    have = set(found)
    return next((pm for pm in PACKAGE_MANAGERS if pm.name in have), None)

