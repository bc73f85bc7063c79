"""What the hosts of one run say, and what follows from it: facts (detect), whether and how to install OpenSSL,
each host's plan, progress, shipped logs, measurements, validity flags. orchestrator/run/engine.py decides each host's
steps and feeds their outputs here as events (`Collector.on_event`); commands read the result: `sslbench run`
stores what it finds, `sslbench hosts` only looks.
With storing on, each host's host.json is saved as soon as it finishes, so a crash or Ctrl-C loses nothing measured.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator import kinds, store
from orchestrator.evidence import clusters, validity
from orchestrator.parse import protocol
from orchestrator.run import budget, matrix, platforms, tunnels
from orchestrator.run.matrix import CellPlan, HostPlan, MatrixRequest
from orchestrator.model import (ERROR, FORWARD, HOST_FAILED, HOST_OK, HOST_UNREACHABLE, INCOMPLETE, SPEED, TUNNEL,
                                UNSUPPORTED, HostResult, InstalledPackage, Measurement, OpenSSLBuild, ParsedLog, Run)
from orchestrator.evidence.conditions import read_snapshot_lines
from orchestrator.parse.cpuinfo import parse_cpuinfo
from orchestrator.parse.osinfo import detect_os
from orchestrator.parse.packages import installed_versions
from orchestrator.parse.speed import parse_openssl_build
from orchestrator.parse.tunnel import TunnelOutput, algorithm_of
from orchestrator.run.progress import ProgressView
from orchestrator.run.config import PlanOptions, RunConfig
from orchestrator.run.inventory import vault_hint
from orchestrator.run.runner import GENERIC_FAILURE, Driver, HostEvent, Interrupt
from orchestrator.run.stages import Stage

FACTS_FILE = "facts.txt"
# What conditions.sh reported around the matrix (docs/trust.md), shipped like cell logs and stored as
# <name>.txt beside facts.txt: not *.log, which are the cells' raw outputs.
CONDITION_LOGS = ("conditions-idle", "conditions-before", "conditions-after")
SNAPSHOT_SECONDS = 3  # each of the before/after snapshots (openssl engine/providers: ~1 s under qemu)
# The parts of a cell's log that say why openssl refused it (unknown algorithm / option).
_REFUSED = re.compile(r"unknown algorithm|bad option|unknown option|invalid (cipher|digest|option)|not supported|"
                      r"no such|unsupported", re.IGNORECASE)


# --- per-host state ----------------------------------------------------------------------------

@dataclass
class HostState:
    name: str
    result: HostResult
    sections: dict[str, str] = field(default_factory=dict)
    openssl_path: str | None = None
    package_managers: list[str] = field(default_factory=list)
    logical_cpus: int | None = None
    provision: platforms.PackageManager | None = None  # how OpenSSL is installed there
    plan: HostPlan | None = None
    finished: bool = False  # final status decided, run.json written
    dir_name: str = ""  # the host's directory in the run (store.safe_name, made unique)
    cells_done: set[str] = field(default_factory=set)
    pins: list[tuple[int, str]] = field(default_factory=list)  # (CPU, cluster label) for single-thread cells
    pin_note: str | None = None  # why a big.LITTLE host is not pinned
    budget: budget.BudgetPlan | None = None
    conditions_texts: dict[str, str] = field(default_factory=dict)  # CONDITION_LOGS name -> text
    cell_results: dict[str, tuple[list[Measurement], str]] = field(default_factory=dict)  # id -> (records, evidence)
    tunnel_tools: set[str] = field(default_factory=set)  # detect.sh's `tunnel tools`
    tunnel_install: tuple[str, ...] = ()  # the tunnels' packages the install step adds


@dataclass(frozen=True)
class StepResult:
    """What one step said, read once from its event: orchestrator/run/engine.py decides the host's next step from
    it (a launch's, a poll's or a forget's; a detect's or an install's says what it must in the host's facts)."""

    state: str | None = None  # the runner's last state line (protocol.state), None when the output has none
    problem: str | None = None  # HOST_UNREACHABLE / HOST_FAILED: the launch, poll or forget itself failed
    message: str = ""  # that problem's words, else what a dead runner said last

    @property
    def heard(self) -> bool:
        """Any word at all: a state, or a failure with its words (an output cut short has neither)."""
        return self.state is not None or self.problem is not None


def apply_facts(state: HostState, detect_stdout: str) -> None:
    """Fill the host's facts from the detect task's output (text in, facts out; parsers do the reading)."""
    sections = protocol.split_sections(detect_stdout)
    state.sections = sections
    files = {key: sections[key] for key in (*platforms.RELEASE_FILES, *platforms.RELEASE_COMMANDS) if key in sections}
    state.result.os = detect_os(files)
    state.result.cpu = parse_cpuinfo(sections.get("/proc/cpuinfo", ""))
    state.openssl_path = (sections.get("openssl") or "").strip() or None
    state.result.openssl = (parse_openssl_build(sections.get("openssl version -a", "")) if state.openssl_path
                            else OpenSSLBuild())
    state.package_managers = [line.strip() for line in sections.get("package managers", "").splitlines()
                              if line.strip()]
    state.logical_cpus = _first_int(sections.get("nproc")) or state.result.cpu.logical_cpus
    state.tunnel_tools = {line.strip() for line in sections.get("tunnel tools", "").splitlines() if line.strip()}
    topology = read_snapshot_lines(sections.get("cpu clusters", "").splitlines(), "detect")
    state.pins, state.pin_note = clusters.host_pins(topology, state.result.cpu)


def _first_int(text: str | None) -> int | None:
    match = re.search(r"\d+", text or "")
    return int(match.group()) if match else None


def provisioning_decision(state: HostState, *, no_provision: bool, upgrade: bool) -> platforms.PackageManager | None:
    """How to install OpenSSL, None when nothing is needed; a failure reason is set on the host when OpenSSL is
    missing and cannot be installed."""
    if state.openssl_path and not upgrade:
        return None
    if no_provision:
        if not state.openssl_path:
            fail(state, HOST_FAILED, "openssl is not installed and --no-provision forbids installing it")
        return None
    manager = platforms.choose_package_manager(state.package_managers)
    if manager is None and not state.openssl_path:
        known = ", ".join(pm.name for pm in platforms.PACKAGE_MANAGERS)
        fail(state, HOST_FAILED, f"openssl is not installed and the host has no package manager sslbench knows "
                                 f"({known}); install openssl by hand")
    return manager


def tunnel_packages(state: HostState, groups: tuple[str, ...], *, no_provision: bool) -> tuple[str, ...]:
    """The tunnels' packages to install: none when no tunnel is asked for, --no-provision, no package manager
    sslbench knows, or every tool the tunnels asked for is there (tunnel.sh says what a host still lacks)."""
    manager = platforms.choose_package_manager(state.package_managers)
    if not groups or no_provision or manager is None or manager.tunnels is None:
        return ()
    needed = {"ip-netns", "iperf3"} | ({"wg"} if "wireguard" in groups else set()) | (
        {"openvpn"} if "openvpn" in groups else set())
    return () if needed <= state.tunnel_tools else manager.tunnels.packages(groups)


def install_script(state: HostState) -> str:
    """The install step: OpenSSL (its failure fails the host), the tunnels' packages (theirs is said, and the
    tunnels then say what they lack), then the versions now installed, after protocol.INSTALLED."""
    manager = state.provision or platforms.choose_package_manager(state.package_managers)
    parts = [f"{state.provision.install} || exit $?"] if state.provision else []
    if state.tunnel_install and manager and manager.tunnels:
        parts.append(f"{manager.tunnels.add} {' '.join(state.tunnel_install)} || "
                     "echo 'sslbench: not every tunnel package installed' >&2")
    asked = installed_names(state)
    if manager and manager.tunnels and asked:
        parts.append(f"echo; echo {protocol.INSTALLED}; {manager.tunnels.query} {' '.join(asked)} 2>/dev/null; :")
    return "\n".join(parts) + "\n"


def installed_names(state: HostState) -> tuple[str, ...]:
    return ((state.provision.package,) if state.provision else ()) + state.tunnel_install


def fail(state: HostState, status: str, reason: str) -> None:
    if state.result.status == HOST_OK:
        state.result.status, state.result.reason = status, reason


def cell_measurements(cell: CellPlan, text: str, openssl_version: str | None, rc: int | None = None) -> list[Measurement]:
    """The records of one cell's log; a cell openssl refused becomes unsupported with openssl's words."""
    parse = kinds.hook(kinds.get(SPEED).parser)  # the speed kind's parser (orchestrator/kinds/speed.py)
    parsed: ParsedLog = parse(text, threads=cell.threads, api=cell.api, algorithm=cell.algorithm)
    found = []
    for m in parsed.measurements:
        if cell.sizes and m.block_size is not None and m.block_size not in cell.sizes:
            continue  # `--sizes` without -bytes (1.0.x): keep only the sizes asked for
        m.repeat = cell.repeat
        m.cpu = cell.cpu  # the cluster a pinned cell ran on: its own row in tables and diffs
        m.openssl_version = m.openssl_version or openssl_version
        found.append(m)
    if found and not rc:
        return found
    refused = [line.strip() for line in text.splitlines() if _REFUSED.search(line)]
    status = UNSUPPORTED if refused else ERROR
    detail = "; ".join(refused[:2]) or _tail(text) or f"openssl exited with {rc}"
    reason = f"openssl speed {' '.join(cell.args[1:])}: {detail}"
    if found:  # partial table (e.g. killed mid-cell): keep what it measured, say it failed
        for m in found:
            m.reason = reason
        return found
    sizes = cell.sizes or (None,)
    return [Measurement(algorithm=cell.algorithm, block_size=size, threads=cell.threads, api=cell.api,
                        openssl_version=openssl_version, status=status, reason=reason, repeat=cell.repeat,
                        cpu=cell.cpu)
            for size in sizes]


def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(protocol.without_markers(text)[-lines:])[:400]


def failure_reason(event: HostEvent) -> str:
    """One line for the report: which step, and what the host said (last lines: opkg's errors are at the end)."""
    state = protocol.state(event.stdout)
    if state == "died":
        return f"{event.task}: {died_reason(protocol.runner_output(event.stdout))}"
    if state == "stopped":
        return f"{event.task}: the benchmark was stopped on the host"
    said = _tail(event.stdout, 4)
    what = "" if event.message == GENERIC_FAILURE else one_line(event.message, last=4)[:400]
    parts = [p for p in (what, said) if p]
    if event.rc not in (None, 0):
        parts.append(f"exit code {event.rc}")
    return f"{event.task}: {' | '.join(parts) or 'failed'}"


def unreachable_reason(event: HostEvent) -> str:
    """ssh's words on one line, as failure_reason's (`…during banner exchange | Connection to … timed out`): a
    reason is one row of every table, and a line break split it in Markdown."""
    return f"{event.task}: {one_line(event.message) or 'unreachable'}"


def died_reason(said: str) -> str:
    """A runner gone without `finished`, with its last words (run.sh's stderr) on one line."""
    said = one_line(said)
    return "the benchmark script on the host died" + (
        f"; it said: {said}" if said else " (killed, out of memory, or /tmp wiped?)")


def one_line(text: str, last: int | None = None) -> str:
    """A message's lines (its `last` ones) on one line: a reason is one row of every table."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-last:] if last else lines)


# --- the run -----------------------------------------------------------------------------------

class Collector:
    """Turns host events into facts, progress, stored logs and measurements. With `store_results` (a run) the raw
    logs and run.json go to run_dir as they come; without it (a preview: `sslbench hosts`) nothing is written."""

    def __init__(self, run: Run, run_dir: Path, view: ProgressView, *, store_results: bool = True) -> None:
        self.run = run
        self.run_dir = run_dir
        self.view = view
        self.store_results = store_results
        self.hosts: dict[str, HostState] = {}
        self.exit_codes: dict[str, dict[str, int]] = {}

    def host(self, name: str) -> HostState:
        if name not in self.hosts:
            state = HostState(name=name, result=HostResult(host=name))
            state.dir_name = self._unique_dir_name(name)
            self.hosts[name] = state
            self.run.hosts.append(state.result)
        return self.hosts[name]

    def _unique_dir_name(self, name: str) -> str:
        """store.safe_name, plus a short hash when two host names sanitise to the same directory, or to two that
        differ only in case (one directory on a case-insensitive file system: macOS, Windows)."""
        label = store.safe_name(name)
        if any(s.dir_name.casefold() == label.casefold() for s in self.hosts.values()):
            label = f"{label}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
        return label

    def host_path(self, state: HostState) -> Path:
        return store.host_dir(self.run_dir, state.dir_name)

    @staticmethod
    def step_result(event: HostEvent) -> StepResult:
        """What a launch, poll or forget said, for the engine to decide the host's next step from. Read before
        `on_event` takes in its logs: should the results be unwritable, the engine still knows what the host did."""
        if event.kind == "unreachable" and not event.ignored:
            return StepResult(problem=HOST_UNREACHABLE, message=unreachable_reason(event))
        if event.kind == "failed" and not event.ignored:
            return StepResult(problem=HOST_FAILED, message=failure_reason(event))
        if event.kind == "ok" and protocol.STATE in event.stdout:
            return StepResult(state=protocol.state(event.stdout), message=protocol.runner_output(event.stdout))
        return StepResult()

    def on_event(self, event: HostEvent, bench_phase: bool = False) -> None:
        """Take in what one event of a host said: facts, progress, logs, a failure. `bench_phase`: a launch, poll
        or forget, where one failure is not the end of a host (the engine decides from its `step_result`), rather
        than a detect or install, where it is."""
        state = self.host(event.host)
        progress = self.view.host(event.host)
        changed = False
        if event.kind == "start" and progress.phase == "waiting":
            progress.phase, changed = "detect", True
        if event.kind == "ok" and event.task == Stage.INSTALL.value:
            progress.phase, progress.message, changed = "provision", "packages installed", True
            self._installed(state, event.stdout)
        # a launch or poll: one failed step is not the end of a host (orchestrator/run/engine.py retries)
        engines = bench_phase and event.kind in ("unreachable", "failed") and not event.ignored
        if event.kind == "unreachable" and not engines:
            fail(state, HOST_UNREACHABLE, unreachable_reason(event))
            progress.phase, progress.message, changed = "unreachable", event.message[:80], True
        elif event.kind == "failed" and not event.ignored and not engines:
            fail(state, HOST_FAILED, failure_reason(event))
            progress.phase, progress.message, changed = "failed", (state.result.reason or "")[:80], True
        if protocol.SECTION in event.stdout and event.kind == "ok":
            apply_facts(state, event.stdout)
            self._save_facts(state, event.stdout)
        if protocol.PROGRESS in event.stdout and not state.finished:  # a finished host's result is final
            text = protocol.progress_part(event.stdout)
            self.exit_codes.setdefault(event.host, {}).update(protocol.exit_codes(text))
            if progress.phase in ("waiting", "detect", "provision"):
                progress.phase = "bench"
            changed = progress.update(text) or changed
            for cell_id, log in protocol.split_logs(event.stdout):
                self.add_log(state, cell_id, log)
        if changed:
            self.view.refresh(event.host)

    def add_log(self, state: HostState, cell_id: str, text: str) -> None:
        if state.plan is None or cell_id in state.cells_done:
            return
        if cell_id in CONDITION_LOGS:
            if cell_id not in state.conditions_texts:
                self._store(state, f"{cell_id}.txt", text)
                state.conditions_texts[cell_id] = text
            return
        if any(t.id == cell_id for t in state.plan.tunnels):
            self._tunnel_log(state, cell_id, text)
            return
        cell = next((c for c in state.plan.cells if c.id == cell_id), None)
        if cell is None or not matrix.SAFE_TOKEN.match(cell_id):
            return  # only files the plan named: a host cannot choose our file names
        self._store(state, f"{cell_id}.log", text)  # raw: openssl's output, then conditions.sh's evidence
        output, evidence = protocol.split_evidence(text)
        rc = self.exit_codes.get(state.name, {}).get(cell_id)
        found = cell_measurements(cell, output, state.result.openssl.version, rc)
        state.result.measurements.extend(found)
        state.cell_results[cell_id] = (found, evidence)
        state.cells_done.add(cell_id)
        if self.store_results and not state.finished:  # kept at once: a run killed later still has this cell
            store.save_unfinished_host(self.run_dir, state.dir_name, state.result)

    @staticmethod
    def _installed(state: HostState, stdout: str) -> None:
        """run.json's record of what the install step installed, by which manager, at which version: the packages
        the manager then lists (one it could not install, missing from its repositories, is not there)."""
        manager = state.provision or platforms.choose_package_manager(state.package_managers)
        versions = installed_versions(protocol.installed_part(stdout), installed_names(state))
        state.result.installed = [InstalledPackage(name, versions[name], manager.name if manager else None)
                                  for name in installed_names(state) if name in versions]

    def _tunnel_log(self, state: HostState, tunnel_id: str, text: str) -> None:
        """A measured tunnel's log: stored raw beside the cells' logs, read by add_tunnel_log."""
        self._store(state, f"{tunnel_id}.log", text)
        add_tunnel_log(state.result, tunnel_id, text)
        state.cells_done.add(tunnel_id)
        if self.store_results and not state.finished:
            store.save_unfinished_host(self.run_dir, state.dir_name, state.result)

    def _store(self, state: HostState, name: str, text: str) -> None:
        if not self.store_results:
            return
        path = self.host_path(state) / name
        path.write_text(text, encoding="utf-8")
        state.result.logs.append(str(path.relative_to(self.run_dir)))

    def _save_facts(self, state: HostState, stdout: str) -> None:
        if not self.store_results:
            return
        path = self.host_path(state) / FACTS_FILE
        path.write_text(stdout, encoding="utf-8")
        rel = str(path.relative_to(self.run_dir))
        if rel not in state.result.logs:
            state.result.logs.append(rel)

    def finish(self, state: HostState, reason_if_unfinished: str | None = None) -> None:
        """Decide the host's final status and store it (its host.json; run.json is written at the end)."""
        if state.finished:
            return
        if reason_if_unfinished and state.result.interrupted:  # where the stop caught it, in its reason too
            reason_if_unfinished = f"{reason_if_unfinished} during {state.result.interrupted}"
            if state.plan is None:  # detect or provision: nothing measured, and not a good host either
                fail(state, HOST_FAILED, reason_if_unfinished)
        if state.plan is not None:
            planned = [c.id for c in state.plan.cells] + [t.id for t in state.plan.tunnels]
            missing = [i for i in planned if i not in state.cells_done]
            if missing and state.result.status == HOST_OK:
                fail(state, HOST_FAILED, reason_if_unfinished or
                     f"{len(missing)} of {len(planned)} cells did not finish")
            if missing:
                state.result.flags.append(INCOMPLETE)
            judge_conditions(state)
        state.finished = True
        if self.store_results:
            store.save_host(self.run_dir, state.dir_name, state.result)

    def save(self) -> None:
        if self.store_results:
            store.save_run(self.run_dir, self.run)


def judge_conditions(state: HostState) -> None:
    """Validity flags from conditions.sh's evidence: host-wide (idle gate, before/after the matrix), then
    per cell (its wrapper's evidence); verdicts with their reasons go to HostResult.conditions."""
    texts = state.conditions_texts
    if texts:
        validity.flag_host(state.result, texts.get("conditions-before", ""), texts.get("conditions-after", ""),
                           texts.get("conditions-idle", ""))
    host_before = validity.StoredConditions.from_dict(state.result.conditions).before
    verdicts = {}
    for cell in state.plan.cells if state.plan else []:
        found, evidence = state.cell_results.get(cell.id, ([], ""))
        if not evidence:
            continue  # no conditions.sh on the host, or the cell was cut short
        verdict = validity.flag_cell(found, evidence, threads=cell.threads,
                                     nominal=validity.nominal_seconds(cell.args, cell.kind == "pubkey"),
                                     host_before=host_before, pinned_cpu=cell.pin)
        verdicts[cell.id] = verdict.to_dict()
    if verdicts:
        state.result.conditions["cells"] = verdicts


def plan_for(state: HostState, options: PlanOptions | MatrixRequest) -> HostPlan:
    """The host's cells: its OpenSSL's capabilities, pinned per cluster on big.LITTLE hosts, then its tunnels (their
    -t the cells' seconds), both fitted into --budget (the idle gate and snapshots count as fixed time) if given."""
    if isinstance(options, MatrixRequest):
        options = PlanOptions(request=options)
    plan_host = kinds.hook(kinds.get(SPEED).planner)  # the speed kind's planner: run/matrix.py's plan_host
    plan_tunnels = kinds.hook(kinds.get(TUNNEL).planner)  # the tunnel kind's planner: run/tunnels.py's

    def planner(request: MatrixRequest) -> HostPlan:
        plan: HostPlan = plan_host(state.name, request, openssl_version=state.result.openssl.version or
                                   state.result.openssl.version_line, logical_cpus=state.logical_cpus, pins=state.pins)
        plan.tunnels = plan_tunnels(options.tunnels, logical_cpus=state.logical_cpus, seconds=request.seconds,
                                    repeat=request.repeat)
        return plan

    if options.budget_seconds is None:
        plan = planner(options.request)
    else:
        state.budget = budget.fit_budget(options.request, planner, options.budget_seconds,
                                         fixed_seconds=options.idle_wait + 2 * SNAPSHOT_SECONDS)
        plan = state.budget.plan
        plan.notes.append(f"budget: {state.budget.message}")
    if state.pins:
        plan.notes.append("single-thread cells pinned to " + ", ".join(f"CPU {cpu} ({label})"
                                                                         for cpu, label in state.pins))
    elif state.pin_note:
        plan.notes.append(state.pin_note)
    state.plan = plan
    state.result.measurements.extend(plan.unsupported)
    return plan


def add_tunnel_log(result: HostResult, tunnel_id: str, text: str) -> None:
    """A tunnel's log (tunnel.sh's output) read into the host's measurements, tunnel methods and evidence: come
    back live or collected from a stranded work dir (run/stranded.py). The tunnel kind's parser: parse_tunnel."""
    found: TunnelOutput = kinds.hook(kinds.get(TUNNEL).parser)(text)
    if not found.measurements:  # the script said nothing readable: the host's words stay in the log
        name, implementation = algorithm_of(tunnel_id.removeprefix(tunnels.PREFIX))
        found.measurements.append(Measurement(algorithm=name, operation=FORWARD, status=ERROR, kind=TUNNEL,
                                              implementation=implementation,
                                              reason=f"tunnel.sh printed no result: {one_line(text, 2)}"))
    result.measurements.extend(found.measurements)
    result.tunnels.extend(found.methods)
    result.tunnel_evidence.extend(found.evidence)


def no_hosts_reason(driver: Driver, status: str) -> str:
    """Why a run reached no host: Ansible failed before any (a vault, a broken playbook...), or the inventory and
    pattern matched none (Ansible only warns of an inventory it cannot read: say what it said)."""
    lines = protocol.without_markers(driver.last_stdout)
    if status != "successful":
        errors = [line for line in lines if "ERROR" in line]
        said = " | ".join(errors[-2:]) or _tail(driver.last_stdout, 4) or status
        hint = vault_hint(said, driver.ansible)
        return f"Ansible failed before reaching any host: {said.rstrip('.') if hint else said}{hint}"
    warned = [next((line.removeprefix("[WARNING]: ") for line in lines if re.search(prefix, line)), "")
              for prefix in (r"^\[WARNING\]: (Failed|Unable) to parse", r"^Origin: ")]
    return (f"no hosts matched in {driver.inventory}" + (f" with --limit {driver.limit}" if driver.limit else "") +
            (f" (Ansible: {' | '.join(filter(None, warned))})" if any(warned) else "") +
            "; check the inventory and the host pattern")


def record_matrix(run: Run, config: RunConfig, plans: dict[str, tuple[HostState, HostPlan]],
                  host_worker: Mapping[str, str]) -> None:
    """run.json's `matrix`, written whole at the end of a run from its config: the request (what the run began with),
    the idle gate, the budget, what each host was planned to run and, with site workers, which ran each host. Stored
    runs keep this layout, so it is written as they have it."""
    record = config.plan.request.to_dict()
    record["idle_wait"] = config.plan.idle_wait
    if config.plan.budget_seconds is not None:
        record["budget_seconds"] = config.plan.budget_seconds
    record["hosts"] = {name: {"openssl": plan.capabilities.label, "cells": [c.to_dict() for c in plan.cells],
                              "eta_seconds": plan.eta_seconds, "notes": plan.notes,
                              "pins": [list(p) for p in state.pins],
                              **({"budget": state.budget.to_dict()} if state.budget else {}),
                              **({"tunnels": [t.to_dict() for t in plan.tunnels]} if plan.tunnels else {})}
                       for name, (state, plan) in plans.items()}
    if config.plan.tunnels:
        record["tunnels"] = list(config.plan.tunnels)
    if config.workers:
        record["workers"] = {w.name: {"ssh": w.ssh, "hosts": w.hosts} for w in config.workers}
        record["host_workers"] = dict(sorted(host_worker.items()))
    run.matrix = record


def finish_all(collector: Collector, interrupt: Interrupt) -> None:
    """Every host's final status (an interrupted run says so for what did not finish), run.json written whole."""
    unfinished = interrupt.reason if interrupt.requested else None
    for state in collector.hosts.values():
        collector.finish(state, unfinished)
    collector.run.complete = True
    if interrupt.requested:
        collector.run.interrupted = interrupt.reason
    collector.save()
