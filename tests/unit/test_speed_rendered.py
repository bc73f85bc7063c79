"""Logs that went through a renderer (issue 28): real `openssl speed` outputs (tests/data/speed/README.md says how
each was made) as people put them in issues, wikis and blogs, through a real Markdown renderer (markdown-it-py:
CommonMark with GitHub's tables, and its typographer, which makes `'` a curly ’ and `...` an …) and a real HTML-to-
text round trip (html2text):

- the table retyped as a Markdown pipe table (cells where openssl put two or more spaces: a public-key row splits
  its figures across cells), read from the Markdown source and from the rendered page flattened back to text;
- figures and units in bold (`**512457**`, `**3s**`), italics and code spans;
- a web page whose table lines end in `— snip —` (the right-hand columns cut), each line its own paragraph, its
  apostrophes curly.

Every figure read must be the one openssl printed for that cell (never one moved to another column or made up),
and every figure the text still shows must be read.
"""
from __future__ import annotations

import re
from pathlib import Path

import html2text
import pytest
from markdown_it import MarkdownIt

from orchestrator.parse import parse_console, parse_speed

SPEED = Path(__file__).resolve().parents[1] / "data" / "speed"
LOGS = ["openssl-1.1.1w-x86_64-legacy-aes-128-cbc-sha256-md5-bf-des-ede3.txt",  # 1.x labels with a space
        "openssl-3.0.19-x86_64-sha256-rsa2048.txt",  # a throughput and a public-key table
        "openssl-3.0.19-x86_64-pk.txt", "openssl-1.1.1w-x86_64-pk.txt"]  # every public-key table


def figures(log) -> dict[tuple, float]:
    return {(m.algorithm, m.block_size, m.operation, m.threads): m.bytes_per_second or m.ops_per_second
            for m in log.measurements if m.status == "ok"}


def from_table(log) -> dict[tuple, float]:
    """The figures the tables gave; the others come from progress lines (count and seconds: `partial`)."""
    return {(m.algorithm, m.block_size, m.operation, m.threads): m.bytes_per_second or m.ops_per_second
            for m in log.measurements if m.status == "ok" and "partial" not in m.flags}


def check_elided(read, original: dict[tuple, float], kept: dict[tuple, float]) -> None:
    """The table's figures of the columns kept, each where openssl put it; a snipped column's figure only from its
    progress line, flagged `partial`, and the same figure to 5 digits (openssl's table rounds it)."""
    assert from_table(read) == kept
    for m in read.measurements:
        if "partial" in m.flags:
            key = (m.algorithm, m.block_size, m.operation, m.threads)
            assert key not in kept and m.bytes_per_second == pytest.approx(original[key], rel=1e-5)


def progress(log) -> dict[tuple, tuple]:
    return {(m.algorithm, m.block_size, m.operation): (m.count, m.seconds) for m in log.measurements if m.count}


def rendered(markdown: str, typographer: bool = False) -> str:
    """The Markdown as a page shows it, then as text again (html2text, no re-wrapping of lines)."""
    md = MarkdownIt("commonmark", {"typographer": typographer}).enable("table")
    if typographer:
        md.enable(["replacements", "smartquotes"])
    page = md.render(markdown)
    flatten = html2text.HTML2Text()
    flatten.body_width = 0
    return flatten.handle(page)


def is_table_line(line: str) -> bool:
    return bool(re.match(r"type\s+\d+ bytes|\s*(sign|op|keygen)\s+|[\w-]+( \w+)?\s+[\d.]+k(\s|$)|(rsa|dsa) \d+ bits|"
                         r"\d+ bits? (ecdsa|ecdh|EdDSA|ffdh)", line))


def pipe_table(text: str) -> str:
    """The log with its table lines retyped as a Markdown pipe table, with a ruler after each header."""
    out = []
    for line in text.splitlines():
        if not is_table_line(line):
            out.append(line)
            continue
        cells = re.split(r"\s{2,}", line.strip())
        header = line.startswith("type") or line.lstrip().startswith(("sign", "op ", "keygen"))
        if header and not line.startswith("type"):
            cells = [""] + cells  # the public-key header's empty first cell
        if header:
            out += ["", "|" + "|".join(cells) + "|", "|" + "|".join("---" for _ in cells) + "|"]
        else:
            out.append("|" + "|".join(cells) + "|")
    return "\n".join(out) + "\n"


def bold(text: str) -> str:
    """Figures, counts and seconds of the progress lines and the table in bold, as a blog post marks them."""
    number = re.compile(r"(?<![\w.-])(\d[\d.]*(?:k|s)?)(?![\w.])")
    return "\n".join(number.sub(r"**\1**", line) if line.startswith("Doing") or is_table_line(line) else line
                     for line in text.splitlines()) + "\n"


def snipped(text: str, keep: int) -> str:
    """Each throughput line (header and rows) cut after its first `keep` columns, `— snip —` in place of the rest;
    every line its own paragraph."""
    out = []
    for line in text.splitlines():
        if line.startswith("type") or (is_table_line(line) and line.rstrip().endswith("k")):
            cells = re.split(r"\s{2,}(?=\S)", line.strip())
            line = "  ".join(cells[:keep + 1]) + " — snip —"
        out.append(line)
    return "\n\n".join(out) + "\n"


@pytest.fixture(params=LOGS)
def log(request) -> str:
    return (SPEED / request.param).read_text()


def test_a_markdown_pipe_table_source_and_rendered(log):
    original = figures(parse_speed(log))
    assert original
    source = pipe_table(log)
    assert source.count("|") > 20
    for text in (source, rendered(source)):
        read = parse_speed(text)
        assert figures(read) == original, text
        assert read.errors == []  # no reader's exception caught by the safety net
    assert "---|---" in rendered(source)  # html2text's own table form was read too


def test_bold_figures_and_units(log):
    original = parse_speed(log)
    source = bold(log)
    assert "**" in source
    for text in (source, rendered(source), source.replace("**", "*"), source.replace("**", "`")):
        read = parse_speed(text)
        assert figures(read) == figures(original), text[:400]
        assert progress(read) == progress(original)


@pytest.mark.parametrize("keep", [3, 5])
def test_a_flattened_web_page_with_curly_apostrophes_and_snipped_columns(keep):
    log = (SPEED / LOGS[0]).read_text()
    original = figures(parse_speed(log))
    page = rendered(snipped(log, keep), typographer=True)
    assert "’s in" in page and "— snip —" in page  # as a blog shows it
    read = parse_speed(page)
    kept = {k: v for k, v in original.items() if k[1] in (16, 64, 256, 1024, 8192, 16384)[:keep]}
    check_elided(read, original, kept)  # the columns it shows, each figure where openssl put it
    assert progress(read) == progress(parse_speed(log))  # the curly apostrophes' progress lines all read


def test_a_row_snipped_under_a_whole_header_gives_its_first_columns():
    log = (SPEED / LOGS[1]).read_text()
    row = next(line for line in log.splitlines() if line.startswith("sha256 "))
    cut = re.sub(r"(\S+k\s+\S+k)\s+.*$", r"\1 [...]", row)
    read = parse_speed(log.replace(row, cut))
    original = figures(parse_speed(log))
    check_elided(read, original, {k: v for k, v in original.items() if k[0] != "sha256" or k[1] in (16, 64)})
    assert {k[1]: v for k, v in from_table(read).items() if k[0] == "sha256"} == {16: 88021140.0, 64: 329376190.0}
    assert any("elided" in said for said in read.skipped)  # and says why the rest is not the table's


@pytest.mark.parametrize("marker", ["— snip —", "[...]", "…", "[…]", "-- snip --", "<snip>"])
def test_elision_markers_alone_on_a_line_or_after_a_row(marker):
    log = (SPEED / LOGS[1]).read_text()
    text = log.replace("sha256           88021.14k", f"{marker}\nsha256           88021.14k")
    assert figures(parse_speed(text)) == figures(parse_speed(log))
    assert figures(parse_console(f"$ openssl speed sha256\n{text}{marker}\n")) == figures(parse_speed(log))


def test_a_pipe_row_with_an_empty_cell_ends_there():
    text = ("|type|16 bytes|64 bytes|256 bytes|1024 bytes|8192 bytes|16384 bytes|\n|---|---|---|---|---|---|---|\n"
            "|aes-128 cbc|122944.71k||131000.00k|132000.00k|133000.00k|134000.00k|\n")
    assert figures(parse_speed(text)) == {("aes-128-cbc", 16, None, 1): 122944710.0}


def test_mangled_text_never_raises():
    # every renderer mark, in random places of real logs and alone: parsers never raise
    import random

    marks = ["|", "||", "|---|", "**", "__", "*", "`", "’", "“", "…", "— snip —", "[...]", "<snip>", "...", " | ",
             "\u2014", "\u2032", "_", "\n", "|\n|", "-- snip --", "```", "> "]
    rng = random.Random(28)
    texts = [(SPEED / name).read_text() for name in LOGS]
    for _ in range(300):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 12)):
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(marks) + text[at:]
        # never raises, and not because the safety net caught a reader's exception (ParsedLog.errors)
        assert parse_speed(text).errors == [] and parse_console(text).errors == [], text
    for mark in marks:
        assert parse_speed(mark).errors == [] and parse_console(mark * 3).errors == [], mark
