"""A fleet without SSH for the run engine's unit tests (orchestrator/run/engine.py): the engine's real socket, spoken to
as playbooks/action_plugins/sslbench_step.py speaks to it, by hosts that answer each step's script from a function;
and a virtual clock, so the engine's waits (polls at a host's ETA, retries after 5 s) take no time."""
from __future__ import annotations

import json
import re
import shlex
import socket
import threading
import types
from pathlib import Path
from typing import Callable

from orchestrator.run import decisions, engine, flow
from orchestrator.run.hostlink import Outcome
from orchestrator.run.ansible_options import AnsibleOptions
from orchestrator.run.config import PlanOptions, RunConfig
from orchestrator.run.inventory import InventoryChoice, InventorySource
from orchestrator.run.runner import CLEANUP_PLAYBOOK, HostEvent
from orchestrator.run.stages import STEP_TASK

DATA = Path(__file__).resolve().parents[1] / "data"
MR_LOG = (DATA / "speed" / "openssl-3.0.19-x86_64-mr-chacha20-poly1305.txt").read_text()


def config_for(plan: PlanOptions, **options) -> RunConfig:
    """A run's config over this fleet: its inventory is never read (FakeDriver has the hosts)."""
    return RunConfig(InventoryChoice(Path("hosts.yml"), InventorySource.OPTION), plan, **options)


class Clock:
    """time.monotonic and time.sleep for the engine and its hosts' flows: sleeping moves the time on at once."""

    def __init__(self, monkeypatch) -> None:
        self.now = 1000.0
        self._lock = threading.Lock()
        fake = types.SimpleNamespace(monotonic=lambda: self.now, sleep=self.sleep, time=lambda: self.now)
        monkeypatch.setattr(engine, "time", fake)
        monkeypatch.setattr(flow, "time", fake)
        monkeypatch.setattr(decisions, "time", fake)

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.now += max(seconds, 0.0)


def step_kind(script: str) -> str:
    """Which step a script is, as a host would tell from what it runs."""
    if "sslbench detect" in script:
        return "detect"
    if "sslbench launcher" in script:
        return "launch"
    if re.search(r"run\.sh poll( again)?$", script.rstrip()):
        return "poll"
    if script.rstrip().endswith("run.sh forget"):
        return "forget"
    return "install"


Host = Callable[[str, str], Outcome]  # (step kind, script) -> what the host printed


def router(detect_file: str = "rig-openwrt1.detect.txt", finished_after: int = 1) -> Host:
    """A host that answers detect with a stored detect.sh output, starts its runner, and from its
    `finished_after`-th poll on reports `finished` and ships each planned cell's log (a real openssl 3.0 -mr output
    of chacha20-poly1305: the engine's flow is what is tested, not the figures)."""
    polls, cells = [0], []

    def answer(kind: str, script: str) -> Outcome:
        if kind == "detect":
            return Outcome("ok", stdout=(DATA / "detect" / detect_file).read_text())
        if kind == "launch":  # cells.txt as the launcher writes it: `id<TAB>pin<TAB>args` lines
            written = re.search(r"^echo ('[^']*') > cells\.txt", script, re.M)
            assert written, "the launcher writes no cells.txt"
            cells[:] = [line.split("\t")[0] for line in shlex.split(written.group(1))[0].splitlines()]
            started = "\n@@sslbench-state started\n"
            # `set -- launch OPENSSL IDLE_MAX WAIT; . ./run.sh`: it waited for the runner, then printed a poll (the
            # work dir stays until the controller, having saved the logs, says forget: as run.sh does)
            launch = re.search(r"^set -- launch (.*)$", script, re.M)
            assert launch and script.rstrip().endswith(". ./run.sh"), "the launcher starts no run.sh launch"
            if len(shlex.split(launch.group(1))) != 3:
                return Outcome("ok", stdout=started)
            poll = answer("poll", "").stdout
            return Outcome("ok", stdout=started + poll)
        if kind == "poll":
            polls[0] += 1
            if polls[0] < finished_after:
                return Outcome("ok", stdout="\n@@sslbench-progress\n@@sslbench-state running\n")
            done = "".join(f"done {k} {len(cells)} {c} 0\n" for k, c in enumerate(cells, 1))
            logs = "".join(f"@@sslbench-log {c}\n{MR_LOG}\n@@sslbench-endlog {c}\n" for c in cells)
            return Outcome("ok", stdout=f"\n@@sslbench-progress\n{done}{logs}@@sslbench-state finished\n")
        return Outcome("ok")

    return answer


class FakeDriver:
    """Driver.play as the engine sees it: the step play runs each host's task over the engine's socket, one host
    after the other; every call is recorded (which hosts, which extra vars)."""

    def __init__(self, tmp_path: Path, hosts: dict[str, Host], *, forks: int | None = None,
                 last_stdout: str = "", status: str = "successful", direct: bool = False,
                 direct_refused: int = 0, abort: str | None = None) -> None:
        self.private_dir = tmp_path / "private"
        self.project_dir = self.private_dir / "project"
        self.shipped_dir = self.project_dir / "shipped"
        self.shipped_dir.mkdir(parents=True)
        self.hosts = hosts
        self.forks = forks
        self.workers: dict[str, object] = {}
        self.inventory, self.limit, self.interrupt = tmp_path / "hosts.yml", None, None
        self.ansible = AnsibleOptions()  # the options typed: none (the vault hint reads them)
        self.last_stdout, self.status = last_stdout, status
        self.calls: list[tuple[str, list[str]]] = []  # (playbook, hosts)
        self.extravars: list[dict] = []  # each call's
        self.steps: dict[str, list[str]] = {name: [] for name in hosts}  # the step kinds each host ran
        # the hosts' tasks say their session's command line (sslbench_step over plain SSH); the engine's steps run
        # with it come to exec_step, the first `direct_refused` of each host as ssh that could not connect
        self.direct, self.direct_refused = direct, direct_refused
        self.direct_steps: dict[str, list[str]] = {name: [] for name in hosts}
        # ansible-playbook giving up (a vault secret missing ...) once the hosts' tasks have started: as Driver
        # says it, Ansible's words in `aborted`, and no host ever asks for a step
        self.abort, self.aborted = abort, None

    def play(self, *, extravars=None, on_event=None, hosts=None, playbook="sslbench.yml", tags=None,
             cancellable=True) -> str:
        names = list(hosts) if hosts is not None else list(self.hosts)
        self.calls.append((playbook, names))
        self.extravars.append(dict(extravars or {}))
        if playbook == CLEANUP_PLAYBOOK or not (extravars or {}).get("sslbench_socket"):
            return self.status
        if self.abort:
            for name in names:
                on_event(HostEvent(kind="start", host=name, task=STEP_TASK))
            self.aborted = self.abort
            return "failed"
        for name in names:
            on_event(HostEvent(kind="start", host=name, task=STEP_TASK))
            self._task(extravars["sslbench_socket"], name, len(names))
            on_event(HostEvent(kind="ok", host=name, task=STEP_TASK))
        return self.status

    def _task(self, path: str, name: str, play_hosts: int) -> None:
        """What sslbench_step does with its socket."""
        with socket.socket(socket.AF_UNIX) as link:
            link.connect(path)
            reader = link.makefile("r")
            outcome = None
            while True:
                report = {"host": name, "play_hosts": play_hosts, "outcome": outcome,
                          "direct": ["ssh", name, "/bin/sh -s"] if self.direct and outcome else None}
                link.sendall(json.dumps(report).encode() + b"\n")
                answer = json.loads(reader.readline())
                if answer.get("end"):
                    return
                kind = step_kind(answer["run"])
                self.steps[name].append(kind)
                out = self.hosts[name](kind, answer["run"])
                outcome = {"kind": out.kind, "stdout": out.stdout, "stderr": out.stderr, "rc": out.rc}

    def exec_step(self, argv: list[str], script: str, stop: Callable[[], bool]) -> Outcome:
        """hostlink.exec_step, for these hosts: argv names the host."""
        name, kind = argv[1], step_kind(script)
        self.direct_steps[name].append(kind)
        if self.direct_refused:
            self.direct_refused -= 1
            return Outcome("unreachable", stderr="Failed to connect to the host via ssh: Connection refused")
        self.steps[name].append(kind)
        return self.hosts[name](kind, script)
