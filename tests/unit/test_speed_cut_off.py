"""Logs cut off mid-run (issue 12, class 6): a router rebooted, the SSH session died.

The progress lines already hold count and CPU seconds (`Doing aes-128-cbc for 3s on 1024 size blocks:
123456 aes-128-cbc's in 2.99s`, `+DT`/`+R`): a cell whose table row never came is that line's figure,
as openssl computes it, flagged `partial`. Exit codes: 0 when any figure was read, 2 when none.
"""
import pytest

from orchestrator.cli import main
from orchestrator.model import OK, PARTIAL
from orchestrator.parse.speed import parse_speed
from speed_corpora import DATA, cut_off

# Every single-process log with progress lines, human and -mr, 1.0.x to 3.5 and LibreSSL.
CUTTABLE = [path for path in sorted(DATA.rglob("*.txt"))
            if ("Doing " in path.read_text() or "+DT" in path.read_text()) and "Forked child" not in path.read_text()
            and "console" not in path.name]


def key(m):
    return (m.algorithm, m.block_size, m.operation)


def test_the_issues_example_is_a_partial_figure(tmp_path, capsys):
    line = "Doing aes-128-cbc for 3s on 1024 size blocks: 123456 aes-128-cbc's in 2.99s\n"
    [m] = parse_speed(line).measurements
    assert (m.algorithm, m.block_size, m.count, m.seconds) == ("aes-128-cbc", 1024, 123456, 2.99)
    assert m.bytes_per_second == 123456 * 1024 / 2.99 and m.flags == [PARTIAL] and m.status == OK
    path = tmp_path / "cut.log"
    path.write_text(line)
    assert main(["parse", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "partial" in out and "progress lines only" in err


@pytest.mark.parametrize("path", CUTTABLE, ids=lambda p: str(p.relative_to(DATA)))
def test_every_cut_keeps_what_was_measured(path):
    """Cut after every line: each figure is the whole log's (its table row survived) or its progress
    line's count / seconds, flagged partial, within the rounding of the seconds openssl printed."""
    text = path.read_text()
    whole = {key(m): m for m in parse_speed(text).measurements}
    for lines in range(1, len(text.splitlines())):
        for m in parse_speed(cut_off(text, lines)).measurements:
            full = whole[key(m)]
            if PARTIAL not in m.flags:
                assert (m.value, m.status, m.api) == (full.value, full.status, full.api), (lines, key(m))
                continue
            assert m.status == OK and m.value == m.count * (m.block_size or 1) / m.seconds, (lines, key(m))
            assert (m.count, m.seconds) == (full.count, full.seconds), (lines, key(m))
            # the API as the whole log says, or unknown: before openssl's table there is no version
            assert m.api in (full.api, None), (lines, key(m), m.api, full.api)
            if full.status == OK:  # openssl divided by the unrounded seconds: ± 0.005 s
                assert m.value == pytest.approx(full.value, rel=0.0051 / m.seconds + 1e-3, abs=1), (lines, key(m))


@pytest.mark.parametrize("name", ["openssl-1.1.1w-x86_64-evp-aes-128-gcm.txt",
                                  "openssl-3.0.19-x86_64-mr-chacha20-poly1305.txt",  # -mr progress (+DT/+R)
                                  "openssl-1.0.2u-mips-constructed-legacy-pk.txt",
                                  "openssl-3.5.9-x86_64-kem-sig.txt"])
def test_exit_code_is_0_with_any_figure_2_without(name, tmp_path, capsys):
    """Progress lines alone exited 2, a version block alone 0 ('no results'): now the other way round."""
    text = (DATA / name).read_text()
    progress_only = "\n".join(line for line in text.splitlines() if line.startswith(("Doing", "+DT", "+R"))) + "\n"
    path = tmp_path / "cut.log"
    path.write_text(progress_only)
    assert main(["parse", str(path)]) == 0
    version_only = "\n".join(line for line in text.splitlines()
                             if line.startswith(("OpenSSL ", "version:", "built on:", "options:", "compiler:"))) + "\n"
    path.write_text(version_only or "OpenSSL 1.1.1w  11 Sep 2023\n")
    assert main(["parse", str(path)]) == 2
    assert capsys.readouterr().err.splitlines()[-1].startswith("sslbench: ")


def test_a_failed_progress_line_is_not_a_figure():
    [m] = parse_speed("Doing 256 bits verify ecdsa's for 10s: ECDSA verify failure\n"
                      "-1 256 bits ECDSA verify in 10.00s\n").measurements
    assert m.status == "error" and "verify failed" in m.reason and m.value is None
