from __future__ import annotations

from orchestrator.analysis import identity
from orchestrator.model import HostResult, Measurement, OpenSSLBuild, OsFacts

OPTIONS = "bn(64,32) rc4(char) des(long) aes(partial) blowfish(ptr)"
COMPILER = "gcc -fPIC -pthread -O2 -DOPENSSL_CPUID_OBJ -DAES_ASM"


def openwrt_host(**overrides) -> HostResult:
    os_facts = OsFacts(family="openwrt", name="OpenWrt", version="23.05.3", revision="r23809-234f1a2efa",
                       kernel="5.15.150")
    build = OpenSSLBuild(version="3.0.13", options=OPTIONS, compiler=COMPILER)
    result = HostResult(host="router", os=os_facts, openssl=build)
    for key, value in overrides.items():
        setattr(result, key, value)
    return result


def test_label_names_release_revision_kernel_and_openssl_build():
    label = identity.firmware_label(openwrt_host())
    build = identity.openssl_build_hash(OpenSSLBuild(options=OPTIONS, compiler=COMPILER))
    assert label == f"OpenWrt 23.05.3 r23809-234f1a2efa · Linux 5.15.150 · OpenSSL 3.0.13 [{build}]"
    assert len(build) == 6


def test_label_is_stable_and_ignores_build_date_and_cpu_caps():
    a = openwrt_host()
    b = openwrt_host(openssl=OpenSSLBuild(version="3.0.13", options=OPTIONS + "  ", compiler=COMPILER,
                                          built_on="Tue Jan 2", cpuinfo="OPENSSL_armcap=0x3d"))
    assert identity.firmware_label(a) == identity.firmware_label(b)


def test_different_build_options_make_a_different_firmware():
    small = openwrt_host(openssl=OpenSSLBuild(version="3.0.13", options=OPTIONS,
                                              compiler=COMPILER + " -DOPENSSL_SMALL_FOOTPRINT"))
    assert identity.firmware_label(small) != identity.firmware_label(openwrt_host())


def test_new_revision_is_a_new_firmware():
    upgraded = openwrt_host()
    upgraded.os = OsFacts(family="openwrt", name="OpenWrt", version="23.05.4", revision="r24012-d8dd03c46f",
                          kernel="5.15.162")
    assert identity.firmware_label(upgraded).startswith("OpenWrt 23.05.4 r24012-d8dd03c46f · Linux 5.15.162")


def test_user_label_wins():
    result = openwrt_host(firmware="  stock 1.2 beta ")
    assert identity.firmware_label(result) == "stock 1.2 beta"


def test_os_release_pretty_name_and_openssl_version_from_measurements():
    result = HostResult(
        host="pi",
        os=OsFacts(family="raspbian", name="Raspbian GNU/Linux 11 (bullseye)", version="11", kernel="6.1.21-v7+"),
        measurements=[Measurement("aes-128-gcm", 16, 1.0, openssl_version="1.1.1w")],
    )
    # The pretty name's own copy of the version (and codename) is dropped: the label adds VERSION_ID once.
    assert identity.firmware_label(result) == "Raspbian GNU/Linux 11 · Linux 6.1.21-v7+ · OpenSSL 1.1.1w"
    assert identity.openssl_build_hash(result.openssl) is None  # no build options recorded: no [hash]


def test_libressl_and_nothing_known():
    result = HostResult(host="x", openssl=OpenSSLBuild(version="LibreSSL 3.8.2"))
    assert identity.firmware_label(result) == "LibreSSL 3.8.2"
    assert identity.firmware_label(HostResult(host="y")) == identity.UNKNOWN_FIRMWARE


def test_family_used_when_no_pretty_name():
    result = HostResult(host="d", os=OsFacts(family="ddwrt", version="v3.0", revision="r44715"))
    assert identity.firmware_label(result) == "DD-WRT v3.0 r44715"
