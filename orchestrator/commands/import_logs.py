"""`sslbench import LOG… --host NAME`: saved console logs become a stored run, comparable with measured ones.

Each log is parsed like `sslbench parse` does (a whole console session: prompts, other commands, facts).
The same cell found in several logs counts as repeated samples (repeat 0, 1, …), so importing N saved runs of
one firmware gives `sslbench diff` something to test for significance. The same log twice is one measurement:
one already stored, or given earlier, is skipped with a note. --date: when the logs were measured (what trend, diff
and history order by); without it, the time of the import (docs/trust.md says why).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator import gcpause, reference, store
from orchestrator.analysis.imported import import_logs
from orchestrator.errors import UserError
from orchestrator.units import count as count_of


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("import", help="store saved console logs as a run (for diff and history)",
                                   description=__doc__)
    parser.add_argument("logs", nargs="*", metavar="LOG", type=Path, help="saved console session / openssl speed log")
    parser.add_argument("--host", help="the host the logs were measured on (required; with --reference: its id)")
    parser.add_argument("--firmware", metavar="LABEL", help="firmware label (default: derived from the logs' facts)")
    parser.add_argument("--date", metavar="ISO-8601",
                        help="when the logs were measured: 2025-03-01 or 2025-03-01T14:30:00Z (no zone: UTC); "
                        "orders trend, diff --by firmware and history (default: the time of the import)")
    parser.add_argument("--tunnel", metavar="NAME[:IMPLEMENTATION]", help="the LOGs are iperf3's output (text or -J) "
                        "through this tunnel (wireguard:kernel, openvpn-aes-256-gcm:openvpn-tun ...)")
    parser.add_argument("--results", type=Path, default=store.DEFAULT_RESULTS, metavar="DIR",
                        help="result store (default: results)")
    known = parser.add_argument_group(
        "a known board (--reference)", "store one published log as a reference board (shown by `report --against "
        "known` and `publish`) in <results>/reference/<host>/ instead of a run; --host names it. A published table "
        "row or a few figures instead of a log: --figure (repeated), or --entry FILE.toml with the keys of a "
        "[[board]] table of orchestrator/reference/known/boards.toml")
    known.add_argument("--reference", action="store_true", help="the log is a published reference, not a run")
    known.add_argument("--source", metavar="URL", help="where the log was published (required with --reference)")
    known.add_argument("--board", help="the board or device, as the source names it (default: --host)")
    for name, text in (("cpu", "SoC / CPU, cores and clock"), ("arch", "kernel / userland architecture"),
                       ("openssl", "OpenSSL version, when the log does not print it"),
                       ("options", "the openssl speed command line as published (-evp or not sets the API)"),
                       ("clusters", "clusters of unlabelled per-cluster rows, in row order: Cortex-A53,Cortex-A72"),
                       ("retrieved", "the date the copy was taken (default: today)"), ("notes", "anything else"),
                       ("accuracy", "what the source itself says of its figures' accuracy"),
                       ("cores", "CPU count the source gives (what an 'all'-threads figure ran on)")):
        known.add_argument(f"--{name}", help=text)
    known.add_argument("--figure", action="append", metavar="ALG:BLOCK[:THREADS]=VALUE",
                       help="one published figure instead of a LOG, value as printed: aes-128-gcm:16384=646187.19k "
                       "(k: 1000s of bytes/s, as openssl prints); BLOCK and THREADS may be 'unknown', THREADS 'all' "
                       "(-multi over --cores CPUs; default 1). Repeat it for each figure")
    known.add_argument("--unit", help=f"unit of --figure values printed without one: {' or '.join(reference.UNITS)} "
                       "(default k)")
    known.add_argument("--entry", type=Path, metavar="FILE.toml", help="a summary entry (kind = \"figures\") as a "
                       "TOML file: the keys of a boards.toml [[board]] table at its top level, figures as "
                       "[[figure]] tables")
    parser.set_defaults(func=main)


FIELDS = ("cpu", "arch", "openssl", "options", "clusters", "notes", "accuracy", "cores", "unit")


def import_reference(args: argparse.Namespace) -> int:
    figures = args.figure or []
    sources = sum(1 for given in (args.logs, figures, args.entry) if given)
    if sources != 1 or len(args.logs) > 1:
        raise UserError("--reference stores one published entry: give exactly one LOG, or --figure (repeated), "
                        "or --entry FILE.toml")
    if args.entry:
        item = reference.entry_file(args.entry)
        given = {name: getattr(args, name) for name in (*FIELDS, "source", "board", "retrieved") if getattr(args, name)}
        if args.host:
            given["id"] = args.host
        item.update(given)  # options on the command line win over the file's keys
        where = str(args.entry)
    else:
        if not args.host:
            raise UserError("--reference needs --host ID: the name the entry is shown under")
        item = {k: v for k, v in ((name, getattr(args, name)) for name in FIELDS) if v}
        item.update(id=args.host, board=args.board or args.host, source=args.source or "")
        if figures:
            item.update(kind=reference.FIGURES, figure=[reference.figure_spec(spec) for spec in figures])
        where = "import --reference"  # main() prefixes "sslbench: "
    if not str(item.get("source", "")).strip():
        raise UserError("--reference needs --source URL: a reference figure is only as good as where it came from")
    item.setdefault("board", item.get("id", ""))
    item.setdefault("retrieved", store.utc_now()[:10])
    entry = reference.entry_of(item, where)
    log = args.logs[0] if args.logs else None
    command = ["sslbench", "import", "--reference", str(log) if log else str(args.entry or "--figure")]
    run_dir = reference.add(entry, log, args.results, command)
    run = store.load_run(run_dir)
    count = sum(len(h.measurements) for h in run.hosts)
    what = f"from {log}" if log else f"({len(entry.figures)} published figure(s), a summary, not a log)"
    print(f"stored reference '{entry.id}' ({entry.board}): {count_of(count, 'measurement')} {what}")
    left = [f for f in entry.figures if f.block is None or f.threads is None]
    if left:
        print(f"note: {len(left)} figure(s) without a stated block size or threads are kept as published, "
              "not placed in a cell")
    for note in run.matrix.get("notes") or []:
        print(f"note: {note}")
    print(run_dir)
    return 0


def check_host_name(name: str | None) -> None:
    """A host name with a space (or other white space) at either end is refused: tables trim it while CSV, JSON,
    OpenMetrics and InfluxDB keep it, so ' pi4' and 'pi4' would be one host in one view and two in another
    (docs/trust.md, "Text from hosts")."""
    if name is not None and name != name.strip():
        raise UserError(f"--host {name!r} starts or ends with white space, which tables would not show; "
                        f"give --host {name.strip()!r}")
    if name is not None and not name:
        raise UserError("--host is empty: give the name of the host the logs were measured on")


def main(args: argparse.Namespace) -> int:
    check_host_name(args.host)
    if args.reference:
        return import_reference(args)
    if args.figure or args.entry:
        raise UserError("--figure and --entry add a published reference: give --reference too")
    if not args.logs or not args.host:
        raise UserError("import needs LOG... and --host NAME (the host the logs were measured on)")
    skipped: list[str] = []
    with gcpause.paused():  # thousands of logs are millions of small objects that make no cycles
        run_dir = import_logs(args.logs, args.host, firmware=args.firmware, results_dir=args.results,
                              date=args.date, skipped=skipped, tunnel=args.tunnel)
    for note in skipped:
        print(f"note: {note}")
    run = store.load_run(run_dir)
    count = sum(len(h.measurements) for h in run.hosts)
    logs = len(args.logs) - len(skipped)
    print(f"imported {count_of(count, 'measurement')} of {args.host} from {count_of(logs, 'log')} as run {run.run_id}"
          + ("" if args.date else " (no --date: placed at the time of the import)"))
    print(run_dir)
    return 0
