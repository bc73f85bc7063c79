"""`sslbench parse [--json] FILE…`: read saved `openssl speed` logs or whole console sessions, print what they say."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from orchestrator import gcpause
from orchestrator.errors import UserError
from orchestrator.logfiles import checked, read_text
from orchestrator.model import ParsedLog
from orchestrator.parse.batch import chunks_in_workers, parse_many
from orchestrator.parse.console import parse_console
from orchestrator.render.logview import describe

DESCRIPTION = """\
Read openssl speed output (any OpenSSL version, -evp, -multi, -mr, public-key tables) or a whole captured
console session (shell prompts, `cat /proc/cpuinfo`, `uname -a`, `cat /etc/os-release`, `openssl version -a`,
other commands' noise; newlines lost or doubled by a copy from a web page are fine) and print:

  - throughput: one row per algorithm / API / thread count, one column per block size, in MB/s and Mbit/s
    (decimal: 1 MB = 10^6 bytes, 1 Mbit = 10^6 bits, so 125 MB/s = 1000 Mbit/s);
  - public-key operations per second (sign/s, verify/s, ...);
  - what the facts say: CPU model and cores, crypto instructions (aes, pmull, sha2, sha_ni ...), OS, OpenSSL build.

With --json: one object per file {"file", "measurements", "cpu", "os", "openssl", "skipped"}, or a JSON array
when several files are given; indented on a terminal, compact when written to a file or a pipe. Parts of a
log that could not be read are in its "skipped" and said on stderr: a `note:` line for one file, one for a batch.
Thousands of files at once are parsed on every CPU (worker processes).

examples:
  sslbench parse speed.log
  ssh root@router 'openssl speed -evp aes-128-gcm 2>&1' | sslbench parse -
  sslbench parse --json session1.txt session2.txt > parsed.json

A log cut off before openssl printed its table still gives the figures of its progress lines (`Doing …: N X's
in 2.99s`), flagged `partial`; openssl's `-multi` summary is the figure of a `-multi` run, and where it is missing
the children's figures are summed, flagged `partial-children`.

exit codes: 0 at least one figure read (or CPU/OS facts); 2 bad input (missing/unreadable file, directory, empty,
binary, no figure in it)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "parse", help="print the results and facts in saved openssl speed logs / console sessions",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="log or captured session; - reads standard input")
    parser.add_argument("--json", action="store_true", help="print parsed records and facts as JSON")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    with gcpause.paused():  # thousands of logs are millions of small objects that make no cycles
        return _parse(args)


def _parse(args: argparse.Namespace) -> int:
    if args.json:
        return _print_json(args.files)

    texts: list[str | UserError] = []
    for name in args.files:
        try:
            texts.append(read_text(name))
        except UserError as exc:
            texts.append(exc)
    logs = iter(parse_many([text for text in texts if isinstance(text, str)]))  # all files at once, on every core
    parsed: list[tuple[str, ParsedLog]] = []
    failures = 0
    for name, text in zip(args.files, texts):
        try:
            if isinstance(text, UserError):
                raise text
            log = checked(name, next(logs))
        except UserError as exc:
            if len(args.files) == 1:
                raise
            print(f"sslbench: {exc}", file=sys.stderr)  # one bad file must not hide the others
            failures += 1
            continue
        parsed.append((name, log))
        _print_notes(name, log.skipped)
    if not parsed:
        return 2
    print("\n\n".join(describe(name, log, several=len(args.files) > 1) for name, log in parsed))
    return 2 if failures else 0


def _print_json(names: list[str]) -> int:
    """Files read, parsed and written as JSON by chunks in the worker processes (orchestrator.parse.batch); here
    each chunk's JSON goes out as it comes, in file order, with the errors on stderr in the same order. Notes on
    what could not be read: a line for one file, one line for a batch (each file's `skipped` in the JSON holds
    them all: a note per file floods a terminal)."""

    stdin = _stdin_text() if "-" in names else None  # (the workers cannot share this process's standard input)
    items = [(name, stdin if name == "-" else None) for name in names]
    # A person at a terminal gets it indented (so parsed whole here first); a program or a file compact, streamed.
    whole: list[str] | None = [] if sys.stdout.isatty() or len(names) == 1 else None
    written = failures = 0
    noted: list[str] = []
    first_note = ""
    for document, errors, chunk_noted, note in chunks_in_workers(_json_of_chunk, items):
        if errors and len(names) == 1:
            raise UserError(errors[0])
        for error in errors:
            print(f"sslbench: {error}", file=sys.stderr)  # one bad file must not hide the others
        failures += len(errors)
        noted += chunk_noted
        first_note = first_note or note
        if document:
            if whole is not None:
                whole.append(document)
            else:
                sys.stdout.write(("," if written else "[") + document)
            written += 1
    if not written:
        return 2
    if whole is None:
        sys.stdout.write("]\n")
    else:
        document = whole[0] if len(names) == 1 else "[" + ",".join(whole) + "]"
        print(json.dumps(json.loads(document), indent=2) if sys.stdout.isatty() else document)
    if len(noted) == 1 and len(names) == 1:
        print(f"note: {first_note}", file=sys.stderr)
    elif noted:
        print(f"note: {len(noted)} of {len(names)} files have parts that could not be read (each file's "
              f"\"skipped\" in the JSON lists them); the first, {first_note}", file=sys.stderr)
    return 2 if failures else 0


def _json_of_chunk(items: Sequence[tuple[str, str | UserError | None]]) -> tuple[str, list[str], list[str], str]:
    """In a worker: the chunk's files as JSON objects joined by commas ("" when none could be read), what is
    wrong with each file that could not be, the files with notes, and the first file's notes as a line says
    them."""
    objects: list[str] = []
    errors: list[str] = []
    noted: list[str] = []
    first_note = ""
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    for name, text in items:
        try:
            if isinstance(text, UserError):
                raise text
            log = checked(name, parse_console(read_text(name) if text is None else text))
        except UserError as exc:
            errors.append(str(exc))
            continue
        data = log.to_dict()
        if log.skipped:
            noted.append(name)
            first_note = first_note or _note(name, log.skipped)
        objects.append(dumps({"file": name, **data}))
    return ",".join(objects), errors, noted, first_note


def _stdin_text() -> str | UserError:
    try:
        return read_text("-")
    except UserError as exc:
        return exc


def _print_notes(name: str, skipped: list[str]) -> None:
    if skipped:
        print(f"note: {_note(name, skipped)}", file=sys.stderr)


def _note(name: str, skipped: list[str], limit: int = 5) -> str:
    label = "standard input" if name == "-" else name
    shown = "; ".join(skipped[:limit])
    more = f"; and {len(skipped) - limit} more" if len(skipped) > limit else ""
    return f"{label}: skipped {len(skipped)} part(s) it could not read: {shown}{more}"
