"""The text format: a document for a terminal, its tables fitted to a width (layout.grid)."""
from __future__ import annotations

import textwrap
from typing import Any, Callable, Sequence

from orchestrator import textsafe
from orchestrator.render import layout
from orchestrator.render.model import Aside, Block, Document, Figure, Heading, Lines, Note, Table
from orchestrator.units import fmt_number

BULLET = "  "


def write(doc: Document, width: int | None = None) -> str:
    """Blocks a blank line apart (a block that `run_on` follows on the next line); the page's title and figures
    say nothing a terminal needs."""
    return join(doc.blocks, lambda block: _block(block, width))


def join(blocks: list[Block], said: Callable[[Block], str | None]) -> str:
    """The blocks a format says (`said`: None for one it leaves out), a blank line apart, or on the next line
    where a block is `run_on`."""
    out: list[str] = []
    for block in blocks:
        text = said(block)
        if text is None:
            continue
        if out:
            out.append("\n" if isinstance(block, (Lines, Aside)) and block.run_on else "\n\n")
        out.append(text)
    return "".join(out)


def _block(block: Block, width: int | None) -> str | None:
    if isinstance(block, Table):
        return layout.grid(block.columns, shown(block), markdown=False, width=width, drop=block.drop)
    if isinstance(block, Lines):
        return lines(block, BULLET, textsafe.cell)
    if isinstance(block, Aside):
        return block.text
    if isinstance(block, Note):
        text = textsafe.cell(block.text)
        return textwrap.fill(text, width) if width else text
    if isinstance(block, Heading) and block.level > 1:
        text = textsafe.cell(block.text)
        wrapped = textwrap.wrap(text, width) if width else [text]
        return "\n".join(wrapped + ["=" * max(map(textsafe.width, wrapped))])
    assert isinstance(block, (Heading, Figure))
    return None


def lines(block: Lines, bullet: str, safe: Callable[[str], str]) -> str | None:
    """The title as it is (sslbench's own words), each line of host text as the format shows it."""
    if not block.lines and not block.title:
        return None
    marker = bullet if block.bullets else block.prefix
    return "\n".join(([block.title] if block.title else []) + [marker + safe(line) for line in block.lines])


def shown(table: Table) -> Sequence[Sequence[Any]]:
    """The table's rows as a reader sees them: a `readable` table's figures with 3 significant figures, 12,345."""
    if not table.readable:
        return table.rows
    return [[fmt_number(v) if isinstance(v, float) else v for v in row] for row in table.rows]
