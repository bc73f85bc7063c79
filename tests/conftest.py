"""Shared test helpers: golden files of whole outputs (as benchstat's tests keep them); the benchmarks' store
generator."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


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


@pytest.fixture(scope="session")
def fleet_history() -> ModuleType:
    """benchmarks/fleet_history.py: months of nightly runs of a fleet with planted firmware steps and drifts."""
    spec = importlib.util.spec_from_file_location("fleet_history", BENCHMARKS / "fleet_history.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module
