"""shellcheck passes over every shell script sslbench ships or the rig runs, as POSIX sh (BusyBox ash is the
narrowest shell they meet). An exception is an inline `# shellcheck disable=SCxxxx  # reason` in the script.

The scripts: playbooks/files/*.sh (run on the hosts), tests/rig/busybox/*.sh, and every `#!/bin/sh` stand-in
under tests/rig/fixtures (opkg, apk, yum, nvram). `make lint` runs this file; CI (`make test`) too, with
shellcheck from tests/rig/packages.txt.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHELLCHECK = shutil.which("shellcheck")


def scripts() -> list[str]:
    found = [*sorted(ROOT.glob("playbooks/files/*.sh")), *sorted(ROOT.glob("tests/rig/busybox/*.sh"))]
    for path in sorted((ROOT / "tests/rig/fixtures").rglob("*")):
        if path.is_file() and path.read_bytes()[:9] == b"#!/bin/sh":
            found.append(path)
    return [str(path.relative_to(ROOT)) for path in found]


def test_the_scripts_are_found():
    names = scripts()
    for expected in ("playbooks/files/conditions.sh", "playbooks/files/detect.sh", "playbooks/files/sslbench-run.sh",
                     "playbooks/files/tunnel.sh",
                     "tests/rig/busybox/build.sh", "tests/rig/fixtures/openwrt/opkg",
                     "tests/rig/fixtures/openwrt/apk", "tests/rig/fixtures/centos/yum",
                     "tests/rig/fixtures/ddwrt/nvram"):
        assert expected in names


@pytest.mark.parametrize("script", scripts())
def test_shellcheck_passes(script):
    if SHELLCHECK is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs shellcheck from tests/rig/packages.txt, and it is missing")
        pytest.skip("no shellcheck on this machine (apt-get install shellcheck)")
    result = subprocess.run([SHELLCHECK, "--shell=sh", "--format=gcc", script], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
