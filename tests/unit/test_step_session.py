"""playbooks/action_plugins/sslbench_step.py's Session: the steps of one host written one after the other to one
`sh -s` (as over SSH, here a local shell: dash and BusyBox ash), each step's output, error output and exit status
read back exactly, whatever the step does (exit, heredocs, no final newline, output larger than a pipe), and a
session that breaks said so."""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "playbooks" / "action_plugins" / "sslbench_step.py"
SHELLS = [["/bin/sh", "-s"]] + ([[shutil.which("busybox"), "ash", "-s"]] if shutil.which("busybox") else [])


def load_session():
    spec = importlib.util.spec_from_file_location("sslbench_step", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Session


Session = load_session()


@pytest.fixture(params=SHELLS, ids=lambda argv: os.path.basename(argv[0]) + "-" + argv[1])
def session(request):
    s = Session(request.param)
    yield s
    s.close()


def test_each_step_gives_its_own_output_error_output_and_status(session):
    first = session.run(b"echo one; echo oops >&2; exit 3\n")
    assert first == {"kind": "failed", "rc": 3, "stdout": "one\n", "stderr": "oops\n"}
    # `exit` ended the step's subshell, not the session: the next step runs in the same shell
    second = session.run(b"echo two\n")
    assert second == {"kind": "ok", "rc": 0, "stdout": "two\n", "stderr": ""}


def test_a_step_keeps_its_variables_to_itself_and_reads_nothing_of_the_next(session):
    assert session.run(b"x=1\ncat\necho read-nothing\n")["stdout"] == "read-nothing\n"  # stdin: /dev/null
    assert session.run(b'echo "x=${x:-unset}"\n')["stdout"] == "x=unset\n"


def test_heredocs_no_final_newline_and_output_larger_than_a_pipe(session, tmp_path):
    script = (f"cat > {tmp_path}/f <<'EOF'\nline with $dollar and `backtick`\nEOF\n"
              f"cat {tmp_path}/f\nprintf 'no newline'").encode()
    assert session.run(script)["stdout"] == "line with $dollar and `backtick`\nno newline"
    big = session.run(b"i=0; while [ $i -lt 3000 ]; do echo line-$i-padding-padding-padding-padding; i=$((i+1)); done\n")
    assert big["rc"] == 0 and big["stdout"].count("\n") == 3000 and big["stdout"].endswith("line-2999-padding-padding-padding-padding\n")


def test_output_that_looks_like_a_marker_is_output(session):
    out = session.run(b'echo "@@sslbench-step-end-0000000000000000 0"; echo after\n')
    assert out["stdout"] == "@@sslbench-step-end-0000000000000000 0\nafter\n" and out["rc"] == 0


def test_a_session_that_dies_mid_step_says_so_and_one_that_never_started_gives_way():
    s = Session(["/bin/sh", "-s"])
    assert s.run(b"echo up\n")["rc"] == 0
    broken = s.run(b"echo before; kill -9 $$; sleep 5\n")  # the shell the steps are written to ($$), gone
    s.close()
    assert broken["kind"] == "unreachable" and broken["stdout"].startswith("before")
    gone = Session(["/bin/sh", "-s"])
    assert gone.run(b"echo up\n")["rc"] == 0
    os.kill(gone.proc.pid, 9)  # between two steps: the next is surely not run, so it is run as a single exec
    gone.proc.wait()
    assert gone.run(b"echo hi\n") is None
    gone.close()
    never = Session(["/bin/sh", "-c", "echo 'ssh: connect to host 192.0.2.7 port 22: No route to host' >&2; exit 255"])
    # ssh that could not connect: its complaint, nothing from the host's shell at all
    assert never.run(b"echo hi\n") is None  # no step ran, and the plugin says why as Ansible does:
    assert never.refused == "ssh: connect to host 192.0.2.7 port 22: No route to host"
    never.close()
    gone_at_once = Session(["/bin/sh", "-c", "echo 'Host key verification failed.' >&2; exit 255"])
    gone_at_once.proc.wait()  # before the step is written: the write fails, ssh's words are read all the same
    assert gone_at_once.run(b"echo hi\n") is None and gone_at_once.refused == "Host key verification failed."
    gone_at_once.close()


def test_close_leaves_no_process(tmp_path):
    s = Session(["/bin/sh", "-s"])
    pid = s.proc.pid
    s.run(b"sleep 0.1 &\n")
    s.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


class _RequireTtyHost:
    """A host whose sudo says what `Defaults requiretty` makes it say to a command without a terminal, as Ansible's
    ssh connection runs it (`-tt` only for a sudoable command without stdin); every command runs in a real local
    shell, so the plugin's own shell words (mktemp, redirections, cleanup) run as on a host."""

    def __init__(self, shell: list[str], tmp: Path) -> None:
        self.shell, self.calls = shell, []
        self.env = {**os.environ, "SUDO_UID": str(os.getuid()), "TMPDIR": str(tmp)}

    def __call__(self, cmd, in_data=None, sudoable=True, executable=None):
        import subprocess

        tty = sudoable and not in_data
        self.calls.append(("tty" if tty else "sudo" if sudoable else "user", cmd))
        if sudoable and not tty:
            return {"rc": 1, "stdout": "", "stderr": "sudo: sorry, you must have a tty to run sudo\n"}
        done = subprocess.run([*self.shell[:-1], "-c", cmd], input=in_data, capture_output=True, env=self.env)
        return {"rc": done.returncode, "stdout": done.stdout.decode(), "stderr": done.stderr.decode()}


@pytest.mark.parametrize("shell", SHELLS, ids=lambda argv: os.path.basename(argv[0]))
def test_become_on_a_requiretty_host_runs_each_step_on_a_terminal(shell, tmp_path):
    import types

    spec = importlib.util.spec_from_file_location("sslbench_step_tty", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    action = object.__new__(module.ActionModule)
    action._play_context = types.SimpleNamespace(become=True)
    host = action._low_level_execute_command = _RequireTtyHost(shell, tmp_path)
    before = set(Path("/tmp").glob("sslbench-tty.*"))
    first = action._exec(b"echo out; echo err >&2; exit 3\n")
    assert first == {"rc": 3, "stdout": "out\n", "stderr": "err\n"}  # its own output, error output and status
    assert [kind for kind, _ in host.calls] == ["sudo", "user", "tty", "user"]
    host.calls.clear()
    assert action._exec(b"printf 'a b\\n'\n")["stdout"] == "a b\n"
    assert [kind for kind, _ in host.calls] == ["user", "tty", "user"]  # the host's later steps: the tty way at once
    assert set(Path("/tmp").glob("sslbench-tty.*")) == before  # no step left behind


@pytest.mark.parametrize("hostvars", [
    {},
    {"ansible_port": 2222, "ansible_user": "pi", "ansible_ssh_private_key_file": "~/.ssh/board",
     "ansible_ssh_common_args": "-o ProxyJump=gw", "ansible_ssh_extra_args": "-o 'SendEnv=A B'"},
    {"ansible_host_key_checking": False, "ansible_ssh_args": "-o ControlMaster=no"},
    {"ansible_ssh_args": "-C -o ControlMaster=auto -o ControlPersist=60s -o ControlPath=/tmp/sslbench-test-%%h"},
    {"ansible_ssh_verbosity": 2, "ansible_ssh_timeout": 30},
], ids=["defaults", "port-user-key-args", "no-master", "own-control-path", "verbose"])
def test_the_sessions_ssh_line_is_the_one_ansibles_ssh_connection_runs(hostvars, tmp_path, monkeypatch):
    """The plugin builds the session's ssh line from the ssh connection's documented options only; Ansible's own
    builder (a private method, read here as the reference only) makes the same line, ControlPath included, so the
    session shares the SSH master Ansible's execs use."""
    import io
    import warnings

    from ansible.playbook.play_context import PlayContext
    from ansible.plugins.loader import connection_loader

    monkeypatch.setenv("ANSIBLE_SSH_CONTROL_PATH_DIR", str(tmp_path / "cp"))
    spec = importlib.util.spec_from_file_location("sslbench_step_ssh", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    context = PlayContext()
    context.remote_addr = "127.0.0.9"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cryptography's deprecations, as ansible-core imports it
        conn = connection_loader.get("ssh", context, io.StringIO())
    conn.set_options(var_options={"ansible_host": "127.0.0.9", **hostvars})
    ansibles = [os.fsdecode(word) for word in
                conn._build_command(conn.get_option("ssh_executable"), "ssh", "127.0.0.9", "/bin/sh -s")]
    assert module.ssh_argv(conn, context.remote_addr) == ansibles
    conn.set_options(var_options={"ansible_host": "127.0.0.9", "ansible_password": "pw"})
    assert module.ssh_argv(conn, context.remote_addr) is None  # a password to answer: Ansible's own exec does that
