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


# -- cut off at every byte (class: a cut that shortens the last number) --------------------------------

@pytest.mark.parametrize("path", [SINGLE, MR_PK, MR_MULTI3, FIELD / "tabs-openssl-3.0.22-x86_64-evp-sha256-pk.log"],
                         ids=lambda p: p.name)
def test_a_log_cut_at_any_byte_never_gives_a_shortened_figure(path):
    """`… 3632.0  66580.8` cut to `… 3632.0  6` once gave verify 6.0 ok; `1933858.13k` cut to
    `1933858.1` gave 1.9 MB/s ok (no `k`); `+F2:…:101568` gave 101568 ok. A cut number is no figure."""
    text = path.read_text()
    full = figures(parse_console(text))
    for offset in range(len(text) + 1):
        for parse in (parse_console, parse_speed):
            log = parse(text[:offset])
            assert log.errors == []  # no reader's exception caught by the safety net
            for key, value in figures(log).items():
                assert value == full[key], (offset, key, value, full[key], text[max(0, offset - 60):offset])
            for m in log.measurements:  # a flagged figure is still that cell's, from a whole line
                if m.status == OK and PARTIAL in m.flags:
                    assert m.value == pytest.approx(full[cell(m)], rel=0.35), (offset, cell(m))


def test_a_whole_log_without_its_last_newline_keeps_its_last_figures():
    for path in (SINGLE, MR_PK, MULTI8):
        text = path.read_text()
        assert figures(parse_console(text.rstrip("\n"))) == figures(parse_console(text))
        assert figures(parse_speed(text.rstrip("\n"))) == figures(parse_speed(text))


def test_the_cut_last_figure_is_not_read_and_the_exit_code_follows_the_rule(tmp_path, capsys):
    text = SINGLE.read_text()
    cut = text[:text.index("12046.2") + 1]  # `… 30847.7  1`: Ed25519 verify/s cut to its first digit
    path = tmp_path / "cut.log"
    path.write_text(cut)
    log = parse_console(cut)
    assert ("ed25519", "verify", 1, None) not in figures(log)
    assert figures(log)[("rsa2048", "verify", 1, None)] == 66580.8
    assert main(["parse", str(path)]) == 0
    path.write_text(text[:text.index("\n") - 3])  # the first progress line, cut: no figure at all
    assert main(["parse", str(path)]) == 2
    capsys.readouterr()


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


@pytest.mark.parametrize("name, stdout", [
    ("stdout-then-stderr.log", "openssl-3.0.22-x86_64-evp-sha256-pk.stdout.txt"),
    ("multi2-stdout-then-stderr.log", "openssl-3.0.22-x86_64-multi2-evp-pk.stdout.txt"),
    ("mr-multi2-stdout-then-stderr.log", "openssl-3.0.22-x86_64-mr-multi2-evp-pk.stdout.txt"),
], ids=lambda v: v if v.endswith(".log") else "")
def test_stdout_saved_before_stderr_is_one_run_not_partial_figures(name, stdout):
    """`openssl speed … >out 2>err; cat out err`: the progress lines after the tables are the same run
    (with -multi the stdout has `Forked child` and `Got:` lines: still the children's stderr follows)."""
    stdout_only = figures(parse_console((FIELD / stdout).read_text()))
    log = parse_console((FIELD / name).read_text())
    assert figures(log) == stdout_only
    assert not any(m.flags for m in log.measurements) and len(log.measurements) == len(stdout_only)
    if "multi" not in name:
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



# -- a mail thread: each reply quotes and rewraps at 72 (class: curve rows wrapped were lost) ---------

@pytest.mark.parametrize("name, source", [
    ("mail-thread5-openssl-3.0.22.log", SINGLE),
    ("mail-thread5-openssl-1.1.1w.log", FIELD / "openssl-1.1.1w-x86_64-evp-chacha20-poly1305-pk.txt"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_a_log_quoted_five_replies_deep_keeps_its_curve_rows(name, source):
    """Five levels of `> ` leave 62 columns: `253 bits EdDSA (Ed25519) … 30847.7` / `12046.2` and the
    ECDSA row wrapped like it were lost (the row start's pattern did not pass the curve's name)."""
    log = parse_console((FIELD / name).read_text())
    assert figures(log) == figures(parse_console(source.read_text()))
    assert not any(m.flags for m in log.measurements)

# -- a mangled `-mr` progress line without its name (found by test_speed_robustness's fuzzing) ---------

def test_a_kem_sig_progress_line_without_its_name_names_no_figure_empty():
    """`+R18:41::rsa2048:10.21` (a byte lost in a copy) once named the next `+F10` figure "" and said it ok."""
    import re
    text = (DATA / "openssl-3.3.2-aarch64-constructed-mr-rsa2048-kem-sig.txt").read_text()
    mangled, n = re.subn(r"^\+R18:(\d+):", r"+R18:\1::", text, flags=re.M)
    assert n
    log = parse_speed(mangled)
    assert log.measurements and all(m.algorithm for m in log.measurements)
