"""`-multi N` with 32 to 128 children (issue 12, class 1): openssl's own summary is the figure.

The logs in tests/data/speed/many-forks are real `openssl speed -mr -multi 64|128` runs of 1.1.1w, 3.0.22
and 3.5.9 captured with 2>&1 on this 2-core machine (the children's lines already interleave there), one
human `-multi 64`, and a 1.0.2u `-mr -multi 32` constructed from apps/speed.c. speed_corpora.busy_terminal
mangles each one further, 40 ways, the way a busy terminal does (children's `Got:` lines interleaved,
cut, stripped of `Got: ` or ` from N`, glued to progress lines).
"""
import re

import pytest

from orchestrator.model import OK, PARTIAL_CHILDREN
from orchestrator.parse.speed import parse_speed
from speed_corpora import MANY_FORKS, busy_terminal, split_multi_log, without_summary

SEEDS = range(40)


def forks(path) -> int:
    return int(re.search(r"multi(\d+)", path.name).group(1))


def figures(text: str) -> dict:
    return {(m.algorithm, m.block_size, m.operation): m for m in parse_speed(text).measurements}


def summary_precision(path, rate: float) -> float:
    """How far openssl's own printing leaves its summary from the exact sum of the children: nothing for
    rates (`%.2f`, `%f`), but 1.0.2 prints seconds/op with `%f` (6 decimals): ± 5e-7 s, ± rate² × 5e-7."""
    return 5e-7 * rate * rate if "1.0.2u" in path.name else 0.0


def printed_summary(path) -> list[float]:
    """The rates openssl's summary lines print, read apart from the parser: `+F:i:name:v…`, `+F2:i:bits:v…`,
    `+F9:i:v…` (seconds/op in 1.0.2: their inverse), or the human rows (`…k` figures, the last columns)."""
    values = []
    for line in split_multi_log(path.read_text())[3]:
        tag, _, rest = line.partition(":")
        fields = rest.split(":")
        if tag == "+F":
            values += [float(v) for v in fields[2:]]
        elif tag in ("+F2", "+F3", "+F4"):
            values += [1 / float(v) if "1.0.2u" in path.name else float(v) for v in fields[2:]]
        elif tag in ("+F9", "+F10"):
            values += [float(v) for v in fields[1:]]
        elif line.endswith("k"):
            values += [float(v[:-1]) * 1000 for v in line.split()[1:]]
        elif line.startswith("rsa "):
            values += [float(v) for v in line.split()[-2:]]
    return sorted(values)


@pytest.mark.parametrize("path", MANY_FORKS, ids=lambda p: p.name)
def test_the_figures_are_openssls_own_summary(path):
    got = figures(path.read_text())
    assert sorted(m.value for m in got.values()) == pytest.approx(printed_summary(path), rel=1e-9)
    assert {(m.status, m.threads) for m in got.values()} == {(OK, forks(path))}
    assert not any(m.flags for m in got.values())


@pytest.mark.parametrize("path", MANY_FORKS, ids=lambda p: p.name)
def test_interleaved_and_cut_child_lines_never_change_a_figure(path):
    """The acceptance corpus: every cell within 0.01 % of openssl's summary, in every mangled copy."""
    expected = figures(path.read_text())
    for seed in SEEDS:
        got = figures(busy_terminal(path.read_text(), seed))
        assert got.keys() == expected.keys(), seed
        for cell, m in got.items():
            assert m.value == pytest.approx(expected[cell].value, rel=1e-4), (seed, cell)
            assert (m.status, m.flags, m.threads) == (OK, [], forks(path)), (seed, cell)


def check_childrens_sum(path, got: dict, expected: dict) -> list[int]:
    """Every figure flagged partial-children with `k of N`, never above openssl's summary, equal to it
    when every child was read. Returns the k of each figure."""
    assert got.keys() <= expected.keys()
    n = forks(path)
    counts = []
    for cell, m in got.items():
        assert m.flags == [PARTIAL_CHILDREN] and m.threads == n and m.status == OK, cell
        read, of = map(int, re.search(r"the sum of (\d+) of (\d+) children", m.reason).groups())
        assert 0 < read <= of == n, cell
        want = expected[cell].value
        slack = summary_precision(path, want)
        assert m.value <= want * (1 + 1e-4) + slack, cell
        if read == n:
            assert m.value == pytest.approx(want, rel=1e-4, abs=slack), cell
        counts.append(read)
    return counts


@pytest.mark.parametrize("path", MANY_FORKS, ids=lambda p: p.name)
def test_without_the_summary_the_childrens_sum_is_flagged(path):
    """Cut before the parent's summary: the children's sum, flagged, with how many of N were read."""
    expected = figures(path.read_text())
    got = figures(without_summary(path.read_text()))
    assert got.keys() == expected.keys()
    counts = check_childrens_sum(path, got, expected)
    # the real captures already cut a few children's lines (a `Got:` line without its ` from N`)
    cut = sum(1 for line in path.read_text().splitlines() if line.startswith("Got: ") and
              not re.search(r" from \d+$", line))
    assert min(counts) >= forks(path) - cut


@pytest.mark.parametrize("path", MANY_FORKS, ids=lambda p: p.name)
def test_cut_children_without_the_summary_are_flagged_with_how_many_were_read(path):
    """A child's line that lost its frame never becomes a total; what is read is flagged, with k of N."""
    expected = figures(path.read_text())
    for seed in SEEDS:
        check_childrens_sum(path, figures(busy_terminal(path.read_text(), seed, keep_summary=False)), expected)


def test_a_child_line_without_its_prefix_is_not_the_total():
    """The line that once read as `threads=96`, 100x too low: a child's `+F` stripped of `Got: ` and
    ` from N`, the last line of a log cut before the summary."""
    text = without_summary((MANY_FORKS[0].parent / "openssl-3.0.22-x86_64-multi64-mr.txt").read_text())
    lines = text.splitlines()
    stray = next(line for line in lines if line.startswith("Got: +F:"))
    text += stray[len("Got: "):stray.rindex(" from ")] + "\n"
    got = figures(text)
    assert {tuple(m.flags) for m in got.values()} == {(PARTIAL_CHILDREN,)}
    assert all("of 64 children" in m.reason for m in got.values())
