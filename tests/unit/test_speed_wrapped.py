"""Hard-wrapped logs (issue 12, class 5): mail clients and forums wrap lines at 72-80 columns.

A table row whose last figures went to the next line is joined when that line holds figures only and
the row was short of the header's columns; the same for a wrapped header, a wrapped public-key header
or row, a progress line and a `Got: … from N` line. speed_corpora.hard_wrapped wraps at white space as
textwrap (and mail clients) do.
"""
from pathlib import Path

import pytest

from orchestrator.parse.speed import parse_speed
from speed_corpora import DATA, hard_wrapped

FIXTURES = sorted(DATA.rglob("*.txt"))


def summary(text: str) -> list[tuple]:
    return sorted((m.algorithm, m.block_size or 0, m.operation or "", m.value if m.value is not None else -1.0,
                   m.count or 0, m.seconds or 0.0, m.threads, m.api or "", m.status, tuple(m.flags))
                  for m in parse_speed(text).measurements)


@pytest.mark.parametrize("width", [72, 76, 80])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(DATA)))
def test_wrapped_log_reads_the_same(path: Path, width: int):
    text = path.read_text()
    assert summary(hard_wrapped(text, width)) == summary(text)


def cells(text: str) -> dict:
    return {(m.algorithm, m.block_size if m.operation is None else m.operation): m
            for m in parse_speed(text).measurements}


def test_a_row_wrapped_inside_a_header_and_a_row_split_twice():
    """The strictest throughput case: the header wrapped between `8192` and `bytes`, a row in three pieces."""
    text = ("version: 3.0.22\nThe 'numbers' are in 1000s of bytes per second processed.\n"
            "type             16 bytes     64 bytes    256 bytes   1024 bytes   8192\n"
            "bytes  16384 bytes\n"
            "AES-128-GCM      39733.66k   109071.05k\n"
            "310095.28k  1619241.49k\n"
            "3599270.21k  3888209.64k\n")
    got = cells(text)
    assert [got[("aes-128-gcm", size)].bytes_per_second for size in (16, 8192, 16384)] == [
        39733660.0, 3599270210.0, 3888209640.0]


def test_a_public_key_row_and_a_kem_header_wrapped():
    text = ("                   sign    verify    encrypt   decrypt   sign/s verify/s\n"
            "encr./s  decr./s\n"
            "rsa  2048 bits 0.000518s 0.000013s 0.000013s 0.000524s   1932.3\n"
            "77414.5  74756.6   1908.7\n"
            "                               keygen    encaps    decaps keygens/s\n"
            "encaps/s  decaps/s\n"
            "                 ML-KEM-768 0.000047s 0.000034s 0.000051s   21091.4\n"
            "29652.3   19683.7\n")
    got = cells(text)
    assert got[("rsa2048", "decrypt")].ops_per_second == 1908.7
    assert got[("ml-kem-768", "encaps")].ops_per_second == 29652.3  # a KEM row, not a signature row


def test_a_short_row_not_followed_by_figures_is_not_joined():
    text = ("version: 3.0.22\ntype             16 bytes     64 bytes\n"
            "AES-128-GCM      39733.66k\n"
            "sha256           12345.67k   23456.78k\n")
    parsed = parse_speed(text)
    assert {(m.algorithm, m.block_size) for m in parsed.measurements} == {("sha256", 16), ("sha256", 64)}
    assert any("'AES-128-GCM' has 1 values for 2 block sizes" in note for note in parsed.skipped)
