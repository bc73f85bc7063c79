"""OS/firmware facts on real files (tests/data/facts and tests/data/console, sources in their READMEs)."""
from pathlib import Path

import pytest

from orchestrator.parse.osinfo import (
    detect_os,
    parse_ddwrt,
    parse_openwrt_release,
    parse_os_release,
    parse_redhat_release,
    parse_uname,
)

DATA = Path(__file__).resolve().parent.parent / "data"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_os_release_keys_unquoted():
    values = parse_os_release(read("facts/os-release-raspbian-11.txt"))
    assert values["ID"] == "raspbian"
    assert values["ID_LIKE"] == "debian"
    assert values["VERSION_ID"] == "11"
    assert values["PRETTY_NAME"] == "Raspbian GNU/Linux 11 (bullseye)"


def test_openwrt_release_single_quotes():
    values = parse_openwrt_release(read("facts/openwrt_release-18.06.1-ar71xx.txt"))
    assert values == {
        "DISTRIB_ID": "OpenWrt", "DISTRIB_RELEASE": "18.06.1", "DISTRIB_REVISION": "r7258-5eb055306f",
        "DISTRIB_TARGET": "ar71xx/generic", "DISTRIB_ARCH": "mips_24kc",
        "DISTRIB_DESCRIPTION": "OpenWrt 18.06.1 r7258-5eb055306f", "DISTRIB_TAINTS": "busybox",
    }


@pytest.mark.parametrize(
    "text, expected",
    [
        ("CentOS Linux release 7.9.2009 (Core)", {"name": "CentOS Linux", "version": "7.9.2009", "family": "centos", "codename": "Core"}),
        ("Red Hat Enterprise Linux Server release 7.9 (Maipo)", {"name": "Red Hat Enterprise Linux Server", "version": "7.9", "family": "rhel", "codename": "Maipo"}),
        ("Fedora release 38 (Thirty Eight)", {"name": "Fedora", "version": "38", "family": "fedora", "codename": "Thirty Eight"}),
    ],
)
def test_redhat_release(text, expected):
    assert parse_redhat_release(text) == expected


def test_redhat_release_real_file_and_garbage():
    assert parse_redhat_release(read("facts/redhat-release-centos-7.6.txt"))["version"] == "7.6.1810"
    assert parse_redhat_release("Debian GNU/Linux 12") is None


def test_ddwrt_signatures():
    assert parse_ddwrt("DD-WRT v3.0-r44715 std (11/03/20)") == {
        "name": "DD-WRT v3.0", "version": "v3.0", "revision": "44715", "variant": "std", "date": "11/03/20"}
    banner = parse_ddwrt(read("console/ddwrt-v3.0-r44715-ssh-login-banner.txt"))
    assert banner["revision"] == "44715" and banner["date"] == "11/03/20"
    assert banner["board"] == "TP-Link Archer C8"
    assert parse_ddwrt("Linux DD-WRT 4.4.244 #3203 Tue Nov 3 2020 mips DD-WRT") == {"name": "DD-WRT"}
    assert parse_ddwrt("OpenWrt 18.06.1") is None


def test_uname_variants():
    rock = parse_uname(read("facts/uname-rock5b-aarch64.txt"))
    assert (rock["kernel"], rock["machine"], rock["hostname"]) == ("5.10.110-34-rockchip-gca15bbe36e6c", "aarch64", "rock-5b")
    assert parse_uname("Linux GL-USB150 4.9.120 #0 Thu Aug 16 07:51:15 2018 mips GNU/Linux")["machine"] == "mips"
    assert parse_uname("3.10.0-957.el7.x86_64\n") == {"kernel": "3.10.0-957.el7.x86_64"}
    assert parse_uname("armv7l") == {"machine": "armv7l"}
    assert parse_uname("") == {}


@pytest.mark.parametrize(
    "files, family, version",
    [
        ({"/etc/os-release": "facts/os-release-debian-12.txt", "uname -a": "facts/uname-debian-12-x86_64.txt"}, "debian", "12"),
        ({"cat /etc/os-release": "facts/os-release-raspbian-11.txt"}, "raspbian", "11"),
        ({"/etc/openwrt_release": "facts/openwrt_release-18.06.1-ar71xx.txt"}, "openwrt", "18.06.1"),
        ({"/etc/redhat-release": "facts/redhat-release-centos-7.6.txt"}, "centos", "7.6.1810"),
        ({"/etc/motd": "console/ddwrt-v3.0-r44715-ssh-login-banner.txt"}, "ddwrt", "v3.0"),
    ],
)
def test_detect_os_real_files(files, family, version):
    facts = detect_os({key: read(path) for key, path in files.items()})
    assert (facts.family, facts.version) == (family, version)


def test_detect_os_fills_kernel_and_machine_from_uname():
    facts = detect_os({"/etc/os-release": read("facts/os-release-raspbian-11.txt"),
                       "uname -a": read("facts/uname-raspbian-11-armv7l.txt")})
    assert (facts.kernel, facts.machine) == ("6.1.21-v7+", "armv7l")
    assert facts.name == "Raspbian GNU/Linux 11 (bullseye)"


def test_detect_os_redhat_release_refines_centos_version():
    os_release = 'NAME="CentOS Linux"\nVERSION="7 (Core)"\nID="centos"\nID_LIKE="rhel fedora"\nVERSION_ID="7"\n'
    facts = detect_os({"/etc/os-release": os_release, "/etc/redhat-release": "CentOS Linux release 7.9.2009 (Core)\n"})
    assert (facts.family, facts.version) == ("centos", "7.9.2009")


@pytest.mark.parametrize(
    "os_release, family",
    [
        ('ID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n', "ubuntu"),
        ('ID=archarm\nNAME="Arch Linux ARM"\n', "arch"),
        ('ID=alpine\nVERSION_ID=3.18.4\n', "alpine"),
        ('ID=rocky\nID_LIKE="rhel centos fedora"\n', "rhel"),
        ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', "ubuntu"),
        ('ID="openwrt"\nVERSION="23.05.2"\nVERSION_ID="23.05.2"\n', "openwrt"),
        ('PRETTY_NAME="Armbian 23.8.1 bookworm"\nID=debian\n', "armbian"),
        ('PRETTY_NAME="Raspbian GNU/Linux 10 (buster)"\n', "raspbian"),
        ('ID=plan9\n', "unknown"),
    ],
)
def test_detect_os_families(os_release, family):
    assert detect_os({"/etc/os-release": os_release}).family == family


def test_detect_os_armbian_release_file_gives_version_and_board():
    armbian = 'BOARD=orangepipc\nBOARD_NAME="Orange Pi PC"\nBOARDFAMILY=sun8i\nVERSION=23.8.1\n'
    facts = detect_os({"/etc/armbian-release": armbian, "/etc/os-release": read("facts/os-release-debian-12.txt")})
    assert (facts.family, facts.version, facts.revision, facts.name) == ("armbian", "23.8.1", "orangepipc", "Armbian 23.8.1")


def test_detect_os_ddwrt_from_nvram_build_number_and_empty_input():
    assert detect_os({"nvram get os_version": "44715\n"}).family == "ddwrt"
    assert detect_os({"nvram get os_version": "44715\n"}).revision == "44715"
    # `uname -a` ends with DD-WRT (no version in it): the build number still comes from nvram
    both = detect_os({"uname -a": "Linux DD-WRT 4.4.302-st5 #2500 SMP Mon Mar 4 03:09:33 +07 2024 armv7l DD-WRT\n",
                      "nvram get os_version": "55630\n"})
    assert (both.family, both.name, both.revision) == ("ddwrt", "DD-WRT", "55630")
    assert detect_os({}).family == "unknown"
    assert detect_os({"/etc/os-release": ""}).family == "unknown"


def test_an_unknown_os_release_keeps_its_name_and_takes_the_family_from_a_marker_file():
    facts = detect_os({"/etc/os-release": 'ID=devuan\nPRETTY_NAME="Devuan GNU/Linux 5 (daedalus)"\nVERSION_ID="5"\n',
                       "/etc/debian_version": "12.1\n"})
    assert (facts.family, facts.name, facts.version) == ("debian", "Devuan GNU/Linux 5 (daedalus)", "5")
