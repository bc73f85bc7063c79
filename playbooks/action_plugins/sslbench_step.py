"""sslbench_step: run the host's steps, each a script written on the controller, in one SSH exec per step with the
script on stdin (no Python on the host, no remote temp file, no command-length limit: dropbear refuses commands
over 9000 bytes).

Two ways, one task per host either way (orchestrator/run/engine.py decides every step):
- socket=PATH (the controller's Unix socket, orchestrator/run/hostlink.py): ask the controller for the host's next
  step, wait as long as it says, run it, report the output, and so on until it says `end`. One task carries the
  host through detect, install, launch, polls and cleanup, so a run costs one ansible-playbook and one worker per
  host, as plain Ansible does. The controller says `end` early (the host is asked again in a later pass) when
  other hosts wait for a worker. Over plain SSH (or the local connection), without passwords or become, the
  steps share one `/bin/sh -s` on the host (a Session): each step is written to it once the controller has
  decided it, so detect and launch, and a short matrix's whole run, cost the host one SSH exec as `raw` does.
- script=PATH (relative to the playbook; a site worker's run, where the controller's socket is out of reach):
  run that one script and return its output as raw does (stdout, stderr, rc); the controller reads the event.
A session's command line (the one Ansible's ssh connection runs for this host, built from that plugin's documented
options: `ssh_argv`) goes back to the controller with each step's report, so that a host whose task ended after its
launch (more hosts than --forks) can be polled without a pass of Ansible.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import selectors
import shlex
import socket
import subprocess
import time

from ansible.errors import AnsibleActionFail, AnsibleConnectionFailure
from ansible.plugins.action import ActionBase
from ansible.utils.path import makedirs_safe, unfrackpath


TTY_REFUSED = "must have a tty"  # sudo: "sorry, you must have a tty to run sudo" (Defaults requiretty)
TTY_DIR = re.compile(r"/tmp/sslbench-tty\.[A-Za-z0-9]+")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        link = self._connect(self._task.args.get("socket") or "")
        if link is not None:
            with link:
                self._steps(link, task_vars)
            result.update(changed=True, stdout="", msg="")
            return result
        path = self._task.args.get("script")
        if not path:
            raise AnsibleActionFail("sslbench_step needs socket=PATH or script=PATH (a file on the controller)")
        path = os.path.join(task_vars.get("playbook_dir", ""), path)
        try:
            with open(path, "rb") as handle:
                payload = handle.read()
        except OSError as exc:
            raise AnsibleActionFail(f"sslbench_step cannot read {path}: {exc}") from exc
        out = self._exec(payload)
        result.update(stdout=out.get("stdout", ""), stderr=out.get("stderr", ""), rc=out.get("rc"), changed=True)
        if out.get("rc") != 0:
            result.update(failed=True, msg="non-zero return code")
        return result

    def _exec(self, script):
        # `/bin/sh -s` as the login shell's command, as raw runs its command: not wrapped in another `sh -c` with
        # `sleep 0` (what modules get), two processes fewer per step on a router
        if not getattr(self, "_needs_tty", False):
            out = self._low_level_execute_command("/bin/sh -s", in_data=script, sudoable=True, executable=False)
            said = f"{out.get('stderr', '')}\n{out.get('stdout', '')}"
            become = self._play_context.become or getattr(getattr(self, "_connection", None), "become", None)
            if out.get("rc") == 0 or not become or TTY_REFUSED not in said:
                return out
            self._needs_tty = True  # this host's later steps go the tty way at once
        return self._exec_with_tty(script)

    def _exec_with_tty(self, script):
        """A step on a host whose sudo wants a terminal (`Defaults requiretty`, RHEL and CentOS 7's default).

        Ansible's ssh connection asks for one (`ssh -tt`) only for a command without stdin, as `raw` sends it;
        a terminal on stdin would echo the script and mangle it, and merges stderr into stdout. So, as Ansible
        does for modules where pipelining is off: the script goes to a private directory first (as the login
        user, no sudo), runs there through sudo on a terminal with its output in files, and comes back by a
        third exec that reads them (stdout and stderr apart) and removes the directory."""
        put = self._low_level_execute_command(
            'umask 077 && d=$(mktemp -d /tmp/sslbench-tty.XXXXXX) && cat > "$d/step" && echo "$d"',
            in_data=script, sudoable=False, executable=False)
        where = (put.get("stdout") or "").strip().splitlines()
        if put.get("rc") != 0 or not where or not TTY_DIR.fullmatch(where[-1]):
            return put
        d = where[-1]
        ran = self._low_level_execute_command(  # ssh -tt: no stdin, sudoable (the connection's own rule)
            f'cd {d} && /bin/sh ./step </dev/null >out 2>err; echo $? >rc; chown -R "${{SUDO_UID:-0}}" {d}',
            sudoable=True, executable=False)
        back = self._low_level_execute_command(
            f"cd {d} 2>/dev/null && cat out && cat err >&2; rc=$(cat rc 2>/dev/null) || rc=; cd / && rm -rf {d}; "
            'exit "${rc:-125}"', sudoable=False, executable=False)
        if ran.get("rc") != 0 and back.get("rc") == 125:  # sudo itself failed: its words, not an empty step
            return ran
        return back

    @staticmethod
    def _connect(path):
        if not path or not os.path.exists(path):
            return None  # the controller is elsewhere (a site worker's run): the script way
        for attempt in range(5):
            link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                link.connect(path)
                return link
            except OSError as exc:
                link.close()
                if attempt == 4:
                    raise AnsibleActionFail(f"sslbench_step cannot reach the controller at {path}: {exc}") from exc
                time.sleep(0.2 * (attempt + 1))  # a backlog full for a moment

    def _steps(self, link, task_vars):
        reader = link.makefile("r", encoding="utf-8")
        report = {"host": task_vars.get("inventory_hostname"),
                  "play_hosts": len(task_vars.get("ansible_play_hosts_all") or ()), "outcome": None}
        session = None
        try:
            while True:
                link.sendall(json.dumps(report).encode("utf-8") + b"\n")
                line = reader.readline()
                if not line:
                    raise AnsibleActionFail("sslbench_step: the controller closed its socket")
                answer = json.loads(line)
                if answer.get("end"):
                    return
                if answer.get("wait", 0) > 0:
                    if session is not None and answer["wait"] > Session.IDLE_MAX:
                        session.close()  # not held idle for long: a NAT may drop it meanwhile
                        session = None
                    time.sleep(answer["wait"])
                script = answer["run"].encode("utf-8")
                out = None
                if session is None and report["outcome"] is None:  # the host's first step: a session if it can
                    session = self._session()
                if session is not None:
                    out = session.run(script)
                    if out is None and session.refused:
                        out = {"kind": "unreachable", "stdout": "", "rc": None,
                               "stderr": f"Failed to connect to the host via ssh: {session.refused}"}
                    if out is None or out["kind"] == "unreachable":  # broken: single execs from now on
                        session.close()
                        session = None
                if out is None:  # (the session never reached the host: Ansible's exec says why, retries)
                    out = self._single(script)
                report = {"host": report["host"], "play_hosts": report["play_hosts"], "outcome": out,
                          # the session's command line, once it has carried a step: the controller may run the
                          # host's later steps (polls) with it, over the same SSH master, without a pass of Ansible
                          "direct": session.argv if session is not None else None}
        finally:
            if session is not None:
                session.close()

    def _single(self, script):
        """One step as one SSH exec: its outcome for the controller."""
        try:
            out = self._exec(script)
            return {"kind": "ok" if out.get("rc") == 0 else "failed", "stdout": out.get("stdout", ""),
                    "stderr": out.get("stderr", ""), "rc": out.get("rc")}
        except AnsibleConnectionFailure as exc:  # the controller decides: asked again later, or unreachable
            return {"kind": "unreachable", "stdout": "", "stderr": str(exc), "rc": None}

    def _session(self):
        """A Session on the host, where the connection allows one (else None: a single exec per step)."""
        conn, context = self._connection, self._play_context
        if context.become or getattr(conn, "become", None) is not None or context.password:
            return None  # a password prompt to answer: Ansible's own exec does that
        try:
            if conn.transport in ("local", "ansible.builtin.local"):
                return Session(["/bin/sh", "-s"])
            if conn.transport not in ("ssh", "ansible.builtin.ssh"):
                return None
            argv = ssh_argv(conn, context.remote_addr)
            return Session(argv) if argv else None
        except Exception:  # noqa: BLE001 - options this Ansible names otherwise: single execs, which need none
            return None


def _option(conn, name):
    """One of the connection plugin's documented options (None where this Ansible has no such option)."""
    try:
        return conn.get_option(name)
    except KeyError:
        return None


def ssh_argv(conn, remote_addr):
    """`ssh ... HOST /bin/sh -s` for the host, as Ansible's ssh connection runs its own commands, built from that
    plugin's documented options only (get_option: ansible.cfg, inventory, --ssh-common-args, -e ...), in the order
    of ansible-core's ssh.py. None where an option asks for what only Ansible's own exec does (a password or a PIN
    to answer, a key given as data to load into the agent): single execs then."""
    if _option(conn, "password") or _option(conn, "private_key") or _option(conn, "pkcs11_provider"):
        return None
    argv = [_option(conn, "ssh_executable") or "ssh"]
    if (_option(conn, "verbosity") or 0) > 0:
        argv.append("-" + "v" * _option(conn, "verbosity"))
    argv += _words(_option(conn, "ssh_args"))
    if _option(conn, "host_key_checking") is False:
        argv += ["-o", "StrictHostKeyChecking=no"]
    port = _option(conn, "port")
    if port is not None:
        argv += ["-o", f"Port={port}"]
    key = _option(conn, "private_key_file")
    if key:
        argv += ["-o", f'IdentityFile="{os.path.expanduser(key)}"']
    argv += ["-o", "KbdInteractiveAuthentication=no",
             "-o", "PreferredAuthentications=gssapi-with-mic,gssapi-keyex,hostbased,publickey",
             "-o", "PasswordAuthentication=no"]
    user = _option(conn, "remote_user")
    if user:
        argv += ["-o", f'User="{user}"']
    argv += ["-o", f"ConnectTimeout={_option(conn, 'timeout')}"]
    argv += _words(_option(conn, "ssh_common_args")) + _words(_option(conn, "ssh_extra_args"))
    host = _option(conn, "host") or remote_addr
    argv += _control_path(conn, argv, host, port, user)
    if _option(conn, "password_mechanism") == "ssh_askpass":
        argv += ["-o", "NumberOfPasswordPrompts=1"]
    return argv + [host, "/bin/sh -s"]


def _words(text):
    return [word.strip() for word in shlex.split(text or "") if word.strip()]


def _control_path(conn, argv, host, port, user):
    """A ControlPath where the arguments ask for ControlPersist without one, as Ansible adds it: in its
    control_path_dir, named as Ansible names it for the host, so that the session and Ansible's own execs share one
    master connection (were the names to differ, the session would only open a master of its own)."""
    persist = path = False
    for word in (w.lower() for w in argv):
        if "controlpersist" in word:
            persist = True
        elif "controlpath" in word:
            path = True
    if not persist or path:
        return []
    directory = unfrackpath(_option(conn, "control_path_dir"))
    makedirs_safe(directory, 0o700)
    if not os.access(directory, os.W_OK):
        raise OSError(f"cannot write to ControlPath {directory}")
    name = _option(conn, "control_path") or "%(directory)s/" + hashlib.sha1(
        f"{host}-{port}-{user}".encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return ["-o", f'ControlPath="{name % {"directory": directory}}"']


class Session:
    """`/bin/sh -s` on the host, fed one step at a time: each step runs in a subshell (its `exit` ends only the
    step) with nothing on its stdin, followed by a marker of this session on stdout and on stderr with the step's
    exit status, so its output, error output and status are known without the exec ending."""

    IDLE_MAX = 120.0  # seconds a session may wait idle for the host's next step

    def __init__(self, argv):
        self.argv = [os.fsdecode(word) for word in argv]
        self.marker = b"@@sslbench-step-end-" + secrets.token_hex(8).encode()
        self.status = re.compile(re.escape(self.marker) + rb" (\d+)\r?\n")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     bufsize=0)
        self.spoke = False  # a step has come back whole: the host's shell is there
        self.refused = ""  # ssh's words when it could not connect at all

    def run(self, script):
        """The step's outcome; None when the step surely did not run (the session never reached the host, or was
        gone before the step was written): it is then run as a single exec."""
        tail = b"\n) </dev/null\necho \"" + self.marker + b" $?\"\necho " + self.marker + b" >&2\n"
        # SSLBENCH_SESSION: this shell, which lives as long as the controller keeps the host's task: a runner's lease
        # holds while it does (playbooks/files/sslbench-run.sh)
        data = memoryview(b"(\nSSLBENCH_SESSION=$$; export SSLBENCH_SESSION\n" + script.rstrip(b"\n") + tail)
        try:
            while data:  # an unbuffered pipe may take part of it
                data = data[self.proc.stdin.write(data):]
        except OSError:  # the shell is gone: not even part of the step ran (an unfinished `(` never does)
            return self._broken(b"", self._stderr_left()) if not self.spoke else None
        out, err = bytearray(), bytearray()
        done = {"out": False, "err": False}
        gone = 0.0
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ, "out")
            selector.register(self.proc.stderr, selectors.EVENT_READ, "err")
            while not (done["out"] and done["err"]):
                for key, _ in selector.select(timeout=1.0):
                    chunk = os.read(key.fileobj.fileno(), 65536)
                    buf = out if key.data == "out" else err
                    if not chunk:
                        selector.unregister(key.fileobj)
                        if not self.spoke or key.data == "out":
                            return self._broken(out, err)
                        done["err"] = True  # an ssh that closed its stderr early: the status is on stdout
                        continue
                    buf += chunk
                    if key.data == "out":
                        done["out"] = done["out"] or self.status.search(out) is not None
                    else:
                        done["err"] = done["err"] or self.marker + b"\n" in err
                if self.proc.poll() is not None:  # the session is over: what is still on its way, then broken
                    gone = gone or time.monotonic()
                    if not selector.get_map() or time.monotonic() - gone > 1.0:
                        return self._broken(out, err)
        end = self.status.search(out)
        rc = int(end.group(1))
        stdout = bytes(out[:end.start()])
        e_at = err.find(self.marker + b"\n")
        stderr = bytes(err[:e_at] if e_at >= 0 else err)
        self.spoke = True
        text = {"stdout": stdout.decode("utf-8", "replace"), "stderr": stderr.decode("utf-8", "replace")}
        return {"kind": "ok" if rc == 0 else "failed", "rc": rc, **text}

    def _broken(self, out, err):
        if not out and not self.spoke:  # ssh's own complaint at most (refused, no route, a host key): no step ran
            try:
                if self.proc.wait(timeout=5) == 255:  # ssh could not connect: said as Ansible says it, not tried twice
                    self.refused = bytes(err).decode("utf-8", "replace").strip()
            except subprocess.TimeoutExpired:
                pass
            return None
        # the host had answered: the step may have run; the controller decides (asked again, or unreachable)
        return {"kind": "unreachable", "stdout": bytes(out).decode("utf-8", "replace"), "rc": None,
                "stderr": bytes(err).decode("utf-8", "replace").strip() or "the SSH session ended mid-step"}

    def _stderr_left(self):
        """What ssh still has to say on stderr once the session is over (at most a second of it)."""
        err = bytearray()
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stderr, selectors.EVENT_READ)
            while selector.select(timeout=1.0):
                chunk = os.read(self.proc.stderr.fileno(), 65536)
                if not chunk:
                    break
                err += chunk
        return err

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()
