"""`sslbench hosts`: what each host is, what would be installed, and the planned matrix with its ETA
(fitted into --budget, pinned per CPU cluster on big.LITTLE hosts), without installing or benchmarking
anything (only the detect phase runs on the hosts)."""
from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path
from typing import Any

from orchestrator import terminal, units
from orchestrator.analysis import identity
from orchestrator.commands.options import (add_common_options, add_matrix_options, add_width_option,
                                           run_config)
from orchestrator.model import HOST_OK, OpenSSLBuild, Run
from orchestrator.render import formats
from orchestrator.render.output import print_format
from orchestrator.render.model import Document, Table
from orchestrator.run import engine, fleet
from orchestrator.run.matrix import HostPlan
from orchestrator.run.progress import ProgressView
from orchestrator.run.runner import Driver, Interrupt


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("hosts", help="show detected facts, what would be installed and the planned matrix",
                              description=__doc__)
    add_common_options(p)
    add_matrix_options(p)
    p.add_argument("--no-provision", action="store_true", help="plan as `run --no-provision` would")
    p.add_argument("--upgrade-openssl", action="store_true", help="plan as `run --upgrade-openssl` would")
    p.add_argument("--format", choices=formats.TABLE_FORMATS, default=formats.TEXT,
                   help="output format (default: table); json gives numbers as numbers and null where unknown")
    add_width_option(p)
    p.set_defaults(func=hosts_command)


HEADERS = ["host", "status", "os", "cpu", "cpus", "openssl", "package manager", "would install", "cells",
           "unsupported", "ETA", "pinned"]
DROP = ["unsupported", "package manager", "cpus", "pinned", "cpu"]  # first to go on a narrow terminal


def hosts_command(args: argparse.Namespace) -> int:
    config = run_config(args)
    with tempfile.TemporaryDirectory(prefix="sslbench-hosts-") as scratch, Interrupt() as interrupt, \
            ProgressView(live=False, stream=io.StringIO()) as view, \
            Driver(config, Path(scratch), interrupt=interrupt) as driver:
        collector = fleet.Collector(Run(run_id="hosts", created=""), Path(scratch), view, store_results=False)
        plans = engine.Engine(driver, collector, config, interrupt, bench=False).run()
    text, notes = render_hosts(collector.hosts, plans, args.format, terminal.output_width(args.width))
    print_format(text, args.format)
    for note in notes:
        print(note, file=sys.stderr)
    return 0 if all(s.result.status == HOST_OK for s in collector.hosts.values()) else 1


def render_hosts(hosts: dict[str, fleet.HostState], plans: dict[str, tuple[fleet.HostState, HostPlan]],
                 fmt: str, width: int | None = None) -> tuple[str, list[str]]:
    """The table of what each host is and would run (as data: hosts_json), and the notes for stderr (`host: note`)."""
    rows = []
    for name, state in hosts.items():
        plan = plans[name][1] if name in plans else None
        r = state.result
        rows.append([
            name, r.status, identity.os_label(r),
            r.cpu.model or r.cpu.arch or "?", state.logical_cpus or "?",
            _openssl_said(r.openssl) if state.openssl_path else "missing",
            ", ".join(state.package_managers) or "none",
            _would_install(state),
            len(plan.cells) if plan else "-", len(plan.unsupported) if plan else "-",
            units.format_eta(plan.eta_seconds) if plan else "-",
            ", ".join(f"CPU {cpu} ({label})" for cpu, label in state.pins) or "-",
        ])
    headers = HEADERS
    if any(plan.tunnels for _, plan in plans.values()):  # the tunnels' column only where some are planned
        headers = [*HEADERS[:9], "tunnels", *HEADERS[9:]]
        for row, name in zip(rows, hosts):
            plan = plans[name][1] if name in plans else None
            row.insert(9, ", ".join(t.tunnel for t in plan.tunnels) if plan and plan.tunnels else "-")
    doc = Document([Table(headers, rows, DROP)], data=hosts_json(hosts, plans))
    return formats.write(doc, fmt, width), notes_of(hosts, plans)


def _would_install(state: fleet.HostState) -> str:
    """OpenSSL and the tunnels' packages the run would install, and with what."""
    names = ([state.provision.package] if state.provision else []) + list(state.tunnel_install)
    manager = state.provision.name if state.provision else ", ".join(state.package_managers[:1])
    return f"{', '.join(names)} with {manager}" if names else "-"


def _openssl_said(build: OpenSSLBuild) -> str:
    """The program's version, and libcrypto's beside it where they differ (what `openssl speed` times depends on
    the program, the speed on both)."""
    return (build.versions_said() if build.versions_differ else build.version) or "?"


def notes_of(hosts: dict[str, fleet.HostState], plans: dict[str, tuple[fleet.HostState, HostPlan]]) -> list[str]:
    notes = [f"{name}: {s.result.status}: {s.result.reason}" for name, s in hosts.items() if s.result.status != HOST_OK]
    for name, (state, plan) in plans.items():
        notes.extend(f"{name}: {note}" for note in plan.notes)
        if not state.openssl_path:
            notes.append(f"{name}: matrix planned for an unknown OpenSSL; it is re-planned after installing")
    return notes


def hosts_json(hosts: dict[str, fleet.HostState], plans: dict[str, tuple[fleet.HostState, HostPlan]]
               ) -> list[dict[str, Any]]:
    """The same facts as the table, as data for scripts: numbers as numbers (the ETA in seconds), null where a
    fact is unknown or there is no plan (a host that failed), lists as lists; each host's notes with it."""
    records = []
    for name, state in hosts.items():
        plan = plans[name][1] if name in plans else None
        r = state.result
        records.append({
            "host": name, "status": r.status, "reason": r.reason or None, "os": identity.os_label(r),
            "cpu": r.cpu.model or r.cpu.arch or None, "cpus": state.logical_cpus or None,
            "openssl": (r.openssl.version or None) if state.openssl_path else None,
            # libcrypto's version, where `openssl version` said it ("(Library: …)"); "openssl" is the program's
            "openssl_library": (r.openssl.library_version or None) if state.openssl_path else None,
            "openssl_path": state.openssl_path or None,
            "package_managers": list(state.package_managers),
            "would_install": ({"package": state.provision.package, "with": state.provision.name}
                              if state.provision else None),
            "cells": len(plan.cells) if plan else None, "unsupported": len(plan.unsupported) if plan else None,
            "eta_seconds": round(plan.eta_seconds, 1) if plan else None,
            "pinned": [{"cpu": cpu, "cluster": label} for cpu, label in state.pins],
            "notes": list(plan.notes) if plan else [],
        })
        if plan and plan.tunnels:  # keys of their own, only where tunnels are planned
            records[-1]["tunnels"] = [t.to_dict() for t in plan.tunnels]
            records[-1]["would_install_for_tunnels"] = list(state.tunnel_install)
    return records
