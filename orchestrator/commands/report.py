"""`sslbench report [RUN_DIR...]`: render stored runs again (default: the latest run)."""
from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path
from typing import TextIO

from orchestrator import journal, reference, store, terminal
from orchestrator.commands import options
from orchestrator.commands.options import add_width_option
from orchestrator.analysis import insights
from orchestrator.errors import UserError
from orchestrator.model import Run
from orchestrator.render import formats, output, report, tables
from orchestrator.units import fmt_time

EPILOG = "views (--view NAME): the sections of the HTML report as terminal tables, without its plots\n" + "\n".join(
    f"  {name:<13}{about}" for name, (_, about) in report.VIEWS.items()) + """

examples:
  sslbench report                           the latest run (and how many others the store has)
  sslbench report --all                     compare my boards: the latest run of every host in the store
  sslbench report --host 'rock*' --view per-core
  sslbench report RUN_A RUN_B               two runs; a host in both is labelled host @ run-id
  sslbench report --all --format openmetrics -o /var/lib/node_exporter/sslbench.prom
                                            every host's latest figures for node_exporter's textfile collector
  sslbench report --all --format influx     InfluxDB line protocol (Telegraf, `influx write`)"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("report", help="print the comparison table of stored runs",
                              description="Render stored runs (results/<run-id>/) as a table again.", epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="*", metavar="RUN_DIR", help="run directories or run ids (default: latest)")
    p.add_argument("--format", choices=formats.REPORT_FORMATS, default=formats.TEXT,
                   help="table|markdown|csv|json print tables; html (and markdown with -o) write a report with plots; "
                        "openmetrics (Prometheus, node_exporter's textfile collector) and influx (line protocol) "
                        "give every figure with its labels for dashboards")
    p.add_argument("--timestamps", action="store_true",
                   help="with --format openmetrics: the run's time on every sample and every run kept, for "
                        "`promtool tsdb create-blocks-from openmetrics` (node_exporter refuses timestamps)")
    p.add_argument("--results", type=Path, default=store.DEFAULT_RESULTS, help="result store (default: results)")
    p.add_argument("--all", action="store_true",
                   help="the latest run of every host in the store, each host labelled by its name")
    p.add_argument("--host", action="append", metavar="PATTERN",
                   help="only hosts matching PATTERN (shell-style: 'rock*'); without RUN_DIR, the latest run of each; "
                        "repeatable")
    p.add_argument("--view", choices=report.VIEWS, metavar="NAME",
                   help="print these sections of the HTML report as terminal tables (see views below)")
    add_width_option(p)
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="write a report page: one self-contained .html, or .md with the plots as PNGs next to it; "
                        "with openmetrics/influx, the figures (replaced at once: a collector never reads half a file)")
    p.add_argument("--link", default="100,1000", metavar="MBIT,...",
                   help="link speeds (Mbit/s) the report says each host can or cannot carry (default: 100,1000)")
    p.add_argument("--against", choices=("known",), help="known: show published results of well-known boards "
                   "beside yours, marked as reference (orchestrator/reference/known/ and `import --reference`)")
    p.set_defaults(func=report_command)


def report_command(args: argparse.Namespace) -> int:
    fmt = formats.get(args.format)  # what the format is for; render/formats.py knows which is which
    if fmt.page_only and not args.output:
        raise UserError(f"--format {args.format} writes a page: give -o FILE (e.g. -o report.html)")
    if args.output and not (fmt.page or fmt.figures):
        raise UserError("-o writes a report page or figures for dashboards: use it with --format html, markdown, "
                        "openmetrics or influx")
    if args.timestamps and not fmt.timestamps:
        raise UserError("--timestamps is for --format openmetrics (line protocol always has the run's time)")
    if args.view and (args.output or not fmt.terminal):
        raise UserError("--view prints terminal tables: leave out --format and -o (the page with -o has every view)")
    if args.all and args.runs:
        raise UserError("--all takes the latest run of each host from the store: give no RUN_DIR")
    links = insights.parse_links(args.link)
    # Where a line about what is shown goes: with the tables, unless they are data for a program or a page is written.
    said = sys.stdout if fmt.reading and not args.output else sys.stderr
    every_host = args.all or (args.host and not args.runs)
    if every_host:
        stored = store.load_all(args.results)
        runs = store.latest_of_each_host(stored, args.host or ())
        for note in journal.disagreements(stored):  # "latest" is the run written last, whatever its date
            print(f"note: {note}", file=said)
    else:
        runs = [store.load_run(store.resolve_run(ref, args.results)) for ref in args.runs or ["latest"]]
        if args.host:
            runs = store.hosts_of(runs, args.host)
        if not args.runs:
            _say_latest(runs[0], args.results, said, terminal.output_width(args.width, said))
    _say_unfinished(runs, said)
    notes: list[str] = []
    if args.against == "known":
        known, notes = reference.known_run(args.results)
        notes = notes + reference.summary_note(known)
        runs.append(known)
    if fmt.figures:  # orchestrator/render/dashboards.py: for Prometheus and InfluxDB (docs/dashboards.md)
        text = fmt.figures(runs, args.timestamps)
        if args.output:
            _replace(args.output, text)
        else:
            output.print_format(text, args.format, end="")
        return 0
    if args.output:  # orchestrator/render/report.py: the page with the user's answers, tables and plots
        print(report.render_page(runs, args.format, args.output, links=links))
        return 0
    width = terminal.output_width(args.width)
    if args.view:
        print(report.render_text(runs, args.view, links, width))
    else:
        doc = tables.runs_document(runs, legend=True if every_host else None)
        text = formats.write(doc, args.format, width)
        if text:  # nothing to show is no line at all in CSV, never a line of prose
            output.print_format(text, args.format)
        for line in formats.asides(doc, args.format):
            print(line, file=sys.stderr)
    for note in notes if fmt.reading else ():
        print(f"note: {note}")
    return 0


def _replace(path: Path, text: str) -> None:
    """Write beside, then rename: node_exporter or Telegraf reading the file meanwhile sees the old or the new."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def _say_unfinished(runs: list[Run], out: TextIO) -> None:
    """A run that stopped early shows fewer figures than it planned: say so, and why, before its tables."""
    for run in runs:
        if run.interrupted:
            print(f"run {run.run_id} stopped early ({run.interrupted}): only the cells finished before it are shown",
                  file=out)
        elif not run.complete:
            print(f"run {run.run_id} did not finish (still running, or stopped dead): only the cells that came "
                  "back are shown", file=out)


def _say_latest(run: Run, results: Path, out: TextIO, width: int | None) -> None:
    """The default shows one run of the store: say which, and how to see every host (one line, or the width's)."""
    count = len(store.list_runs(results))
    if count > 1:
        hosts = f"{len(run.hosts)} host" + ("s" if len(run.hosts) != 1 else "")
        line = (f"the latest of {count} runs in {results}: {run.run_id} ({fmt_time(run.created)}, {hosts}); "
                "--all: the latest run of every host")
        print(textwrap.fill(line, width) if width else line, file=out)
