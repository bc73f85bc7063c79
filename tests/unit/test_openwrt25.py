"""OpenWrt 25.x (apk) detection, on the real release texts of a 25.12.5 router (tests/rig/fixtures/openwrt/25.12.5,
sources in their headers): named, versioned and revisioned as 23.05 is, with its target; apk is the package
manager sslbench installs OpenSSL with there."""
from pathlib import Path

import pytest

from orchestrator.analysis import identity
from orchestrator.model import HostResult
from orchestrator.parse.osinfo import detect_os
from orchestrator.run import platforms

FIXTURES = Path(__file__).resolve().parents[1] / "rig" / "fixtures" / "openwrt"


def release_files(release: str) -> dict[str, str]:
    return {f"/etc/{name}": (FIXTURES / release / name).read_text() for name in ("openwrt_release", "os-release")}


@pytest.mark.parametrize("release, revision, target", [
    ("25.12.5", "r33051-f5dae5ece4", "mediatek/filogic"),
    ("23.05.5", "r24106-10cc5fcd00", "ramips/mt7621"),
])
def test_openwrt_release_files_give_name_release_revision_and_target(release, revision, target):
    facts = detect_os({**release_files(release), "uname -a": "Linux OpenWrt 6.12.94 #0 SMP aarch64 GNU/Linux"})
    assert facts.family == "openwrt"
    assert (facts.version, facts.revision, facts.target) == (release, revision, target)
    assert facts.name == f"OpenWrt {release} {revision}"
    result = HostResult(host="router", os=facts)
    assert identity.os_label(result) == f"OpenWrt {release}"
    assert identity.firmware_label(result).startswith(f"OpenWrt {release} {revision} · Linux 6.12.94")


def test_openwrt_25_from_os_release_alone_keeps_build_id_and_board():
    """A 25.x box whose openwrt_release was not captured: os-release says as much (BUILD_ID, OPENWRT_BOARD)."""
    facts = detect_os({"/etc/os-release": release_files("25.12.5")["/etc/os-release"]})
    assert (facts.family, facts.version, facts.revision, facts.target) == (
        "openwrt", "25.12.5", "r33051-f5dae5ece4", "mediatek/filogic")


def test_openwrt_25_installs_with_apk_update_then_add_upgrading_like_opkg():
    manager = platforms.choose_package_manager(["apk"])
    assert manager is not None and manager.package == "openssl-util"
    # `apk update` first (the index cache is in RAM), then add; --upgrade: an installed openssl-util is upgraded
    # when asked (--upgrade-openssl), as `opkg install` upgrades an installed package
    assert manager.install == "apk update && apk add --upgrade openssl-util"


def test_a_target_of_another_family_stays_unknown():
    facts = detect_os({"/etc/os-release": 'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n'})
    assert facts.family == "debian" and facts.target is None
