"""hostlink.exec_step: a host's step run from the controller with its session's command line (no Ansible), against
real processes: the local shell, and a real ssh that cannot connect."""
import os
import shutil
import subprocess
import socket
import time

import pytest

from orchestrator.run import hostlink


def never() -> bool:
    return False


def test_a_step_gives_its_output_error_output_and_exit_status():
    out = hostlink.exec_step(["/bin/sh", "-s"], "echo one; echo two >&2; printf 'x\\r\\ny'", never)
    assert (out.kind, out.stdout, out.stderr, out.rc) == ("ok", "one\nx\ny", "two\n", 0)
    out = hostlink.exec_step(["/bin/sh", "-s"], "echo half; exit 3", never)
    assert (out.kind, out.stdout, out.rc) == ("failed", "half\n", 3)
    # bytes that are not UTF-8 are stored as U+FFFD, as the task's reports are
    assert hostlink.exec_step(["/bin/sh", "-s"], "printf '\\377ok'", never).stdout == "\ufffdok"


def test_a_step_larger_than_a_pipe_both_ways():
    script = "cat >/dev/null <<'EOF'\n" + "y" * 300_000 + "\nEOF\nhead -c 300000 /dev/zero | tr '\\0' z\n"
    out = hostlink.exec_step(["/bin/sh", "-s"], script, never)
    assert out.kind == "ok" and out.stdout == "z" * 300_000


@pytest.mark.skipif(not shutil.which("ssh"), reason="needs OpenSSH's client")
def test_ssh_that_cannot_connect_is_unreachable_in_ansibles_words():
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-p", str(port), "127.0.0.1", "/bin/sh -s"]
    out = hostlink.exec_step(argv, "echo never", never)
    assert out.kind == "unreachable" and out.stderr.startswith("Failed to connect to the host via ssh: ")
    assert "refused" in out.stderr and out.stdout == ""


def test_ctrl_c_or_a_step_that_never_answers_ends_it_as_unreachable(monkeypatch):
    began = time.monotonic()
    out = hostlink.exec_step(["/bin/sh", "-s"], "sleep 30", lambda: time.monotonic() - began > 0.5)
    assert (out.kind, out.stderr) == ("unreachable", "stopped") and time.monotonic() - began < 5
    monkeypatch.setattr(hostlink, "DIRECT_TIMEOUT", 1.0)
    out = hostlink.exec_step(["/bin/sh", "-s"], "echo started; sleep 30", never)
    assert out.kind == "unreachable" and out.stderr == "no answer in 1 s" and out.stdout == "started\n"


def test_a_command_that_cannot_start_is_unreachable():
    out = hostlink.exec_step(["/nonexistent/ssh", "h", "/bin/sh -s"], "true", never)
    assert out.kind == "unreachable" and "/nonexistent/ssh" in out.stderr


def test_a_task_whose_worker_dies_mid_line_is_dropped_without_a_traceback(tmp_path, capfd):
    """A play that dies (a vaulted group_vars without the vault password) resets its tasks' connections: the
    server drops them quietly, where socketserver would print a ConnectionResetError traceback to the user."""
    import struct

    link = hostlink.HostLink(tmp_path, lambda *report: None)
    try:
        for _ in range(3):
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(str(link.path))
            client.sendall(b'{"host": "h", "play_hosts": 1}\n')  # asks for its step, then the worker is gone
            time.sleep(0.1)  # the answer arrives, unread: closing now resets the connection under the server
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
        time.sleep(0.3)  # the handler threads read, fail and end
    finally:
        link.close()
    assert "Traceback" not in capfd.readouterr().err


def _ssh_master(tmp_path):
    """A real OpenSSH master connection (ControlPersist, as Ansible opens it) to a real sshd, run for this one
    connection (-i, over ProxyCommand): the session command line a host's steps use, and its master's pid."""
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    if not shutil.which("ssh") or not os.path.exists(sshd) or os.geteuid() != 0:
        pytest.skip("needs OpenSSH's ssh and sshd, as root")
    for key in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / key)], check=True)
    (tmp_path / "sshd_config").write_text(f"HostKey {tmp_path / 'host'}\nAuthorizedKeysFile {tmp_path / 'client.pub'}\n"
                                          "StrictModes no\nPermitRootLogin yes\nUsePAM no\n")
    control = tmp_path / "cp" / "a372d8ae7f"
    control.parent.mkdir()
    argv = ["ssh", "-F", "/dev/null", "-C", "-o", "ControlMaster=auto", "-o", "ControlPersist=60s",
            "-o", f"IdentityFile=\"{tmp_path / 'client'}\"", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
            "-o", f"ProxyCommand={sshd} -i -f {tmp_path / 'sshd_config'}",
            "-o", f'ControlPath="{control}"', "root@host", "/bin/sh -s"]
    assert hostlink.exec_step(argv, "echo step", never).stdout == "step\n"
    check = subprocess.run(["ssh", "-o", f"ControlPath={control}", "-O", "check", "host"], capture_output=True,
                           text=True)
    assert check.returncode == 0 and "pid=" in check.stderr, check.stderr  # the master stays (ControlPersist)
    return argv, int(check.stderr.split("pid=")[1].split(")")[0])


def test_close_master_ends_a_real_ssh_master_connection(tmp_path):
    argv, pid = _ssh_master(tmp_path)
    try:
        assert hostlink.close_master(argv)
        deadline = time.monotonic() + 5
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not os.path.exists(f"/proc/{pid}"), "the master still runs"
        assert not hostlink.close_master(argv)  # gone: nothing to end, no error
        # a host's next step opens a master again, as Ansible would
        assert hostlink.exec_step(argv, "echo again", never).stdout == "again\n"
        assert hostlink.close_master(argv)
    finally:  # (a master this test left would run for its ControlPersist minute)
        subprocess.run(["ssh", "-o", f"ControlPath={tmp_path / 'cp' / 'a372d8ae7f'}", "-O", "exit", "host"],
                       capture_output=True)


def test_close_master_needs_a_control_path_it_can_name():
    assert not hostlink.close_master(["/bin/sh", "-s"])  # the local connection: no master
    assert not hostlink.close_master(["ssh", "-o", "ControlPath=~/.ssh/cm-%C", "host", "/bin/sh -s"])  # ssh's tokens
    assert not hostlink.close_master(["ssh", "-o", "ControlPath=/nonexistent/cp/x", "host", "/bin/sh -s"])
