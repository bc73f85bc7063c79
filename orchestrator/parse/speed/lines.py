"""The lines of a log, normalised: CR/CRLF, NULs, no-break spaces, e-mail quoting, and the newlines that a
copy from a web page lost put back (at the places where openssl starts a line)."""
from __future__ import annotations

import re

from orchestrator.parse.speed.numbers import uncut

# Where a line starts, for putting back lost newlines: (a plain substring every match holds: the cheap test
# that a line may need the split, the pattern of the place). In openssl's order of output, roughly.
ANCHORS: tuple[tuple[str, str], ...] = (
    ("Doing ", r"[ \t]*(?=Doing \S)"),
    ("+D", r"[ \t]*(?=\+DTP?:)"),
    ("+R", r"[ \t]*(?=\+R\d*:)"),
    ("Forked child", r"[ \t]*(?=Forked child )"),
    ("Got: ", r"[ \t]*(?=Got: )"),
    ("Unknown type '", r"[ \t]*(?=Unknown type ')"),
    ("Don't understand", r"[ \t]*(?=Don't understand line )"),
    ("version:", r"[ \t]*(?=version: \d)"),
    ("built on:", r"[ \t]*(?=built on:)"),
    ("options:", r"[ \t]*(?=options:)"),
    ("compiler:", r"[ \t]*(?=compiler: )"),
    ("CPUINFO:", r"[ \t]*(?=CPUINFO: )"),
    ("platform:", r"[ \t]*(?=platform: )"),
    ("The 'numbers'", r"[ \t]*(?=The 'numbers' )"),
    ("OpenSSL ", r"[ \t]*(?=(?<!Library: )OpenSSL \d)"),
    ("LibreSSL ", r"[ \t]*(?=LibreSSL \d)"),
    (" bytes", r"[ \t]*(?=type\s+\d+ bytes)"),
    ("verify", r"[ \t]*(?=sign\s+verify\s)"),
    ("op/s", r"[ \t]*(?=op\s+op/s)"),
    ("keygen", r"[ \t]*(?=keygen\s+(?:encaps|signs|keygen/s)\s)"),
    # not inside a child's line quoted by openssl: `Unknown type '+F6:…' from child 0`
    ("+F", r"(?<!Got: )(?<!type ')(?<!line ')(?=\+F\d*:)"),
    ("+H", r"(?<!Got: )(?<!type ')(?<!line ')(?=\+H\d*:)"),
    (" bit", r"[ \t]*(?<![A-Za-z])(?=[rd]sa\s+\d+\s+bits)"),
    ("mlkem", r"[ \t]*(?<![A-Za-z])(?=mlkem\s*\d+\s+-?[\d.]+s)"),
    (" bit", r"[ \t]*(?<![\d.])(?=\d+\s+bits?\s+(?:ecdsa|ecdh|EdDSA|SM2)\s+\(|\d+\s+bits\s+ffdh\s+[\d.]+s\s)"),
    ("verify/s", r"(?<=verify/s)[ \t]*"),
    ("op/s", r"(?<=op/s)[ \t]*"),
    ("decr./s", r"(?<=decr\./s)[ \t]*"),
    ("decaps/s", r"(?<=decaps/s)[ \t]*"),
    ("decap/s", r"(?<=decap/s)[ \t]*"),
)
_ANCHORS = re.compile("|".join(pattern for _, pattern in ANCHORS))
_ANCHOR_WORDS = tuple(dict.fromkeys(word for word, _ in ANCHORS))

# Throughput rows glued to the next line without a space: `30703.62kaes-256-gcm`.
# (an ffdh row's "%8.1f" rate glued to the next row's bits: `3192.53072 bits ffdh`)
_GLUED_ROW = re.compile(r"(\d\.\d\dk)(?=[A-Za-z])|(\d bytes)(?=[A-Za-z])|(\d\.\d)(?=\d{4,5}\s+bits\s+ffdh)")


class Elided(str):
    """A line that ended in an elision marker (`— snip —`, `[...]`, `…`), the marker taken off: a row of it
    gives the figures it shows, for the first columns, and none for the elided rest (tables.add_row)."""


# What a Markdown or HTML renderer, a blog or a wiki does to a pasted log, undone where it cannot change a figure:
# typographic quotes (`aes-128-cbc’s`), emphasis around figures and units (`**512457**`, `__3s__`, `*3s*`,
# `` `0.13s` ``),
# elision markers at the end of a line, pipe tables (a table retyped in Markdown, or a rendered table flattened
# back to text by html2text: `type | 16 bytes | …` and `---|---`).
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'",
                         "\u201c": '"', "\u201d": '"', "\u201f": '"', "\u2033": '"'})
# around a figure or a figure with its unit only (each a literal, then a digit: a cheap scan of a long report)
_STAR = re.compile(r"\*([+-]?\d[^\s*]*)\*")  # *3s* (a bullet's `* ` is left alone)
_UNDERSCORES = re.compile(r"__([+-]?\d[^\s_]*)__")  # __512457__ (a compiler's -D__ARM_ARCH stays as it is)
_TICKS = re.compile(r"`([+-]?\d[^`\s]*)`")  # `0.13s` (sbc-bench's quoted rows hold spaces: left as they are)
_ELISION = re.compile(r"[ \t]*(?:[-\u2013\u2014]{1,3}[ \t]*(?:snip|snipped)[ \t]*[-\u2013\u2014]{0,3}|<snip>|\(snip\)"
                      r"|\[[ \t]*(?:\.\.\.|\u2026|snip)[ \t]*\]|\u2026|\.\.\.)$", re.IGNORECASE)
_ELISION_ENDS = ("\u2014", "\u2013", "-", "snip", "SNIP", "Snip", "snipped", "...", "\u2026", "]", "<snip>", "(snip)")  # how every _ELISION ends (a C test per line before the pattern)
_RULE = re.compile(r"[\s|:\-]*")  # a pipe table's ruler `|---|:--:|`


def _unrendered(text: str) -> str:
    """The text with what a renderer added taken off (see above); each step only where its mark is in the text."""
    if "\u2018" in text or "\u2019" in text or "\u201c" in text or "\u201d" in text or "\u2032" in text:
        text = text.translate(_QUOTES)
    if "**" in text:
        text = text.replace("**", "")
    if "__" in text:
        text = _UNDERSCORES.sub(r"\1", text)
    if "*" in text:
        text = _STAR.sub(r"\1", text)
    if "`" in text:
        text = _TICKS.sub(r"\1", text)
    return text


def _pipe_cells(line: str) -> str | None:
    """A Markdown pipe table's line as openssl prints it (cells two spaces apart), "" for a ruler, None when it
    is not one. An empty cell between figures ends the row there (what follows it would land in the wrong
    column), as an elision does."""
    cells = [cell.strip() for cell in line.split("|")]
    if not cells[0]:
        cells = cells[1:]
    if cells and not cells[-1]:
        cells = cells[:-1]
    if not cells or _RULE.fullmatch(line):
        return ""
    while cells and not cells[0]:  # a public-key header's empty first cell
        cells = cells[1:]
    if "" in cells:
        return Elided("  ".join(cells[:cells.index("")]))
    return "  ".join(cells)


def _tidied(line: str, elisions: bool, pipes: bool) -> str:
    """A stripped line without its elision marker (then an Elided) and as openssl's columns if a pipe table's;
    "" when nothing is left (a marker alone, a ruler)."""
    elided = False
    if elisions and line.endswith(_ELISION_ENDS):
        shorter = _ELISION.sub("", line)
        if shorter != line:
            line, elided = shorter.rstrip(), True
            if not line:
                return ""
    if pipes and "|" in line and (line[0] == "|" or line.count("|") > 1):
        cells = _pipe_cells(line)
        if cells is not None:
            if not cells:
                return ""
            elided = elided or cells.__class__ is Elided
            line = cells
    return Elided(line) if elided else line


def _normalised(text: str) -> tuple[str, bool, bool]:
    """The text with LF newlines, no NULs or no-break spaces, and markup undone; whether it holds pipes (a table)
    and elision marks, so that lines_of tests its lines for them only when there can be any."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    elif not isinstance(text, str):
        text = str(text or "")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\xa0" in text:  # a web page's no-break spaces
        text = text.replace("\xa0", " ")
    # Each mark tested once over the text, single characters first (memchr); the typographic ones only in a text
    # that is not ASCII. (Every test of a longer word over 10,000 logs costs 1 % of `sslbench parse`.)
    plain = text.isascii()
    if "*" in text or "`" in text or "__" in text or not plain and (
            "\u2019" in text or "\u201d" in text or "\u2018" in text or "\u201c" in text or "\u2032" in text):
        text = _unrendered(text)
    pipes = "|" in text
    elisions = "nip" in text or "..." in text or not plain and ("\u2026" in text or "\u2014" in text)
    return text, pipes, elisions


def lines_of(text: str, cut: bool = False) -> list[str]:
    """Lines, with CR/CRLF handled and newlines that a copy lost put back. `cut`: the text was cut off
    in the middle of its last line (ends_cut), which loses what the cut may have shortened (numbers.uncut)."""
    text, pipes, elisions = _normalised(text)
    special = elisions or pipes
    lines: list[str] = []
    append = lines.append
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if special and (pipes and "|" in line or elisions and line.endswith(_ELISION_ENDS)):  # (else one test a line)
            line = _tidied(line, elisions, pipes)
            if not line:
                continue
            if line.__class__ is Elided:
                append(line)
                continue
        first = line[0]
        if first == ">":  # quoted in an e-mail or a forum post
            while line.startswith(">"):
                line = line[1:].lstrip()
            if not line:
                continue
            first = line[0]
        # Could newlines have been lost here? Plain string tests, inline, and the anchor split only for the
        # few suspects; a one-character test guards each longer test (most lines fail it at once).
        if first == "+":
            suspect = ("+" in line[1:] or (" " in line and ": " in line) or ("F" in line and "Forked" in line)
                       or ("D" in line and "Doing" in line))
        elif first == "G" and line.startswith("Got: "):
            suspect = line.count("+") > 1 or line.count(": ") > 1 or "Forked" in line
        elif first == "c" and line.startswith("compiler:"):
            suspect = (": " in line[10:] or "+" in line or "Doing " in line or "The 'numbers'" in line
                       or "type " in line)
        else:  # (most lines hold no "+", no "/" and at most one ":")
            suspect = (len(line) > 110 or (":" in line and line.count(": ") > 1)
                       or ("t" in line and line.count("bits") > 2)
                       or ("+" in line and ("+D" in line or "+R" in line or "+F" in line or "+H" in line))
                       or ("/" in line and ("s/s" in line or "op/s" in line or "./s" in line)
                           and not line.endswith("/s")))
        if suspect and _holds_an_anchor(line):
            line = _GLUED_ROW.sub(r"\1\2\3 ", line)
            parts = _ANCHORS.split(line)
            if len(parts) > 1:
                for part in parts:
                    part = part.strip()
                    if part:
                        append(part)
                continue
        append(line)
    if cut and lines:
        _uncut_last(lines)
    return lines


def _uncut_last(lines: list[str]) -> None:
    """The last line less what the cut may have shortened; gone when nothing is left of it."""
    last = uncut(lines[-1])
    if last:
        lines[-1] = last
    else:
        lines.pop()


def _holds_an_anchor(line: str) -> bool:
    """A cheap test (plain substrings) before the costly anchor split."""
    rest = line[1:]
    return any(word in rest for word in _ANCHOR_WORDS) or _GLUED_ROW.search(line) is not None


def ends_cut(text: str) -> bool:
    """A log that ends in the middle of a line: cut off (openssl ends every line with a newline)."""
    if not text or text[-1].isspace():
        return False
    return text[text.rfind("\n") + 1:].strip(" \t>") != ""  # (not a quoted mail's last, empty `>` line)
