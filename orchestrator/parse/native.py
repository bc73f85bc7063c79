"""The parser compiled to C with mypyc: the same source, 1.4-1.9x as fast per log (benchmarks/bench_parse.py).

The Python source stays the parser (and the reference the tests compare against); the compiled build is an
accelerator that is used only while it matches that source exactly:
- `python -m orchestrator.parse.native_build` (run by `make setup`) compiles MODULES into build/native-parser/ and
  writes a fingerprint of their sources, the Python version and the machine;
- `enable()`, called by orchestrator.parse before it imports them, puts that build first on the package's
  search path when the fingerprint still matches. A parser edited since is read from its .py files, never
  shadowed by a stale build. SSLBENCH_PURE_PYTHON=1 turns the build off.
Why mypyc: it compiles the type-annotated code as it is (no second language to keep in step); the parser
is per-line string work that CPython runs with much interpreter overhead.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import os
import platform
import sys
from pathlib import Path

MODULES = ("names", "speed", "cpuinfo", "osinfo", "console")
PURE_ENV = "SSLBENCH_PURE_PYTHON"
_PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE_ROOT = _PACKAGE_DIR.parent.parent  # the directory holding the `orchestrator` package
BUILD_DIR = SOURCE_ROOT / "build" / "native-parser"
FINGERPRINT_FILE = "FINGERPRINT"  # in a build: what it was built from


def fingerprint(package_dir: Path = _PACKAGE_DIR) -> str:
    """What a build must match: the compiled modules' sources, this Python and this machine."""
    digest = hashlib.sha256(f"{sys.version}|{platform.machine()}".encode())
    for name in MODULES:
        digest.update(name.encode() + b"\0" + (package_dir / f"{name}.py").read_bytes() + b"\0")
    return digest.hexdigest()


def enable(package_path: list[str], build_dir: Path = BUILD_DIR) -> bool:
    """Put a matching build first on orchestrator.parse's __path__. True if it is used."""
    if os.environ.get(PURE_ENV, "0") not in ("", "0"):
        return False
    try:
        recorded = (build_dir / FINGERPRINT_FILE).read_text().strip()
        current = fingerprint()
    except OSError:  # no build (or no source: an installed copy without .py files keeps what it has)
        return False
    if recorded != current or not any(build_dir.glob("*__mypyc.*")):  # (no shared library: no module loads)
        return False
    if str(build_dir) not in sys.path:
        sys.path.append(str(build_dir))  # mypyc's shared library, which the compiled modules import by name
    package_path.insert(0, str(build_dir / "orchestrator" / "parse"))
    return True


def in_use() -> bool:
    """True when orchestrator.parse's modules were loaded from the compiled build."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return all(str(importlib.import_module(f"orchestrator.parse.{name}").__file__).endswith(suffixes)
               for name in MODULES)
