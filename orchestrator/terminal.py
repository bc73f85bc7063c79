"""The width text output is fitted to: `--width N`, else the terminal's when stdout is one, else none (never cut).

render/tables.py does the fitting, commands/options.py has the option; this is the one place that asks the terminal, so pipes, files and CI logs get
whole lines and a user on SSH gets tables that never wrap mid-row.
"""
from __future__ import annotations

import shutil
import sys
from typing import TextIO


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
