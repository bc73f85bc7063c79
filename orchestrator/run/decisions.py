"""What each stage's output means for a host: its next step, or none (done with). One method per stage, in the
table `Decisions.after`; the engine (orchestrator/run/engine.py) carries the steps to the hosts and their outputs
back, and fleet's Collector reads those outputs (its `step_result`: what a launch, poll or forget said).
"""
from __future__ import annotations

import dataclasses
import shlex
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE
from orchestrator.parse import protocol
from orchestrator.run import stages, stranded
from orchestrator.run.config import PlanOptions
from orchestrator.run.fleet import (Collector, HostState, StepResult, fail, install_script, one_line, plan_for,
                                    provisioning_decision, tunnel_packages)
from orchestrator.run.flow import (DETECT_RETRY_WAITS, DIED_RECHECK, PROGRESS_WAITS, RETRY_WAITS,
                                   TRANSIENT_SSH, HostFlow, Phase, Schedule, deadline_after, judge_poll, progress_wait)
from orchestrator.run.hostlink import Outcome
from orchestrator.run.matrix import HostPlan
from orchestrator.run.runner import HostEvent, Interrupt
from orchestrator.run.stages import Stage, Step, launcher_script, runner_command

FIRST_POLL_MARGIN = 1.0  # after a host's planned cells: the snapshots around them take about this much
# A matrix this short comes back in its launch's step (which waits for it) when its task may wait anyway: no poll
# at all. Longer ones are polled, so that the live view shows their cells, and the results keep them, as they
# finish (a Ctrl-C, a host that dies, a hog mid-run are seen then). A `forget` follows once its logs are saved.
WAIT_IN_LAUNCH = 10.0
AfterStage = Callable[[HostFlow, StepResult, float], "Step | None"]


@dataclass
class Decisions:
    """The next step of each host of one run (or, with bench=False, of `sslbench hosts`: detect and plan only,
    nothing installed, hosts without OpenSSL planned as if they had it); each planned host's plan in `plans`."""

    collector: Collector
    options: PlanOptions
    interrupt: Interrupt
    may_wait: Callable[[], bool]  # may the host's task wait for its next step (no other host wants its worker)?
    no_answer: Callable[[str], str]  # why a host's step never came back
    no_provision: bool = False
    upgrade: bool = False
    bench: bool = True
    plans: dict[str, tuple[HostState, HostPlan]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.detect = stranded.with_collection(stages.detect_script())
        self.after: dict[Stage, AfterStage] = {
            Stage.DETECT: self._after_detect, Stage.INSTALL: self._after_install,
            Stage.DETECT_AGAIN: self._after_detect_again, Stage.LAUNCH: self._after_launch,
            Stage.POLL: self._after_poll, Stage.FORGET: self._after_forget}
        self.collected: list[str] = []  # stranded work dirs collected by this run (said at its end)

    def first_step(self) -> Step:
        return Step(Stage.DETECT, self.detect, time.monotonic())

    def report(self, flow: HostFlow, outcome: Outcome) -> None:
        """What the host's step printed decides its next step (`after`: one entry per stage)."""
        step = flow.step
        if step is None:
            return
        if self.interrupt.requested and outcome.kind != "ok":
            return  # cut short by the stop (its play cancelled, its session closed): the host is marked interrupted
        if step.stage in (Stage.COLLECT, Stage.COLLECT_FORGET):  # another run's logs: not this host's events
            flow.step = self._after_collect(flow, step, outcome)
            return
        event = HostEvent(kind=outcome.kind, host=flow.state.name, task=step.task, stdout=outcome.stdout,
                          message=outcome.stderr.strip(), rc=outcome.rc)
        now = time.monotonic()
        result = StepResult()
        if not step.stage.bench:
            if (outcome.kind == "unreachable" and TRANSIENT_SSH.search(outcome.stderr)
                    and flow.detect_retries < len(DETECT_RETRY_WAITS)):  # a busy SSH server: ask again soon
                step.due = now + DETECT_RETRY_WAITS[flow.detect_retries]
                flow.detect_retries += 1
                return
            self.collector.on_event(event, bench_phase=False)
        else:
            # read before its logs are stored: should that fail, what the step did is still known
            result = self.collector.step_result(event)
            if step.stage is not Stage.FORGET:
                flow.answer = result
            self.collector.on_event(event, bench_phase=True)
        flow.step = self.after[step.stage](flow, result, now)

    def _after_detect(self, flow: HostFlow, _result: StepResult, now: float) -> Step | None:
        state = flow.state
        if state.result.status != HOST_OK or self.interrupt.requested:
            return None
        if self.bench and self.collector.store_results:
            found, others = stranded.find(state.name, state.sections.get(stranded.SECTION, ""),
                                          self.collector.run_dir.parent)
            for work in others:
                print(f"sslbench: {state.name}: {work} holds logs of a run not in "
                      f"{self.collector.run_dir.parent}; `sslbench run --results` of that store collects them",
                      file=sys.stderr)
            flow.stranded = found
            if found:
                return self._collect_step(flow.stranded[0], again=True)
        return self._provision_or_plan(flow)

    def _collect_step(self, one: stranded.Stranded, again: bool = False) -> Step:
        """A poll of a stranded work dir (from the lapse on, `again` ships what polls shipped to a dead controller)."""
        return Step(Stage.COLLECT, f"sh {shlex.quote(one.work)}/run.sh poll{' again' if again else ''}\n",
                    time.monotonic())

    def _after_collect(self, flow: HostFlow, step: Step, outcome: Outcome) -> Step | None:
        """Each stranded work dir polled until nothing is pending, its logs stored in their run, then removed; then
        this run's own way. A failure leaves that dir where it is (said), not the host failed."""
        one = flow.stranded[0]
        said = protocol.state(outcome.stdout) if outcome.kind == "ok" else None
        if said is not None and step.stage is Stage.COLLECT:
            stranded.take(one, outcome.stdout)
            if said == "pending":
                return self._collect_step(one)
            return Step(Stage.COLLECT_FORGET, f"sh {shlex.quote(one.work)}/run.sh forget\n", time.monotonic())
        if step.stage is Stage.COLLECT_FORGET and outcome.kind == "ok":
            stranded.close(one, self.collector.run.run_id)
            tunnels = f" and {len(one.collected_tunnels)} tunnels" if one.collected_tunnels else ""
            self.collected.append(f"{flow.state.name}: {len(one.collected)} cells{tunnels} of run {one.run_dir.name}")
        else:
            print(f"sslbench: {flow.state.name}: cannot collect {one.work}: {one_line(outcome.stderr) or outcome.kind}",
                  file=sys.stderr)
        flow.stranded.pop(0)
        if self.interrupt.requested:
            return None
        return self._collect_step(flow.stranded[0], again=True) if flow.stranded else self._provision_or_plan(flow)

    def _provision_or_plan(self, flow: HostFlow) -> Step | None:
        state = flow.state
        state.provision = provisioning_decision(state, no_provision=self.no_provision, upgrade=self.upgrade)
        if state.result.status != HOST_OK:
            return None
        state.tunnel_install = tunnel_packages(state, self.options.tunnels, no_provision=self.no_provision)
        if (state.provision or state.tunnel_install) and self.bench:
            return Step(Stage.INSTALL, install_script(state), time.monotonic())
        return self._plan(state)

    def _after_install(self, flow: HostFlow, _result: StepResult, now: float) -> Step | None:
        if flow.state.result.status != HOST_OK or self.interrupt.requested:
            return None
        return Step(Stage.DETECT_AGAIN, self.detect, time.monotonic())

    def _after_detect_again(self, flow: HostFlow, _result: StepResult, now: float) -> Step | None:
        state = flow.state
        if state.result.status != HOST_OK or self.interrupt.requested:
            return None
        if not state.openssl_path:
            manager = state.provision.name if state.provision else "the package manager"
            fail(state, HOST_FAILED, f"installing openssl with {manager} reported success, "
                                     "but no openssl binary was found afterwards")
            return None
        return self._plan(state)

    def _plan(self, state: HostState) -> Step | None:
        """The host's cells planned (kept in `plans`), and its launch."""
        if not state.openssl_path and self.bench:
            return None
        plan = plan_for(state, self.options)
        self.plans[state.name] = (state, plan)
        if not self.bench:
            return None
        if self.collector.store_results:  # read back should this run die before its run.json is whole
            stranded.save_plan(self.collector.run_dir, state.dir_name, plan)
        progress = self.collector.view.host(state.name)
        progress.planned = {c.id: c.seconds for c in plan.cells} | {t.id: t.eta_seconds for t in plan.tunnels}
        progress.total = len(plan.cells) + len(plan.tunnels)
        wait = 0  # the launch waits for a short matrix when the task may wait anyway: one poll fewer, none early
        if self.may_wait() and plan.eta_seconds <= WAIT_IN_LAUNCH:
            wait = int(plan.eta_seconds * 1.5 + FIRST_POLL_MARGIN + 5)
        return self._launch_step(state, plan, wait)

    def _launch_step(self, state: HostState, plan: HostPlan, wait: int) -> Step:
        script = launcher_script(self.collector.run.run_id, plan, state.openssl_path or "openssl",
                                 self.options.idle_wait, wait, self.lease(progress_wait(plan)))
        return Step(Stage.LAUNCH, script, time.monotonic())

    def _after_launch(self, flow: HostFlow, result: StepResult, now: float) -> Step | None:
        state = flow.state
        if result.problem == HOST_FAILED:
            fail(state, HOST_FAILED, result.message)
            return None
        if result.problem == HOST_UNREACHABLE:
            if flow.launch_retries < len(RETRY_WAITS) and not self.interrupt.requested:
                flow.launch_retries += 1
                assert flow.step is not None
                return Step(Stage.LAUNCH, flow.step.script, now + RETRY_WAITS[flow.launch_retries - 1])
            fail(state, HOST_UNREACHABLE, result.message)
            return None
        if result.state is None or state.result.status != HOST_OK:
            return None
        self.collector.view.host(state.name).phase = "bench"
        self.collector.view.refresh(state.name)
        plan = self.plans[state.name][1]
        every = progress_wait(plan)
        flow.schedule = Schedule(due=now + min(plan.eta_seconds + FIRST_POLL_MARGIN, every),
                                 deadline=now + deadline_after(plan, self.options), every=every)
        if result.state == "started":
            return self.poll_step(state.name, flow.schedule.due, every=every)
        return self._polled(flow, result, now)  # the launch waited: it said what a poll says

    def _after_poll(self, flow: HostFlow, result: StepResult, now: float) -> Step | None:
        """After a lost answer, the next poll asks for what it carried again (`poll again`)."""
        if result.problem == HOST_UNREACHABLE or not result.heard:  # (an output cut short, without its state line)
            flow.phase = Phase.ANSWER_LOST
        elif result.state is not None:
            flow.phase = Phase.LAUNCHED
        return self._polled(flow, result, now)

    def _after_forget(self, flow: HostFlow, result: StepResult, now: float) -> Step | None:
        """Everything is here: a forget whose answer was lost must not fail the host (a poll after it would find no
        work dir); the cleanup play removes the dir at the end, if it is still there."""
        if result.problem is not None:
            flow.phase = Phase.FORGET_FAILED
        # what the poll before it said (finished) stands, unless the forget said otherwise
        said = result if result.state is not None else flow.answer
        flow.answer = dataclasses.replace(said, problem=None)
        assert flow.schedule is not None
        done = judge_poll(self.collector, flow.state.name, flow.schedule, now, flow.answer,
                          self.no_answer(flow.state.name))
        return None if done else self.poll_step(flow.state.name, flow.schedule.due, again=flow.phase.resends,
                                                 every=flow.schedule.every)

    def _polled(self, flow: HostFlow, result: StepResult, now: float) -> Step | None:
        """After a poll (or a launch that waited): forget once all is shipped, else when the host is asked again."""
        name = flow.state.name
        if result.state == "finished" and result.problem is None:
            return Step(Stage.FORGET, runner_command(self.collector.run.run_id, name, "forget",
                                                     self.lease(flow.schedule.every if flow.schedule else 0)), now)
        assert flow.schedule is not None  # polled, so launched
        done = judge_poll(self.collector, name, flow.schedule, now, result, self.no_answer(name))
        return None if done else self.poll_step(name, flow.schedule.due, again=flow.phase.resends,
                                                 every=flow.schedule.every)

    def poll_step(self, host: str, due: float, again: bool = False, every: float = PROGRESS_WAITS[1]) -> Step:
        """A poll of `host`, renewing its lease. It never removes the work dir itself: the controller may die
        between its answer and saving the logs in it; a `forget` follows once they are saved."""
        return stages.poll_step(self.collector.run.run_id, host, due, again=again, lease_words=self.lease(every))

    def lease(self, every: float) -> str:
        """The lease a step renews (stages.lease): the host is asked again within `every`, or after retries; over
        the same session when its task may wait for its next step."""
        return stages.lease(every, sum(RETRY_WAITS) + DIED_RECHECK, held=self.may_wait())
