"""`sslbench report [RUN_DIR...]`: render stored runs again (default: the latest run)."""
from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import store, tables
from orchestrator.errors import UserError

PAGE_FORMATS = ("html",)  # written by orchestrator/report.py to -o FILE


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("report", help="print the comparison table of stored runs",
                              description="Render stored runs (results/<run-id>/) as a table again.")
    p.add_argument("runs", nargs="*", metavar="RUN_DIR", help="run directories or run ids (default: latest)")
    p.add_argument("--format", choices=tables.FORMATS + PAGE_FORMATS, default="table",
                   help="table|markdown|csv|json print tables; html (and markdown with -o) write a report with plots")
    p.add_argument("--results", type=Path, default=store.DEFAULT_RESULTS, help="result store (default: results)")
    p.add_argument("-o", "--output", type=Path, metavar="FILE",
                   help="write a report page: one self-contained .html, or .md with the plots as PNGs next to it")
    p.add_argument("--link", default="100,1000", metavar="MBIT,...",
                   help="link speeds (Mbit/s) the report says each host can or cannot carry (default: 100,1000)")
    p.add_argument("--against", choices=("known",), help="known: show published results of well-known boards "
                   "beside yours, marked as reference (orchestrator/reference/known/ and `import --reference`)")
    p.set_defaults(func=report_command)


def report_command(args: argparse.Namespace) -> int:
    if args.format == "html" and not args.output:
        raise UserError("--format html writes a page: give -o FILE (e.g. -o report.html)")
    refs = args.runs or ["latest"]
    runs = [store.load_run(store.resolve_run(ref, args.results)) for ref in refs]
    notes: list[str] = []
    if args.against == "known":
        from orchestrator import reference

        known, notes = reference.known_run(args.results)
        runs.append(known)
    if args.output:  # orchestrator/report.py: the page with the user's answers, tables and plots
        from orchestrator import insights, report as pages

        if args.format not in ("html", "markdown"):
            raise UserError("-o writes a report page: use it with --format html or --format markdown")
        render = pages.render_html if args.format == "html" else pages.render_markdown
        print(render(runs, args.output, links=insights.parse_links(args.link)))
        return 0
    print(tables.render_runs(runs, args.format))
    for note in notes if args.format in ("table", "markdown") else ():
        print(f"note: {note}")
    return 0
