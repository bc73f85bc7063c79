"""The test fleet (tests/rig) is what it claims to be: checked over SSH, with host key checking on."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from testinfra_shell import said

RIG_DIR = Path(__file__).resolve().parents[1] / "rig"
sys.path.insert(0, str(RIG_DIR))
import rig  # noqa: E402  (the fleet's own description: names, addresses, mirror)

SSH_CONFIG = rig.STATE / "ssh_config"

pytestmark = pytest.mark.rig

FAMILIES = set(rig.FAMILIES)
HOST_NAMES = [h.name for h in rig.HOSTS if h.in_inventory]


def ssh_with_inventory_vars(hostvars: dict, command: str, known_hosts: Path | None = None):
    """ssh exactly as Ansible would from the inventory's variables."""
    common = hostvars["ansible_ssh_common_args"]
    if known_hosts is not None:
        common = re.sub(r"UserKnownHostsFile=\S+", f"UserKnownHostsFile={known_hosts}", common)
    cmd = ["ssh", "-p", str(hostvars["ansible_port"]), "-i", hostvars["ansible_ssh_private_key_file"],
           "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", *common.split(),
           f"{hostvars['ansible_user']}@{hostvars['ansible_host']}", command]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def run_rc(host, command: str) -> SimpleNamespace:
    """host.run for commands whose own exit code may be 255 (opkg), which testinfra takes for an ssh error."""
    result = host.run(f"{command}\nprintf '\\n__rc=%s' $?")
    stdout, _, rc = result.stdout.rpartition("\n__rc=")
    return SimpleNamespace(rc=int(rc), stdout=stdout, stderr=result.stderr)


def installed_since_up(host, path: str) -> bool:
    """True when path on the host was created after `rig.py up` reset the fleet (a provisioning test did it)."""
    up_at = json.loads((RIG_DIR / "state" / "fleet.json").read_text())["up_at"]
    ctime = host.run(f"stat -c %Z {path}").stdout.strip()
    return ctime.isdigit() and int(ctime) > up_at


# --- the inventory -------------------------------------------------------------------------

def test_inventory_has_one_group_per_family_and_checks_host_keys(rig_hosts):
    assert {h["family"] for h in rig_hosts.values()} == FAMILIES
    assert set(rig_hosts) == set(HOST_NAMES)
    for name, h in rig_hosts.items():
        v = h["vars"]
        assert v["ansible_user"] == rig.HOSTS_BY_NAME[name].user
        assert v.get("ansible_become", False) == (v["ansible_user"] != "root")
        assert h["address"].startswith("127."), "test hosts live on loopback only"
        assert Path(v["ansible_ssh_private_key_file"]).is_file()
        assert "StrictHostKeyChecking=yes" in v["ansible_ssh_common_args"]
        known = re.search(r"UserKnownHostsFile=(\S+)", v["ansible_ssh_common_args"]).group(1)
        assert f"[{h['address']}]:{h['port']} ssh-ed25519 " in Path(known).read_text()
    dropbear = [h for h in rig_hosts.values() if h["family"] in ("openwrt", "ddwrt")]
    assert all(h["vars"]["ansible_ssh_transfer_method"] == "piped" for h in dropbear), "dropbear has no sftp"


# --- SSH and host keys ---------------------------------------------------------------------

@pytest.mark.parametrize("name", HOST_NAMES)
def test_ssh_login_with_the_inventory_and_host_key_checking(rig_hosts, name):
    result = ssh_with_inventory_vars(rig_hosts[name]["vars"], "echo alive-$((40 + 2))")
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("alive-42")  # raspbian1's shell prints its start-up text first


@pytest.mark.parametrize("name", ["raspbian1", "openwrt1"])  # one OpenSSH host, one dropbear host
def test_wrong_host_key_is_refused(rig_hosts, name, tmp_path):
    h = rig_hosts[name]
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    other = " ".join((tmp_path / "other.pub").read_text().split()[:2])
    wrong = tmp_path / "known_hosts"
    wrong.write_text(f"[{h['address']}]:{h['port']} {other}\n")
    result = ssh_with_inventory_vars(h["vars"], "echo should-not-run", known_hosts=wrong)
    assert result.returncode == 255
    assert "should-not-run" not in result.stdout
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in result.stderr
    # An unknown host is not silently accepted either.
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    result = ssh_with_inventory_vars(h["vars"], "echo should-not-run", known_hosts=empty)
    assert result.returncode == 255 and "Host key verification failed" in result.stderr


def test_stopped_ssh_server_refuses_then_comes_back(rig_control, testinfra_host):
    with rig_control.host_stopped("centos1"):
        result = subprocess.run(["ssh", "-F", str(SSH_CONFIG), "centos1", "true"],
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 255 and "Connection refused" in result.stderr
        status = subprocess.run([sys.executable, str(RIG_DIR / "rig.py"), "status"], capture_output=True, text=True)
        assert status.returncode == 3 and re.search(r"^centos1 .* down$", status.stdout, re.M)
    assert testinfra_host("centos1").run("true").rc == 0


# --- openwrt: BusyBox ash, dropbear, opkg stand-in with a real feed ----------------------------

def test_openwrt_is_a_busybox_dropbear_box_without_python_sftp_or_openssl(testinfra_host, rig_hosts):
    host = testinfra_host("openwrt1")
    assert host.run("readlink /bin/sh").stdout.strip() == "/bin/busybox"
    assert host.run("echo $0").stdout.strip() == "ash"  # root's login shell from /etc/passwd
    for missing in ("python3", "python", "openssl", "sftp-server", "scp", "apt-get"):
        assert host.run(f"command -v {missing}").rc != 0, missing
    assert not host.file("/usr/libexec/sftp-server").exists
    assert host.file("/usr/sbin/dropbear").exists
    assert "DISTRIB_ARCH='mipsel_24kc'" in host.file("/etc/openwrt_release").content_string
    assert "DISTRIB_RELEASE='19.07.10'" in testinfra_host("openwrt2").file("/etc/openwrt_release").content_string
    h = rig_hosts["openwrt1"]
    banner = subprocess.run(["bash", "-c", f"exec 3<>/dev/tcp/{h['address']}/{h['port']}; head -c 20 <&3"],
                            capture_output=True, text=True, timeout=10).stdout
    assert banner.startswith("SSH-2.0-dropbear")
    sftp = subprocess.run(["sftp", "-F", str(SSH_CONFIG), "-b", "/dev/null", "openwrt1"],
                          capture_output=True, text=True, timeout=30)
    assert sftp.returncode != 0


def test_opkg_update_and_install_openssl_util(openwrt_pristine):
    host = openwrt_pristine
    before = run_rc(host, "opkg install openssl-util")  # no lists yet: opkg knows nothing
    assert before.rc == 255 and "Unknown package 'openssl-util'." in before.stdout
    update = host.run("opkg update")
    assert update.rc == 0, update.stderr
    assert "Updated list of available packages in /var/opkg-lists/openwrt_base" in update.stdout
    install = run_rc(host, "opkg install openssl-util")
    assert install.rc == 0, install.stderr
    assert "Installing openssl-util (" in install.stdout and "Configuring libopenssl3." in install.stdout
    version = host.run("openssl version")
    assert version.rc == 0 and re.match(r"OpenSSL 3\.\d+\.\d+", version.stdout)
    # e_machine 8: MIPS (read from the controller: a router's BusyBox has no od)
    openssl = rig.host_root(rig.HOSTS_BY_NAME["openwrt1"]) / "usr/bin/openssl"
    assert openssl.read_bytes()[18] == 8
    listed = host.run("opkg list-installed").stdout
    assert re.search(r"^openssl-util - 3\.", listed, re.M) and re.search(r"^libopenssl3 - ", listed, re.M)
    again = run_rc(host, "opkg install openssl-util")
    assert again.rc == 0 and "installed in root is up to date" in again.stdout


def test_opkg_unknown_package(openwrt_pristine):
    host = openwrt_pristine
    assert host.run("opkg update").rc == 0
    result = run_rc(host, "opkg install no-such-package")
    assert result.rc == 255
    assert "Unknown package 'no-such-package'." in result.stdout
    assert "Collected errors:\n * opkg_install_cmd: Cannot install package no-such-package." in result.stderr


def test_opkg_update_without_reachable_feed(openwrt_pristine, rig_control):
    host = openwrt_pristine
    with rig_control.feed_unreachable():
        result = run_rc(host, "opkg update")
    assert result.rc == 2  # opkg exits with the number of lists it could not fetch
    assert "*** Failed to download the package list from http://" in result.stdout
    assert "Collected errors:" in result.stderr
    assert re.search(r" \* opkg_download: Failed to download \S+/Packages\.gz, wget returned 4\.", result.stderr)
    assert run_rc(host, "opkg install openssl-util").rc == 255
    assert host.run("opkg update").rc == 0  # the feed is back


# --- ddwrt: read-only firmware with an OpenSSL built in ----------------------------------------

def test_ddwrt_read_only_root_writable_tmp_openssl_in_firmware(testinfra_host):
    host = testinfra_host("ddwrt1")
    denied = host.run("touch /probe")
    assert denied.rc != 0 and "Read-only file system" in denied.stderr
    assert host.run("touch /tmp/probe && rm /tmp/probe").rc == 0
    version = host.run("openssl version")
    assert version.rc == 0 and version.stdout.startswith("OpenSSL 1.1.1")
    for manager in ("opkg", "apt-get", "yum", "python3"):
        assert host.run(f"command -v {manager}").rc != 0, manager
    assert host.run("nvram get DD_BOARD").stdout.strip() != ""
    assert "DD-WRT" in host.file("/tmp/loginprompt").content_string


# --- armbian: apt against the reachable mirror, openssl not yet installed -----------------------

def test_armbian_has_no_openssl_and_apt_points_at_the_reachable_mirror(testinfra_host):
    host = testinfra_host("armbian1")
    assert host.run("uname -m").stdout.strip() == "aarch64"
    assert "BOARD=" in host.file("/etc/armbian-release").content_string
    if host.run("command -v openssl").rc == 0:
        if installed_since_up(host, "/usr/bin/openssl"):
            pytest.skip("openssl was installed on armbian1 after `rig.py up` (a provisioning test): "
                        "run `make rig-up` to reset the fleet")
        pytest.fail("armbian1 came up with openssl installed")
    assert host.run("dpkg -s openssl").rc != 0
    mirror, _ = rig.debian_mirrors()
    sources = host.file("/etc/apt/sources.list").content_string
    assert f"deb {mirror} bookworm main" in sources
    mirror_host = mirror.split("/")[2]
    assert host.run(f"getent hosts {mirror_host}").rc == 0, "DNS must work inside for apt"


# --- raspbian: armv7l under qemu, OpenSSL 1.1.1, Python --------------------------------------

def test_raspbian_is_armv7l_with_openssl_111_and_python(testinfra_host):
    host = testinfra_host("raspbian1")
    assert said(host, "uname -m").strip() == "armv7l"
    assert said(host, "openssl version").startswith("OpenSSL 1.1.1")
    assert said(host, "python3 -c 'import sys; print(sys.version_info[:2] >= (3, 8))'").strip() == "True"
    assert 'ID=raspbian' in said(host, "cat /etc/os-release")


# --- centos: CentOS 7 release files, yum (stand-in) over the real rpm, no python3 -------------

def test_centos_release_no_python3_and_yum_installs_openssl(testinfra_host):
    host = testinfra_host("centos1")
    assert host.file("/etc/redhat-release").content_string.strip() == "CentOS Linux release 7.9.2009 (Core)"
    assert host.run("command -v python3").rc != 0
    assert host.run("ls /usr/bin/python3* /usr/local/bin/python3* 2>/dev/null").stdout.strip() == ""
    for debian_tool in ("apt-get", "dpkg"):
        assert host.run(f"command -v {debian_tool}").rc != 0
    unknown = host.run("yum install -y no-such-package")
    assert unknown.rc == 1 and "No package no-such-package available." in unknown.stdout
    if host.run("rpm -q openssl").rc == 0 and not installed_since_up(host, "/usr/bin/openssl"):
        pytest.fail("centos1 came up with openssl installed")
    try:
        install = host.run("yum install -y openssl")
        assert install.rc == 0 and "Complete!" in install.stdout, install.stderr
        assert host.run("rpm -q openssl").rc == 0
        assert host.run("openssl version").stdout.startswith("OpenSSL 3.")
    finally:
        host.run("yum remove -y openssl")
    assert "package openssl is not installed" in host.run("rpm -q openssl").stdout


# --- Ansible reads the inventory as it is, host key checking on ---------------------------------

def ansible_adhoc(inventory: Path, pattern: str, *args: str) -> dict[str, str]:
    """host -> its result text from an ad-hoc ansible command (minimal callback); all must succeed."""
    env = dict(os.environ, ANSIBLE_HOST_KEY_CHECKING="True", ANSIBLE_NOCOLOR="1", ANSIBLE_STDOUT_CALLBACK="minimal")
    ansible = Path(sys.executable).parent / "ansible"
    result = subprocess.run([str(ansible), pattern, "-i", str(inventory), *args],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    heads = list(re.finditer(r"^(\S+) \| CHANGED", result.stdout, re.M))
    ends = [h.start() for h in heads[1:]] + [len(result.stdout)]
    return {h.group(1): result.stdout[h.end():end] for h, end in zip(heads, ends)}


def test_ansible_raw_and_script_work_on_every_host(rig_inventory, rig_hosts, tmp_path):
    hosts = ansible_adhoc(rig_inventory, "all", "-m", "raw", "-a", "cat /etc/os-release /etc/openwrt_release 2>/dev/null; echo raw-ok")
    assert set(hosts) == set(rig_hosts)
    assert all("raw-ok" in line for line in hosts.values())
    # Files reach the dropbear hosts (no sftp, no scp) through the inventory's transfer settings.
    script = tmp_path / "probe.sh"
    script.write_text("#!/bin/sh\necho script-ran-in \"$(pwd)\"\n")
    hosts = ansible_adhoc(rig_inventory, "openwrt:ddwrt", "-m", "script", "-a", str(script))
    assert set(hosts) == {h.name for h in rig.HOSTS if h.family in ("openwrt", "ddwrt") and h.in_inventory}
    assert all("script-ran-in" in line for line in hosts.values())


# --- as strict as the field: applets, /sys, a sudo user, start-up junk, a host behind a jump host ---------------

# What the real firmware's default BusyBox lacks (tests/rig/busybox/README.md: OpenWrt's Config-defaults.in of
# 19.07.10, 23.05.5 and 25.12.5, DD-WRT's build rules), so the product must not rely on it there.
ABSENT = {
    "openwrt1": ("nohup", "setsid", "timeout", "nproc"),  # 23.05.5
    "openwrt2": ("nohup", "setsid", "taskset", "timeout", "nproc"),  # 19.07.10
    "openwrt3": ("nohup", "timeout", "nproc"),  # 25.12.5
    "ddwrt1": ("setsid", "taskset", "timeout", "nproc", "mktemp", "pgrep"),
    "ddwrt2": ("setsid", "taskset", "timeout", "nproc", "mktemp", "pgrep"),
}
PRESENT = {"openwrt1": ("taskset", "mktemp", "pgrep"), "openwrt2": ("mktemp", "pgrep"), "ddwrt1": ("nohup",),
           "ddwrt2": ("nohup",), "openwrt3": ("setsid", "taskset", "mktemp", "pgrep")}


@pytest.mark.parametrize("name", sorted(ABSENT))
def test_router_applets_the_product_must_not_rely_on_are_really_absent(testinfra_host, name):
    host = testinfra_host(name)
    for applet in ABSENT[name]:
        assert host.run(f"command -v {applet}").rc != 0, applet
        # not compiled in either: no link can bring it back (Debian's busybox-static would run it)
        called = host.run(f"busybox {applet} true")
        assert called.rc == 127 and f"{applet}: applet not found" in called.stderr, applet
    for applet in PRESENT[name]:
        assert host.run(f"command -v {applet}").rc == 0, applet
    busybox = rig.host_root(rig.HOSTS_BY_NAME[name]) / "bin/busybox"
    described = subprocess.run(["file", "-L", str(busybox)], capture_output=True, text=True).stdout
    assert "dynamically linked" in described, described


@pytest.mark.parametrize("name", HOST_NAMES)
def test_sys_is_mounted_read_only_everywhere(testinfra_host, name):
    host = testinfra_host(name)
    assert said(host, "[ -d /sys/devices/system/cpu/cpu0 ] && echo cpu0-seen").strip() == "cpu0-seen"
    mounted = [line.split() for line in said(host, "cat /proc/mounts").splitlines()]
    [options] = [fields[3] for fields in mounted if fields[1] == "/sys"]
    assert options.split(",")[0] == "ro"


def test_debian1_logs_in_as_a_user_and_installs_through_sudo_with_a_password(testinfra_host):
    host = testinfra_host("debian1")
    assert host.run("id -un").stdout.strip() == rig.SUDO_USER and host.run("id -u").stdout.strip() != "0"
    assert host.run("command -v openssl").rc != 0 or installed_since_up(host, "/usr/bin/openssl")
    refused = host.run("sudo -n true")
    assert refused.rc != 0 and "password is required" in refused.stderr
    accepted = host.run(f"printf '%s\\n' {rig.sudo_password()} | sudo -S -p '' id -u")
    assert accepted.rc == 0 and accepted.stdout.strip() == "0"
    # the same password logs in over SSH (sslbench -k), root cannot log in at all
    h = rig.HOSTS_BY_NAME["debian1"]
    root = subprocess.run(["ssh", "-F", str(SSH_CONFIG), "-l", "root", "debian1", "true"], capture_output=True,
                          text=True, timeout=30)
    assert root.returncode == 255
    login = subprocess.run(["sshpass", "-p", rig.sudo_password(), "ssh", "-o", "BatchMode=no", "-o",
                            "PubkeyAuthentication=no", "-o", f"UserKnownHostsFile={rig.STATE / 'known_hosts'}",
                            "-p", str(h.port), f"{rig.SUDO_USER}@{h.address}", "echo password-ok"],
                           capture_output=True, text=True, timeout=30)
    assert login.returncode == 0 and "password-ok" in login.stdout, login.stderr


def test_become_password_is_vaulted_in_group_vars(rig_inventory):
    vault = rig.GROUP_VARS / "debian" / "vault.yml"
    text = vault.read_text()
    assert text.startswith("$ANSIBLE_VAULT;") and rig.sudo_password() not in text
    env = {k: v for k, v in os.environ.items() if k != "ANSIBLE_VAULT_PASSWORD_FILE"}
    view = subprocess.run([str(Path(sys.executable).parent / "ansible-vault"), "view", "--vault-password-file",
                           str(rig.VAULT_PASSWORD_FILE), str(vault)], capture_output=True, text=True, env=env)
    assert view.returncode == 0 and rig.sudo_password() in view.stdout


def test_raspbian1_shell_prints_start_up_text_without_a_newline(rig_hosts):
    result = ssh_with_inventory_vars(rig_hosts["raspbian1"]["vars"], "echo first-output")
    assert result.returncode == 0
    banner, title_and_output = result.stdout.split("\n", 1)[0], result.stdout.split("\n", 1)[1]
    assert "start-up banner" in banner
    # the title escape has no newline: the command's first output glues onto it
    assert re.match(r"\x1b\]0;[^\x07]*\x07first-output$", title_and_output.rstrip("\n")), repr(title_and_output)


def test_ddwrt2_is_reachable_only_through_jump1(testinfra_host, rig_hosts):
    h = rig_hosts["ddwrt2"]
    direct = subprocess.run(["bash", "-c", f"exec 3<>/dev/tcp/{h['address']}/{h['port']}"], capture_output=True,
                            text=True, timeout=10)
    assert direct.returncode != 0  # nothing listens there in this machine's network namespace
    assert "ProxyJump=jump1" in h["vars"]["ansible_ssh_common_args"]
    assert testinfra_host("ddwrt2").run("nvram get DD_BOARD").rc == 0
    shell = subprocess.run(["ssh", "-F", str(SSH_CONFIG), "jump1", "echo should-not-run"], capture_output=True,
                           text=True, timeout=30)
    assert "should-not-run" not in shell.stdout  # the jump host forwards, it gives no shell
