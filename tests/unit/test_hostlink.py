"""hostlink.exec_step: a host's step run from the controller with its session's command line (no Ansible), against
real processes: the local shell, and a real ssh that cannot connect."""
import shutil
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
