"""`sslbench history HOST`: the firmware versions a host was measured under: per firmware how many runs, the first
and the last (date and run id); `--runs` lists every run."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from orchestrator import store, terminal
from orchestrator.commands.options import add_width_option
from orchestrator.render.output import print_format
from orchestrator.analysis import diff
from orchestrator.errors import UserError
from orchestrator.render import formats
from orchestrator.render.model import Document, Table
from orchestrator.units import fmt_date, fmt_time

EPILOG = """\
examples:
  sslbench history router                 per firmware: runs, first and last (date, run id)
  sslbench history router --runs          every run, oldest first, with its firmware
  sslbench history router --format json   per firmware, every run id too"""

SUMMARY = ["firmware", "runs", "first", "first run", "last", "last run"]
SUMMARY_DROP = ["first run", "first"]  # a narrow terminal keeps the latest, which `diff --by firmware` compares
RUNS = ["run", "created", "firmware"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("history", help="list the firmware versions a host was measured under",
                                   description=__doc__, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("host", metavar="HOST")
    parser.add_argument("--runs", action="store_true", help="every run of the host, oldest first, with its firmware")
    parser.add_argument("--results", type=Path, default=store.DEFAULT_RESULTS, metavar="DIR",
                        help="result store (default: results)")
    parser.add_argument("--format", choices=formats.TABLE_FORMATS, default=formats.TEXT,
                        help="output format (default: table); json lists every run id of each firmware")
    add_width_option(parser)
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    history = diff.firmware_history(store.load_all(args.results), args.host)
    if not history:
        raise UserError(f"host '{args.host}' has no measurements under {args.results}; "
                        "check the name (it is the inventory name, or --host of `sslbench import`)")
    width = terminal.output_width(args.width)
    if args.runs:
        runs = sorted(((run, entry.label) for entry in history for run, _ in entry.results),
                      key=lambda item: (item[0].created, store.run_order(item[0].run_id)))  # as firmware_history
        # a run stopped before its end says so, and why (the column only when there is one: most stores have none)
        stopped = any(run.interrupted for run, _ in runs)
        headers = RUNS + (["interrupted"] if stopped else [])
        listed = [[run.run_id, fmt_time(run.created), label] + ([run.interrupted or ""] if stopped else [])
                  for run, label in runs]
        doc = Document([Table(headers, listed)],
                       data=[{**dict(zip(RUNS, (run.run_id, run.created, label))),
                              **({"interrupted": run.interrupted} if run.interrupted else {})} for run, label in runs])
    else:
        rows: list[list[Any]] = [[e.label, len(e.run_ids), fmt_date(e.first), e.run_ids[0], fmt_date(e.last),
                                  e.run_ids[-1]] for e in history]
        # as data every run id ("runs") beside the summary's columns: the keys scripts of `history --format json` read
        doc = Document([Table(SUMMARY, rows, SUMMARY_DROP)], data=[
            {"firmware": e.label, "first": e.first, "last": e.last, "first_run": e.run_ids[0],
             "last_run": e.run_ids[-1], "run_count": len(e.run_ids), "runs": e.run_ids} for e in history])
    print_format(formats.write(doc, args.format, width), args.format)
    return 0
