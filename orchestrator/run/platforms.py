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
class PackageManager:
    """How one package manager installs the `openssl` command (first found wins, in PACKAGE_MANAGERS order)."""

    name: str  # what detect.sh looks for with `command -v` (or a path it tests with -x)
    package: str
    install: str  # the shell command the install step runs (as the login user; with become when asked)


PACKAGE_MANAGERS = (
    # OpenWrt 25 moved to apk; --upgrade: an installed openssl-util is upgraded (--upgrade-openssl), as opkg install does
    PackageManager("apk", "openssl-util", "apk update && apk add --upgrade openssl-util"),
    # OpenWrt keeps its package lists in RAM: always update first
    PackageManager("opkg", "openssl-util", "opkg update && opkg install openssl-util"),
    PackageManager("/opt/bin/opkg", "openssl-util", "/opt/bin/opkg update && /opt/bin/opkg install openssl-util"),  # Entware
    # one unreachable index (a security mirror) must not stop the install: its error stays in the output
    PackageManager("apt-get", "openssl", "DEBIAN_FRONTEND=noninteractive apt-get update -qq; "
                                         "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                                         "--no-install-recommends openssl"),
    PackageManager("dnf", "openssl", "dnf install -y openssl"),
    PackageManager("yum", "openssl", "yum install -y openssl"),
    PackageManager("pacman", "openssl", "pacman -Sy --noconfirm --needed openssl"),
)


def choose_package_manager(found: Iterable[str]) -> PackageManager | None:
    """The first of the package managers the host has, in PACKAGE_MANAGERS order."""
    have = set(found)
    return next((pm for pm in PACKAGE_MANAGERS if pm.name in have), None)

