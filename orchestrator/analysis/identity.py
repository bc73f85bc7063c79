"""Which firmware a result was measured under: the key `history` groups by and `diff --by firmware` compares.

A result's identity is its host plus its firmware: the user's label (`sslbench import --firmware LABEL`,
HostResult.firmware) when there is one, else what the host reported: OS release (OpenWrt DISTRIB_RELEASE and
DISTRIB_REVISION, os-release VERSION_ID, DD-WRT build), kernel, and the OpenSSL version with a short hash of its
build options (the same version built with OPENSSL_SMALL_FOOTPRINT or without asm is a different firmware for speed).
Where the `openssl` program and libcrypto differ in version, both: "OpenSSL 3.0.15 (libcrypto 3.0.16)".
"""
from __future__ import annotations

import hashlib
import re

from orchestrator.model import HostResult, OpenSSLBuild

UNKNOWN_FIRMWARE = "unknown firmware"


def openssl_build_hash(build: OpenSSLBuild) -> str | None:
    """Six hex digits that change when the build options or compiler flags change (None when neither is known).

    `built on` and the CPU capability line are left out: a rebuild with the same options is the same code, and
    OPENSSL_ia32cap/armcap describe the CPU, not the firmware.
    """
    parts = [" ".join((build.options or "").split()), " ".join((build.compiler or "").split())]
    if not any(parts):
        return None
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:6]


def firmware_label(result: HostResult) -> str:
    """Human-readable and stable: the same facts always give the same label.

    e.g. "OpenWrt 23.05.3 r23809-234f1a2efa · Linux 5.15.150 · OpenSSL 3.0.13 [1a2b3c]"
    """
    if result.firmware and result.firmware.strip():
        return result.firmware.strip()
    parts = []
    os_part = " ".join(p for p in (_os_name(result), result.os.version, result.os.revision) if p)
    if os_part:
        parts.append(os_part)
    if result.os.kernel:
        parts.append(f"Linux {result.os.kernel}")
    version = _openssl_version(result)
    if version:
        build = openssl_build_hash(result.openssl)
        name = version if version.lower().startswith(("openssl", "libressl", "boringssl")) else f"OpenSSL {version}"
        if result.openssl.versions_differ:  # the program (its `speed` decides what is timed) over another libcrypto
            name = f"{name} (libcrypto {result.openssl.library_version})"
        parts.append(f"{name} [{build}]" if build else name)
    return " · ".join(parts) or UNKNOWN_FIRMWARE


def os_label(result: HostResult) -> str:
    """The OS and its release, short: "OpenWrt 23.05.5", "DD-WRT r55630" (a build number when there is no
    version), "?" when nothing is known."""
    release = result.os.version
    if not release and result.os.revision:
        release = f"r{result.os.revision}" if result.os.revision.isdigit() else result.os.revision
    words = re.sub(r"\s*\(.*\)\s*$", "", _os_name(result) or "").split()
    if release and any(f"{w}.".startswith(f"{release}.") for w in words):
        return " ".join(words)  # "Ubuntu 22.04.4 LTS" says more than VERSION_ID 22.04
    if release:  # "CentOS Linux 7 (Core)" with 7.9.2009: the name without its own short version
        words = [w for w in words if not (w[:1].isdigit() and f"{release}.".startswith(f"{w}."))]
    return " ".join([*words, release] if release else words) or "?"


def _os_name(result: HostResult) -> str | None:
    """A short OS name: 'OpenWrt', 'Debian GNU/Linux' ... (the family when no pretty name was recorded)."""
    name = (result.os.name or "").strip()
    if name:
        # Pretty names often repeat the version ("OpenWrt 23.05.3", "Debian GNU/Linux 12 (bookworm)"): keep the name.
        version = result.os.version
        found = re.search(rf"(?<![\w.]){re.escape(version)}(?![\w.])", name) if version else None
        if found:
            name = name[: found.start()].strip() or name
        return name
    family = result.os.family
    known = {"openwrt": "OpenWrt", "ddwrt": "DD-WRT", "centos": "CentOS", "debian": "Debian", "ubuntu": "Ubuntu",
             "raspbian": "Raspbian", "armbian": "Armbian", "arch": "Arch Linux"}
    return known.get(family or "", family)


def _openssl_version(result: HostResult) -> str | None:
    if result.openssl.program_version:
        return result.openssl.program_version
    if result.openssl.version:
        return result.openssl.version
    versions = {m.openssl_version for m in result.measurements if m.openssl_version}
    return sorted(versions)[0] if len(versions) == 1 else None
