"""`sslbench run` over real SSH (this machine's OpenSSH server on a loopback address, no chroot):
the pty path, detaching the on-host runner, and host key checking. Independent of the fleet in
tests/rig, so it also runs where the fleet cannot be built (needs root and /usr/sbin/sshd)."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from orchestrator import store
from orchestrator.model import HOST_OK, HOST_UNREACHABLE, OK

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/sbin/sshd").exists() or
                                 shutil.which("openssl") is None, reason="needs root, /usr/sbin/sshd and openssl")]

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
ADDRESS, PORT = "127.0.0.97", 2297
TINY = ["--algorithms", "sha256,rsa2048", "--sizes", "64", "--threads", "1", "--api", "evp", "--seconds", "1",
        "--idle-wait", "0"]


def keygen(path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    d = tmp_path_factory.mktemp("sshd")
    keygen(d / "host_key")
    keygen(d / "client_key")
    shutil.copy(d / "client_key.pub", d / "authorized_keys")
    (d / "sshd_config").write_text(
        f"ListenAddress {ADDRESS}:{PORT}\nHostKey {d / 'host_key'}\nPidFile none\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n")
    Path("/run/sshd").mkdir(exist_ok=True)
    proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(d / "sshd_config")],
                            stdout=subprocess.DEVNULL, stderr=open(d / "sshd.log", "w"))
    deadline = time.time() + 10
    while time.time() < deadline:
        if subprocess.run(["ssh-keyscan", "-p", str(PORT), ADDRESS], capture_output=True).stdout:
            break
        time.sleep(0.2)
    (d / "known_hosts").write_text(f"[{ADDRESS}]:{PORT} {(d / 'host_key.pub').read_text()}")
    yield d
    proc.terminate()
    proc.wait(timeout=10)


def inventory(sshd, tmp_path, known_hosts):
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump({"all": {"hosts": {"box": {
        "ansible_host": ADDRESS, "ansible_port": PORT, "ansible_user": "root",
        "ansible_ssh_private_key_file": str(sshd / "client_key"),
        # no StrictHostKeyChecking here: sslbench's own setting must do the refusing
        "ansible_ssh_common_args": f"-o UserKnownHostsFile={known_hosts} -o IdentitiesOnly=yes"}}}}))
    return path


def bench(inv, results):
    result = subprocess.run([SSLBENCH, "run", "-i", str(inv), *TINY, "--results", str(results)],
                            capture_output=True, text=True, timeout=300)
    [run_dir] = store.list_runs(results)
    return result, store.load_run(run_dir)


def test_run_over_ssh(sshd, tmp_path):
    work_dirs_before = set(Path("/tmp").glob("sslbench.*"))
    result, run = bench(inventory(sshd, tmp_path, sshd / "known_hosts"), tmp_path / "results")
    assert result.returncode == 0, result.stderr
    [host] = run.hosts
    assert host.status == HOST_OK
    assert {m.algorithm for m in host.measurements if m.status == OK} == {"sha256", "rsa2048"}
    assert set(Path("/tmp").glob("sslbench.*")) == work_dirs_before  # the host's work dir was removed


def test_wrong_and_unknown_host_keys_are_refused(sshd, tmp_path):
    # a good run first: its SSH master connection must not let the next runs skip the check
    assert bench(inventory(sshd, tmp_path, sshd / "known_hosts"), tmp_path / "good")[0].returncode == 0
    keygen(tmp_path / "other")
    wrong = tmp_path / "known_wrong"
    wrong.write_text(f"[{ADDRESS}]:{PORT} {(tmp_path / 'other.pub').read_text()}")
    empty = tmp_path / "known_empty"
    empty.write_text("")
    for known, results in ((wrong, tmp_path / "wrong"), (empty, tmp_path / "empty")):
        result, run_ = bench(inventory(sshd, tmp_path, known), results)
        assert result.returncode == 1
        [host] = run_.hosts
        assert host.status == HOST_UNREACHABLE and "Host key verification failed" in host.reason
        assert not host.measurements
    assert empty.read_text() == ""  # the unknown key was not learned
