"""The Markdown format: GitHub tables, every value of host text escaped (textsafe.markdown), and what is left of the
page (a note's own text) under the terminal rule: Markdown source is read as text as often as rendered, so it
carries no control character, on stdout as in a file."""
from __future__ import annotations

from orchestrator import textsafe
from orchestrator.render import layout, text
from orchestrator.render.model import Aside, Block, Document, Figure, Heading, Lines, Note, Table

BULLET = "- "


def write(doc: Document, width: int | None = None) -> str:
    """A Markdown document is never cut: `width` is for terminals. Figures need a file beside it (page)."""
    return textsafe.terminal(text.join(doc.blocks, lambda block: _block(block, {})))


def page_files(doc: Document, stem: str) -> tuple[str, dict[str, bytes]]:
    """A page and its figures beside it, as <stem>-<slug>.png, linked."""
    figures = [block for block in doc.blocks if isinstance(block, Figure)]
    names = {figure.slug: f"{stem}-{figure.slug}.png" for figure in figures}
    page = textsafe.terminal(text.join(doc.blocks, lambda block: _block(block, names))) + "\n"
    return page, {names[figure.slug]: figure.png for figure in figures}


def _block(block: Block, figures: dict[str, str]) -> str | None:
    if isinstance(block, Table):  # every cell escaped (textsafe.markdown)
        return layout.grid(block.columns, text.shown(block), markdown=True)
    if isinstance(block, Lines):
        return text.lines(block, BULLET, textsafe.markdown)
    if isinstance(block, Aside):
        return block.text
    if isinstance(block, Note):
        return f"_{textsafe.markdown(block.text)}_"
    if isinstance(block, Heading):
        return "#" * block.level + " " + textsafe.markdown(block.text)
    assert isinstance(block, Figure)
    name = figures.get(block.slug)
    return f"![{textsafe.markdown(block.title)}]({name})" if name else None
