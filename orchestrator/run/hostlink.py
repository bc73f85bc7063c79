"""The controller's end of the sslbench_step task's Unix socket (playbooks/action_plugins/sslbench_step.py).

Each host's task connects once and then, in turn, reports what its last step printed and reads its next step
(JSON lines; the first report has no outcome). The run engine (orchestrator/run/engine.py) answers: a script to run
now, or `end`. One thread per connected host, which spends its time waiting: for the host's SSH exec, or for the
moment its next step is due. The socket lives in the run's private dir (mode 0700): only this user reaches it.
"""
from __future__ import annotations

import json
import re
import os
import signal
import socket
import socketserver
import struct
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


@dataclass
class Outcome:
    """What one step's SSH exec gave: "ok" / "failed" (the script's exit code) or "unreachable" (ssh's words)."""

    kind: str
    stdout: str = ""
    stderr: str = ""
    rc: int | None = None


# (host, how many hosts its play has, the outcome of the step it ran, or None at first, the command line of its
# session once one has run a step) -> the script to run next, or None for `end`
Answer = Callable[[str, int, Outcome | None, list[str] | None], str | None]
DIRECT_TIMEOUT = 600.0  # seconds a step run over a host's session command line may take before it counts as lost


def _text(value: object) -> str:
    """Output as Ansible decoded it (undecodable bytes as surrogates) made storable: U+FFFD for those bytes."""
    if not isinstance(value, str):
        return ""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace").replace("\r\n", "\n")


def read_report(line: str) -> tuple[str, int, Outcome | None, list[str] | None]:
    report = json.loads(line)
    raw = report.get("outcome")
    outcome = None
    if isinstance(raw, dict):
        rc = raw.get("rc")
        outcome = Outcome(kind=str(raw.get("kind")), stdout=_text(raw.get("stdout")), stderr=_text(raw.get("stderr")),
                          rc=rc if isinstance(rc, int) else None)
    direct = report.get("direct")
    if not (isinstance(direct, list) and direct and all(isinstance(word, str) for word in direct)):
        direct = None
    return str(report.get("host") or ""), int(report.get("play_hosts") or 0), outcome, direct


def exec_step(argv: list[str], script: str, stop: Callable[[], bool]) -> Outcome:
    """One step on a host without Ansible: `argv` is the command line Ansible's ssh plugin built for the host's
    session (`ssh … host /bin/sh -s`, its options and master connection included; or `/bin/sh -s` for the local
    connection), the script on its stdin, as the task runs it. ssh's 255, a timeout or `stop()` (Ctrl-C) make it
    "unreachable", as Ansible would say it: the engine then asks the host through Ansible again."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)  # Ctrl-C is the engine's to act on, not this ssh's
    except OSError as exc:
        return Outcome("unreachable", stderr=f"cannot run {argv[0]}: {exc.strerror or exc}")
    began = time.monotonic()
    data: bytes | None = script.encode("utf-8")
    while True:
        try:
            out, err = proc.communicate(data, timeout=1.0)
            break
        except subprocess.TimeoutExpired:
            data = None  # (written already: communicate keeps reading)
            if stop() or time.monotonic() - began > DIRECT_TIMEOUT:
                os.killpg(proc.pid, signal.SIGKILL)  # its children too, which hold its output open
                try:
                    out, err = proc.communicate(timeout=5)
                except subprocess.TimeoutExpired:  # (one that left the group: its output is not waited for)
                    out, err = b"", b""
                return Outcome("unreachable", stdout=_text(out.decode("utf-8", "surrogateescape")),
                               stderr="stopped" if stop() else f"no answer in {DIRECT_TIMEOUT:.0f} s")
    stdout, stderr = _text(out.decode("utf-8", "surrogateescape")), _text(err.decode("utf-8", "surrogateescape"))
    if proc.returncode == 255 and Path(argv[0]).name != "sh":  # ssh's own failure, as Ansible's ssh plugin reads it
        return Outcome("unreachable", stdout=stdout,
                       stderr=f"Failed to connect to the host via ssh: {stderr.strip()}")
    return Outcome("ok" if proc.returncode == 0 else "failed", stdout=stdout, stderr=stderr, rc=proc.returncode)


_MUX_HELLO, _MUX_TERMINATE = 0x00000001, 0x10000005  # OpenSSH's PROTOCOL.mux, version 4
_CONTROL_PATH = re.compile(r'(?i)^ControlPath=(?:"(?P<quoted>[^"]*)"|(?P<bare>\S+))$')


def close_master(argv: list[str]) -> bool:
    """Ends the SSH master connection of a host's session command line (`ssh -O exit` without its process: the
    master's control socket told to terminate, as PROTOCOL.mux says) once the host needs no more steps: left to
    its ControlPersist it would hold its memory for that long after the host's last step, and a fleet launched,
    then polled, would keep one per host. False where there is no master to end (no ControlPath, or one ssh
    expands: %h, %C ...), or it did not answer."""
    paths = [m.group("quoted") or m.group("bare") for m in map(_CONTROL_PATH.match, argv) if m]
    if not paths or "%" in paths[-1] or not os.path.isabs(paths[-1]):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as control:
            control.settimeout(2.0)
            control.connect(paths[-1])
            control.sendall(_mux_message(_MUX_HELLO, 4) + _mux_message(_MUX_TERMINATE, 1))
            return bool(control.recv(64))  # its hello: the reply to terminate follows, or the socket closes
    except OSError:  # gone already (ControlPersist expired, the host's ssh died): nothing to end
        return False


def _mux_message(kind: int, value: int) -> bytes:
    return struct.pack(">III", 8, kind, value)


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True  # a host's thread never holds up the end of the run
    request_queue_size = 1024  # every task of a pass may connect at once (BSD refuses beyond the backlog)


class HostLink:
    """Serves `answer` on a Unix socket at directory/steps.sock until closed."""

    def __init__(self, directory: Path, answer: Answer) -> None:
        self.path = Path(directory) / "steps.sock"

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                try:
                    self._serve()
                except OSError:  # the task's worker died mid-read (its play failed, e.g. on a vault): nothing to say
                    return

            def _serve(self) -> None:
                for line in self.rfile:
                    try:
                        host, play_hosts, outcome, direct = read_report(line.decode("utf-8", "replace"))
                    except (ValueError, TypeError, AttributeError):
                        return  # not our plugin speaking: drop the connection
                    script = answer(host, play_hosts, outcome, direct)
                    reply = {"end": True} if script is None else {"run": script}
                    try:
                        self.wfile.write(json.dumps(reply).encode("utf-8") + b"\n")
                    except OSError:  # the task is gone (its play was cancelled)
                        return

        self._server = _Server(str(self.path), Handler)
        # close() waits for the loop to look at its stop flag: a long poll interval is that much added to every run
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.path.unlink(missing_ok=True)
