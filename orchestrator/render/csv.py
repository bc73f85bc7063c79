"""The CSV format: one table (the document's `flat` one, else each of its tables a blank line apart), every cell
made safe for a spreadsheet (textsafe.csv_cell, OWASP: docs/trust.md)."""
from __future__ import annotations

import csv
import io

from orchestrator import textsafe
from orchestrator.render import text
from orchestrator.render.model import Block, Document, Lines, Table


def write(doc: Document, width: int | None = None) -> str:
    if doc.flat is not None:
        return table(doc.flat)
    return text.join([b for b in doc.blocks if isinstance(b, (Table, Lines))], _block)


def _block(block: Block) -> str | None:
    if isinstance(block, Table):
        return table(block)
    assert isinstance(block, Lines)
    return text.lines(block, text.BULLET, textsafe.cell)


def table(table: Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(map(textsafe.csv_cell, table.columns))
    writer.writerows(map(textsafe.csv_cell, row) for row in table.rows)
    return out.getvalue().rstrip("\n")
