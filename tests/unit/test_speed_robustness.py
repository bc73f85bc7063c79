"""parse_speed on mangled logs: CRLF, lost or doubled newlines, prompts, garbage; it never raises."""
import random
from pathlib import Path

import pytest

from orchestrator.parse.speed import parse_speed

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"
FIXTURES = sorted(DATA.rglob("*.txt"))  # full-runs/ too


def summary(parsed):
    return sorted((m.algorithm, m.block_size or 0, m.operation or "", m.value if m.value is not None else -1.0,
                   m.count or 0, m.seconds or 0.0, m.threads, m.api or "", m.status) for m in parsed.measurements)


MANGLERS = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "doubled-newlines": lambda t: t.replace("\n", "\n\n"),
    "trailing-spaces": lambda t: t.replace("\n", "   \n"),
    "newlines-became-spaces": lambda t: t.replace("\n", " "),
    "tabs": lambda t: t.replace("  ", "\t"),
    "html-no-break-spaces": lambda t: t.replace("  ", "\xa0 "),
    "quoted": lambda t: "```\n" + "".join("> " + line for line in t.splitlines(keepends=True)) + "```\n",
}


@pytest.mark.parametrize("mangle", sorted(MANGLERS))
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_mangled_log_reads_the_same(path, mangle):
    text = path.read_text()
    assert summary(parse_speed(MANGLERS[mangle](text))) == summary(parse_speed(text))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_newlines_removed_keeps_every_figure(path):
    """Lines glued with nothing between them: same figures (a -multi summary glued to the
    compiler line is rebuilt from the children, equal up to float rounding)."""
    text = path.read_text()
    expected = parse_speed(text).measurements
    got = parse_speed(text.replace("\n", "")).measurements
    key = lambda m: (m.algorithm, m.block_size or 0, m.operation or "")  # noqa: E731
    assert sorted(map(key, got)) == sorted(map(key, expected))
    values = {key(m): m.value for m in got}
    for m in expected:
        if m.value is not None:
            assert values[key(m)] == pytest.approx(m.value, rel=1e-6, abs=10)  # the table rounds to 10 B/s


def test_prompts_and_other_commands_around_the_output():
    sample = (DATA / "openssl-1.1.1w-armv7l-qemu-evp-aes-128-gcm.txt").read_text()
    console = (DATA / "openssl-1.1.1w-armv7l-constructed-console-openwrt.txt").read_text()
    parsed = parse_speed(console)
    assert summary(parsed) == summary(parse_speed(sample))
    assert parsed.openssl.version == "1.1.1w"
    assert any("ignored" in note for note in parsed.skipped)


@pytest.mark.parametrize("text", ["", "\n\n", "\x00\x01\x02", "cat /proc/cpuinfo\nBogoMIPS\t: 48.00\n",
                                  "type 16 bytes\n", "+F:1:x", "+F2:a:b:c:d", "Doing", "rsa 2048 bits",
                                  "Got: +F:22:aes:1.0:2.0 from x", "+H:16:64\n+F:3:md5:inf:nan",
                                  "version: 3.0.0\nevp 1.00k 2.00k 3.00k 4.00k 5.00k 6.00k"])
def test_garbage_gives_notes_not_exceptions(text):
    parsed = parse_speed(text)
    assert parsed.errors == []  # no reader's exception caught by the safety net


def test_not_an_openssl_log_says_so():
    parsed = parse_speed("Linux OpenWrt 5.15.167 #0 SMP Mon Sep 23 12:34:46 2024 armv7l GNU/Linux\n")
    assert parsed.measurements == []
    assert "no openssl speed results found" in parsed.skipped


def _mutations(text: str, rng: random.Random):
    lines = text.splitlines(keepends=True)
    yield "".join(rng.sample(lines, len(lines)))  # shuffled lines
    cut = rng.randrange(len(text) + 1)
    yield text[:cut]  # truncated
    chars = list(text)
    for _ in range(20):
        chars.insert(rng.randrange(len(chars) + 1), rng.choice(":+k. \n\tx9-()'s\r\x00é"))
    yield "".join(chars)  # sprinkled noise
    yield "".join(ch for ch in text if rng.random() > 0.05)  # dropped characters
    yield "".join(chr(rng.randrange(1, 0x2FF)) for _ in range(400))  # random text


def test_fuzz_never_raises():
    rng = random.Random(20261202)
    for path in FIXTURES:
        text = path.read_text()
        for _ in range(6):
            for mutated in _mutations(text, rng):
                parsed = parse_speed(mutated)
                assert parsed.errors == [], (path.name, mutated[:200])
                for m in parsed.measurements:
                    assert m.algorithm
                    assert m.value is None or m.value == m.value  # never NaN


def test_every_anchor_holds_its_word_where_it_splits():
    """lines_of tests a line for the anchors' plain words before the costly split: a place an anchor
    splits must hold that anchor's word, or a line with lost newlines would stay glued."""
    import re

    from orchestrator.parse.speed.lines import ANCHORS
    splits = 0
    for path in FIXTURES:
        text = path.read_text().replace("\n", " ")
        for word, pattern in ANCHORS:
            for match in re.finditer(pattern, text):
                if match.start() == match.end() == 0:
                    continue
                around = text[max(0, match.start() - len(word)):match.end() + len(word) + 40]
                assert word in around, (path.name, word, around)
                splits += 1
    assert splits > 10_000
