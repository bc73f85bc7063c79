"""The run engine: every host through its steps (detect, install OpenSSL where needed, launch, polls, cleanup),
each decided from what the host said to the one before.

One Ansible task per host carries it through all of them (playbooks/action_plugins/sslbench_step.py): the task
asks this engine for the host's next step over a Unix socket (orchestrator/run/hostlink.py), runs it (the script on
the stdin of the host's `sh -s`: one SSH session for all its steps where the connection allows, else an exec
each), reports the output and asks again. So a run of N hosts costs one ansible-playbook and N workers, as
plain Ansible does, however many steps each host needs. A task waits for its host's next poll (it holds its
worker) only when no other host can want one: the pass has every unfinished host and they all fit in --forks;
otherwise the task ends after the steps due now, and the host is asked again when due, scheduled from its ETA:
from here, with the command line of the session its task ran (Ansible's ssh line, its master connection still
open: hostlink.exec_step, --forks hosts at once), else, or once that fails, in a later pass of Ansible. Site
workers cannot reach the socket: their hosts run one step per pass (the script in a file).

When a host is next polled (`Schedule`): at its planned ETA, then from the progress it reported (what is left of
the cell it runs and of the cells after it), never sooner than MIN_WAIT nor later than its progress_wait (so
progress and logs keep coming on long matrices). A host is declared dead only on evidence: its runner gone
without having written `finished`, seen on two polls in a row; an SSH failure is retried after RETRY_WAITS (at
detect, a busy SSH server after DETECT_RETRY_WAITS) before the host is called unreachable. Ctrl-C stops openssl
on the hosts and ships what finished (playbooks/cleanup.yml).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import shlex
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from orchestrator import store
from orchestrator.errors import UserError
from orchestrator.parse import protocol
from orchestrator.run import hostlink, platforms
from orchestrator.run.config import PlanOptions, RunConfig
from orchestrator.run.fleet import (SNAPSHOT_SECONDS, Collector, HostState,
                                died_reason, fail, no_hosts_reason, one_line, plan_for, provisioning_decision)
from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE
from orchestrator.run.hostlink import HostLink, Outcome
from orchestrator.run.matrix import HostPlan, cells_text
from orchestrator.run.inventory import vault_hint
from orchestrator.run.runner import (CLEANUP_PLAYBOOK, DEFAULT_FORKS, PLAYBOOK_DIR, PROXY_CLOSED, Driver, HostEvent,
                                 Interrupt)

MIN_WAIT = 1.0  # seconds between two polls of one host, at least
# and at most a quarter of its matrix (but not under 10 s, nor over 60 s): progress and finished logs keep coming
# on long matrices, and a host that drops off loses only what it measured since the last poll
PROGRESS_WAITS = (10.0, 60.0)
# Hosts due within this many seconds of the first are asked in the same pass, or within as long as the last pass
# took if that was longer: a host left out would be asked that much later anyway, at the cost of one more pass.
BATCH = 2.0
FIRST_POLL_MARGIN = 1.0  # after a host's planned cells: the snapshots around them take about this much
# A matrix this short comes back in its launch's step (which waits for it) when its task may wait anyway: no poll
# at all. Longer ones are polled, so that the live view shows their cells, and the results keep them, as they
# finish (a Ctrl-C, a host that dies, a hog mid-run are seen then).
WAIT_IN_LAUNCH = 10.0
# ... and then removes its own work dir, unless the results have less room than this: should writing them fail,
# what the host shipped must still be on it (the controller removes a work dir only after saving its logs)
ROOM_TO_FORGET = 64 * 1024 * 1024
HOLD_CHECK = 5.0  # a task waiting for its host's next step looks at Ctrl-C this often (its thread sleeps between)
RETRY_WAITS = (5.0, 10.0, 20.0)  # an SSH failure is asked again after these waits before `unreachable`
DIED_RECHECK = 2.0  # a runner that looked dead is looked at again after this
HEREDOC = "SSLBENCH_{}_EOF"
# SSH failures that say the server was busy, not that the host is away: a dropbear's or a bastion's cap on
# connections being set up at once (MaxStartups, 5 unauthenticated per client in dropbear) resets the rest, and
# a multiplexed session dies with the SSH master it shared. Detect asks such hosts again after
# DETECT_RETRY_WAITS; a refused, unroutable or unnamed host is not asked again.
TRANSIENT_SSH = re.compile(r"Connection reset by peer|kex_exchange_identification|Connection closed by (?!UNKNOWN)|"
                            r"banner exchange|Broken pipe|Shared connection to \S+ closed")
DETECT_RETRY_WAITS = (1.0, 3.0)
NO_ANSWER = "no answer: the pass that asked it failed"
NO_ANSWER_WORKER = NO_ANSWER + " (a site worker gone?)"  # where a site worker ran it

# The playbook's one task, and each step's name as failure reasons say it ("Poll the benchmark: ...")
STEP_TASK = "Run the host's steps"
DETECT = "Detect host facts"
INSTALL = "Install openssl with the host's package manager"
DETECT_AGAIN = "Detect host facts again after installing"
LAUNCH = "Ship the runner and its cells, and start it"
POLL = "Poll the benchmark"
FORGET = "Remove the work dir of a finished benchmark"


@functools.cache
def host_file(name: str) -> str:
    """One of playbooks/files/, read once per run however many hosts get it."""
    return (PLAYBOOK_DIR / "files" / name).read_text()


def detect_script() -> str:
    """detect.sh, told which release files and package managers to look for (orchestrator/run/platforms.py)."""
    managers = " ".join(pm.name for pm in platforms.PACKAGE_MANAGERS)
    return (f"SSLBENCH_RELEASE_FILES={shlex.quote(' '.join(platforms.RELEASE_FILES))}\n"
            f"SSLBENCH_PACKAGE_MANAGERS={shlex.quote(managers)}\n" + host_file("detect.sh"))


def work_dir(run_id: str, host: str) -> str:
    """A host's work dir for the run: the run id's [0-9A-Za-z-] and a hash of the inventory name, so that one box
    listed under two names (its LAN and WAN address, two aliases) runs two launchers that do not share a dir."""
    name = hashlib.sha1(host.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"/tmp/sslbench.{''.join(c for c in run_id if c.isalnum() or c == '-')}.{name}"


def work_dirs(run_id: str, hosts: list[str]) -> dict[str, dict[str, str]]:
    """The extra vars of the cleanup play: each host's work dir."""
    return {"sslbench_workdirs": {host: work_dir(run_id, host) for host in hosts}}


def launcher_script(run_id: str, plan: HostPlan, openssl: str, idle_max: int, wait: int = 0) -> str:
    """The one script a host gets: it writes the work dir (the runner, the conditions script, its cells) and
    starts the runner detached; with `wait`, it stays until the runner ends (at most that many seconds) and
    prints what a poll prints. Asked again after a lost answer, it finds its runner and says it started."""
    parts = [
        "#!/bin/sh",
        f"# sslbench launcher, run {run_id}: the work dir and the runner (orchestrator/run/engine.py writes this)",
        "umask 077",
        f"dir={shlex.quote(work_dir(run_id, plan.host))}",
        'if [ -s "$dir/pid" ]; then echo "@@sslbench-state started"; exit 0; fi  # launched before: answer lost',
        '[ ! -e "$dir" ] || rm -rf "$dir"',
        # a file cut short (/tmp full) must not run: say so, and leave no half work dir filling /tmp
        'cannot() { echo "sslbench: cannot write $1 in $dir (is /tmp full or read-only?)" >&2; cd /; rm -rf "$dir";'
        ' exit 1; }',
        'mkdir "$dir" "$dir/logs" "$dir/shipped" && cd "$dir" || cannot "the work dir"',
    ]
    for name, text in (("run.sh", host_file("sslbench-run.sh")), ("conditions.sh", host_file("conditions.sh"))):
        marker = HEREDOC.format(name.split(".")[0].upper())
        parts += [f"cat > {name} <<'{marker}' || cannot {name}", text.rstrip("\n"), marker]
    # lines of checked tokens (no backslash, no leading dash): the shell's own echo, no cat
    cells = shlex.quote(cells_text(plan.cells).rstrip("\n"))
    parts.append(f"echo {cells} > cells.txt || cannot cells.txt")
    # run.sh read by this shell, not a new one: a process fewer on the host
    parts.append(f"set -- launch {shlex.quote(openssl)} {int(idle_max)}" + (f" {int(wait)}" if wait else ""))
    parts.append(". ./run.sh")
    return "\n".join(parts) + "\n"


@dataclass
class Schedule:
    """When one host is next asked, and what the last answers said."""

    due: float
    deadline: float  # past this without `finished`, the host failed: it is far slower than planned
    every: float = PROGRESS_WAITS[1]  # at most this long between two polls (progress_wait)
    retries: int = 0  # SSH failures in a row
    died: int = 0  # polls in a row that found the runner gone without `finished`


def progress_wait(plan: HostPlan) -> float:
    low, high = PROGRESS_WAITS
    return min(max(plan.eta_seconds / 4, low), high)


def deadline_after(plan: HostPlan, options: PlanOptions) -> float:
    """Slow boards overrun -seconds (key setup, forks): a generous margin, plus the idle gate and snapshots."""
    return plan.eta_seconds * 1.5 + 120 + 5 * len(plan.cells) + options.idle_wait + 2 * SNAPSHOT_SECONDS


@dataclass
class Step:
    """What a host runs next (`task` names it in failure reasons), and from when (time.monotonic())."""

    task: str
    script: str
    due: float = 0.0
    forgets: bool = False  # a poll that removes the work dir itself once the run finished and all is shipped


@dataclass
class HostFlow:
    """One host's way through its steps."""

    state: HostState
    step: Step | None  # None: done with (finished, failed, unreachable, or nothing more to do)
    schedule: Schedule | None = None  # its polls, once launched
    detect_retries: int = 0
    launch_retries: int = 0
    launched: bool = False  # its runner and work dir may be on the host (a launch was handed out)
    forget_failed: bool = False  # finished, but its work dir could not be removed
    resend: bool = False  # the last poll's answer was lost on the way: the next one ships everything again
    answer_lost: bool = False  # ... and that poll may have removed the work dir (`poll forget`)
    relaunched: bool = False  # ... which it had, with cells not stored yet: they were launched again (once)
    linked: bool = False  # its task asks through the socket in this pass
    shipped: bool = False  # its step went as a file in this pass (a site worker's host, or the first pass's detect)
    in_flight: bool = False  # a step was handed out whose outcome has not come back
    heard: bool = False  # an outcome came back in this pass
    direct: list[str] | None = None  # its session's command line (hostlink.exec_step): polled without Ansible


@dataclass
class Engine:
    """Every host of one run (or, with bench=False, of `sslbench hosts`: detect and plan only, nothing installed,
    hosts without OpenSSL planned as if they had it) through its steps; returns each planned host's plan."""

    driver: Driver
    collector: Collector
    config: RunConfig
    interrupt: Interrupt
    bench: bool = True
    flows: dict[str, HostFlow] = field(default_factory=dict)
    plans: dict[str, tuple[HostState, HostPlan]] = field(default_factory=dict)
    exec_step: Callable[[list[str], str, Callable[[], bool]], Outcome] = hostlink.exec_step

    def __post_init__(self) -> None:
        self._lock = threading.RLock()  # the socket's threads, ansible-runner's events and the view's ticker
        self._holding = False  # tasks may wait for their host's next step in the current pass
        self._first_pass = True  # a host first heard of now has had detect as its step (sslbench_first_step)
        self._play_hosts = 0  # the most hosts a task of this pass said its play has
        self._horizon = 0.0  # steps due by then are what the pass is for: a task waits for them
        self._detect = detect_script()
        self._passes = 0
        self.unwritable = False  # writing the results failed: the hosts keep what they have not shipped
        self._first_step = self._ship("detect", self._detect)

    def run(self) -> dict[str, tuple[HostState, HostPlan]]:
        link = HostLink(self.driver.private_dir, self._answer)
        try:
            began = time.monotonic()
            status = self._pass(None)
            if not self.flows:
                raise UserError(no_hosts_reason(self.driver, status))
            last_pass = time.monotonic() - began
            while not self.interrupt.requested:
                waiting = [f.step.due for f in self.flows.values() if f.step is not None]
                if not waiting or not _wait_until(min(waiting), self.collector, self.interrupt):
                    break
                # every host due by the time this pass would be over (those overdue after a long pass included)
                horizon = max(min(waiting), time.monotonic()) + max(BATCH, min(last_pass, PROGRESS_WAITS[0]))
                due = sorted(n for n, f in self.flows.items() if f.step and f.step.due <= horizon)
                began = time.monotonic()
                direct = [n for n in due if self.flows[n].direct]
                if direct:
                    self._steps_here(direct, horizon)
                rest = [n for n in due if not self.flows[n].direct]
                if rest or not direct:
                    self._pass(rest, horizon)
                last_pass = time.monotonic() - began
        finally:
            link.close()
        self._diagnose_hidden_hops()
        left = left_behind(self.collector, [n for n, f in self.flows.items() if f.launched], self.interrupt.requested)
        left += [n for n, f in self.flows.items() if f.forget_failed and n not in left]
        if left:
            extravars: dict[str, object] = dict(work_dirs(self.collector.run.run_id, left))
            if self.unwritable:  # openssl stopped, but what was not saved stays on the hosts: said where
                extravars["sslbench_keep_work_dirs"] = True
                gone = [name for name in left if self.collector.hosts[name].work_dir_gone]
                kept = [name for name in left if name not in gone]
                if kept:
                    print("sslbench: the results cannot be written, so the logs not yet saved stay on the hosts, in "
                          "their work dirs (a reboot clears /tmp): " + ", ".join(
                              f"{name} {work_dir(self.collector.run.run_id, name)}" for name in kept), file=sys.stderr)
                if gone:  # the results filled up between the poll's room check and its answer
                    print("sslbench: the results cannot be written, and the last logs of " + ", ".join(gone)
                          + " are lost: their last poll had removed the work dir", file=sys.stderr)
            self.driver.play(playbook=CLEANUP_PLAYBOOK, extravars=extravars, on_event=self.collector.on_event,
                             cancellable=False, hosts=left)
        return self.plans

    # --- passes: one ansible-playbook run each ---------------------------------------------------------------

    def _pass(self, hosts: list[str] | None, horizon: float = 0.0) -> str:
        """Run the steps of `hosts` (None: every host of the inventory, each starting with detect), those due by
        `horizon` included."""
        self._passes += 1
        self._horizon = horizon
        self._first_pass = hosts is None
        self._play_hosts = 0
        unfinished = {n for n, f in self.flows.items() if f.step is not None}
        # no host outside the pass will want a step before it ends (and, _answer checks, every task of the pass
        # has its worker at once)
        self._holding = not self.driver.workers and (hosts is None or set(hosts) >= unfinished)
        extravars: dict[str, object] = {"sslbench_socket": str(self.driver.private_dir / "steps.sock")}
        if hosts is None:
            extravars["sslbench_first_step"] = self._first_step
        for name in hosts or []:
            flow = self.flows[name]
            flow.linked = flow.in_flight = flow.heard = flow.shipped = False
        if hosts is not None and self.driver.workers:  # their hosts cannot ask: each gets its step as a file
            steps = {n: self._ship(f"{self._passes}-{n}", step.script)
                     for n in hosts if (step := self.flows[n].step) is not None}
            for name in steps:
                flow = self.flows[name]
                flow.shipped = True
                flow.launched = flow.launched or (flow.step is not None and flow.step.task == LAUNCH)
            extravars["sslbench_steps"] = steps
        stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(stop,), daemon=True)
        ticker.start()
        try:
            status = self.driver.play(extravars=extravars, on_event=self._on_event, hosts=hosts)
        finally:
            stop.set()
            ticker.join()
        if self.driver.aborted and not self.interrupt.requested:
            self._ansible_gave_up(self.driver.aborted)
        with self._lock:
            for name, flow in self.flows.items():
                asked = (hosts is None or name in hosts) and not self.interrupt.requested  # Ctrl-C: said so at the end
                if asked and flow.step is not None and (flow.in_flight or not (flow.linked or flow.heard)):
                    flow.in_flight = False
                    self._guarded_report(flow, Outcome(kind="unreachable", stderr=self._no_answer(name)))
        return status

    def _no_answer(self, host: str) -> str:
        return NO_ANSWER_WORKER if self.driver.workers and self.driver.host_worker.get(host) else NO_ANSWER

    def _ansible_gave_up(self, said: str) -> None:
        """ansible-playbook ended a pass without its recap (fatal: a vault secret missing, a plugin or collection
        that cannot load, a bad ansible.cfg): no host is to blame, so the run ends with Ansible's words (exit 2),
        at once if nothing was launched, else as Ctrl-C does (openssl stopped, what finished kept)."""
        hint = vault_hint(said, self.driver.ansible)
        if not any(f.launched for f in self.flows.values()):
            reached = any(f.linked or f.heard for f in self.flows.values())
            raise UserError(f"Ansible failed{'' if reached else ' before reaching any host'}: "
                            f"{said.rstrip('.') if hint else said}{hint}")
        self.interrupt.stop(f"Ansible failed: {said}")

    def _steps_here(self, hosts: list[str], horizon: float) -> None:
        """The steps of launched hosts due by `horizon` (polls, forgets), run from here over the command line of
        each host's session, its SSH master still open: an ansible-playbook pass would cost each host a worker and
        Ansible's task, which is what a poll costs plain Ansible too. --forks of them at once."""
        with ThreadPoolExecutor(max_workers=min(len(hosts), self.driver.forks or DEFAULT_FORKS)) as pool:
            for _ in pool.map(lambda name: self._steps_of(self.flows[name], horizon), hosts):
                pass

    def _steps_of(self, flow: HostFlow, horizon: float) -> None:
        while not self.interrupt.requested:
            with self._lock:
                step, argv = flow.step, flow.direct
            if step is None or argv is None:
                return
            wait = step.due - time.monotonic()
            if wait > 0:
                if step.due > horizon or wait > BATCH:
                    return  # a later round's
                time.sleep(wait)
                continue
            with self._lock:
                flow.launched = flow.launched or step.task == LAUNCH
            outcome = self.exec_step(argv, step.script, lambda: self.interrupt.requested)
            with self._lock:
                if outcome.kind == "unreachable":  # asked through Ansible from now on (its ssh, its retries)
                    flow.direct = None
                if flow.step is step:
                    self._guarded_report(flow, outcome)

    def _ship(self, label: str, script: str) -> str:
        """A step's script as a file of the run's project dir (it travels to site workers), relative to it."""
        path = self.driver.shipped_dir / f"step-{store.safe_name(label)}.sh"
        path.write_text(script, encoding="utf-8")
        return str(path.relative_to(self.driver.project_dir))

    def _tick(self, stop: threading.Event) -> None:
        """Keep the live view's ETAs moving while tasks wait."""
        while not stop.wait(1.0):
            if self.collector.view.live:
                with self._lock:
                    for name in list(self.collector.view.hosts):
                        self.collector.view.refresh(name)

    # --- what the hosts say --------------------------------------------------------------------------------

    def _answer(self, host: str, play_hosts: int, outcome: Outcome | None, direct: list[str] | None) -> str | None:
        """The socket's question: the host's next step, once it is due (None: the task ends)."""
        with self._lock:
            self.collector.view.expected = max(self.collector.view.expected, play_hosts)
            self._play_hosts = max(self._play_hosts, play_hosts)
            flow = self._flow(host)
            flow.direct = direct
            if outcome is None:
                flow.linked = True
            elif flow.in_flight:
                flow.in_flight = False
                self._guarded_report(flow, outcome)
            step = flow.step
        this_pass = self._passes
        while step is not None and not self.interrupt.requested:
            wait = step.due - time.monotonic()
            if wait <= 0:
                with self._lock:
                    if self._passes != this_pass or flow.step is not step:  # a thread left from an ended pass
                        return None
                    flow.in_flight = True
                    flow.launched = flow.launched or step.task == LAUNCH  # from now on its runner may be there
                return step.script
            # asked again in a later pass, unless this one was meant for the step and it is due soon (waiting for
            # it costs less than a pass, and holds a worker others may want only briefly)
            if not self._may_wait() and (step.due > self._horizon or wait > BATCH):
                return None
            time.sleep(min(wait, HOLD_CHECK))
        return None

    def _may_wait(self) -> bool:
        """May a task wait for its host's next step? Only when no other host can want its worker meanwhile."""
        return self._holding and 0 < self._play_hosts <= (self.driver.forks or DEFAULT_FORKS)

    def _on_event(self, event: HostEvent) -> None:
        """An Ansible event of the step task: a start, a socket task's end, or a site worker's host's one step."""
        with self._lock:
            flow = self.flows.get(event.host)
            if event.kind == "start":
                if flow is None or flow.linked:
                    self._flow(event.host)
                return
            if flow is not None and flow.linked:
                # the task of a host that asked through the socket: only its failure says anything (the step it
                # was running never reported: the task died)
                if event.kind in ("failed", "unreachable") and flow.in_flight:
                    flow.in_flight = False
                    self._guarded_report(flow, Outcome(kind=event.kind, stdout=event.stdout, stderr=event.message,
                                                       rc=event.rc))
                return
            flow = flow or self._flow(event.host)
            if flow.step is None or flow.heard or event.kind not in ("ok", "failed", "unreachable"):
                return  # (one step per pass: a second result, of a host two workers' patterns share, is not its)
            flow.heard = True
            if flow.shipped:  # the output of the step it was given as a file
                self._guarded_report(flow, Outcome(kind=event.kind, stdout=event.stdout, stderr=event.message,
                                                   rc=event.rc))
            elif event.kind != "ok":  # its task failed before it could ask (no step ran): asked again later
                self._guarded_report(flow, Outcome(kind="unreachable",
                                                   stderr=event.message or self._no_answer(event.host)))

    def _guarded_report(self, flow: HostFlow, outcome: Outcome) -> None:
        """_report, where a failure of ours ends this host (or, the results unwritable, the run), never the socket's
        thread with the host's step still pending, to be run again and again."""
        try:
            self._report(flow, outcome)
        except OSError as exc:  # the results dir full, read-only or gone: nothing more can be kept
            flow.step = None
            self.unwritable = True
            self.interrupt.stop(f"cannot write the results ({exc.strerror or exc})")
        except Exception as exc:  # noqa: BLE001 - a bug of ours: said, and this host given up, not the run
            flow.step = None
            fail(flow.state, HOST_FAILED, f"internal error: {type(exc).__name__}: {exc}")
            print(f"sslbench: internal error on {flow.state.name}: {type(exc).__name__}: {exc}", file=sys.stderr)

    def _flow(self, host: str) -> HostFlow:
        if host not in self.flows:
            state = self.collector.host(host)
            self.flows[host] = HostFlow(state=state, step=Step(DETECT, self._detect, time.monotonic()),
                                        shipped=self._first_pass)
            self.collector.on_event(HostEvent(kind="start", host=host, task=DETECT))
        return self.flows[host]

    def _report(self, flow: HostFlow, outcome: Outcome) -> None:
        """What the host's step printed decides its next step."""
        step = flow.step
        if step is None:
            return
        state = flow.state
        event = HostEvent(kind=outcome.kind, host=state.name, task=step.task, stdout=outcome.stdout,
                          message=outcome.stderr.strip(), rc=outcome.rc)
        now = time.monotonic()
        if step.task in (DETECT, DETECT_AGAIN, INSTALL):
            if (outcome.kind == "unreachable" and TRANSIENT_SSH.search(outcome.stderr)
                    and flow.detect_retries < len(DETECT_RETRY_WAITS)):  # a busy SSH server: ask again soon
                step.due = now + DETECT_RETRY_WAITS[flow.detect_retries]
                flow.detect_retries += 1
                return
            self.collector.on_event(event, bench_phase=False)
            flow.step = self._after_install(flow) if step.task == INSTALL else self._after_detect(flow, step.task)
            return
        if step.task != FORGET:  # the forget step leaves the poll's state (finished) in place
            state.poll_state, state.work_dir_gone = None, False
        state.poll_problem = None
        self.collector.on_event(event, bench_phase=True)
        flow.step = self._after_launch(flow, now) if step.task == LAUNCH else self._after_poll_step(flow, step, now)

    def _after_poll_step(self, flow: HostFlow, step: Step, now: float) -> Step | None:
        """After a poll (or a launch that waited, or a forget): forget once all is shipped, else poll again (after
        a lost answer, asking for it again; its work dir gone with it, launching the cells whose logs did not come)."""
        state = flow.state
        if step.task == POLL:
            if state.poll_problem == HOST_UNREACHABLE or (state.poll_state is None and state.poll_problem is None):
                flow.resend = True  # (an output cut short, without its state line, is lost too)
                flow.answer_lost = flow.answer_lost or step.forgets
            elif state.poll_state == "gone" and flow.answer_lost:
                # that poll removed the work dir after printing its last logs, and its answer was lost on the way
                plan = self.plans[state.name][1]
                missing = [cell for cell in plan.cells if cell.id not in state.cells_done]
                if not missing:
                    state.poll_state, state.work_dir_gone = "finished", True  # all but its end had come
                elif not flow.relaunched:  # the cells not stored run again (the launcher makes the work dir anew)
                    flow.relaunched, flow.resend, flow.answer_lost = True, False, False
                    return self._launch_step(state, dataclasses.replace(plan, cells=missing), wait=0)
            elif state.poll_state is not None:
                flow.resend = flow.answer_lost = False
        if (step.task != FORGET and state.poll_state == "finished" and state.poll_problem is None
                and not state.work_dir_gone):
            return Step(FORGET, self._runner(state.name, "forget"), now)  # shipped: its work dir can go
        if step.task == FORGET and state.poll_problem is not None:
            # everything is here: a forget whose answer was lost must not fail the host (a poll after it would
            # find no work dir); the cleanup play removes the dir at the end, if it is still there
            flow.forget_failed = True
            state.poll_problem = None
        assert flow.schedule is not None  # polled, so launched
        done = _after_poll(self.collector, state.name, flow.schedule, now, self._no_answer(state.name))
        return None if done else self._poll_step(state.name, flow.schedule.due, again=flow.resend)

    def _after_detect(self, flow: HostFlow, task: str) -> Step | None:
        state = flow.state
        if state.result.status != HOST_OK or self.interrupt.requested:
            return None
        if task == DETECT_AGAIN:
            if not state.openssl_path:
                manager = state.provision.name if state.provision else "the package manager"
                fail(state, HOST_FAILED, f"installing openssl with {manager} reported success, "
                                         "but no openssl binary was found afterwards")
                return None
        else:
            state.provision = provisioning_decision(state, no_provision=self.config.no_provision,
                                                    upgrade=self.config.upgrade_openssl)
            if state.result.status != HOST_OK:
                return None
            if state.provision and self.bench:
                return Step(INSTALL, state.provision.install, time.monotonic())
        if not state.openssl_path and self.bench:
            return None
        plan = plan_for(state, self.config.plan)
        self.plans[state.name] = (state, plan)
        if not self.bench:
            return None
        progress = self.collector.view.host(state.name)
        progress.planned = {c.id: c.seconds for c in plan.cells}
        progress.total = len(plan.cells)
        wait = 0  # the launch waits for a short matrix when the task may wait anyway: one poll fewer, none early
        if self._may_wait() and plan.eta_seconds <= WAIT_IN_LAUNCH and results_have_room(self.collector.run_dir):
            wait = int(plan.eta_seconds * 1.5 + FIRST_POLL_MARGIN + 5)
        return self._launch_step(state, plan, wait)

    def _launch_step(self, state: HostState, plan: HostPlan, wait: int) -> Step:
        script = launcher_script(self.collector.run.run_id, plan, state.openssl_path or "openssl",
                                 self.config.plan.idle_wait, wait)
        return Step(LAUNCH, script, time.monotonic())

    def _after_install(self, flow: HostFlow) -> Step | None:
        if flow.state.result.status != HOST_OK or self.interrupt.requested:
            return None
        return Step(DETECT_AGAIN, self._detect, time.monotonic())

    def _after_launch(self, flow: HostFlow, now: float) -> Step | None:
        state = flow.state
        if state.poll_problem == HOST_FAILED:
            fail(state, HOST_FAILED, state.poll_message)
            return None
        if state.poll_problem == HOST_UNREACHABLE:
            if flow.launch_retries < len(RETRY_WAITS) and not self.interrupt.requested:
                flow.launch_retries += 1
                assert flow.step is not None
                return Step(LAUNCH, flow.step.script, now + RETRY_WAITS[flow.launch_retries - 1])
            fail(state, HOST_UNREACHABLE, state.poll_message)
            return None
        if state.poll_state is None or state.result.status != HOST_OK:
            return None
        self.collector.view.host(state.name).phase = "bench"
        self.collector.view.refresh(state.name)
        plan = self.plans[state.name][1]
        every = progress_wait(plan)
        flow.schedule = Schedule(due=now + min(plan.eta_seconds + FIRST_POLL_MARGIN, every),
                                 deadline=now + deadline_after(plan, self.config.plan), every=every)
        if state.poll_state == "started":
            return self._poll_step(state.name, flow.schedule.due)
        assert flow.step is not None
        return self._after_poll_step(flow, flow.step, now)  # the launch waited: it said what a poll says

    def _runner(self, host: str, command: str) -> str:
        return f"sh {shlex.quote(work_dir(self.collector.run.run_id, host))}/run.sh {command}\n"

    def _poll_step(self, host: str, due: float, again: bool = False) -> Step:
        """A poll. While the results have room (should writing them fail, what the host shipped must still be on
        it), the poll that finds the run finished and ships its last logs removes the work dir too: no forget step
        (an SSH exec) after it. `again`: the last poll's answer was lost, so what earlier polls shipped comes
        again. A work dir already gone says so instead of failing the shell."""
        forgets = results_have_room(self.collector.run_dir)
        work = shlex.quote(work_dir(self.collector.run.run_id, host))
        words = "poll" + (" forget" if forgets else "") + (" again" if again else "")
        script = f'[ -d {work} ] || {{ echo; echo "{protocol.STATE}gone"; exit 0; }}\n' + self._runner(host, words)
        return Step(POLL, script, due, forgets)

    def _diagnose_hidden_hops(self) -> None:
        """Hosts behind a jump host whose hop failed: ssh sends the hop's own error to /dev/null under
        ControlPersist (Ansible's default), leaving "Connection closed by UNKNOWN port 65535". One more connection
        without an SSH master hears it ("Host key verification failed.") and it becomes the reason."""
        hidden = [name for name, flow in self.flows.items()
                  if flow.state.result.status == HOST_UNREACHABLE and PROXY_CLOSED in (flow.state.result.reason or "")]
        if not hidden:
            return
        found: dict[str, str] = {}

        def keep(event: HostEvent) -> None:
            if event.kind == "unreachable" and event.message:
                found[event.host] = event.message

        self.driver.play(extravars={"sslbench_first_step": self._first_step,
                                    "ansible_ssh_args": "-o ControlMaster=no"}, on_event=keep, hosts=hidden)
        for name, message in found.items():
            state = self.flows[name].state
            state.result.reason = f"{(state.result.reason or '').split(':', 1)[0]}: {one_line(message)}"


def results_have_room(run_dir: Path) -> bool:
    """Room to write the results, and the right to (a filesystem remounted read-only has room but takes nothing)."""
    try:
        return shutil.disk_usage(run_dir).free >= ROOM_TO_FORGET and os.access(run_dir, os.W_OK)
    except OSError:
        return False


def left_behind(collector: Collector, launched: list[str], interrupted: bool) -> list[str]:
    """The hosts whose runner or work dir may still be there: stopped before they finished (Ctrl-C), or failed
    (a runner that died, one far slower than planned, a poll that failed) - its openssl would go on burning a
    router's CPU and its work dir filling a tmpfs /tmp. Not those unreachable, nor those done (`forget` cleaned)."""
    hosts = collector.hosts
    return [name for name in launched
            if (interrupted and not hosts[name].finished) or hosts[name].result.status == HOST_FAILED]


def _after_poll(collector: Collector, name: str, schedule: Schedule, now: float,
                no_answer: str = NO_ANSWER) -> bool:
    """Read what the pass said about one host: True when it is done with (finished or failed)."""
    state = collector.hosts[name]
    if state.poll_state is None and state.poll_problem is None:  # no word at all: the pass itself failed
        state.poll_problem = HOST_UNREACHABLE  # (a site worker that died, ssh to it refused ...)
        state.poll_message = no_answer
    if state.poll_problem == HOST_UNREACHABLE:
        if schedule.retries < len(RETRY_WAITS):
            schedule.due = now + RETRY_WAITS[schedule.retries]
            schedule.retries += 1
            return False
        fail(state, HOST_UNREACHABLE, state.poll_message)
    elif state.poll_problem == HOST_FAILED:
        fail(state, HOST_FAILED, state.poll_message)
    elif state.poll_state == "died":
        schedule.died += 1
        if schedule.died < 2:  # dead only if still so when looked at again
            schedule.due = now + DIED_RECHECK
            return False
        fail(state, HOST_FAILED, died_reason(state.poll_message))
    elif state.poll_state == "stopped":
        fail(state, HOST_FAILED, "the benchmark was stopped on the host")
    elif state.poll_state == "gone":
        fail(state, HOST_FAILED, "its work dir was gone before everything was shipped (the host rebooted, or "
                                 "something cleaned /tmp)")
    elif state.poll_state != "finished":
        schedule.retries = schedule.died = 0
        if now > schedule.deadline:
            fail(state, HOST_FAILED, "the benchmark did not finish in time (the host is far slower than planned)")
        else:
            left = collector.view.host(name).remaining_seconds(now)
            schedule.due = now + (0.0 if state.poll_state == "pending" else min(max(left, MIN_WAIT), schedule.every))
            return False
    collector.finish(state)
    collector.view.host(name).phase = "done" if state.result.status == HOST_OK else "failed"
    collector.view.refresh(name)
    return True


def _wait_until(when: float, collector: Collector, interrupt: Interrupt) -> bool:
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
