"""The bench phase: launch every planned host once, then collect in short passes scheduled from each host's ETA.

No host holds an Ansible worker while its cells run: a launch pass ships each host one script (the runner, the
conditions script and its cells: playbooks/files/sslbench-run.sh starts it detached) and returns; then collect
passes (one `run.sh poll` per host due, one ansible-playbook run per pass) bring progress and finished logs back.
So `--forks` caps concurrent SSH sessions, whatever the fleet's size, and the controller works only in passes.

When a host is next asked (`Schedule`): at its planned ETA, then from the progress it reported (what is left of
the cell it runs and of the cells after it), never sooner than MIN_WAIT nor later than its progress_wait (so
progress and logs keep coming on long matrices). A host is declared dead only on evidence: its runner gone without having
written `finished`, seen on two polls in a row; an SSH failure is retried after RETRY_WAITS before the host is
called unreachable. Ctrl-C stops openssl on the hosts and ships what finished (playbooks/cleanup.yml).
"""
from __future__ import annotations

import hashlib
import shlex
import time
from dataclasses import dataclass

from orchestrator import store
from orchestrator.fleet import SNAPSHOT_SECONDS, Collector, HostState, PlanOptions, died_reason, fail
from orchestrator.matrix import HostPlan, cells_text
from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE
from orchestrator.runner import CLEANUP_PLAYBOOK, PLAYBOOK_DIR, Driver, Interrupt

MIN_WAIT = 1.0  # seconds between two polls of one host, at least
# and at most a quarter of its matrix (but not under 10 s, nor over 60 s): progress and finished logs keep coming
# on long matrices, and a host that drops off loses only what it measured since the last poll
PROGRESS_WAITS = (10.0, 60.0)
# Hosts due within this many seconds of the first are asked in the same pass, or within as long as the last pass
# took if that was longer: a host left out would be asked that much later anyway, at the cost of one more pass.
BATCH = 2.0
FIRST_POLL_MARGIN = 1.0  # after a host's planned cells: the snapshots around them take about this much
RETRY_WAITS = (5.0, 10.0, 20.0)  # an SSH failure is asked again after these waits before `unreachable`
DIED_RECHECK = 2.0  # a runner that looked dead is looked at again after this
HEREDOC = "SSLBENCH_{}_EOF"


def work_dir(run_id: str, host: str) -> str:
    """A host's work dir for the run: the run id's [0-9A-Za-z-] and a hash of the inventory name, so that one box
    listed under two names (its LAN and WAN address, two aliases) runs two launchers that do not share a dir."""
    name = hashlib.sha1(host.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"/tmp/sslbench.{''.join(c for c in run_id if c.isalnum() or c == '-')}.{name}"


def work_dirs(run_id: str, hosts: list[str]) -> dict[str, dict[str, str]]:
    """The extra vars of the collect and cleanup plays: each host's work dir."""
    return {"sslbench_workdirs": {host: work_dir(run_id, host) for host in hosts}}


def launcher_script(run_id: str, plan: HostPlan, openssl: str, idle_max: int) -> str:
    """The one script a host gets: it writes the work dir (the runner, the conditions script, its cells) and
    starts the runner detached. Asked again after a lost answer, it finds its runner and says it started."""
    files = PLAYBOOK_DIR / "files"
    parts = [
        "#!/bin/sh",
        f"# sslbench launcher, run {run_id}: the work dir and the runner (orchestrator/bench.py writes this)",
        "umask 077",
        f"dir={shlex.quote(work_dir(run_id, plan.host))}",
        'if [ -s "$dir/pid" ]; then echo "@@sslbench-state started"; exit 0; fi  # launched before: answer lost',
        'rm -rf "$dir"',
        # a file cut short (/tmp full) must not run: say so, and leave no half work dir filling /tmp
        'cannot() { echo "sslbench: cannot write $1 in $dir (is /tmp full or read-only?)" >&2; cd /; rm -rf "$dir";'
        ' exit 1; }',
        'mkdir "$dir" && cd "$dir" || cannot "the work dir"',
    ]
    for name, text in (("run.sh", (files / "sslbench-run.sh").read_text()),
                       ("conditions.sh", (files / "conditions.sh").read_text()), ("cells.txt", cells_text(plan.cells))):
        marker = HEREDOC.format(name.split(".")[0].upper())
        parts += [f"cat > {name} <<'{marker}' || cannot {name}", text.rstrip("\n"), marker]
    parts.append(f"exec sh ./run.sh launch {shlex.quote(openssl)} {int(idle_max)}")
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


def run_bench(driver: Driver, collector: Collector, plans: dict[str, tuple[HostState, HostPlan]],
              options: PlanOptions, interrupt: Interrupt) -> None:
    """Launch every planned host, collect until each is done (or failed), finish them all."""
    for name, (_state, plan) in plans.items():
        progress = collector.view.host(name)
        progress.planned = {c.id: c.seconds for c in plan.cells}
        progress.total = len(plan.cells)
    if not plans or interrupt.requested:
        return
    run_id = collector.run.run_id
    collector.bench_phase = True
    began = time.monotonic()
    launched = launch(driver, collector, plans, options, interrupt)
    last_pass = time.monotonic() - began
    # first asked when its cells should be done, counted from its own start (the launch pass takes a while on a
    # large fleet); the idle gate usually passes at once, and the poll says if not
    schedule = {}
    for name in launched:
        started, plan = collector.hosts[name].poll_at, plans[name][1]
        every = progress_wait(plan)
        schedule[name] = Schedule(due=started + min(plan.eta_seconds + FIRST_POLL_MARGIN, every),
                                  deadline=started + deadline_after(plan, options), every=every)
    while schedule and not interrupt.requested:
        first = min(s.due for s in schedule.values())
        if not _wait_until(first, collector, interrupt):
            break
        due = sorted(name for name, s in schedule.items() if s.due <= first + max(BATCH, last_pass))
        for name in due:
            collector.hosts[name].poll_state = collector.hosts[name].poll_problem = None
        began = time.monotonic()
        driver.play(tags="collect", extravars=work_dirs(run_id, due), on_event=collector.on_event,
                    hosts=due)
        now = time.monotonic()
        last_pass = now - began
        for name in due:
            if _after_poll(collector, name, schedule[name], now):
                del schedule[name]
    left = left_behind(collector, launched, interrupt.requested)
    if left:
        driver.play(playbook=CLEANUP_PLAYBOOK, extravars=work_dirs(run_id, left),
                    on_event=collector.on_event, cancellable=False, hosts=left)


def left_behind(collector: Collector, launched: list[str], interrupted: bool) -> list[str]:
    """The hosts whose runner or work dir may still be there: stopped before they finished (Ctrl-C), or failed
    (a runner that died, one far slower than planned, a poll that failed) - its openssl would go on burning a
    router's CPU and its work dir filling a tmpfs /tmp. Not those unreachable, nor those done (`forget` cleaned)."""
    hosts = collector.hosts
    return [name for name in launched
            if (interrupted and not hosts[name].finished) or hosts[name].result.status == HOST_FAILED]


def launch(driver: Driver, collector: Collector, plans: dict[str, tuple[HostState, HostPlan]],
           options: PlanOptions, interrupt: Interrupt) -> list[str]:
    """One launch pass (retried for SSH failures, RETRY_WAITS apart); the hosts whose runner started."""
    paths: dict[str, str] = {}  # host -> its launcher, relative to the playbook (the project dir travels to site workers)
    for name, (state, plan) in plans.items():
        path = driver.shipped_dir / f"launch-{len(paths)}-{store.safe_name(name)}.sh"
        path.write_text(launcher_script(collector.run.run_id, plan, state.openssl_path or "openssl",
                                        options.idle_wait))
        paths[name] = str(path.relative_to(driver.project_dir))
    todo = sorted(plans)
    for wait in (0.0, *RETRY_WAITS):
        if wait and not _wait_until(time.monotonic() + wait, collector, interrupt):
            break
        for name in todo:
            collector.hosts[name].poll_state = collector.hosts[name].poll_problem = None
        driver.play(tags="launch", extravars={"sslbench_launchers": {n: paths[n] for n in todo}},
                    on_event=collector.on_event, hosts=todo)
        for name in todo:
            state = collector.hosts[name]
            if state.poll_problem == HOST_FAILED:
                fail(state, HOST_FAILED, state.poll_message)
        todo = [n for n in todo if collector.hosts[n].poll_problem == HOST_UNREACHABLE]
        if not todo or interrupt.requested:
            break
    for name in todo:
        state = collector.hosts[name]
        fail(state, HOST_UNREACHABLE, state.poll_message)
    launched = [name for name in sorted(plans)
                if collector.hosts[name].poll_state == "started" and collector.hosts[name].result.status == HOST_OK]
    for name in launched:
        collector.view.host(name).phase = "bench"
        collector.view.refresh(name)
    return launched


def _after_poll(collector: Collector, name: str, schedule: Schedule, now: float) -> bool:
    """Read what the pass said about one host: True when it is done with (finished or failed)."""
    state = collector.hosts[name]
    if state.poll_state is None and state.poll_problem is None:  # no word at all: the pass itself failed
        state.poll_problem = HOST_UNREACHABLE  # (a site worker that died, ssh to it refused ...)
        state.poll_message = "no answer: the pass that asked it failed (a site worker gone?)"
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
