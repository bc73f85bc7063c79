"""The run engine: every host through its steps (detect, install OpenSSL where needed, launch, polls, cleanup),
each decided from what the host said to the one before (orchestrator/run/decisions.py decides; this module carries
the steps to the hosts and their outputs back).

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

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from orchestrator import store
from orchestrator.errors import UserError
from orchestrator.model import HOST_FAILED, HOST_UNREACHABLE
from orchestrator.run import hostlink
from orchestrator.run.decisions import Decisions
from orchestrator.run.config import RunConfig
from orchestrator.run.fleet import Collector, HostState, fail, no_hosts_reason, one_line
from orchestrator.run.flow import (NO_ANSWER, NO_ANSWER_WORKER, PROGRESS_WAITS, HostFlow, Transport, interrupted_stage,
                                   left_on_hosts, say_unsaved, wait_until)
from orchestrator.run.hostlink import HostLink, Outcome, close_master
from orchestrator.run.matrix import HostPlan
from orchestrator.run.inventory import vault_hint
from orchestrator.run.runner import CLEANUP_PLAYBOOK, DEFAULT_FORKS, PROXY_CLOSED, Driver, HostEvent, Interrupt
from orchestrator.run.stages import results_have_room, unheld, work_dirs

# Hosts due within this many seconds of the first are asked in the same pass, or within as long as the last pass
# took if that was longer: a host left out would be asked that much later anyway, at the cost of one more pass.
BATCH = 2.0
HOLD_CHECK = 5.0  # a task waiting for its host's next step looks at Ctrl-C this often (its thread sleeps between)


@dataclass
class Engine:
    """Every host of one run (or, with bench=False, of `sslbench hosts`: detect and plan only, nothing installed,
    hosts without OpenSSL planned as if they had it) through its stages; returns each planned host's plan."""

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
        self._passes = 0
        self.unwritable = False  # writing the results failed: the hosts keep what they have not shipped
        # what each stage's output means for the host: its next step (the same plans dict, filled as hosts plan)
        self.decisions = Decisions(self.collector, self.config.plan, self.interrupt, self._may_wait, self.no_answer,
                                   no_provision=self.config.no_provision, upgrade=self.config.upgrade_openssl,
                                   bench=self.bench, plans=self.plans)
        self._first_step = self._ship("detect", self.decisions.detect)

    def run(self) -> dict[str, tuple[HostState, HostPlan]]:
        link = HostLink(self.driver.private_dir, self._answer)
        try:
            self._passes_until_done()
        except OSError as exc:  # writing what Ansible said failed (the results disk full): the hosts are stopped first
            self.cannot_write(exc)
        finally:
            link.close()
        try:
            self._diagnose_hidden_hops()
        except OSError as exc:
            self.cannot_write(exc)
        if self.interrupt.requested:
            self.mark_interrupted()
        self._clean_up()
        return self.plans

    def cannot_write(self, exc: OSError) -> None:
        """The results cannot take more (full, read-only, gone): the run stops as Ctrl-C stops it, but every host
        keeps the logs not saved yet (the cleanup play stops openssl, and says where they are)."""
        self.unwritable = True
        self.interrupt.stop(f"cannot write the results ({exc.strerror or exc})")

    def _passes_until_done(self) -> None:
        began = time.monotonic()
        status = self._pass(None)
        if not self.flows and not self.interrupt.requested:  # (a stop before any host: said as such)
            raise UserError(no_hosts_reason(self.driver, status))
        last_pass = time.monotonic() - began
        while not self.interrupt.requested:
            waiting = [f.step.due for f in self.flows.values() if f.step is not None]
            if not waiting or not wait_until(min(waiting), self.collector, self.interrupt):
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

    def mark_interrupted(self) -> None:
        """Each host the stop caught before its end says at which stage (run.json, `report`): a host stopped during
        detect has no figures, and must not read as a good host that measured nothing."""
        with self._lock:
            for name, flow in self.flows.items():
                if not flow.state.finished and flow.state.result.interrupted is None:
                    ran = len(self.collector.view.host(name).done)
                    flow.state.result.interrupted = interrupted_stage(flow, ran)

    def _clean_up(self) -> None:
        """The cleanup play for the hosts whose runner or work dir may still be there."""
        left = left_on_hosts(self.collector, self.flows, self.interrupt.requested)
        if not left:
            return
        extravars: dict[str, object] = dict(work_dirs(self.collector.run.run_id, left))
        # openssl stopped, but what was not saved stays on the hosts (said where): the results took no more, or have
        # so little room left that the logs the cleanup would ship, then remove from the host, might not fit
        if self.unwritable or not results_have_room(self.collector.run_dir):
            extravars["sslbench_keep_work_dirs"] = True
            say_unsaved(self.collector.run.run_id, self.flows, left, written=not self.unwritable)
        try:
            self.driver.play(playbook=CLEANUP_PLAYBOOK, extravars=extravars, on_event=self.collector.on_event,
                             cancellable=False, hosts=left)
        except OSError as exc:  # (the play ran: only keeping Ansible's words of it failed)
            self.cannot_write(exc)

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
            self.flows[name].transport = Transport.ASKS
        if hosts is not None and self.driver.workers:  # their hosts cannot ask: each gets its step as a file
            extravars["sslbench_steps"] = self._ship_steps(hosts)
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
                if asked and flow.step is not None and flow.transport in (Transport.STEP_OUT, Transport.ASKS,
                                                                          Transport.FILE):
                    if flow.transport is Transport.STEP_OUT:
                        flow.transport = Transport.SOCKET
                    self._guarded_report(flow, Outcome(kind="unreachable", stderr=self.no_answer(name)))
        return status

    def _ship_steps(self, hosts: list[str]) -> dict[str, str]:
        """Each host's step as a file, for a pass whose hosts cannot ask (site workers)."""
        steps = {}
        for name in hosts:
            flow = self.flows[name]
            if flow.step is not None:
                steps[name] = self._ship(f"{self._passes}-{name}", flow.step.script)
                flow.transport = Transport.FILE
                flow.handed_out(flow.step)
        return steps

    def no_answer(self, host: str) -> str:
        """Why a host's step never came back: the pass failed (on a site worker, where one ran it)."""
        return NO_ANSWER_WORKER if self.driver.workers and self.driver.host_worker.get(host) else NO_ANSWER

    def _ansible_gave_up(self, said: str) -> None:
        """ansible-playbook ended a pass without its recap (fatal: a vault secret missing, a plugin or collection
        that cannot load, a bad ansible.cfg): no host is to blame, so the run ends with Ansible's words (exit 2),
        at once if nothing was launched, else as Ctrl-C does (openssl stopped, what finished kept)."""
        hint = vault_hint(said, self.driver.ansible)
        if not any(f.phase.launched for f in self.flows.values()):
            reached = any(f.transport in (Transport.SOCKET, Transport.STEP_OUT, Transport.ENDED)
                          for f in self.flows.values())
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
                flow.handed_out(step)
            outcome = self.exec_step(argv, step.script, lambda: self.interrupt.requested)
            with self._lock:
                if outcome.kind == "unreachable":  # asked through Ansible from now on (its ssh, its retries)
                    flow.direct = None
                if flow.step is step:
                    self._guarded_report(flow, outcome)
            self._end_master_if_done(flow)

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
                flow.transport = Transport.SOCKET
            elif flow.transport is Transport.STEP_OUT:
                flow.transport = Transport.SOCKET
                self._guarded_report(flow, outcome)
            step = flow.step
        this_pass = self._passes
        while step is not None and not self.interrupt.requested:
            wait = step.due - time.monotonic()
            if wait <= 0:
                with self._lock:
                    if self._passes != this_pass or flow.step is not step:  # a thread left from an ended pass
                        return None
                    flow.transport = Transport.STEP_OUT
                    flow.handed_out(step)  # from a launch on its runner may be there
                # decided while the host's session was held: handed out in a pass that does not hold it, its
                # runner must outlive that session until the next step (stages.unheld)
                return step.script if self._may_wait() else unheld(step.script)
            # asked again in a later pass, unless this one was meant for the step and it is due soon (waiting for
            # it costs less than a pass, and holds a worker others may want only briefly)
            if not self._may_wait() and (step.due > self._horizon or wait > BATCH):
                return None
            time.sleep(min(wait, HOLD_CHECK))
        return None

    def _may_wait(self) -> bool:
        """May a task wait for its host's next step? Only when no other host can want its worker meanwhile."""
        return self._holding and 0 < self._play_hosts <= (self.driver.forks or DEFAULT_FORKS)

    def _end_master_if_done(self, flow: HostFlow | None) -> None:
        """A finished host's SSH master ended now (hostlink.close_master): left to ControlPersist it would hold its
        memory for a minute more, and a fleet larger than --forks, launched then polled, holds one per host."""
        with self._lock:
            argv = flow.direct if flow is not None and flow.step is None and flow.state.finished else None
        if argv:
            close_master(argv)

    def _on_event(self, event: HostEvent) -> None:
        """An Ansible event of the step task: a start, a socket task's end, or a site worker's host's one step."""
        if event.kind == "ok":  # a task's end: its steps' session is closed, the SSH master idle
            self._end_master_if_done(self.flows.get(event.host))
        with self._lock:
            flow = self.flows.get(event.host)
            if event.kind == "start":
                self._flow(event.host)
                return
            if flow is not None and flow.transport.linked:
                # the task of a host that asked through the socket: only its failure says anything (the step it
                # was running never reported: the task died)
                if event.kind in ("failed", "unreachable") and flow.transport is Transport.STEP_OUT:
                    flow.transport = Transport.SOCKET
                    self._guarded_report(flow, Outcome(kind=event.kind, stdout=event.stdout, stderr=event.message,
                                                       rc=event.rc))
                return
            flow = flow or self._flow(event.host)
            if flow.step is None or flow.transport is Transport.ENDED or event.kind not in ("ok", "failed",
                                                                                            "unreachable"):
                return  # (one step per pass: a second result, of a host two workers' patterns share, is not its)
            shipped, flow.transport = flow.transport is Transport.FILE, Transport.ENDED
            if shipped:  # the output of the step it was given as a file
                self._guarded_report(flow, Outcome(kind=event.kind, stdout=event.stdout, stderr=event.message,
                                                   rc=event.rc))
            elif event.kind != "ok":  # its task failed before it could ask (no step ran): asked again later
                self._guarded_report(flow, Outcome(kind="unreachable",
                                                   stderr=event.message or self.no_answer(event.host)))

    def _guarded_report(self, flow: HostFlow, outcome: Outcome) -> None:
        """Decisions.report, where a failure of ours ends this host (or, the results unwritable, the run), never the socket's
        thread with the host's step still pending, to be run again and again."""
        try:
            self.decisions.report(flow, outcome)
        except OSError as exc:  # the results dir full, read-only or gone: nothing more can be kept
            flow.step = None
            self.cannot_write(exc)
        except Exception as exc:  # noqa: BLE001 - a bug of ours: said, and this host given up, not the run
            flow.step = None
            fail(flow.state, HOST_FAILED, f"internal error: {type(exc).__name__}: {exc}")
            print(f"sslbench: internal error on {flow.state.name}: {type(exc).__name__}: {exc}", file=sys.stderr)

    def _flow(self, host: str) -> HostFlow:
        if host not in self.flows:
            step = self.decisions.first_step()
            self.flows[host] = HostFlow(state=self.collector.host(host), step=step,
                                        transport=Transport.FILE if self._first_pass else Transport.ASKS)
            self.collector.on_event(HostEvent(kind="start", host=host, task=step.task))
        return self.flows[host]

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

