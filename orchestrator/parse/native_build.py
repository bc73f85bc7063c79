"""Build the compiled parser: `python -m orchestrator.parse.native_build` (run by `make setup`).

See orchestrator.parse.native for when the build is used. Needs mypy (the `native` extra) and a C compiler.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from orchestrator.parse.native import BUILD_DIR, FINGERPRINT_FILE, MODULES, SOURCE_ROOT, fingerprint


def build(build_dir: Path = BUILD_DIR) -> None:
    """Compile MODULES with mypyc into build_dir (replaced as a whole, so a failed build leaves the old one).

    Raises RuntimeError with mypyc's last lines when it cannot (mypy missing, no C compiler, a type error)."""
    try:
        import mypyc  # noqa: F401  (only to say what is missing)
    except ImportError:
        raise RuntimeError("mypyc is not installed (pip install -e '.[native]', as `make setup` does)") from None
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="native-parser-", dir=build_dir.parent) as work:
        # Compile a copy: mypyc writes its modules next to their sources, which must stay pure Python.
        shutil.copytree(SOURCE_ROOT / "orchestrator", Path(work) / "orchestrator",
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        expected = fingerprint(Path(work) / "orchestrator" / "parse")  # of what is compiled, edits since excluded
        sources = [f"orchestrator/parse/{name}.py" for name in MODULES]
        done = subprocess.run([sys.executable, "-m", "mypyc", *sources], cwd=work, capture_output=True, text=True,
                              env={**os.environ, "MYPY_CACHE_DIR": str(Path(work) / ".mypy_cache")})
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise RuntimeError(f"mypyc failed:\n{tail}")
        staged = Path(work) / "staged"
        (staged / "orchestrator" / "parse").mkdir(parents=True)
        for library in Path(work).glob("*__mypyc*"):
            shutil.move(str(library), staged / library.name)
        for name in MODULES:
            compiled = list((Path(work) / "orchestrator" / "parse").glob(f"{name}.*.so"))
            if len(compiled) != 1:
                raise RuntimeError(f"mypyc left {len(compiled)} compiled files for {name}.py, expected 1")
            shutil.move(str(compiled[0]), staged / "orchestrator" / "parse" / compiled[0].name)
        (staged / FINGERPRINT_FILE).write_text(expected + "\n")
        old = Path(work) / "old"
        if build_dir.exists():
            build_dir.rename(old)
        staged.rename(build_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m orchestrator.parse.native_build",
        description="Compile sslbench's parser with mypyc (build/native-parser/). Without it the parser runs "
                    "from its Python source: same results, about 1.5x the time per log.")
    parser.add_argument("--require", action="store_true",
                        help="exit 1 when the build fails (default: say so and exit 0, the parser works without it)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        build()
    except (RuntimeError, OSError) as exc:
        print(f"sslbench: the compiled parser was not built ({exc}); the pure-Python parser will be used.",
              file=sys.stderr)
        return 1 if args.require else 0
    print(f"sslbench: compiled parser built in {time.monotonic() - started:.0f} s ({BUILD_DIR})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
