"""The JSON format: the document's `data` (raw numbers, not display strings), else its table's rows as objects
keyed by the columns. Host text by JSON's own escapes: `json.dumps` writes control characters and every non-ASCII
character as `\\u` escapes, DEL (which it leaves as it is) is written `\\u007f` here: the text is pure printable
ASCII, inert in a terminal, and reads back to the exact name."""
from __future__ import annotations

import json
from typing import Any

from orchestrator.render.model import Document, Later


def write(doc: Document, width: int | None = None) -> str:
    text = _write(doc)
    return text.replace("\x7f", "\\u007f") if "\x7f" in text else text  # DEL only occurs inside a string


def _write(doc: Document) -> str:
    if doc.data is None:
        tables = doc.tables()
        data: Any = [dict(zip(t.columns, row)) for t in tables[:1] for row in t.rows]
        return json.dumps(data, indent=2)
    if doc.data_lines:  # one record a line: json's C encoder (indent= would force the slow pure-Python one)
        return "[\n" + ",\n".join(map(json.dumps, doc.data)) + "\n]" if doc.data else "[]"
    return json.dumps(doc.data.items if isinstance(doc.data, Later) else doc.data, indent=2)
