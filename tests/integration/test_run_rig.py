"""`sslbench run` against the loopback fleet (tests/rig): every family end to end, and the faults.

Needs `make rig-up` (root). Matrices are tiny (-seconds 1, one size) so the module runs in minutes.
"""
import json
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from orchestrator import store
from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE, OK

pytestmark = pytest.mark.rig

ROOT = Path(__file__).resolve().parents[2]
RIG = ROOT / "tests" / "rig"
INVENTORY = RIG / "inventory.yml"
SSLBENCH = str(Path(sys.executable).parent / "sslbench")
TINY = ["--algorithms", "aes-128-gcm,sha256", "--sizes", "1024", "--threads", "1", "--api", "evp", "--seconds", "1"]


@pytest.fixture(scope="module")
def fleet():
    """The rig's inventory as data; skips when the fleet is not up."""
    if not INVENTORY.exists():
        pytest.skip("the test fleet is not up: make rig-up")
    status = subprocess.run([sys.executable, str(RIG / "rig.py"), "status"], capture_output=True, text=True)
    if status.returncode != 0:
        pytest.skip(f"the test fleet is not answering: {status.stdout[-500:]}")
    data = yaml.safe_load(INVENTORY.read_text())
    groups = {group: list((body.get("hosts") or {})) for group, body in data["all"]["children"].items()}
    return {"data": data, "groups": groups}


def rig(*args):
    result = subprocess.run([sys.executable, str(RIG / "rig.py"), *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def sslbench(*args, timeout=900):
    return subprocess.run([SSLBENCH, *args], capture_output=True, text=True, timeout=timeout)


def load_only_run(results: Path):
    runs = store.list_runs(results)
    assert len(runs) == 1
    return runs[0], store.load_run(runs[0])


def hostvars(fleet, name):
    for body in fleet["data"]["all"]["children"].values():
        if name in (body.get("hosts") or {}):
            return dict(body["hosts"][name])
    raise KeyError(name)


def remote(fleet, host, command):
    """Run a command on a fleet host over SSH (checks on the host afterwards, like testinfra's ssh backend)."""
    hv = hostvars(fleet, host)
    ssh = ["ssh", "-p", str(hv["ansible_port"]), "-i", hv["ansible_ssh_private_key_file"], "-o", "BatchMode=yes",
           *hv["ansible_ssh_common_args"].split(), f"root@{hv['ansible_host']}", command]
    return subprocess.run(ssh, capture_output=True, text=True, timeout=60)


def test_whole_fleet_end_to_end(fleet, tmp_path):
    result = sslbench("run", "-i", str(INVENTORY), *TINY, "--results", str(tmp_path))
    run_dir, run = load_only_run(tmp_path)
    by_host = {h.host: h for h in run.hosts}
    assert result.returncode == 0, result.stderr + "\n" + json.dumps({h: (r.status, r.reason) for h, r in by_host.items()})
    for group, hosts in fleet["groups"].items():
        for name in hosts:
            host = by_host[name]
            assert host.status == HOST_OK, (name, host.reason)
            assert host.os.family == group, (name, host.os)  # read from the host, not the group name
            assert host.openssl.version, name
            ok = [m for m in host.measurements if m.status == OK]
            assert {m.algorithm for m in ok} == {"aes-128-gcm", "sha256"}, (name, host.measurements)
            assert all(m.block_size == 1024 and m.bytes_per_second > 0 for m in ok)
            assert len(list((run_dir / store.safe_name(name)).glob("*.log"))) == 2
    # provisioning really happened where openssl was missing (checked on the host afterwards)
    for name in fleet["groups"].get("openwrt", []):
        listed = remote(fleet, name, "opkg list-installed")
        assert "openssl-util" in listed.stdout, listed.stdout + listed.stderr
        assert remote(fleet, name, "openssl version").returncode == 0
    for name in fleet["groups"].get("armbian", []):
        assert remote(fleet, name, "dpkg -s openssl").returncode == 0
        assert remote(fleet, name, "openssl version").returncode == 0
    # nothing left behind on the hosts
    for hosts in fleet["groups"].values():
        for name in hosts:
            assert remote(fleet, name, f"ls -d /tmp/sslbench.{run.run_id} 2>/dev/null").stdout.strip() == ""


def test_host_whose_ssh_server_dies_mid_run(fleet, tmp_path):
    sys.path.insert(0, str(RIG))
    import rig as riglib  # the fleet's own helpers: stop a server and drop its open sessions

    victim = fleet["groups"]["raspbian"][0]
    other = fleet["groups"]["ddwrt"][0]
    results = tmp_path / "results"
    proc = subprocess.Popen([SSLBENCH, "run", "-i", str(INVENTORY), "--limit", f"{victim},{other}",
                             "--algorithms", "sha256,sha512,sha1,md5,aes-128-cbc,aes-256-cbc", "--sizes", "1024",
                             "--threads", "1", "--api", "evp", "--seconds", "1", "--results", str(results)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not list(results.glob(f"*/{store.safe_name(victim)}/00[12]-*.log")):
            time.sleep(0.3)
        assert list(results.glob(f"*/{store.safe_name(victim)}/*.log")), "no cell of the victim ever came back"
        host = riglib.HOSTS_BY_NAME[victim]
        riglib.stop_host(host)
        riglib.kill_sessions_in(riglib.host_root(host))
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
        rig("start", victim)
    assert proc.returncode == 1, err
    _, run = load_only_run(results)
    by_host = {h.host: h for h in run.hosts}
    assert by_host[other].status == HOST_OK
    dead = by_host[victim]
    assert dead.status in (HOST_UNREACHABLE, HOST_FAILED) and dead.reason
    assert any(m.status == OK for m in dead.measurements)  # finished cells were kept
    assert "incomplete" in dead.flags
    assert victim in err  # reported at the end


def test_opkg_update_without_feed_fails_that_host_only(fleet, tmp_path):
    openwrt = fleet["groups"]["openwrt"][0]
    other = fleet["groups"]["ddwrt"][0]
    rig("feed-down")
    try:
        result = sslbench("run", "-i", str(INVENTORY), "--limit", f"{openwrt},{other}", "--upgrade-openssl", *TINY,
                          "--results", str(tmp_path))
    finally:
        rig("feed-up")
    assert result.returncode == 1, result.stderr
    _, run = load_only_run(tmp_path)
    by_host = {h.host: h for h in run.hosts}
    assert by_host[openwrt].status == HOST_FAILED
    reason = by_host[openwrt].reason
    assert "opkg" in reason and re.search(r"wget returned|Failed to download", reason), reason
    assert by_host[other].status == HOST_OK  # DD-WRT has no package manager: nothing to upgrade, benchmarked


def test_wrong_host_key_is_refused(fleet, tmp_path):
    """The inventory does not pin StrictHostKeyChecking: sslbench's own setting must refuse the host."""
    victim = fleet["groups"]["ddwrt"][0]
    hv = hostvars(fleet, victim)
    key = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    known = tmp_path / "known_hosts"
    known.write_text(f"[{hv['ansible_host']}]:{hv['ansible_port']} {(tmp_path / 'other_key.pub').read_text()}")
    hv["ansible_ssh_common_args"] = f"-o UserKnownHostsFile={known} -o IdentitiesOnly=yes"
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {victim: hv}}}))
    result = sslbench("run", "-i", str(inventory), *TINY, "--results", str(tmp_path / "results"))
    assert result.returncode == 1, result.stderr
    _, run = load_only_run(tmp_path / "results")
    [host] = run.hosts
    assert host.status == HOST_UNREACHABLE and re.search(r"host key|Host key verification failed", host.reason, re.I)
    assert not host.measurements
    # and an unknown key (empty known_hosts) is not silently accepted either
    known.write_text("")
    result = sslbench("run", "-i", str(inventory), *TINY, "--results", str(tmp_path / "results2"))
    assert result.returncode == 1
    _, run = load_only_run(tmp_path / "results2")
    assert run.hosts[0].status == HOST_UNREACHABLE
    assert known.read_text() == ""  # nothing was learned


def test_inventory_values_with_shell_metacharacters_on_busybox(fleet, tmp_path):
    victim = fleet["groups"]["openwrt"][0]
    hv = hostvars(fleet, victim)
    name = "evil;touch /tmp/PWNED;$(touch /tmp/PWNED)`touch /tmp/PWNED`"
    hv["sslbench_note"] = "'; touch /tmp/PWNED; echo '"
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {name: hv}}}))
    remote(fleet, victim, "rm -f /tmp/PWNED")
    result = sslbench("run", "-i", str(inventory), *TINY, "--results", str(tmp_path / "results"))
    assert result.returncode == 0, result.stderr
    assert remote(fleet, victim, "ls /tmp/PWNED 2>/dev/null").stdout.strip() == ""
    assert not Path("/tmp/PWNED").exists()
    run_dir, run = load_only_run(tmp_path / "results")
    assert run.hosts[0].host == name and run.hosts[0].status == HOST_OK
    assert [p.name for p in run_dir.iterdir() if p.is_dir()] == [store.safe_name(name)]
