"""The PEP 517 backend of sslbench: setuptools' own, building every wheel from an empty build directory.

setuptools copies the package into `build/lib` and ships whatever that directory holds, so a module
deleted or renamed since the last `pip install .` or `pip wheel .` on the same checkout would still
reach users from the stale copy there. Removing `build/` first makes the wheel what the tree holds now.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every other hook is setuptools' own)


def _fresh_build_dir() -> None:
    # The backend runs with the project's root as its working directory (PEP 517).
    shutil.rmtree(Path("build"), ignore_errors=True)


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    _fresh_build_dir()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
