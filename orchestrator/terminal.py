"""The width text output is fitted to: `--width N`, else the terminal's when stdout is one, else none (never cut).

tables.render does the fitting; this is the one place that asks the terminal, so pipes, files and CI logs get
whole lines and a user on SSH gets tables that never wrap mid-row.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from typing import TextIO


def add_width_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--width", type=_columns, metavar="N",
                        help="fit tables to N columns, saying below each what was dropped or abbreviated (0: never "
                             "cut); default: the terminal's width ($COLUMNS), not cut when stdout is not a terminal")


def output_width(requested: int | None, stream: TextIO | None = None) -> int | None:
    """The width to fit to: `requested` (0: none), else the terminal's when `stream` (stdout) is one, else None."""
    if requested is not None:
        return requested or None
    stream = sys.stdout if stream is None else stream
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stdout
        interactive = False
    return shutil.get_terminal_size().columns if interactive else None


def _columns(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of columns, like 80 (got '{text}')") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a number of columns, 0 or more (got '{text}')")
    return value
