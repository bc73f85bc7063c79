"""OpenWrt 25.x, whose package manager is apk (openwrt3 in tests/rig): the box is what it claims, the apk stand-in
answers as apk-tools 3 does, and `sslbench run` installs OpenSSL with `apk update` / `apk add` and benchmarks it,
or says in apk's own words why it could not and leaves the host as it was.

Needs `make rig-up` (root); skipped with the reason otherwise. Cells are tiny (-seconds 1, one size, one algorithm).
"""
from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import store
from orchestrator.model import HOST_FAILED, HOST_OK, OK

RIG_DIR = Path(__file__).resolve().parents[1] / "rig"
sys.path.insert(0, str(RIG_DIR))
import rig  # noqa: E402  (the fleet's own description)

pytestmark = pytest.mark.rig

NAME = "openwrt3"
HOST = rig.HOSTS_BY_NAME[NAME]
SSLBENCH = str(Path(sys.executable).parent / "sslbench")
TINY = ["--algorithms", "sha256", "--sizes", "1024", "--threads", "1", "--api", "evp", "--seconds", "1",
        "--idle-wait", "0"]
LIST = "/etc/apk/repositories.d/distfeeds.list"
BASE, CORE = rig.apk_repo_url(HOST, "base"), rig.apk_repo_url(HOST, "core")
UNTRUSTED_BASE = rig.apk_repo_url(HOST, "base", root="untrusted/")
OPENSSL_PACKAGES = "openssl-util libopenssl3 libatomic1"


def sslbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([SSLBENCH, *args], capture_output=True, text=True, timeout=600)


def only_host(results: Path):
    runs = store.list_runs(results)
    assert len(runs) == 1
    return store.load_run(runs[0]).hosts[0]


def set_repositories(host, *urls: str) -> None:
    host.run(f"printf '%s\\n' {' '.join(urls)} > {LIST}")


def state_of(host) -> dict[str, str]:
    """What provisioning may change: world, the installed database, the openssl command."""
    return {"world": host.run("cat /etc/apk/world").stdout, "installed": host.run("cat /lib/apk/db/installed").stdout,
            "openssl": host.run("command -v openssl").stdout}


@pytest.fixture
def openwrt3(testinfra_host, rig_inventory):
    """openwrt3 as flashed: no index cache, no openssl, the repositories of its release; put back after the test."""
    host = testinfra_host(NAME)

    def clean() -> None:
        host.run(f"apk del {OPENSSL_PACKAGES} >/dev/null; rm -rf /var/cache/apk")
        set_repositories(host, CORE, BASE)

    clean()
    yield host
    clean()


def run_rc(host, command: str):
    result = host.run(f"{command}\nprintf '\\n__rc=%s' $?")
    stdout, _, rc = result.stdout.rpartition("\n__rc=")
    return int(rc), stdout, result.stderr


# --- the box --------------------------------------------------------------------------------------

def test_openwrt3_is_an_openwrt_25_box_with_apk_and_no_opkg(openwrt3):
    host = openwrt3
    assert host.run("readlink /bin/sh").stdout.strip() == "/bin/busybox"
    assert host.run("echo $0").stdout.strip() == "ash"
    for missing in ("opkg", "openssl", "python3", "sftp-server", "apt-get", "nohup"):
        assert host.run(f"command -v {missing}").rc != 0, missing
    assert host.run("busybox nohup true").rc == 127  # the applet is not in the firmware's BusyBox at all
    # 25.12's BusyBox has setsid, which 23.05's and 19.07's lack (tests/rig/busybox/README.md)
    assert host.run("command -v setsid").stdout.strip() == "/usr/bin/setsid"
    assert host.run("command -v apk").stdout.strip() == "/usr/bin/apk"
    release = host.file("/etc/openwrt_release").content_string
    assert "DISTRIB_RELEASE='25.12.5'" in release and "DISTRIB_TARGET='mediatek/filogic'" in release
    assert 'OPENWRT_RELEASE="OpenWrt 25.12.5 r33051-f5dae5ece4"' in host.file("/etc/os-release").content_string
    assert host.run("apk --print-arch").stdout.strip() == "aarch64_cortex-a53"
    assert host.file(f"/etc/apk/keys/{rig.APK_KEY}").exists
    assert "TEST FIXTURE" in host.file("/usr/bin/apk").content_string


# --- apk itself: its messages and exit codes ------------------------------------------------------

def test_apk_update_then_add_openssl_util_installs_a_real_aarch64_openssl(openwrt3):
    host = openwrt3
    rc, out, err = run_rc(host, "apk update")
    assert rc == 0, err
    assert f" [{BASE}]" in out and f" [{CORE}]" in out
    assert out.rstrip().endswith("OK: 3 distinct packages available")
    rc, out, err = run_rc(host, "apk add openssl-util")
    assert rc == 0, err
    assert re.search(r"^\(1/3\) Installing libatomic1 \(", out, re.M), out
    assert re.search(r"^\(2/3\) Installing libopenssl3 \(3\.\d+\.\d+-r1\)$", out, re.M), out
    assert re.search(r"^\(3/3\) Installing openssl-util \(3\.\d+\.\d+-r1\)$", out, re.M), out
    assert re.search(r"^OK: \d+(\.\d)? (KiB|MiB) in 9 packages$", out, re.M), out
    assert re.match(r"OpenSSL 3\.\d+\.\d+", host.run("openssl version").stdout)
    # e_machine 183: AArch64 (read from the controller: the router's BusyBox has no od)
    assert (rig.host_root(HOST) / "usr/bin/openssl").read_bytes()[18] == 183
    assert "openssl-util" in host.run("cat /etc/apk/world").stdout.split()
    assert host.run("apk info -e openssl-util").rc == 0
    rc, out, _ = run_rc(host, "apk add openssl-util")  # already there: nothing to do
    assert rc == 0 and "Installing" not in out and out.startswith("OK: ")


def test_apk_add_unknown_package_says_no_such_package_and_changes_nothing(openwrt3):
    host = openwrt3
    assert host.run("apk update").rc == 0
    before = state_of(host)
    rc, out, err = run_rc(host, "apk add openssl-utilx")
    assert rc == 1
    assert ("ERROR: unable to select packages:\n  openssl-utilx (no such package):\n"
            "    required by: world[openssl-utilx]\n") in err
    assert state_of(host) == before


def test_apk_update_with_the_repository_unreachable(openwrt3, rig_control):
    host = openwrt3
    with rig_control.apk_repo_unreachable():
        rc, out, err = run_rc(host, "apk update")
    assert rc == 2  # apk update exits with the number of unavailable (and stale) repositories
    assert "ERROR: wget: exited with error 4" in err
    assert f"WARNING: updating and opening {BASE}: Network unreachable" in err
    assert out.strip() == "2 unavailable, 0 stale; 0 distinct packages available"


def test_apk_update_of_an_index_signed_with_an_unknown_key(openwrt3):
    host = openwrt3
    set_repositories(host, CORE, UNTRUSTED_BASE)
    rc, out, err = run_rc(host, "apk update")
    assert rc == 1
    assert f"WARNING: updating and opening {UNTRUSTED_BASE}: UNTRUSTED signature" in err
    assert out.rstrip().endswith("1 unavailable, 0 stale; 1 distinct packages available")
    rc, _, err = run_rc(host, "apk add openssl-util")  # the untrusted index was not kept
    assert rc == 1 and "openssl-util (no such package):" in err


# --- sslbench on it ---------------------------------------------------------------------------------

def test_sslbench_installs_openssl_with_apk_and_benchmarks_openwrt_25(openwrt3, rig_inventory, tmp_path):
    host = openwrt3
    # --no-provision: openssl is missing and may not be installed: the host fails, untouched
    before = state_of(host)
    result = sslbench("run", "-i", str(rig_inventory), "--limit", NAME, "--no-provision", *TINY,
                      "--results", str(tmp_path / "none"))
    assert result.returncode == 1
    failed = only_host(tmp_path / "none")
    assert failed.status == HOST_FAILED and "--no-provision" in failed.reason
    assert state_of(host) == before

    result = sslbench("run", "-i", str(rig_inventory), "--limit", NAME, *TINY, "--results", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr[-3000:]
    bench = only_host(tmp_path / "run")
    assert bench.status == HOST_OK, bench.reason
    assert (bench.os.family, bench.os.version, bench.os.revision, bench.os.target) == (
        "openwrt", "25.12.5", "r33051-f5dae5ece4", "mediatek/filogic")
    assert bench.os.name == "OpenWrt 25.12.5 r33051-f5dae5ece4"
    assert bench.openssl.version.startswith("3.")
    ok = [m for m in bench.measurements if m.status == OK]
    assert ok and all(m.algorithm == "sha256" and m.bytes_per_second > 0 for m in ok)
    # what provisioning did, checked on the host: apk's index cache, world, database, the command
    assert host.run("ls /var/cache/apk/APKINDEX.*.tar.gz").rc == 0
    assert "openssl-util" in host.run("cat /etc/apk/world").stdout.split()
    assert host.run("apk info -e openssl-util libopenssl3").rc == 0
    assert host.run("command -v openssl").stdout.strip() == "/usr/bin/openssl"

    # --upgrade-openssl on a host that has it: apk runs again (update, add --upgrade), nothing else changes
    installed = state_of(host)
    host.run("rm -rf /var/cache/apk")
    result = sslbench("run", "-i", str(rig_inventory), "--limit", NAME, "--upgrade-openssl", *TINY,
                      "--results", str(tmp_path / "upgrade"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert only_host(tmp_path / "upgrade").status == HOST_OK
    assert host.run("ls /var/cache/apk/APKINDEX.*.tar.gz").rc == 0  # `apk update` ran
    assert state_of(host) == installed


@pytest.mark.parametrize("fault, words", [
    ("unknown", ["ERROR: unable to select packages:", "openssl-util (no such package):",
                 "required by: world[openssl-util]"]),
    ("unreachable", ["ERROR: wget: exited with error 4", f"updating and opening {BASE}: Network unreachable",
                     "2 unavailable, 0 stale; 0 distinct packages available"]),
    ("untrusted", [f"updating and opening {UNTRUSTED_BASE}: UNTRUSTED signature",
                   "1 unavailable, 0 stale; 1 distinct packages available"]),
])
def test_an_apk_failure_fails_the_host_in_apks_words_and_leaves_it_as_it_was(openwrt3, rig_inventory, rig_control,
                                                                             tmp_path, fault, words):
    host = openwrt3
    if fault == "unknown":  # a reachable, trusted repository without openssl-util (only the target's packages)
        set_repositories(host, CORE)
    elif fault == "untrusted":
        set_repositories(host, CORE, UNTRUSTED_BASE)
    before = state_of(host)
    with rig_control.apk_repo_unreachable() if fault == "unreachable" else contextlib.nullcontext():
        result = sslbench("run", "-i", str(rig_inventory), "--limit", NAME, *TINY, "--results", str(tmp_path))
    assert result.returncode == 1
    failed = only_host(tmp_path)
    assert failed.status == HOST_FAILED and not failed.measurements
    for said in words:
        assert said in failed.reason, (said, failed.reason)
    assert NAME in result.stderr and words[0] in result.stderr  # said at the end of the run too
    assert state_of(host) == before
