"""`sslbench history HOST`: the firmware versions a host was measured under, with dates and run ids."""
from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import diff, store, tables
from orchestrator.errors import UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("history", help="list the firmware versions a host was measured under",
                                   description=__doc__)
    parser.add_argument("host", metavar="HOST")
    parser.add_argument("--results", type=Path, default=store.DEFAULT_RESULTS, metavar="DIR",
                        help="result store (default: results)")
    parser.add_argument("--format", choices=tables.FORMATS, default="table", help="output format (default: table)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    history = diff.firmware_history(store.load_all(args.results), args.host)
    if not history:
        raise UserError(f"host '{args.host}' has no measurements under {args.results}; "
                        "check the name (it is the inventory name, or --host of `sslbench import`)")
    headers = ["firmware", "first", "last", "runs"]
    rows = [[e.label, e.first, e.last, e.run_ids if args.format == "json" else " ".join(e.run_ids)] for e in history]
    print(tables.render(headers, rows, args.format))
    return 0
