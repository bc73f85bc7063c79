"""The HTML format: the one writer of HTML pages and their one stylesheet, for the report (a self-contained page:
PNGs inline) and the site (`sslbench publish`: PNGs beside the pages). Every value of host text is escaped here."""
from __future__ import annotations

import base64
from html import escape
from typing import Callable, Sequence

from orchestrator.render.model import Aside, Block, Document, Figure, Heading, Lines, Note, Table

STYLESHEET = """
body { font-family: system-ui, sans-serif; margin: 1em auto; max-width: 96em; padding: 0 1em; color: #222; }
nav { margin-bottom: 1em; line-height: 1.8; } nav a { margin-right: 1em; }
h1 { border-bottom: 2px solid #446; font-size: 1.5em; overflow-wrap: anywhere; } h2 { color: #334; font-size: 1.2em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.82em; }
th, td { border: 1px solid #ccc; padding: 0.15em 0.4em; text-align: left; vertical-align: middle; white-space: nowrap; }
th { white-space: normal; min-width: 3em; } table.wrap td { white-space: normal; } td a { white-space: nowrap; }
th { background: #eef; } tr.reference td { background: #f3f3f3; color: #555; font-style: italic; }
td.step { font-weight: bold; } td.down { color: #b00; } td.up { color: #070; }
ul { padding-left: 1.2em; } li { overflow-wrap: anywhere; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 34em), 1fr)); gap: 1em; }
figure { margin: 0; } figcaption { font-size: 0.85em; color: #555; overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; } .swatch { display: inline-block; width: 0.9em; height: 0.9em;
  margin-right: 0.3em; vertical-align: middle; } p.note { color: #555; font-size: 0.9em; overflow-wrap: anywhere; }
"""


def page(title: str, body: Sequence[str], nav: str | None = None, head: str = "") -> str:
    """A whole page: with `nav` (the site's links), the title as its first heading too; `head`: more of <head>
    (HTML already, the page's own style or policy)."""
    top = [f"<nav>{nav}</nav>", f"<h1>{escape(title)}</h1>"] if nav is not None else []
    return "\n".join(["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                      '<meta name="viewport" content="width=device-width, initial-scale=1">',
                      f"<title>{escape(title)}</title><style>{STYLESHEET}</style>{head}</head><body>",
                      *top, *body, "</body></html>"])


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[str] = (), wrap: bool = False
          ) -> str:
    """Cells are HTML already; a row's class from `classes`; `wrap`: long text may take several lines."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for i, row in enumerate(rows):
        css = f' class="{classes[i]}"' if i < len(classes) and classes[i] else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    opening = '<table class="wrap">' if wrap else "<table>"
    return f'<div class="scroll">{opening}<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def items(lines: Sequence[str]) -> str:
    """A list of host text."""
    return "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>"


def note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def figure(src: str, title: str, width: int | None = None, height: int | None = None, caption: str | None = None
           ) -> str:
    size = f' width="{width}" height="{height}"' if width and height else ""
    return (f'<figure><img src="{escape(src)}"{size} alt="{escape(title)}">'
            f"<figcaption>{escape(title if caption is None else caption)}</figcaption></figure>")


def inline(png: bytes) -> str:
    """A PNG as a data URI: a page that needs no file beside it."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def block(part: Block, src: Callable[[Figure], str] = lambda f: inline(f.png)) -> str:
    """A block of a document as HTML; a figure's image from `src` (inline by default)."""
    if isinstance(part, Heading):
        return f"<h{part.level}>{escape(part.text)}</h{part.level}>"
    if isinstance(part, (Note, Aside)):
        return note(part.text)
    if isinstance(part, Lines):
        return (f"<p>{escape(part.title)}</p>" if part.title else "") + items(part.lines)
    if isinstance(part, Table):
        return table(part.columns, [["" if v is None else escape(str(v)) for v in row] for row in part.rows],
                     wrap=True)
    return figure(src(part), part.title)


def write(doc: Document, width: int | None = None) -> str:
    """A self-contained page of the document: its first heading its title, every figure inline."""
    title = next((b.text for b in doc.blocks if isinstance(b, Heading)), "sslbench")
    return page(title, [block(b) for b in doc.blocks])
