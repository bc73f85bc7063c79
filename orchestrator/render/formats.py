"""The output formats, chosen in this one place: a name, the module that lays a Document out, and what the format
is for. A new format is one module with `write(doc, width) -> str` and one entry here (docs/ARCHITECTURE.md).

Commands take their `--format` choices from here and pass the name on; they ask a Format what it is for
(`reading`, `page`, ...), never which one it is.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from orchestrator.errors import UserError
from orchestrator.model import Run
from orchestrator.render import csv, dashboards, html, json, junit, markdown, text
from orchestrator.render.model import Aside, Document


@dataclass(frozen=True)
class Format:
    name: str
    write: Callable[[Document, int | None], str]
    reading: bool  # a person reads it: the lines about what is shown go with it (else to stderr)
    terminal: bool = False  # the one fitted to a terminal (report --view)
    tables: bool = True  # lays a document's tables out (`--format` of every command that prints tables)
    ci: bool = False  # the CI test cases (diff, trend): -o FILE takes it, the reader's text goes to stdout
    # a report page with plots, written to -o FILE (report): (document, the file's stem) -> the page and the
    # files beside it by name
    page: Callable[[Document, str], tuple[str, dict[str, bytes]]] | None = None
    page_only: bool = False  # only as such a page (report needs -o FILE)
    # every figure of the runs with its labels, for a dashboard (report; render/dashboards.py); the bool: --timestamps
    figures: Callable[[Iterable[Run], bool], str] | None = None
    timestamps: bool = False  # takes --timestamps (report)


def _no_document(doc: Document, width: int | None) -> str:
    raise UserError("openmetrics and influx give the figures of stored runs: they are for `sslbench report`")


TEXT = "table"
FORMATS: dict[str, Format] = {f.name: f for f in (
    Format(TEXT, text.write, reading=True, terminal=True),
    Format("markdown", markdown.write, reading=True, page=markdown.page_files),
    Format("csv", csv.write, reading=False),
    Format("json", json.write, reading=False),
    Format("junit", junit.write, reading=False, tables=False, ci=True),
    Format("html", html.write, reading=False, tables=False, page=lambda doc, _: (html.write(doc), {}), page_only=True),
    Format("openmetrics", _no_document, reading=False, tables=False, timestamps=True,
           figures=lambda runs, stamped: dashboards.openmetrics(runs, timestamps=stamped)),
    Format("influx", _no_document, reading=False, tables=False, figures=lambda runs, _: dashboards.influx(runs)),
)}

TABLE_FORMATS = tuple(name for name, f in FORMATS.items() if f.tables)  # table, markdown, csv, json
CI_FORMATS = TABLE_FORMATS + tuple(name for name, f in FORMATS.items() if f.ci)
REPORT_FORMATS = TABLE_FORMATS + tuple(name for name, f in FORMATS.items() if f.page_only or f.figures)


def get(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise UserError(f"unknown format '{name}'; choose one of: {', '.join(TABLE_FORMATS)}") from None


def write(doc: Document, name: str, width: int | None = None) -> str:
    """The document in that format; `width` fits a terminal's tables (None: never cut; other formats never are)."""
    return get(name).write(doc, width)


def page(doc: Document, name: str, stem: str) -> tuple[str, dict[str, bytes]]:
    """The document as a page of that format and the files beside it, by name (their stem first)."""
    writer = get(name).page
    if writer is None:
        raise UserError(f"--format {name} writes no page: choose one of: "
                        f"{', '.join(n for n, f in FORMATS.items() if f.page)}")
    return writer(doc, stem)


def asides(doc: Document, name: str) -> list[str]:
    """The lines a format that is data for a program leaves out, for stderr: the document's Asides."""
    if get(name).reading:
        return []
    return [block.text for block in doc.blocks if isinstance(block, Aside)]
