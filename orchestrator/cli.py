"""`sslbench` command line: one sub-command per module in orchestrator/commands/.

Each command module exposes `register(subparsers)`, which adds its parser and sets
`func=handler`; a handler takes the parsed arguments and returns the exit code.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from orchestrator import __version__, textsafe
from orchestrator.errors import UserError

# Order is the order `sslbench --help` lists them in.
COMMANDS = ["run", "hosts", "parse", "report", "import_logs", "diff", "history", "trend", "publish", "check"]
_MODULE_OF = {"import": "import_logs"}  # command names that are not their module's

DESCRIPTION = """\
Benchmark the crypto speed (openssl speed) of a fleet of Linux boxes over SSH with Ansible,
and turn the logs into comparison tables, plots and firmware-to-firmware diffs.

Without -i, `sslbench run` benchmarks the machine it runs on."""
# The one list of exit codes `--help` shows (README.md "Exit codes" says the same, and why)
EXIT_CODES = """exit codes: 0 all fine; 1 a run finished but some hosts failed or were unreachable; 2 bad input, Ansible gave up,
or the results could not be written (one line on stderr); 3 a regression worse than --fail-on-regression;
128+N stopped by signal N, finished cells kept: 130 Ctrl-C (SIGINT), 143 `kill` (SIGTERM), 129 hang-up (SIGHUP)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser, or only `command`'s: `sslbench parse …` need not load Ansible."""
    parser = argparse.ArgumentParser(
        prog="sslbench", description=DESCRIPTION, epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"sslbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [_MODULE_OF.get(command, command)] if command else COMMANDS:
        importlib.import_module(f"orchestrator.commands.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    command = words[0] if words and _MODULE_OF.get(words[0], words[0]) in COMMANDS else None
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    # every line a command prints may carry host text: one rule for all of it (textsafe, docs/trust.md)
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = textsafe.SafeStream(stdout), textsafe.SafeStream(stderr)
    try:
        return _run(args)
    finally:  # the wrappers buffer nothing
        sys.stdout, sys.stderr = stdout, stderr


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        print(f"sslbench: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("sslbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # disk full, permission denied, a results dir on a vanished mount ...
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"sslbench: {exc.strerror or exc}{where}; nothing more was written", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
