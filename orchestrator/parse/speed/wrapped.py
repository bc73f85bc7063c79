"""Lines hard-wrapped by mail clients and forums (72-80 columns): a header, a throughput row, a public-key
row or a `-multi` child's `Got:` line whose end went to the next line.

A line that may continue waits in State.wrapped; the next line is joined to it when it holds what the rest
can hold (sizes, figures only, ` from N`), else both are read as they are.
"""
from __future__ import annotations

import re

from orchestrator.parse.speed.numbers import NUM
from orchestrator.parse.speed.state import State
from orchestrator.parse.speed.tables import HEADER_MORE, add_row, read_header, read_pk_rows

# The rest of a row that a mail client wrapped: figures only (`56789.01k`, `0.000013s`, `-0.1`).
_FIGURES_ONLY = re.compile(r"{v}[ks]?(?:\s+{v}[ks]?)*".format(v=NUM), re.IGNORECASE)
# The start of a public-key row (its regex in read_pk_rows did not match: figures may be missing).
_PK_ROW_START = re.compile(r"(?:[rd]sa\s+\d+\s+bits?|\d+\s+bits?\s+(?:ecdsa|ecdh|eddsa|sm2)\s+\([^)\s]+\)|\d+\s+bits?\s+ffdh"
                           r"|mlkem\s*\d+)\s+-?[\d.]+s?(?:\s+-?[\d.]+s?)*\s*$", re.IGNORECASE)
_KEM_SIG_ROW_START = re.compile(r"\S+(?:\s+-?[\d.]+s)+(?:\s+-?[\d.]+)*\s*$")
_FROM_CHILD = re.compile(r"from \d+")


def keep_pk_row_start(line: str, state: State) -> bool:
    """A public-key row short of its figures (its regex did not match) waits for the next line."""
    if _PK_ROW_START.match(line) or (state.pk_table and _KEM_SIG_ROW_START.match(line)):
        state.wrapped = ("pk", line)
        return True
    return False


def join_wrapped(line: str, state: State) -> str | None:
    """What to read now that `line` follows a line that may continue: None when `line` was its rest
    (read with it), the joined text of a child's `Got:` line, else `line` itself."""
    assert state.wrapped is not None  # the caller asks only when a line may continue
    kind, start = state.wrapped
    state.wrapped = None
    if kind == "got":  # `Got:` / `+F:…` / `from N`: a child's line wrapped at its spaces
        if _FROM_CHILD.fullmatch(line) or (start == "Got:" and line[0] == "+"):
            return f"{start} {line}"
        state.orphans += 1
        return line
    if kind == "header":
        if HEADER_MORE.fullmatch(line):
            read_header(f"{start} {line}", state)
            return None
        return line
    if not _FIGURES_ONLY.fullmatch(line):
        if kind == "row":
            flush_wrapped_row(state)
        return line
    if kind == "row" and state.wrapped_row is not None:
        label, values, core, by_count = state.wrapped_row
        add_row(label, values + line.split(), state, core, by_count)
    elif not read_pk_rows(f"{start} {line}", state):
        state.wrapped = ("pk", f"{start} {line}")
    return None


def flush_wrapped_row(state: State) -> None:
    """A row that waited for wrapped figures that never came: read as it is."""
    if state.wrapped_row is None:
        return
    label, values, core, by_count = state.wrapped_row
    add_row(label, values, state, core, by_count, final=True)


def end_of_wrapped(state: State) -> None:
    """The log ended on a line that could continue: a row is read as it is, a `Got:` piece is lost."""
    if state.wrapped is not None and state.wrapped[0] == "row":
        flush_wrapped_row(state)
    elif state.wrapped is not None and state.wrapped[0] == "got":
        state.orphans += 1
