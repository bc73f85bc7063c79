"""`sslbench trend HOST`: every stored run of a host in time order, grouped by firmware; per cell the medians per
firmware, the steps between consecutive firmware versions, the largest one named, and runs that fall outside their
firmware's own history (see orchestrator/analysis/trend.py for the rules and thresholds)."""
from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import gcpause, store
from orchestrator.analysis import trend, verdict
from orchestrator.commands import options
from orchestrator.errors import UserError
from orchestrator.render import output, trend_table
from orchestrator.render.model import Lines, Suite

EPILOG = f"""\
examples:
  sslbench trend router
  sslbench trend router --algorithm aes-256-gcm --size 1024 --threads 1
  sslbench trend router --fail-on-regression 5 --format junit -o trend.xml

A step is named when Mann-Whitney U gives p < 0.05 (as diff) and the firmware medians differ by at least
{trend.STEP_MIN_PCT:g}%; `~` otherwise. A run is outside its firmware's history when the median robust z-score of its
cells is beyond ±{trend.Z_THRESHOLD:g} against at least {trend.MIN_HISTORY} earlier runs of that firmware (a younger
firmware: against the host's stable history, the earlier firmware back to the last step). `method`: openssl speed
measured the two sides differently (docs/methods.md): never a step, never a regression.
--fail-on-regression PCT exits {verdict.EXIT_REGRESSION} when the newest firmware step of a cell, or the newest run
against its firmware's history, is a significant drop of more than PCT percent (a failed JUnit test case each);
without it no JUnit case fails (exit 0): such drops are in system-out, "not judged"."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("trend", help="a host's runs over time: firmware steps and drifts per cell",
                                   description=__doc__, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("host", metavar="HOST")
    parser.add_argument("--algorithm", default="", metavar="NAME,...", help="only these algorithms")
    parser.add_argument("--api", default="", metavar="evp|legacy|none,...", help="only these APIs")
    parser.add_argument("--threads", default="", metavar="N,...", help="only these thread counts")
    parser.add_argument("--size", default="", metavar="BYTES,...", help="only these block sizes")
    options.add_ci_options(parser)
    parser.add_argument("--results", type=Path, default=store.DEFAULT_RESULTS, metavar="DIR",
                        help="result store (default: results)")
    parser.set_defaults(func=main)


def _words(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _numbers(text: str, option: str) -> list[int]:
    try:
        return [int(part) for part in _words(text)]
    except ValueError:
        raise UserError(f"{option} takes whole numbers separated by commas (got '{text}')") from None


def main(args: argparse.Namespace) -> int:
    pct = options.regression_limit(args)
    keep = trend.cell_filter(_words(args.algorithm), _words(args.api), _numbers(args.threads, "--threads"),
                             _numbers(args.size, "--size"))
    with gcpause.paused():  # months of runs are 10^5 measurements that make no cycles
        result = trend.trend(store.load_all(args.results), args.host, keep)
    cases = verdict.trend_cases(result, pct)
    doc = trend_table.document(result)
    doc.suite = Suite(f"sslbench trend {args.host}", cases, pct)
    if pct is not None:
        doc.blocks.append(Lines([], title=verdict.summary(cases, pct)))
    output.print_output(doc, args.format, args.output)
    return verdict.EXIT_REGRESSION if pct is not None and verdict.failures(cases) else 0
