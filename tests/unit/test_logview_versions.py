"""Issue 38, item 6: `sslbench parse` hid libcrypto's version where the `openssl` program (3.0.22 here) runs over
another libcrypto (3.0.20): the JSON had both, the text one. The log is a real session of such a build."""
from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import cli
from orchestrator.kinds.speed import measured_by as speed_version
from orchestrator.model import HostResult
from orchestrator.parse.console import parse_console

DATA = Path(__file__).resolve().parents[1] / "data"
SPLIT = DATA / "methods" / "openssl-3.0.22-program-over-libcrypto-3.0.20.session.txt"
SAME = DATA / "console" / "debian12-x86_64-openssl-3.0.19-session.txt"


def openssl_lines(path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert cli.main(["parse", str(path)]) == 0
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith(("OpenSSL:", "method:"))]


def test_both_versions_and_the_one_the_method_follows(capsys: pytest.CaptureFixture[str]) -> None:
    log = parse_console(SPLIT.read_text(encoding="utf-8"))
    assert (log.openssl.program_version, log.openssl.library_version) == ("3.0.22", "3.0.20")
    lines = openssl_lines(SPLIT, capsys)
    assert lines[0].startswith("OpenSSL: program 3.0.22, libcrypto 3.0.20 (")
    followed = speed_version(HostResult("h", openssl=log.openssl, measurements=log.measurements))
    assert followed == "3.0.22"  # what the cells' method is taken from (kinds/speed.py)
    assert lines[1].startswith(f"method:  the program's, {followed}:") and lines[1].endswith("libcrypto's, 3.0.20")


def test_one_version_where_they_agree(capsys: pytest.CaptureFixture[str]) -> None:
    lines = openssl_lines(SAME, capsys)
    assert len(lines) == 1 and lines[0].startswith("OpenSSL: 3.0.19")
