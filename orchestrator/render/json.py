"""The JSON format: the document's `data` (raw numbers, not display strings), else its table's rows as objects
keyed by the columns."""
from __future__ import annotations

import json
from typing import Any

from orchestrator.render.model import Document, Later


def write(doc: Document, width: int | None = None) -> str:
    if doc.data is None:
        tables = doc.tables()
        data: Any = [dict(zip(t.columns, row)) for t in tables[:1] for row in t.rows]
        return json.dumps(data, indent=2)
    if doc.data_lines:  # one record a line: json's C encoder (indent= would force the slow pure-Python one)
        return "[\n" + ",\n".join(map(json.dumps, doc.data)) + "\n]" if doc.data else "[]"
    return json.dumps(doc.data.items if isinstance(doc.data, Later) else doc.data, indent=2)
