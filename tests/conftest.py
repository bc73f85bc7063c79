"""Shared test helpers: golden files of whole outputs (as benchstat's tests keep them)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture
def golden():
    """golden("name.txt", text): the text must equal tests/golden/name.txt byte for byte.
    SSLBENCH_UPDATE_GOLDEN=1 rewrites the file instead (then read the diff before committing it)."""

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if os.environ.get("SSLBENCH_UPDATE_GOLDEN") == "1":
            path.write_text(text)
            return
        assert path.exists(), f"no golden file {path}: run with SSLBENCH_UPDATE_GOLDEN=1 and read it"
        assert text == path.read_text(), f"output differs from {path}"

    return check
