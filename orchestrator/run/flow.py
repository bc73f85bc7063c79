"""One host's way through its stages, as orchestrator/run/engine.py keeps it: where it is (`Phase`), how its steps
travel in the current pass (`Transport`), when it is next asked (`Schedule`), and what a poll's answer means for it
(`judge_poll`: asked again when, or done with).
"""
from __future__ import annotations

import enum
import re
import sys
import time
from dataclasses import dataclass, field

from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE
from orchestrator.run.config import PlanOptions
from orchestrator.run.fleet import SNAPSHOT_SECONDS, Collector, HostState, StepResult, died_reason, fail
from orchestrator.run.matrix import HostPlan
from orchestrator.run.runner import Interrupt
from orchestrator.run.stages import Stage, Step, work_dir
from orchestrator.run.stranded import Stranded

MIN_WAIT = 1.0  # seconds between two polls of one host, at least
# and at most a quarter of its matrix (but not under 10 s, nor over 60 s): progress and finished logs keep coming
# on long matrices, and a host that drops off loses only what it measured since the last poll
PROGRESS_WAITS = (10.0, 60.0)
RETRY_WAITS = (5.0, 10.0, 20.0)  # an SSH failure is asked again after these waits before `unreachable`
# SSH failures that say the server was busy, not that the host is away: a dropbear's or a bastion's cap on
# connections being set up at once (MaxStartups, 5 unauthenticated per client in dropbear) resets the rest, and
# a multiplexed session dies with the SSH master it shared. Detect asks such hosts again after
# DETECT_RETRY_WAITS; a refused, unroutable or unnamed host is not asked again.
TRANSIENT_SSH = re.compile(r"Connection reset by peer|kex_exchange_identification|Connection closed by (?!UNKNOWN)|"
                            r"banner exchange|Broken pipe|Shared connection to \S+ closed")
DETECT_RETRY_WAITS = (1.0, 3.0)
DIED_RECHECK = 2.0  # a runner that looked dead is looked at again after this
NO_ANSWER = "no answer: the pass that asked it failed"
NO_ANSWER_WORKER = NO_ANSWER + " (a site worker gone?)"  # where a site worker ran it


class Phase(enum.Enum):
    """Where a host is on its way, as far as its runner on the host is concerned (and, after the dash, the
    booleans `launched`, `resend`, `forget_failed` that stood for it):

    NEW            detect, install, plan: nothing of the run is on the host yet           - none set
    LAUNCHED       a launch was handed out: its runner and work dir may be on the host (the cleanup play's, should
                   the run stop or the host fail)                                        - launched
    ANSWER_LOST    launched, and the last poll's answer was lost on the way: the next poll ships everything
                   again (`poll again`)                                                  - launched, resend
    FORGET_FAILED  finished with every log here, but its work dir could not be removed: the cleanup play does it
                                                                                         - launched, forget_failed
    """

    NEW = "new"
    LAUNCHED = "launched"
    ANSWER_LOST = "answer lost"
    FORGET_FAILED = "forget failed"

    @property
    def launched(self) -> bool:
        return self is not Phase.NEW

    @property
    def resends(self) -> bool:
        """The next poll ships again what earlier polls shipped (`poll again`)."""
        return self is Phase.ANSWER_LOST


class Transport(enum.Enum):
    """How a host's step travels in the current pass of Ansible, and how far it got. Set afresh for the hosts of
    each pass (ASKS, or FILE for a step given as a file); a host's task that connects to the socket makes it
    SOCKET, and a step handed out over it STEP_OUT until its outcome comes. A host not in a pass keeps its last.
    Between passes a launched host whose task said its session's command line (`HostFlow.direct`) is stepped from
    the controller over that line, without Ansible: the fourth way. After the dash, the booleans `linked`,
    `in_flight`, `shipped`, `heard` that stood for each value (`linked` outweighed `shipped`, and `shipped` was
    not read once `heard`):

    ASKS      its task is to ask for its step over the socket: nothing from it yet in this pass   - none set
    FILE      its step went as a file (a site worker's host, or the first pass's detect): its task's result is the
              step's output, unless it asks over the socket after all                       - shipped
    SOCKET    its task asks over the socket; no step of it is out                            - linked
    STEP_OUT  a step was handed out over the socket whose outcome has not come back          - linked, in_flight
    ENDED     its task's result came without it having asked (the file's step, or its failure before asking)
                                                                                             - heard
    """

    ASKS = "asks"
    FILE = "file"
    SOCKET = "socket"
    STEP_OUT = "step out"
    ENDED = "ended"

    @property
    def linked(self) -> bool:
        """Its task asks over the socket: only that task's failure says anything."""
        return self in (Transport.SOCKET, Transport.STEP_OUT)


@dataclass
class Schedule:
    """When one host is next asked, and what the last answers said."""

    due: float
    deadline: float  # past this without `finished`, the host failed: it is far slower than planned
    every: float = PROGRESS_WAITS[1]  # at most this long between two polls (progress_wait)
    retries: int = 0  # SSH failures in a row
    died: int = 0  # polls in a row that found the runner gone without `finished`


@dataclass
class HostFlow:
    """One host's way through its stages."""

    state: HostState
    step: Step | None  # None: done with (finished, failed, unreachable, or nothing more to do)
    schedule: Schedule | None = None  # its polls, once launched
    phase: Phase = Phase.NEW
    transport: Transport = Transport.ASKS
    answer: StepResult = field(default_factory=StepResult)  # what its last launch or poll said
    detect_retries: int = 0
    launch_retries: int = 0
    direct: list[str] | None = None  # its session's command line (hostlink.exec_step): polled without Ansible
    stranded: list[Stranded] = field(default_factory=list)  # work dirs of dead runs to collect, after detect

    def handed_out(self, step: Step) -> None:
        """A step goes to the host: from a launch on, its runner may be there."""
        if step.stage is Stage.LAUNCH and self.phase is Phase.NEW:
            self.phase = Phase.LAUNCHED


def interrupted_stage(flow: HostFlow, cells_ran: int) -> str:
    """The stage a run's stop caught an unfinished host at (HostResult.interrupted): detect, provision (installing
    OpenSSL, or detecting again after it), cells (from its plan on: its cells had not all run), tunnels (every cell
    ran, its tunnels, measured after them, had not all), or fetch (every cell and tunnel ran on the host,
    `cells_ran` of them: the runner's count takes both, and some logs had not come back)."""
    stage = flow.step.stage if flow.step is not None else None
    if flow.phase is Phase.NEW:
        if stage in (Stage.DETECT, Stage.COLLECT, Stage.COLLECT_FORGET) or (
                stage is None and flow.state.plan is None and not flow.state.provision):
            return "detect"
        if stage in (Stage.INSTALL, Stage.DETECT_AGAIN) or flow.state.plan is None:
            return "provision"
        return "cells"
    plan = flow.state.plan
    if plan is None or cells_ran < len(plan.cells):
        return "cells"
    return "fetch" if cells_ran >= len(plan.cells) + len(plan.tunnels) else "tunnels"


def progress_wait(plan: HostPlan) -> float:
    low, high = PROGRESS_WAITS
    return min(max(plan.eta_seconds / 4, low), high)


def deadline_after(plan: HostPlan, options: PlanOptions) -> float:
    """Slow boards overrun -seconds (key setup, forks): a generous margin, plus the idle gate and snapshots."""
    return plan.eta_seconds * 1.5 + 120 + 5 * len(plan.cells) + options.idle_wait + 2 * SNAPSHOT_SECONDS


def left_behind(collector: Collector, launched: list[str], interrupted: bool) -> list[str]:
    """The hosts whose runner or work dir may still be there: stopped before they finished (Ctrl-C), or failed
    (a runner that died, one far slower than planned, a poll that failed) - its openssl would go on burning a
    router's CPU and its work dir filling a tmpfs /tmp. Not those unreachable, nor those done (`forget` cleaned)."""
    hosts = collector.hosts
    return [name for name in launched
            if (interrupted and not hosts[name].finished) or hosts[name].result.status == HOST_FAILED]


def left_on_hosts(collector: Collector, flows: dict[str, HostFlow], interrupted: bool) -> list[str]:
    """The hosts the cleanup play is for: those left_behind, and those whose forget failed."""
    left = left_behind(collector, [name for name, flow in flows.items() if flow.phase.launched], interrupted)
    return left + [name for name, flow in flows.items() if flow.phase is Phase.FORGET_FAILED and name not in left]


def say_unsaved(run_id: str, flows: dict[str, HostFlow], left: list[str], *, written: bool = False) -> None:
    """The results cannot be written (or, `written`, have too little room to risk it): where the logs not saved wait
    on the hosts (the next `sslbench run` on them collects them)."""
    kept = left
    if kept:
        why = "have too little room left" if written else "cannot be written"
        print(f"sslbench: the results {why}, so the logs not yet saved stay on the hosts, in their work "
              "dirs (a reboot clears /tmp; the next `sslbench run` on them collects them): "
              + ", ".join(f"{name} {work_dir(run_id, name)}" for name in kept), file=sys.stderr)


def judge_poll(collector: Collector, name: str, schedule: Schedule, now: float, answer: StepResult,
               no_answer: str = NO_ANSWER) -> bool:
    """What a poll's (or a launch's that waited) answer means for the host: True when it is done with (finished
    or failed), else `schedule.due` says when it is asked again."""
    state = collector.hosts[name]
    if not answer.heard:  # no word at all: the pass itself failed (a site worker that died, ssh to it refused ...)
        answer = StepResult(problem=HOST_UNREACHABLE, message=no_answer)
    if answer.problem == HOST_UNREACHABLE:
        if schedule.retries < len(RETRY_WAITS):
            schedule.due = now + RETRY_WAITS[schedule.retries]
            schedule.retries += 1
            return False
        fail(state, HOST_UNREACHABLE, answer.message)
    elif answer.problem == HOST_FAILED:
        fail(state, HOST_FAILED, answer.message)
    elif answer.state == "died":
        schedule.died += 1
        if schedule.died < 2:  # dead only if still so when looked at again
            schedule.due = now + DIED_RECHECK
            return False
        fail(state, HOST_FAILED, died_reason(answer.message))
    elif answer.state == "stopped":
        fail(state, HOST_FAILED, "the benchmark was stopped on the host")
    elif answer.state == "stranded":
        fail(state, HOST_FAILED, "the benchmark stopped itself on the host: no word from this controller reached it "
                                 "in time (its lease lapsed)")
    elif answer.state == "gone":
        fail(state, HOST_FAILED, "its work dir was gone before everything was shipped (the host rebooted, or "
                                 "something cleaned /tmp)")
    elif answer.state != "finished":
        schedule.retries = schedule.died = 0
        if now > schedule.deadline:
            fail(state, HOST_FAILED, "the benchmark did not finish in time (the host is far slower than planned)")
        else:
            left = collector.view.host(name).remaining_seconds(now)
            schedule.due = now + (0.0 if answer.state == "pending" else min(max(left, MIN_WAIT), schedule.every))
            return False
    collector.finish(state)
    collector.view.host(name).phase = "done" if state.result.status == HOST_OK else "failed"
    collector.view.refresh(name)
    return True


def wait_until(when: float, collector: Collector, interrupt: Interrupt) -> bool:
    """Sleep until `when`, keeping the progress view's ETAs moving; False when interrupted."""
    while not interrupt.requested:
        left = when - time.monotonic()
        if left <= 0:
            return True
        time.sleep(min(left, 1.0))
        if collector.view.live:
            for name in collector.view.hosts:
                collector.view.refresh(name)
    return False
