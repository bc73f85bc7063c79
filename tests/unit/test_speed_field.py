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


# -- two runs saved one after the other (class: one run's threads and figures given to the other) ----

@pytest.mark.parametrize("name, first, second", [
    ("two-runs-multi8-then-single.log", MULTI8, SINGLE),
    ("two-runs-single-then-multi8.log", SINGLE, MULTI8),
    ("two-runs-mr-multi3-then-mr.log", MR_MULTI3, MR_PK),
], ids=lambda v: v if isinstance(v, str) else "")
def test_two_runs_in_one_file_keep_their_own_threads_and_figures(name, first, second):
    """Once `-multi 8` then a plain run gave the plain run's figures with threads 8 (and the -multi
    summary was taken for missing); a plain run then `-multi 8` put every figure at threads 8."""
    log = parse_console((FIELD / name).read_text())
    expected = {**figures(parse_console(first.read_text())), **figures(parse_console(second.read_text()))}
    assert figures(log) == expected
    assert not any(m.flags for m in log.measurements)
    assert {m.threads for m in log.measurements} == {m.threads for p in (first, second)
                                                    for m in parse_console(p.read_text()).measurements}


def test_stdout_saved_before_stderr_is_one_run_not_partial_figures():
    """`openssl speed … >out 2>err; cat out err`: the progress lines after the tables are the same run."""
    stdout_only = figures(parse_console((FIELD / "openssl-3.0.22-x86_64-evp-sha256-pk.stdout.txt").read_text()))
    log = parse_console((FIELD / "stdout-then-stderr.log").read_text())
    assert figures(log) == stdout_only
    assert not any(m.flags for m in log.measurements) and len(log.measurements) == len(stdout_only)
    assert all(m.count is not None for m in log.measurements)  # the progress lines' counts are attached


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
