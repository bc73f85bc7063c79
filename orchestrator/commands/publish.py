"""`sslbench publish [--results DIR] -o SITE/`: a static site of the store: an index of hosts with sparklines, a
page per host (trend table, steps, drifts, a plot per cell over time) and a comparison page per algorithm beside the
known boards. Plain HTML with the PNGs beside it: open SITE/index.html from disk or serve SITE/ with any web server.
SITE must be new, empty or a site publish wrote before (it leaves a .sslbench-site file there); --force writes into
any other directory. The store is --results DIR, as for every other command (or, as before, RESULTS)."""
from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import gcpause, reference, store
from orchestrator.errors import UserError
from orchestrator.render import site


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("publish", help="write a static site: hosts, trends, plots, comparisons",
                                   description=__doc__)
    parser.add_argument("store", nargs="?", type=Path, metavar="RESULTS", help="the same as --results RESULTS")
    parser.add_argument("--results", type=Path, metavar="DIR", help="result store (default: results)")
    parser.add_argument("-o", "--output", type=Path, required=True, metavar="SITE", help="directory to write")
    parser.add_argument("--no-known", action="store_true",
                        help="leave the known boards (orchestrator/reference) out of the comparison pages")
    parser.add_argument("--force", action="store_true",
                        help="write into SITE even when it is a non-empty directory `publish` did not write "
                             "(its index.html and pages of the same names are overwritten)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.store and args.results and args.store.resolve() != args.results.resolve():
        raise UserError(f"two stores given ({args.store} and --results {args.results}): give one, as --results DIR")
    args.results = args.results or args.store or store.DEFAULT_RESULTS
    with gcpause.paused():  # months of runs: 10^5 measurements that make no cycles
        runs = store.load_all(args.results)
        known = None
        if not args.no_known:
            known, notes = reference.known_run(args.results)
            for note in notes:
                print(f"note: {note}")
        pages = site.publish(runs, args.output, known, force=args.force)
    print(f"wrote {len(pages)} pages to {args.output} (open {args.output / 'index.html'})")
    return 0
