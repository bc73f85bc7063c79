"""Comparison tables: flat records in, text / Markdown / CSV / JSON out."""
from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

from tabulate import tabulate

from orchestrator.errors import UserError

FORMATS = ("table", "markdown", "csv", "json")


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table") -> str:
    """Render one table. `json` gives a list of objects keyed by the headers."""
    if fmt == "table":
        return tabulate(rows, headers=list(headers), tablefmt="simple", disable_numparse=True)
    if fmt == "markdown":
        return tabulate(rows, headers=list(headers), tablefmt="github", disable_numparse=True)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(rows)
        return out.getvalue().rstrip("\n")
    if fmt == "json":
        return json.dumps([dict(zip(headers, row)) for row in rows], indent=2)
    raise UserError(f"unknown format '{fmt}'; choose one of: {', '.join(FORMATS)}")
