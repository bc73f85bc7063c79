"""A real `openssl` program over a real libcrypto of another release, as distributions ship them (two packages,
one soname): this machine's /usr/bin/openssl run over the bookworm libcrypto.so.3 of the test fleet's build
cache. `sslbench hosts` and a run on localhost (ansible_connection: local) record and show both versions, and the
cells' method follows the program's. Skipped where no libcrypto of another version is at hand."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import methods, store
from orchestrator.analysis.cells import host_cells, run_timer

SSLBENCH = str(Path(sys.executable).parent / "sslbench")
CACHE = Path(os.environ.get("SSLBENCH_RIG_CACHE", "/srv/sslbench-rig"))


def _version(openssl: str, env: dict[str, str]) -> str:
    out = subprocess.run([openssl, "version"], capture_output=True, text=True, env=env, timeout=30).stdout
    return out.strip()


def _other_libcrypto() -> tuple[Path, str] | None:
    """A directory holding a libcrypto.so.3 whose version differs from /usr/bin/openssl's own, and that version."""
    own = _version("/usr/bin/openssl", dict(os.environ))
    for lib in sorted(CACHE.glob("builds/*/usr/lib/x86_64-linux-gnu/libcrypto.so.3")):
        line = _version("/usr/bin/openssl", dict(os.environ, LD_LIBRARY_PATH=str(lib.parent)))
        found = re.search(r"\(Library: OpenSSL (\S+)", line)
        if found and found.group(1) not in own.split("(Library:")[0]:
            return lib.parent, found.group(1)
    return None


@pytest.fixture
def mixed(tmp_path: Path) -> tuple[dict[str, str], str, str]:
    if not Path("/usr/bin/openssl").exists() or shutil.which("sh") is None:
        pytest.skip("needs /usr/bin/openssl")
    other = _other_libcrypto()
    if other is None:
        pytest.skip(f"no libcrypto.so.3 of another version under {CACHE}/builds (tests/rig/rig.py build makes one)")
    libdir, library = other
    program = re.match(r"OpenSSL (\S+)", _version("/usr/bin/openssl", dict(os.environ))).group(1)  # type: ignore[union-attr]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "openssl").write_text(f'#!/bin/sh\nLD_LIBRARY_PATH={libdir} exec /usr/bin/openssl "$@"\n')
    (bin_dir / "openssl").chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}"), program, library


def test_hosts_and_a_run_show_program_and_library_versions(mixed, tmp_path):
    env, program, library = mixed
    said = subprocess.run([SSLBENCH, "hosts"], capture_output=True, text=True, env=env, timeout=120)
    assert said.returncode == 0, said.stderr
    assert f"{program} (libcrypto {library})" in said.stdout
    listed = subprocess.run([SSLBENCH, "hosts", "--format", "json"], capture_output=True, text=True, env=env,
                            timeout=120)
    (host,) = json.loads(listed.stdout)
    assert (host["openssl"], host["openssl_library"]) == (program, library)

    results = tmp_path / "results"
    ran = subprocess.run([SSLBENCH, "run", "--algorithms", "aes-256-gcm", "--sizes", "1024", "--threads", "1",
                          "--seconds", "1", "--idle-wait", "2", "--results", str(results)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr
    (run,) = store.load_all(results)
    (result,) = run.hosts
    assert (result.openssl.program_version, result.openssl.library_version) == (program, library)
    (cell,) = [c for k, c in host_cells(result, timer=run_timer(run)).items() if k.algorithm == "aes-256-gcm"]
    assert cell.methods == {methods.method_id("aes-256-gcm", "evp", None, program, "elapsed"): program}
    history = subprocess.run([SSLBENCH, "history", "localhost", "--results", str(results)], capture_output=True,
                             text=True, env=env, timeout=60)
    assert f"OpenSSL {program} (libcrypto {library})" in history.stdout
