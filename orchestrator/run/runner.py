"""The ansible-runner driver: the only module that imports ansible_runner.

One private data dir per run (fresh, removed at the end, env files suppressed: ansible-runner would
otherwise store extravars/passwords there and reuse stale ones), host key checking forced on unless
the user asked otherwise, the user's inventory passed as is.  Every event goes to a callback as a
small `HostEvent`; nothing here parses benchmark output.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import ansible_runner  # type: ignore[import-untyped]  # no type information shipped
import ptyprocess  # type: ignore[import-untyped]  # pexpect's: ansible-runner drives ansible-playbook through it

_pty_init = ptyprocess.PtyProcess.__init__


def _pty_init_without_close_delay(self: Any, *positional: Any, **keywords: Any) -> None:
    """ansible-runner closes ansible-playbook's pty only once pexpect has seen the process end (it loops while the
    child is alive), so ptyprocess's 0.1-s sleep after close, for "the kernel to update process status", only
    delays the end of every run (a twentieth of a one-host run). Each instance sets it, hence here."""
    _pty_init(self, *positional, **keywords)
    self.delayafterclose = 0


ptyprocess.PtyProcess.__init__ = _pty_init_without_close_delay

from orchestrator.run.ansible_options import AnsibleOptions
from orchestrator import privatedir
from orchestrator.run.config import RunConfig
from orchestrator.run.inventory import shipped_dir
from orchestrator.run.workers import Worker, local_limit, worker_limit

PLAYBOOK_DIR = shipped_dir("playbooks")
MAIN_PLAYBOOK = "sslbench.yml"
SHIPPED = "shipped"  # files written for the hosts (launch scripts), inside the run's project dir
SELECTED_GROUP = "sslbench_selected"  # the plays' hosts when a phase is for some hosts only (Driver.play)
CLEANUP_PLAYBOOK = "cleanup.yml"
STDOUT_FILE = "ansible-stdout.txt"
# Hosts worked on at once unless --forks says otherwise. A fleet that fits is carried through in one pass; a larger
# one is launched, then polled in short passes (no task holds a worker others wait for while its cells run,
# orchestrator/run/engine.py), so this caps concurrent SSH sessions and the controller's memory, not the fleet's size.
DEFAULT_FORKS = 50
# What ssh says when the connection to a proxy (ProxyJump/ProxyCommand) hop closed before the host answered
# (engine.Engine._diagnose_hidden_hops asks again to hear why).
PROXY_CLOSED = "Connection closed by UNKNOWN port 65535"

# Runner events we turn into HostEvents; everything else is still accepted (never rejected: a
# rejected event vanishes from ansible-runner's stats) but ignored.
_KINDS = {
    "runner_on_ok": "ok",
    "runner_item_on_ok": "ok",
    "runner_retry": "retry",
    "runner_on_failed": "failed",
    "runner_item_on_failed": "failed",
    "runner_on_unreachable": "unreachable",
    "runner_on_skipped": "skipped",
    "runner_on_start": "start",
}


@dataclass
class HostEvent:
    """What one Ansible event says about one host."""

    kind: str  # "start", "ok", "retry", "failed", "unreachable", "skipped"
    host: str
    task: str
    stdout: str = ""
    message: str = ""  # Ansible's msg (unreachable / failed), or stderr
    ignored: bool = False  # a failure the play ignores (ignore_errors)
    rc: int | None = None


@dataclass
class Call:
    """One phase, as every part of it (here, on each worker) runs it."""

    number: int
    tags: str | None
    playbook: str
    extravars: dict[str, Any]
    handle: Callable[[dict[str, Any], str | None], bool]
    cancel: Callable[[], bool]


def _copy_inventory(inventory: Path, into: Path) -> None:
    """The user's inventory for a worker: a directory as it is, a file with the group_vars/host_vars beside it."""
    if inventory.is_dir():
        shutil.copytree(inventory, into, dirs_exist_ok=True)
        return
    shutil.copy2(inventory, into / inventory.name)
    for sub in ("group_vars", "host_vars"):
        if (inventory.parent / sub).is_dir():
            shutil.copytree(inventory.parent / sub, into / sub)


def ansible_error(stdout: str) -> str:
    """What ansible-playbook said when it gave up, on one line: each ERROR (`ERROR!` before 2.19, `[ERROR]:` or
    `ERROR:` since) with the line after it that explains it (2.19 puts the file that is missing there); for an
    inventory it could not parse, why its first plugin could not (a warning: the error names only the source).
    "" when it said none."""
    lines = [line.rstrip() for line in stdout.replace("\r\n", "\n").splitlines()]
    said: list[str] = []
    for i, line in enumerate(lines):
        if re.match(r"^(\[ERROR\]:|ERROR[!:])", line):
            text = re.sub(r"^(\[ERROR\]:|ERROR[!:])\s*", "", line)
            following = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if following and not following.startswith(("[", "Origin:", "file:", "<<<", "If you")):
                text += " " + following
            if "parse inventory" in text:
                cause = next((w for w in lines if w.startswith("[WARNING]: Failed to parse")), "")
                text += f" ({cause.removeprefix('[WARNING]: ')})" if cause else ""
            if text and text not in said:
                said.append(text)
    return " | ".join(said[-3:])


GENERIC_FAILURE = "non-zero return code"  # Ansible's msg of a raw task that exited non-zero


def host_event(event: dict[str, Any]) -> HostEvent | None:
    """A runner event as a HostEvent, or None when it is about no host (playbook start, stats...)."""
    kind = _KINDS.get(event.get("event", ""))
    data = event.get("event_data") or {}
    host = data.get("host") or data.get("remote_addr")
    if kind is None or not host:
        return None
    res = data.get("res") or {}
    stdout = res.get("stdout") or ""
    message = res.get("msg") or ""
    stderr = res.get("stderr")
    if kind == "failed" and message in ("", GENERIC_FAILURE) and isinstance(stderr, str) and stderr.strip():
        message = stderr  # what the host said, not raw's "non-zero return code" (a script run without a pty)
    if not isinstance(message, str):
        message = json.dumps(message)
    return HostEvent(kind=kind, host=str(host), task=str(data.get("task") or ""),
                     stdout=stdout.replace("\r\n", "\n") if isinstance(stdout, str) else "",
                     message=message.strip(), ignored=bool(data.get("ignore_errors")), rc=res.get("rc"))


class Interrupt:
    """Ctrl-C, a `kill` (SIGTERM) or a closed terminal (SIGHUP) turn into a flag that ansible-runner's cancel
    callback reads, so the playbook stops cleanly and the cleanup playbook still stops openssl on the hosts,
    instead of an exception in the middle of an event. Without this, SIGTERM/SIGHUP would kill sslbench and
    leave ansible-playbook (in its own session) and the hosts' benchmarks running."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self, results: Path | None = None) -> None:
        self.requested = False
        self.signal_name = ""
        self.cause = ""  # a stop of our own (stop), not a signal's
        self.aborted = False  # a second signal: stopped at once, without the cleanup on the hosts
        self.results = results  # where the run is stored, said when it is interrupted
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupt:
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal's number (130 for Ctrl-C); 2 for a stop of our own (stop)."""
        if self.cause:
            return 2
        return 128 + (signal.Signals[self.signal_name] if self.signal_name else signal.SIGINT)

    @property
    def reason(self) -> str:
        if self.cause:
            return self.cause
        said = "interrupted (Ctrl-C)" if self.signal_name in ("", "SIGINT") else f"interrupted ({self.signal_name})"
        if self.aborted:  # the hosts were left as they were: say what may still be there
            said += (" and aborted at once: openssl runs on the hosts until their runner's lease "
                     "lapses, and the logs of cells not brought back wait there for the next run")
        return said

    def abort(self) -> None:
        """The second signal stopped the run at once: what is here is saved; further signals are not heeded
        (a third Ctrl-C while the results are written would lose them)."""
        self.requested = self.aborted = True

    def stop(self, cause: str) -> None:
        """Stop the run as Ctrl-C does (openssl stopped on the hosts), for `cause`."""
        if not self.requested:
            self.requested, self.cause = True, cause
            print(f"sslbench: {cause}: stopping the benchmark on every host ...", file=sys.stderr)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.aborted:
            return
        if self.requested:  # a second Ctrl-C: the user really wants out now
            raise KeyboardInterrupt
        self.requested = True
        self.signal_name = signal.Signals(signum).name
        where = f"; finished cells are kept in {self.results}" if self.results else ""
        try:
            print(f"\nsslbench: {self.signal_name}: stopping the benchmark on every host{where} "
                  "(Ctrl-C again to abort at once) ...", file=sys.stderr)
        except OSError:  # SIGHUP: the terminal may be gone
            pass


class Driver:
    """Runs the playbook phases of one run as its RunConfig says (inventory, Ansible's options, pattern, forks, host
    keys): here, or for the hosts of a site worker, on that worker through ansible-runner's streaming protocol
    (orchestrator/run/workers.py); events come back to one handler.

    Everything a play needs travels in one project directory of the run's own (private_dir/project: the playbooks,
    and `shipped/`, files written for the hosts such as their launch scripts), so a worker gets the same."""

    def __init__(self, config: RunConfig, run_dir: Path, *, interrupt: Interrupt | None = None) -> None:
        self.config = config
        self.run_dir = Path(run_dir)
        self.interrupt = interrupt
        self.workers = {w.name: w for w in config.workers}
        self.host_worker: dict[str, str] = {}  # host -> the worker that ran it (learnt from the events)
        # ansible-playbook runs where sslbench was started, as the user's own would: every relative path they type
        # (-i, -e @file, --private-key, --vault-password-file, ssh -F), ./ansible.cfg and relative ANSIBLE_* paths
        # mean there what they mean to ansible-playbook (ansible-runner would run it in its private project dir)
        self.start_dir = Path.cwd()
        self.private_dir = privatedir.make()  # (and those of runs killed before removing theirs go)
        self.project_dir = self.private_dir / "project"
        shutil.copytree(PLAYBOOK_DIR, self.project_dir, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self.shipped_dir = self.project_dir / SHIPPED
        self.shipped_dir.mkdir()
        self._calls = 0
        self._lock = threading.Lock()  # event handlers of parts running side by side
        self.last_stdout = ""
        self.last_rc: int | None = None  # ansible-playbook's exit code of the last pass run here
        # Ansible's own words when the last pass here ended without its PLAY RECAP: ansible-playbook gave up (a
        # vault secret missing, a bad ansible.cfg, a plugin that cannot load ...), not a host
        self.aborted: str | None = None

    # the config's parts the engine and fleet ask the driver for (their tests give them a FakeDriver instead)
    @property
    def inventory(self) -> Path:
        return self.config.inventory.path

    @property
    def ansible(self) -> AnsibleOptions:
        return self.config.ansible

    @property
    def limit(self) -> str | None:
        return self.config.limit

    @property
    def forks(self) -> int | None:
        return self.config.forks

    def close(self) -> None:
        if os.environ.get("SSLBENCH_KEEP_RUNNER_DIR"):  # debugging: keep ansible-runner's artifacts/job_events
            print(f"sslbench: kept ansible-runner's data in {self.private_dir}", file=sys.stderr)
            return
        shutil.rmtree(self.private_dir, ignore_errors=True)

    def __enter__(self) -> Driver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def envvars(self) -> dict[str, str]:
        return {
            # ansible-runner sets this to False unless it is set: keep SSH honest.
            "ANSIBLE_HOST_KEY_CHECKING": "False" if self.config.insecure_no_host_key_check else "True",
            "ANSIBLE_RETRY_FILES_ENABLED": "False",
            "ANSIBLE_NOCOLOR": "True",
            "ANSIBLE_DEPRECATION_WARNINGS": "False",
            # Where Ansible's own temp files land: an absolute path, so Ansible need not ask the shell for `~` (a
            # login shell that prints a banner or a title first would garble the answer)
            "ANSIBLE_REMOTE_TEMP": os.environ.get("ANSIBLE_REMOTE_TEMP") or "/tmp/.sslbench-ansible-$USER",
            # the strategy's loop checks its workers every 1 ms by default: a busy loop while hosts wait
            "ANSIBLE_INTERNAL_POLL_INTERVAL": "0.05",
            # raw output from a pty can carry odd bytes; never let a decode error kill the callback.
            "ANSIBLE_STDOUT_CALLBACK": "default",
            # SSH master connections of this run only: reusing one from an earlier run (ControlPersist)
            # would skip the host key check, and a stale one would outlive a host's SSH server.
            "ANSIBLE_SSH_CONTROL_PATH_DIR": str(self.private_dir / "cp"),
            # ansible-playbook lives next to this Python (the venv), which need not be on PATH.
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)]),
        }

    def play(self, *, tags: str | None = None, extravars: dict[str, Any] | None = None,
             on_event: Callable[[HostEvent], None] | None = None, playbook: str = MAIN_PLAYBOOK,
             cancellable: bool = True, hosts: Sequence[str] | None = None) -> str:
        """Run one playbook phase (on `hosts` only, when given), here and on the workers whose hosts it concerns;
        returns ansible-runner's status ("successful", "failed", "canceled", ...), the first that is not
        successful when there are several parts."""
        self._calls += 1
        call = Call(number=self._calls, tags=tags, playbook=playbook, extravars=dict(extravars or {}),
                    handle=self._handler(on_event), cancel=lambda: bool(cancellable and self.interrupt and
                                                                       self.interrupt.requested))
        parts = self._parts(hosts)
        if len(parts) == 1:
            return self._run_part(call, *parts[0])
        statuses = ["failed"] * len(parts)

        def run(i: int, part: tuple[Worker | None, list[str] | None, str | None]) -> None:
            try:
                statuses[i] = self._run_part(call, *part)
            except Exception as exc:  # noqa: BLE001 - one part's failure is its hosts', not the run's
                print(f"sslbench: internal error running {call.tags or call.playbook} "
                      f"{'on ' + part[0].name if part[0] else 'here'}: {type(exc).__name__}: {exc}", file=sys.stderr)

        threads = [threading.Thread(target=run, args=(i, part)) for i, part in enumerate(parts)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return next((status for status in statuses if status != "successful"), "successful")

    def _parts(self, hosts: Sequence[str] | None) -> list[tuple[Worker | None, list[str] | None, str | None]]:
        """(worker or None for here, its hosts or None for all, the limit) per part of one phase."""
        if not self.workers:
            return [(None, None if hosts is None else list(hosts), self.limit)]
        if hosts is None:  # every host: each worker its pattern's, this machine the rest
            workers = list(self.workers.values())
            return [(None, None, local_limit(self.limit, workers))] + [
                (w, None, worker_limit(self.limit, w)) for w in workers]
        by_worker: dict[str | None, list[str]] = {}
        for host in hosts:
            by_worker.setdefault(self.host_worker.get(host), []).append(host)
        return [(self.workers[name] if name else None, names, self.limit) for name, names in by_worker.items()]

    def _handler(self, on_event: Callable[[HostEvent], None] | None) -> Callable[[dict[str, Any], str | None], bool]:
        def handle(event: dict[str, Any], worker: str | None) -> bool:
            parsed = host_event(event)
            if parsed is None:
                return True  # keep every event: rejected ones vanish from the runner's stats
            with self._lock:
                if worker:
                    self.host_worker[parsed.host] = worker
                if on_event is not None:
                    try:
                        on_event(parsed)
                    except OSError as exc:  # the results dir full, read-only or gone: nothing more can be kept
                        if self.interrupt is not None:  # so the hosts need not go on measuring for nothing
                            self.interrupt.stop(f"cannot write the results ({exc.strerror or exc})")
                    except Exception as exc:  # a bug of ours must not swallow the rest of the run's events
                        print(f"sslbench: internal error handling {parsed.kind} of {parsed.host} "
                              f"({parsed.task}): {type(exc).__name__}: {exc}", file=sys.stderr)
            return True

        return handle

    def _run_part(self, call: Call, worker: Worker | None, hosts: list[str] | None, limit: str | None) -> str:
        where = self.private_dir if worker is None else self.private_dir / f"worker-{call.number:02d}-{worker.name}"
        inventory_dir = where / "inventory"  # ansible-runner's own place: the worker finds it there
        extravars = dict(call.extravars)
        if worker is not None:  # the run's socket is on this machine: a worker's hosts get their step as a file
            extravars.pop("sslbench_socket", None)
        inventories: list[str] = [str(self.inventory)]
        if worker is not None:  # the user's inventory travels with it (with its group_vars/host_vars)
            inventory_dir.mkdir(parents=True)
            _copy_inventory(self.inventory, inventory_dir)
            inventories = [str(inventory_dir)]
        if hosts is not None:
            # A group of exactly these hosts, in an inventory of its own beside the user's: a host name is never
            # read as a pattern (--limit would take `,` `:` `!` `&` `~` in a name for pattern syntax)
            selection = (inventory_dir if worker is not None else where) / f"selected-{call.number:02d}.yml"
            selection.write_text(json.dumps({"all": {"children": {SELECTED_GROUP: {"hosts": dict.fromkeys(hosts)}}}}))
            if worker is None:
                inventories.append(str(selection))
            extravars["sslbench_hosts"] = SELECTED_GROUP
        words = self.ansible.cmdline()
        if extravars:
            # Extra vars in a private file (0600), not on the command line where `ps` shows them.
            vars_name = f"vars-{call.number:02d}.json"
            vars_file = (where / "project" if worker is not None else self.private_dir) / vars_name
            vars_file.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(vars_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(extravars, handle)
            words += ["-e", "@" + (vars_name if worker is not None else str(vars_file))]
        ident = f"{call.number:02d}-{(call.tags or call.playbook).replace(',', '-')}"
        kwargs: dict[str, Any] = dict(
            playbook=call.playbook, limit=limit, forks=self.forks or DEFAULT_FORKS, tags=call.tags,
            cmdline=" ".join(shlex.quote(w) for w in words) or None, verbosity=self.ansible.verbosity or None,
            passwords=dict(self.ansible.passwords), suppress_env_files=True,
            settings={"pexpect_timeout": 1, "suppress_ansible_output": True})
        if worker is None:
            recap: list[bool] = []

            def on_runner_event(event: dict[str, Any]) -> bool:
                if event.get("event") == "playbook_on_stats":  # the PLAY RECAP: the playbook ran to its end
                    recap.append(True)
                return call.handle(event, None)

            runner = ansible_runner.interface.init_runner(
                private_data_dir=str(self.private_dir), project_dir=str(self.project_dir),
                inventory=inventories if len(inventories) > 1 else inventories[0], envvars=self.envvars(),
                quiet=True, event_handler=on_runner_event, cancel_callback=call.cancel,
                ident=ident, **{**kwargs, "playbook": str(self.project_dir / call.playbook)})
            runner.config.cwd = str(self.start_dir)  # see __init__: the user's directory, not the project dir
            runner.run()
            self.last_stdout = self._save_stdout(runner)
            self.last_rc = runner.rc if isinstance(runner.rc, int) else None
            self.aborted = None
            if not recap and not call.cancel() and str(runner.status) != "canceled":
                self.aborted = ansible_error(self.last_stdout) or (
                    f"ansible-playbook ended ({runner.status}, exit {self.last_rc}) before the end of its play")
            return str(runner.status)
        return self._run_on_worker(worker, where, call, ident, kwargs, hosts)

    def _run_on_worker(self, worker: Worker, where: Path, call: Call, ident: str, kwargs: dict[str, Any],
                       hosts: list[str] | None) -> str:
        """ansible-runner transmit | ssh WORKER ansible-runner worker | ansible-runner process."""
        project = where / "project"
        shutil.copytree(self.project_dir, project, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(SHIPPED, "__pycache__", "*.pyc"))
        (project / SHIPPED).mkdir(exist_ok=True)
        steps = call.extravars.get("sslbench_steps") or {}
        for name in {*steps.values(), call.extravars.get("sslbench_first_step") or ""} - {""}:  # its hosts' steps
            shutil.copy2(self.project_dir / name, project / name)
        env = {k: v for k, v in self.envvars().items() if k != "PATH"}  # the worker's own PATH
        env["ANSIBLE_SSH_CONTROL_PATH_DIR"] = f"~/.ansible/cp/sslbench-{self.private_dir.name}"
        errors = where / "worker-stderr.txt"
        try:
            with open(errors, "wb") as errors_file:  # a file, not a pipe: nothing to drain while the stream runs
                proc = subprocess.Popen(worker.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=errors_file)
        except OSError as exc:
            print(f"sslbench: worker {worker.name}: cannot run ssh: {exc}", file=sys.stderr)
            return "failed"
        sent: list[BaseException] = []
        assert proc.stdin is not None and proc.stdout is not None  # both were asked for: PIPE
        stdin, stdout = proc.stdin, proc.stdout

        def transmit() -> None:
            try:
                ansible_runner.run(streamer="transmit", _output=stdin, private_data_dir=str(where),
                                   envvars=env, ident=ident, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - said below, with the worker's name
                sent.append(exc)
            finally:
                stdin.close()

        sender = threading.Thread(target=transmit)
        sender.start()
        received = where / "received"
        try:
            result = ansible_runner.run(streamer="process", _input=stdout, private_data_dir=str(received),
                                        quiet=True, event_handler=lambda event: call.handle(event, worker.name),
                                        cancel_callback=call.cancel)
            status = str(result.status)
        except Exception as exc:  # noqa: BLE001 - a broken stream: this worker's part failed, the others go on
            status, result = "failed", None
            print(f"sslbench: worker {worker.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        sender.join()
        if proc.poll() is None and call.cancel():
            proc.kill()
        proc.wait()
        stdout.close()
        said_there = errors.read_text(errors="replace").strip()
        if proc.returncode not in (0, None) or sent:
            said = said_there.splitlines()[-1] if said_there else (str(sent[0]) if sent else f"exit {proc.returncode}")
            print(f"sslbench: worker {worker.name} ({worker.ssh}) failed: {said}", file=sys.stderr)
            status = "failed" if status == "successful" else status
        if result is not None:
            self._save_stdout(result)
        return status

    def _save_stdout(self, result: Any) -> str:
        try:
            with result.stdout as handle:
                text = str(handle.read())
        except Exception:  # no stdout artifact (ansible-playbook never started): nothing to keep
            return ""
        with open(self.run_dir / STDOUT_FILE, "a", encoding="utf-8") as out:
            out.write(text)
        return text
