"""Logs as the field makes them, from real `openssl speed` runs (tests/data/speed/field, README there):
cut off at any byte, two runs saved one after the other, stdout saved before stderr, a session whose
command line names an `-evp` cipher and public-key tests. Whatever the shape, a figure said `ok`
without a flag is the figure openssl printed for that cell (algorithm, operation, threads, block size).
"""
import pytest

from orchestrator.cli import main
from orchestrator.model import OK, PARTIAL
from orchestrator.parse.console import parse_console
from orchestrator.parse.speed import parse_speed
from speed_corpora import DATA

FIELD = DATA / "field"
SINGLE = FIELD / "openssl-3.0.22-x86_64-evp-sha256-pk.txt"
MULTI8 = FIELD / "openssl-3.0.22-x86_64-multi8-evp-pk.txt"
MR_PK = FIELD / "openssl-3.0.22-x86_64-mr-pk.txt"
MR_MULTI3 = FIELD / "openssl-3.0.22-x86_64-mr-multi3-bytes1400.txt"


def cell(m):
    return (m.algorithm, m.operation, m.threads, m.block_size)


def figures(log):
    return {cell(m): m.value for m in log.measurements if m.status == OK and not m.flags}


# -- a command line with `-evp CIPHER` and public-key tests (class: the cipher's api given to RSA) ----

def test_public_key_records_do_not_take_the_api_of_the_evp_cipher():
    session = parse_console((FIELD / "session-evp-and-pk.log").read_text())
    bare = parse_console(SINGLE.read_text())
    as_keys = lambda log: {(m.algorithm, m.api, m.operation, m.threads, m.block_size): m.value  # noqa: E731
                           for m in log.measurements}
    assert as_keys(session) == as_keys(bare)
    assert {m.api for m in session.measurements if m.operation} == {None}
    assert {m.api for m in session.measurements if m.algorithm == "aes-128-gcm"} == {"evp"}
    assert {m.api for m in session.measurements if m.algorithm == "sha256"} == {None}


# -- a mangled `-mr` progress line without its name (found by test_speed_robustness's fuzzing) ---------

def test_a_kem_sig_progress_line_without_its_name_names_no_figure_empty():
    """`+R18:41::rsa2048:10.21` (a byte lost in a copy) once named the next `+F10` figure "" and said it ok."""
    import re
    text = (DATA / "openssl-3.3.2-aarch64-constructed-mr-rsa2048-kem-sig.txt").read_text()
    mangled, n = re.subn(r"^\+R18:(\d+):", r"+R18:\1::", text, flags=re.M)
    assert n
    log = parse_speed(mangled)
    assert log.measurements and all(m.algorithm for m in log.measurements)
