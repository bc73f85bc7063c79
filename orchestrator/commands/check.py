"""`sslbench check [--results DIR]`: every run in the store that cannot be read and why, and everything a stopped
sslbench left behind (unfinished runs, logs without a run, imports left aside, half-written files, runner
directories); exit 1 when there is any, 0 when the store is whole."""
from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import store, storecheck
from orchestrator.units import count


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("check", help="list runs that cannot be read and what a stopped run left behind",
                                   description=__doc__)
    parser.add_argument("--results", type=Path, default=store.DEFAULT_RESULTS, metavar="DIR",
                        help="result store (default: results)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    findings = storecheck.check(args.results)
    for finding in findings:
        print(f"{finding.path}: {finding.kind.value}: {finding.why}")
    runs = len(store.list_runs(args.results))
    if findings:
        print(f"{count(len(findings), 'problem')} in {args.results} ({count(runs, 'run')})")
        return 1
    print(f"no problems in {args.results} ({count(runs, 'run')})")
    return 0
