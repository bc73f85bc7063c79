"""Logs a run left on a host: its controller died (`kill -9`, a power cut, a lost network) and the runner's lease
lapsed (playbooks/files/sslbench-run.sh), leaving the finished cells' logs in a `stranded` work dir. The next
`sslbench run` on that host finds them at detect, ships them with the runner left there (`poll again`, polls
until nothing is pending, then `forget`) and stores them in the run they belong to, which then says it was
interrupted and by whom it was collected.

Each run keeps every host's plan (`<host>/plan.json`, written when the host is planned) so that the logs of a run
killed before its run.json was written whole can still be read as the cells they are.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator import store
from orchestrator.model import HOST_FAILED, INCOMPLETE, HostResult, Run
from orchestrator.parse import protocol
from orchestrator.run import tunnels as tunnel_plans
from orchestrator.run.fleet import add_tunnel_log, cell_measurements
from orchestrator.run.matrix import SAFE_TOKEN, CellPlan, HostPlan
from orchestrator.run.tunnels import TunnelPlan
from orchestrator.run.stages import work_dir

PLAN_FILE = "plan.json"
SECTION = "stranded work dirs"  # detect's section: one stranded work dir per line
# detect's addition: every stranded work dir on the box (the controller keeps those of the host it asked)
DETECT_SNIPPET = f"""echo "@@sslbench:{SECTION}"
for _dir in /tmp/sslbench.*; do
    [ -f "$_dir/stranded" ] && [ -f "$_dir/run.sh" ] && echo "$_dir"
done
"""


def with_collection(detect: str) -> str:
    """detect's script, listing the stranded work dirs too (before its `end`, which stays the last section)."""
    end = 'echo "@@sslbench:end"'
    head, found, tail = detect.rpartition(end)
    return head + DETECT_SNIPPET + found + tail if found else detect + DETECT_SNIPPET


@dataclass
class Stranded:
    """One stranded work dir of a host, and the stored run it belongs to."""

    work: str  # the work dir on the host
    run_dir: Path
    dir_name: str  # the host's directory in that run
    cells: dict[str, CellPlan]
    result: HostResult
    collected: list[str] = field(default_factory=list)  # cell ids stored from it
    tunnels: dict[str, TunnelPlan] = field(default_factory=dict)  # the tunnels planned after the cells, by id
    collected_tunnels: list[str] = field(default_factory=list)  # tunnel ids stored from it

    def is_tunnel(self, log_id: str) -> bool:
        """A tunnel's log: one planned (plan.json), or, from a plan.json written before it kept the tunnels, one
        named as a tunnel sslbench measures (tunnel-<name>)."""
        name = log_id.removeprefix(tunnel_plans.PREFIX)
        return log_id in self.tunnels or (not self.tunnels and log_id != name and bool(SAFE_TOKEN.match(log_id))
                                          and any(name in group for group in tunnel_plans.TUNNEL_GROUPS.values()))


def save_plan(run_dir: Path, dir_name: str, plan: HostPlan) -> None:
    """The host's cells and tunnels, as the launch gets them: read back should the run die before its run.json
    is whole."""
    cells = [{**cell.to_dict(), "kind": cell.kind} for cell in plan.cells]
    path = store.host_dir(run_dir, dir_name) / PLAN_FILE
    path.write_text(json.dumps({"host": plan.host, "cells": cells, "tunnels": [t.to_dict() for t in plan.tunnels]})
                    + "\n", encoding="utf-8")


def _tunnel(data: dict[str, object]) -> TunnelPlan:
    return TunnelPlan(tunnel=str(data["tunnel"]), seconds=int(str(data["seconds"])),
                      streams=int(str(data["streams"])), repeats=int(str(data["repeats"])))


def _cell(data: dict[str, object]) -> CellPlan:
    sizes = data.get("sizes")
    args = data.get("args")
    pin, cpu, api = data.get("pin"), data.get("cpu"), data.get("api")
    return CellPlan(id=str(data["id"]), algorithm=str(data["algorithm"]), kind=str(data["kind"]),
                    api=api if isinstance(api, str) else None, threads=int(str(data["threads"])),
                    sizes=tuple(int(s) for s in sizes) if isinstance(sizes, list) else (),
                    args=[str(a) for a in args] if isinstance(args, list) else [],
                    seconds=float(str(data.get("seconds") or 0)), repeat=int(str(data.get("repeat") or 0)),
                    pin=pin if isinstance(pin, int) else None, cpu=cpu if isinstance(cpu, str) else None)


def find(host: str, listed: str, results: Path) -> tuple[list[Stranded], list[str]]:
    """The stranded work dirs detect listed that are this host's: those whose run is in `results` (with its plan
    and its host), and the others (another store's, or a run whose plan was never written)."""
    mine = {line.strip() for line in listed.splitlines() if line.strip()}
    found, foreign = [], []
    for run_path in store.list_runs(results) if results.is_dir() else []:
        work = work_dir(run_path.name, host)
        if work not in mine:
            continue
        mine.discard(work)
        one = _load(run_path, host, work)
        if one is None:
            foreign.append(work)
        else:
            found.append(one)
    suffix = "." + work_dir("x", host).rsplit(".", 1)[1]
    return found, foreign + sorted(w for w in mine if w.endswith(suffix))


def _load(run_dir: Path, host: str, work: str) -> Stranded | None:
    for path in sorted(run_dir.glob(f"*/{PLAN_FILE}")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("host") != host:
                continue
            cells = {c.id: c for c in (_cell(d) for d in data["cells"])}
            planned = {t.id: t for t in (_tunnel(d) for d in data.get("tunnels") or [])}  # none before it was kept
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        result = _stored_host(run_dir, path.parent, host)
        return Stranded(work, run_dir, path.parent.name, cells, result, tunnels=planned)
    return None


def _stored_host(run_dir: Path, host_dir: Path, host: str) -> HostResult:
    try:
        return HostResult.from_dict(json.loads((host_dir / store.HOST_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        run = store.load_run(run_dir)
        return next((h for h in run.hosts if h.host == host), HostResult(host=host))


def take(stranded: Stranded, stdout: str) -> None:
    """Store the logs one poll of a stranded work dir shipped, in the run they belong to (each cell once)."""
    result = stranded.result
    known = {Path(log).name for log in result.logs}
    codes = protocol.exit_codes(protocol.progress_part(stdout))
    for cell_id, text in protocol.split_logs(stdout):
        cell = stranded.cells.get(cell_id)
        tunnel = cell is None and stranded.is_tunnel(cell_id)
        if (cell is None and not tunnel) or f"{cell_id}.log" in known:
            continue  # a condition log, or a cell or tunnel that came back before its controller died
        path = store.host_dir(stranded.run_dir, stranded.dir_name) / f"{cell_id}.log"
        path.write_text(text, encoding="utf-8")
        result.logs.append(str(path.relative_to(stranded.run_dir)))
        if cell is None:
            add_tunnel_log(result, cell_id, text)
            stranded.collected_tunnels.append(cell_id)
            continue
        output, _evidence = protocol.split_evidence(text)
        result.measurements.extend(cell_measurements(cell, output, result.openssl.version, codes.get(cell_id)))
        stranded.collected.append(cell_id)


def close(stranded: Stranded, by_run: str) -> None:
    """The run the logs belong to, written whole again: this host says where its late cells came from, and the
    run that it was interrupted (its controller died)."""
    result = stranded.result
    stored = {Path(log).name for log in result.logs}
    missing = [c for c in stranded.cells if f"{c}.log" not in stored]
    missing_tunnels = [t for t in stranded.tunnels if f"{t}.log" not in stored]
    result.status = HOST_FAILED
    result.interrupted = result.interrupted or ("tunnels" if missing_tunnels and not missing else "cells")
    result.reason = (f"its controller died before the host finished; {len(stranded.collected)} cells"
                     + (f" and {len(stranded.collected_tunnels)} tunnels" if stranded.collected_tunnels else "")
                     + f" that finished on the host were collected later by run {by_run}"
                     + (f"; {len(missing)} of {len(stranded.cells)} cells never finished" if missing else "")
                     + (f"; {len(missing_tunnels)} of {len(stranded.tunnels)} tunnels never finished"
                        if missing_tunnels else ""))
    if (missing or missing_tunnels) and INCOMPLETE not in result.flags:
        result.flags.append(INCOMPLETE)
    store.save_host(stranded.run_dir, stranded.dir_name, result)
    run: Run = store.load_run(stranded.run_dir)
    run.hosts = [result if h.host == result.host else h for h in run.hosts]
    if not run.interrupted:
        run.interrupted = "interrupted (its controller died)"
    run.complete = True
    store.save_run(stranded.run_dir, run)
