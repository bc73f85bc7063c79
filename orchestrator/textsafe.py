"""The one rule for text a host or a log wrote on its way to a reader (docs/trust.md, "Text from hosts").

A host's os-release, cpuinfo, hostname, OpenSSL's own strings and a pasted log are data, never instructions to
whatever shows them. Each sink gets one function:

- `terminal(text)`: a terminal or a file someone may `cat`. Every control character but newline and tab (C0, DEL,
  C1, so ESC and with it every escape sequence: `ESC ]0;title BEL`, `ESC [2J`, CSI …) and the Unicode bidi
  overrides that reorder what is shown ("Trojan Source") are written as visible escapes (`\\x1b`, `\\u202e`), so
  a reader sees that something was there and nothing runs. Printable Unicode (CJK, accents, emoji) is kept.
  `cell(text)` is the same for one table cell, tabs included.
- `csv_cell(value)`: a spreadsheet cell. Text starting with `= + - @`, TAB or CR is prefixed with a single quote
  (OWASP "CSV Injection"), after `cell`. Numbers stay numbers: an int or float, and a string that is
  nothing but a decimal number (`-12.5`, `+3.1%`) are data a spreadsheet reads as a number, never a formula;
  and a lone `-` (the tables' "none") has no operand to run.
- `markdown(text)`: Markdown source (report.md, `--format markdown`): `cell`, then a backslash before every
  character CommonMark or GitHub would render (emphasis, code, links, images, raw HTML, tables, headings),
  and `&` as `&amp;` (an entity would be decoded).
- HTML: `html.escape` after `terminal` (report.py and site.py); JSON: `json.dumps` escapes control characters itself.

Formats for programs (JSON, CSV, Markdown, JUnit XML, OpenMetrics, line protocol) escape by their own rules, in their
writers (render/): what a program reads on stdout is byte for byte what `-o FILE` holds, so the terminal rule must
not rewrite it on the way (`\u202e` in an OpenMetrics label is an invalid escape to promtool). `data_stream` gives
the CLI's stdout without the guard for them, unless stdout is a terminal: there a person reads it, and `terminal`
applies as to any other text.

`width(text)` is how many terminal columns a line takes: East Asian wide and full-width characters 2, combining
marks and zero-width characters 0, everything else 1. `file_names(names)` gives each name a file-system-safe stem,
unique among the names and on case-insensitive file systems (site pages, plots, Markdown assets).

Pure but for `SafeStream`, the CLI's stdout and stderr (orchestrator/cli.py): standard library only.
"""
from __future__ import annotations

import hashlib
import io
import re
import unicodedata
from typing import Any, Iterable, TextIO

# C0 but \t and \n, DEL, C1; the bidi embeddings/overrides/isolates and marks; line/paragraph separators
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
CONTROL = _CONTROL  # what `terminal` escapes, for a format that writes those characters its own way (junit.py)
_CELL_CONTROL = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: str) -> str:
    """`text` with every control character but newline and tab written as a visible escape (see the module)."""
    if text.isascii() and text.isprintable():  # the common case, in C
        return text
    return _CONTROL.sub(_visible, text)


def cell(text: str) -> str:
    """One table cell: `terminal`, and tabs escaped too (a tab would break the column the table gave the cell).
    A line break (LF, CR, CRLF) stays: a table gives a value with line breaks as many lines (tables.py)."""
    if text.isascii() and text.isprintable():
        return text
    return _CELL_CONTROL.sub(_visible, text)


_NUMBER = re.compile(r"[+-]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?%?")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A value for a CSV cell: numbers as they are; text escaped (`cell`) and, when a spreadsheet would run it as
    a formula, prefixed with `'` (OWASP)."""
    if value is None or isinstance(value, (int, float)):
        return value
    text = str(value)
    if text.startswith(_FORMULA_START) and text != "-" and not _NUMBER.fullmatch(text):  # "-": none, no formula
        text = "'" + text  # before `cell`: a leading TAB or CR is what made it a formula
    return cell(text)


# `<` only before what makes raw HTML or an autolink of it (a letter, `/`, `!`, `?`): "p<0.001" stays as written
_MARKDOWN = re.compile(r"([\\`*_\[\]|]|<(?=[A-Za-z/!?]))")
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def markdown(text: str) -> str:
    """Markdown source that shows `text` as written, in a table cell or a line's text: `cell`, a backslash before
    what would render (`*_` emphasis and `` ` `` code, `[]` links and images, `<` of raw HTML and autolinks, `|` a
    table's cell, `\\` itself, `~` where two make a strikethrough), `&` of an entity as `&amp;`. A line's
    leading `#`, `-`, `+` or digit is left alone: sslbench never starts a line with host text."""
    text = _MARKDOWN.sub(r"\\\1", cell(text))
    if "&" in text:
        text = _ENTITY.sub("&amp;", text)
    if text.count("~") > 1:
        text = text.replace("~", "\\~")
    return text


def width(text: str) -> int:
    """Terminal columns of one line: East Asian wide (W) and full-width (F) characters 2, combining marks and
    zero-width format characters 0, others 1."""
    if text.isascii():
        return len(text)
    columns = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        columns += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return columns


def ljust(text: str, columns: int) -> str:
    """`text` padded with spaces to `columns` terminal columns (str.ljust counts characters)."""
    return text + " " * (columns - width(text)) if not text.isascii() else text.ljust(columns)


def cut(text: str, columns: int) -> str:
    """The longest start of `text` that takes at most `columns` terminal columns."""
    if text.isascii():
        return text[:max(columns, 0)]
    used = 0
    for index, char in enumerate(text):
        used += width(char)
        if used > columns:
            return text[:index]
    return text


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(name: str) -> str:
    """`name` as a harmless path component: letters, digits, `._-`, no leading dot (as store.safe_name)."""
    return (_UNSAFE.sub("_", name).strip("._") or "_")[:128]


def file_names(names: Iterable[str]) -> dict[str, str]:
    """Each name's file stem, unique among `names` and on a case-insensitive file system: the readable
    `file_stem`, plus `-` and 8 hex digits of the name's SHA-256 where the stem lost something (a character
    outside `[A-Za-z0-9._-]`, such as every CJK letter) or two names share a stem but for case. A name's stem
    depends only on itself and the names it collides with, so a site keeps its pages' names from run to run
    unless a colliding host joins."""
    unique = list(dict.fromkeys(names))
    stems = {name: file_stem(name) for name in unique}
    folded: dict[str, int] = {}
    for stem in stems.values():
        folded[stem.casefold()] = folded.get(stem.casefold(), 0) + 1
    out = {}
    for name, stem in stems.items():
        if stem != name or folded[stem.casefold()] > 1:
            stem = f"{stem[:119]}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
        out[name] = stem
    return out


# What matplotlib's default font (DejaVu Sans) draws: Latin, Greek and Cyrillic. Anything else (CJK, most emoji)
# would come out as boxes with a "Glyph … missing" warning, so plot labels spell hosts this way instead.
_PLOT_KEEP = re.compile("[\x20-\x7e\u00a0-\u052f\u2010-\u2027\u2030-\u205e]")


def plot_label(text: str) -> str:
    """A label matplotlib's default font draws as written: `cell`'s escapes, `$` escaped (mathtext would parse it),
    accents kept where the font has them; where characters it lacks were replaced by `~`, the label ends with `#`
    and 6 hex digits of the text's SHA-256, so two such hosts never share a label. The plot's legend
    (`plot_legend`) says which host each such label stands for."""
    text = cell(text).replace("\n", " ")
    kept = "".join(char if _PLOT_KEEP.match(char) else "\0" for char in unicodedata.normalize("NFC", text))
    if "\0" in kept:
        kept = re.sub("\0+", "~", kept) + " #" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    return kept.replace("$", r"\$")


def plot_legend(names: Iterable[str]) -> list[str]:
    """`label = name` for each name whose plot label is not the name itself (see plot_label), in order."""
    return [f"{plot_label(name).replace(chr(92) + '$', '$')} = {name}" for name in dict.fromkeys(names)
            if plot_label(name) != name.replace("$", r"\$")]


class SafeStream(io.TextIOBase):
    """sys.stdout or sys.stderr as the CLI hands it to a command: everything written goes through `terminal`,
    so no message, note or table a command prints can carry a host's escape sequence. `raw` is the stream
    itself, for a writer that emits its own escapes from text it escaped first (rich's live progress)."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", "utf-8") or "utf-8"


def data_stream(stream: TextIO) -> TextIO:
    """Where a format for programs goes: under the CLI's guard (`SafeStream`) the stream itself, as the format wrote
    it, unless it is a terminal (a person reads it there: the guard stays). Any other stream is returned as is."""
    if isinstance(stream, SafeStream) and not stream.isatty():
        return stream.raw
    return stream
