"""A store as a hostile fleet leaves it, made the way a user makes one: `sslbench import` of real logs.

- `gw<U+202E>1` (a bidi override in the host name) with a firmware label carrying 0x01, DEL and an escape
  sequence, measured twice and imported with one `--date`: two runs of the same time;
- `r "7"\\b` (quotes and a backslash) from an `openssl speed -mr` log with public-key figures, at that time too.
For the formats for programs (test_machine_outputs.py) and the programs that read them (test_consumers.py).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
SSLBENCH = str(Path(sys.executable).parent / "sslbench")
GATEWAY = "gw\u202e1"
FIRMWARE = "fw\x01 1.0\x7f \x1b]0;owned\x07"
ROUTER = 'r "7"\\b'
DATE = "2026-01-01T00:00:00Z"
DATE_UNIX = 1767225600  # DATE as Unix seconds
FIRMWARE_LABEL_START = "fw\x01"  # how the firmware label (identity.firmware_label) of GATEWAY's runs starts
LOGS = ((GATEWAY, DATA / "console" / "debian12-x86_64-openssl-3.0.19-session.txt", FIRMWARE),
        (GATEWAY, DATA / "console" / "openssl-3.0.22-x86_64-legacy-and-evp-session.txt", FIRMWARE),
        (ROUTER, DATA / "speed" / "openssl-1.1.1w-x86_64-mr-chacha20-poly1305-pk.txt", None))


def sslbench(*args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """The CLI as a user's pipeline runs it: stdout a pipe, bytes as written."""
    done = subprocess.run([SSLBENCH, *args], capture_output=True, timeout=120)
    if check:
        assert done.returncode == 0, (args, done.stderr.decode("utf-8", "replace"))
    return done


def make(results: Path) -> Path:
    """The store under `results` (made by the CLI's import)."""
    for host, log, firmware in LOGS:
        sslbench("import", str(log), "--host", host, "--date", DATE, "--results", str(results),
                 *(("--firmware", firmware) if firmware else ()))
    return results
