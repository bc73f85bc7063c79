"""`sslbench run`: detect, provision, benchmark every host of an inventory, store and print the results.

The engine is orchestrator/run/engine.py (each host's steps) and fleet.py (what the hosts say); this is its command line.
Ctrl-C (or SIGTERM/SIGHUP) stops openssl on the hosts and keeps every finished cell; each host's host.json is saved
as soon as it finishes, run.json at the end.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from orchestrator import store, terminal
from orchestrator.commands.options import (add_common_options, add_matrix_options, add_width_option,
                                           run_config)
from orchestrator.model import HOST_OK, OK, UNSUPPORTED, Run
from orchestrator.render import tables
from orchestrator.render.output import print_format
from orchestrator.run import engine, fleet
from orchestrator.run.ansible_options import redacted_command
from orchestrator.run.progress import ProgressView
from orchestrator.run.runner import Driver, Interrupt


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run", help="benchmark every host of an inventory (default: this machine)",
        description="Detect each host, install OpenSSL where missing, run the openssl speed matrix, "
                    "bring the logs back, store results/<run-id>/ and print the comparison table.")
    add_common_options(p)
    add_matrix_options(p)
    p.add_argument("--results", default=str(store.DEFAULT_RESULTS), metavar="DIR",
                   help="where runs are stored (default: results/)")
    p.add_argument("--no-provision", action="store_true", help="never install anything; hosts without openssl fail")
    p.add_argument("--upgrade-openssl", action="store_true",
                   help="install/upgrade OpenSSL with the host's package manager even where it is present")
    p.add_argument("--format", choices=tables.FORMATS, default="table", help="format of the table printed at the end")
    add_width_option(p)
    p.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    # before the run dir exists: a Ctrl-C at a password prompt leaves no empty run
    config = run_config(args, results=Path(args.results), warn_insecure=True)
    run_dir = store.new_run_dir(config.results)
    run = Run(run_id=run_dir.name, created=store.utc_now(), command=redacted_command(["sslbench", *sys.argv[1:]]),
              matrix=config.plan.request.to_dict(), complete=False)
    store.save_run(run_dir, run)
    with Interrupt(results=run_dir) as interrupt, ProgressView() as view, \
            Driver(config, run_dir, interrupt=interrupt) as driver:
        collector = fleet.Collector(run, run_dir, view)
        plans = {}
        bench = engine.Engine(driver, collector, config, interrupt)
        try:
            if not interrupt.requested:
                plans = bench.run()
        except KeyboardInterrupt:  # Ctrl-C twice: no cleanup on the hosts, but every cell already here is kept
            interrupt.abort()
            bench.mark_interrupted()
            plans = {name: (state, state.plan) for name, state in collector.hosts.items() if state.plan}
        fleet.record_matrix(run, config, plans, driver.host_worker)
        fleet.finish_all(collector, interrupt)
    for line in bench.decisions.collected:  # logs a dead run had left on the hosts, now stored in that run
        print(f"sslbench: collected {line}", file=sys.stderr)
    for name, (_state, plan) in sorted(plans.items()):
        for note in plan.notes:
            print(f"{name}: {note}", file=sys.stderr)
    # as `sslbench report` prints it
    print_format(tables.render_runs([run], args.format, terminal.output_width(args.width)), args.format)
    print_host_summary(run, run_dir)
    if interrupt.requested:
        print(f"sslbench: {interrupt.reason}; the cells finished before it are kept: sslbench report {run_dir}",
              file=sys.stderr)
        return interrupt.exit_code
    return 0 if all(h.status == HOST_OK for h in run.hosts) else 1


def print_host_summary(run: Run, run_dir: Path) -> None:
    for host in run.hosts:
        ok = sum(1 for m in host.measurements if m.status == OK)
        unsupported = sum(1 for m in host.measurements if m.status == UNSUPPORTED)
        line = f"{host.host}: {host.status}, {ok} figures"
        if unsupported:
            line += f", {unsupported} unsupported"
        if host.reason:
            line += f" ({host.reason})"
        print(line, file=sys.stderr)
    print(f"results: {run_dir}", file=sys.stderr)
