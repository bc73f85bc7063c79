"""`sslbench diff`: old vs new per cell, like benchstat (two runs, or two firmware versions of one host)."""
from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import gcpause, store
from orchestrator.analysis import diff, insights, verdict
from orchestrator.commands import options
from orchestrator.errors import UserError
from orchestrator.render import diff_table, output
from orchestrator.render.model import Aside, Block, Lines, Suite

EPILOG = """\
examples:
  sslbench diff RUN_A RUN_B                 two stored runs (directories, run ids under --results, or latest)
  sslbench diff RUN_A latest --host router  one host only
  sslbench diff --host router --by firmware the two most recent firmware versions of router in the store
  sslbench diff --host router --by firmware --from 23.05.3 --to 23.05.4

delta is the change of the medians; `~` means not significant (Mann-Whitney U, p >= 0.05, as benchstat);
significance needs repeats (sslbench run --repeat N, N >= 4) on both sides.
`method`: openssl speed measured the two sides differently (another loop from some release on, another timer;
docs/methods.md): no verdict, a note names the cause and the boundary.

CI: --fail-on-regression PCT exits 3 when any cell is a significant drop (p < 0.05) of more than PCT percent
(never a `method` cell: it says how many it set aside);
--format junit writes a JUnit XML test case per cell (failed = such a drop), to stdout or to -o FILE;
without --fail-on-regression no case fails (exit 0): significant drops are in system-out, "not judged".
  sslbench diff RUN_A latest --fail-on-regression 5 --format junit -o sslbench.xml"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "diff", help="compare two runs, or two firmware versions of a host, cell by cell",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", nargs="*", metavar="RUN", help="old and new run (directory, run id, or latest)")
    parser.add_argument("--host", help="compare this host only (required with --by firmware)")
    parser.add_argument("--by", choices=("run", "firmware"), default="run",
                        help="run: RUN_A vs RUN_B (default); firmware: two firmware identities of --host")
    parser.add_argument("--from", dest="from_label", metavar="LABEL", help="old firmware (label or unique part of it)")
    parser.add_argument("--to", dest="to_label", metavar="LABEL", help="new firmware (label or unique part of it)")
    options.add_ci_options(parser)
    parser.add_argument("--link", default="100,1000", metavar="MBIT,...",
                        help="link speeds in Mbit/s whose VPN/TLS line-rate verdicts to compare (default: 100,1000)")
    parser.add_argument("--results", type=Path, default=store.DEFAULT_RESULTS, metavar="DIR",
                        help="result store (default: results)")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    with gcpause.paused():  # a store of 1,000 hosts: half the time of a large diff was the cyclic GC
        return _diff(args)


def _diff(args: argparse.Namespace) -> int:
    links = insights.parse_links(args.link)
    pct = options.regression_limit(args)
    head: list[Block] = []
    if args.by == "firmware":
        if args.runs:
            raise UserError("--by firmware compares runs from the store: give --host H, not run directories")
        if not args.host:
            raise UserError("--by firmware needs --host H (the host whose firmware versions to compare)")
        runs = store.load_all(args.results)
        old, new, rows = diff.diff_by_firmware(runs, args.host, args.from_label, args.to_label)
        head += [Lines([f"{args.host}: old = {old.label} ({_runs_said(old.run_ids)})",
                        f"{args.host}: new = {new.label} ({_runs_said(new.run_ids)})"]),
                 Lines(diff.order_notes(old, new), prefix="note: ", run_on=True)]
    else:
        if args.from_label or args.to_label:
            raise UserError("--from/--to name firmware versions: use them with --by firmware --host H")
        if len(args.runs) != 2:
            raise UserError("diff needs two runs (RUN_A RUN_B), or --host H --by firmware")
        old_run, new_run = (store.load_run(store.resolve_run(ref, args.results)) for ref in args.runs)
        rows = diff.diff_runs(old_run, new_run, args.host)
        head.append(Lines([], title=f"old = {old_run.run_id}, new = {new_run.run_id}"))
        if old_run.run_id == new_run.run_id:  # `diff latest latest`: every delta is 0 by construction
            head.append(Aside(f"note: both sides are run {old_run.run_id}: it is compared with itself, so nothing can "
                              "change; give two different runs (`sslbench report --all` lists them)", run_on=True))
        # what openssl speed times follows the versions
        head.append(Lines([], title="\n".join(diff.version_lines(old_run, new_run, args.host)), run_on=True))
    cases = verdict.diff_cases(rows, pct)
    doc = diff_table.document(rows)
    doc.blocks[:0] = head
    doc.suite = Suite("sslbench diff", cases, pct)
    doc.blocks.append(Lines(diff_table.notes(rows), prefix="note: ", run_on=True))
    changes = diff.line_rate_changes(rows, links)
    if changes:
        doc.blocks.append(Lines(changes, prefix="- ", title="line rate changes (VPN/TLS crypto, see `sslbench report`):"))
    if pct is not None:
        doc.blocks.append(Lines([], title=verdict.summary(cases, pct)))
    output.print_output(doc, args.format, args.output)
    return verdict.EXIT_REGRESSION if pct is not None and verdict.failures(cases) else 0


def _runs_said(run_ids: list[str]) -> str:
    """A few run ids in full; a night-by-night series as its count and ends (`sslbench history --runs` lists them)."""
    if len(run_ids) <= 3:
        return ", ".join(run_ids)
    return f"{len(run_ids)} runs, {run_ids[0]} … {run_ids[-1]}"



