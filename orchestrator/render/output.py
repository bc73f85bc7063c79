"""A document or a format's text on stdout (and a CI format to `-o FILE`): a format for people through the terminal
guard, a format for programs as its writer wrote it, so stdout and `-o FILE` hold the same bytes."""
from __future__ import annotations

import sys
from pathlib import Path

from orchestrator import textsafe
from orchestrator.errors import UserError
from orchestrator.render import formats
from orchestrator.render.model import Document


def print_output(doc: Document, fmt: str, output: Path | None) -> None:
    """The document on stdout in its format, the lines a data format leaves out on stderr; with -o FILE (a CI
    format) the format to the file and the reader's text on stdout."""
    if output is not None:
        try:  # as on stdout: the format escapes by its own rules (junit: XML's)
            output.write_text(formats.write(doc, fmt) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {output}: {exc.strerror or exc}") from None
        fmt = formats.TEXT
    for line in formats.asides(doc, fmt):
        print(line, file=sys.stderr)
    print_format(formats.write(doc, fmt), fmt)


def print_format(text: str, fmt: str, end: str = "\n") -> None:
    """`fmt`'s text on stdout: the table through the terminal guard, a format for programs as it wrote it (its own
    escapes), byte for byte what `-o FILE` gets (textsafe.data_stream: unless stdout is a terminal)."""
    stream = sys.stdout if formats.get(fmt).terminal else textsafe.data_stream(sys.stdout)
    stream.write(text + end)
