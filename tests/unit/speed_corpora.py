"""Logs as the field mangles them, generated from the real and constructed fixtures (tests/data/speed).

Shared by the parser tests and by the property that no `ok` figure is negative, infinite or NaN.
Every generator is deterministic (its own random.Random(seed)).
"""
from __future__ import annotations

import random
import textwrap
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"
MANY_FORKS = sorted((DATA / "many-forks").glob("*.txt"))


def split_multi_log(text: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(Forked child lines, the parent's other stdout lines (`Got:`), the children's stderr lines, the summary).

    In a `-multi` run the parent prints `Forked child N` once per fork, then every child's lines as
    `Got: LINE from N` (stdout), then its own summary; the children's progress lines (stderr) come
    whenever they are written. The summary is whatever follows the last `Got:` line."""
    lines = text.splitlines()
    last_got = max(i for i, line in enumerate(lines) if line.startswith("Got: "))
    head, summary = lines[:last_got + 1], lines[last_got + 1:]
    forked = [line for line in head if line.startswith("Forked child ")]
    stderr = [line for line in head if line.startswith(_CHILD_STDERR)]
    # stdout: `Got:` lines, and the pieces of them that the capture itself already cut apart
    got = [line for line in head if not line.startswith(("Forked child ",) + _CHILD_STDERR)]
    return forked, got, stderr, summary


# What -multi children write to stderr (they run with -mr): progress lines, and openssl's complaints.
_CHILD_STDERR = ("+DT", "+R", "+DN", "Unknown type", "Don't understand", "Child ", "RSA ", "ECDSA ", "SIG ")


def busy_terminal(text: str, seed: int, keep_summary: bool = True) -> str:
    """What a busy terminal (or `2>&1 > file` on a loaded box) makes of a `-multi` log.

    The parent's stdout goes out in chunks (a full buffer, or whatever the pty took) while 64+
    children still write their progress lines to stderr: `Forked child` lines are written whole,
    the `Got:` lines come interleaved (shuffled within a window) and cut at arbitrary points, each
    cut filled with a child's whole stderr line, so that pieces lose their `Got: ` prefix or their
    ` from N` suffix, or are glued to a progress line (`…:19485357.8+R2:3481:2048:1.00`). The
    parent's summary comes last, after every child exited (dropped with keep_summary=False: a log
    cut before it)."""
    rng = random.Random(seed)
    forked, got, stderr, summary = split_multi_log(text)
    window = rng.choice((4, 16, 64))
    got = [line for _, line in sorted((i + rng.uniform(0, window), line) for i, line in enumerate(got))]
    out: list[str] = []
    for line in forked:  # the fork loop: children start writing while it runs
        out.append(line + "\n")
        while stderr and rng.random() < 0.3:
            out.append(stderr.pop(0) + "\n")
    stream = "".join(line + "\n" for line in got)
    at = 0
    while at < len(stream):
        chunk = rng.randint(1, 300)
        out.append(stream[at:at + chunk])
        at += chunk
        if stderr and rng.random() < 0.5:  # (each write of a child is one whole line, in its order)
            out.append(stderr.pop(0) + "\n")
    out += [line + "\n" for line in stderr]
    if keep_summary:
        out += [line + "\n" for line in summary]
    return "".join(out)


def without_summary(text: str) -> str:
    """The log cut right after the children's lines (the parent never printed its summary)."""
    forked, got, stderr, _ = split_multi_log(text)
    return "\n".join(forked + stderr + got) + "\n"


def hard_wrapped(text: str, width: int) -> str:
    """Lines wrapped at `width` columns at white space, as mail clients and forums do."""
    out = []
    for line in text.splitlines():
        out += textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""]
    return "\n".join(out) + "\n"


def cut_off(text: str, lines: int) -> str:
    """The first `lines` lines: a router that rebooted or an SSH session that died there."""
    return "".join(text.splitlines(keepends=True)[:lines])


def generated(text: str, seed: int = 0) -> list[str]:
    """The field's manglings of one log: wrapped, cut off at a few places, and for -multi logs the busy
    terminal with and without the parent's summary."""
    lines = text.count("\n")
    variants = [hard_wrapped(text, 72), hard_wrapped(text, 80)]
    variants += [cut_off(text, n) for n in range(1, lines, max(1, lines // 12))]
    if "Got: " in text:
        variants += [busy_terminal(text, seed + n, keep_summary=n % 2 == 0) for n in range(4)]
    return variants
