"""Figures openssl printed without measuring anything are never `ok` (issue 12, class 4).

apps/speed.c prints whatever it computed: a failed operation counts -1 (`-0.1` verify/s over 10 s,
`-inf` when it failed at once), a test that could not run leaves 0.00 (3.x `md4 error!`), a time of
0 gives inf/nan. Such a cell is `error` with the reason, or `unsupported` when the build lacks the test.
"""
from pathlib import Path

import pytest

from orchestrator.model import ERROR, OK, UNSUPPORTED
from orchestrator.parse.console import parse_console
from orchestrator.parse.speed import parse_speed
from speed_corpora import generated

DATA = Path(__file__).resolve().parents[1] / "data"


def load(name: str) -> str:
    return (DATA / "speed" / name).read_text()


def cells(parsed):
    return {(m.algorithm, m.block_size if m.operation is None else m.operation): m for m in parsed.measurements}


@pytest.mark.parametrize("name", ["openssl-3.3.2-aarch64-constructed-verify-failed.txt",
                                  "openssl-3.3.2-aarch64-constructed-mr-verify-failed.txt"])
def test_3_3_failed_rsa_verify_is_an_error_human_and_mr(name):
    got = cells(parse_speed(load(name)))
    verify = got[("rsa2048", "verify")]
    assert verify.status == ERROR and verify.ops_per_second is None
    assert verify.reason.startswith("verify failed (openssl printed '-0.1") and verify.count == -1
    # the signature table's verify failed at once: -1 in 0.00 s of CPU time is -inf
    sig_verify = got[("rsa2048-sig", "verify")]
    assert sig_verify.status == ERROR and "-inf" in sig_verify.reason
    # the other operations of the same rows are good figures
    assert (got[("rsa2048", "sign")].status, got[("rsa2048", "sign")].ops_per_second) == (OK, pytest.approx(19130 / 9.90, rel=1e-4))
    assert got[("rsa2048-sig", "sign")].status == OK and got[("rsa2048-kem", "encaps")].status == OK


@pytest.mark.parametrize("name", ["openssl-1.1.1w-x86_64-constructed-ecdsa-verify-failed.txt",
                                  "openssl-1.1.1w-x86_64-constructed-mr-ecdsa-verify-failed.txt"])
def test_1_1_1_failed_ecdsa_verify_is_an_error_human_and_mr(name):
    got = cells(parse_speed(load(name)))
    assert got[("ecdsap256", "verify")].status == ERROR and "verify failed" in got[("ecdsap256", "verify")].reason
    assert got[("ecdsap256", "sign")].ops_per_second == pytest.approx(81000 / 9.99, rel=1e-4)


def test_3_0_tests_the_default_provider_lacks_are_unsupported_not_zero():
    """Real: `openssl speed -seconds 1 md4 whirlpool rmd160` on 3.0.22 prints `md4 error!` and a 0.00 row."""
    parsed = parse_speed(load("openssl-3.0.22-x86_64-md4-whirlpool-rmd160-unavailable.txt"))
    got = cells(parsed)
    for name in ("md4", "whirlpool"):
        assert {got[(name, size)].status for size in (16, 16384)} == {UNSUPPORTED}
        assert "md4 error!" in got[("md4", 16)].reason and got[(name, 16)].bytes_per_second is None
    assert got[("rmd160", 16)].status == OK and got[("rmd160", 16)].bytes_per_second == 48488000.0
    assert any("md4 error!" in note for note in parsed.skipped)


def test_a_single_zero_or_negative_cell_is_an_error():
    header = "The 'numbers' are in 1000s of bytes per second processed.\ntype             16 bytes     64 bytes\n"
    got = cells(parse_speed("version: 3.0.22\n" + header + "AES-128-GCM      39733.66k         0.00 \n"))
    assert got[("aes-128-gcm", 16)].status == OK
    assert (got[("aes-128-gcm", 64)].status, got[("aes-128-gcm", 64)].reason) == (ERROR, "not measured (openssl printed '0.00')")
    got = cells(parse_speed("+H:16:64\n+F:25:AES-128-GCM:39733660.00:-12.50\n"))
    assert got[("aes-128-gcm", 64)].status == ERROR and "failed" in got[("aes-128-gcm", 64)].reason


def test_a_zero_row_that_openssl_ran_is_an_error_not_unsupported():
    text = ("Doing md5 for 3s on 16 size blocks: 0 md5's in 3.00s\nDoing md5 for 3s on 64 size blocks: 0 md5's in 3.00s\n"
            "OpenSSL 1.1.1w  11 Sep 2023\nThe 'numbers' are in 1000s of bytes per second processed.\n"
            "type             16 bytes     64 bytes\nmd5                  0.00         0.00 \n")
    got = cells(parse_speed(text))
    assert got[("md5", 16)].status == ERROR and "not measured" in got[("md5", 16)].reason


def _all_fixtures():
    return sorted((DATA / "speed").rglob("*.txt")) + sorted((DATA / "console").glob("*.txt"))


@pytest.mark.parametrize("path", _all_fixtures(), ids=lambda p: p.name)
def test_no_ok_figure_is_negative_infinite_nan_or_zero(path):
    """The property over every log in tests/data and the corpora generated from it (wrapped, cut off,
    -multi children interleaved), through the product's entry point (parse_console)."""
    text = path.read_text()
    for variant in [text] + generated(text):
        for m in parse_console(variant).measurements:
            if m.status == OK:
                assert m.value is not None and 0 < m.value < float("inf"), m
            else:
                assert m.value is None and m.reason, m
