"""Columns laid out as text (benchstat's texttab): a plain table with a dashed ruler, or a GitHub Markdown table,
fitted to a width. Domain-free: it knows columns, widths and display columns, not what the values mean."""
from __future__ import annotations

import itertools
import re
import textwrap
from typing import Any, Callable, Iterable, Sequence

from orchestrator import textsafe


def grid(headers: Sequence[str], rows: Sequence[Sequence[Any]], markdown: bool, width: int | None = None,
         drop: Sequence[str] = ()) -> str:
    """Columns of left-aligned text: a plain table with a dashed ruler, or a GitHub Markdown table.

    tabulate's "simple" and "github" layouts with disable_numparse, character for character
    (tests/unit/test_tables.py): each column as wide as its widest line and at least its header + 2; None is empty;
    surrounding whitespace of a value is dropped; values with line breaks take as many lines as they have (an empty
    value none). Hand-written because a 50,000-row diff is laid out here, and tabulate's type inference over every
    value took seconds. A plain table wider than `width` is fitted to it (_fitted).
    """
    # host text is data: control characters shown, never sent (textsafe); in Markdown nothing renders, and a `|`
    # in a value (a failure reason's " | ", a host alias) cannot end its cell
    safe = textsafe.markdown if markdown else textsafe.cell
    head = [safe(str(header)) for header in headers]
    texts = [["" if value is None else safe(str(value)) for value in column] for column in zip(*rows)]
    multiline = any(_LINE_BREAK.search(text) for text in (*head, *map("".join, texts)))  # before the strip
    columns = [[text.strip() for text in column] for column in texts] if rows else [[] for _ in head]
    text_width: Callable[[str], int] = _lines_width if multiline else textsafe.width
    widths = [max(text_width(header) + 2, max(map(text_width, column), default=0))
              for header, column in zip(head, columns)]
    if width is not None and _total(widths) > width:
        return _fitted(head, columns, width, drop)
    return _layout(head, columns, widths, multiline, markdown)


def _layout(head: Sequence[str], columns: Sequence[Sequence[str]], widths: Sequence[int], multiline: bool,
            markdown: bool, spaced: bool = False) -> str:
    """The lines of a table of these widths; `spaced`: a blank line between two rows when one takes several."""
    # padded by terminal columns where a value is not ASCII (a CJK host name takes two a character)
    pad = str.ljust if all(text.isascii() for text in (*head, *itertools.chain(*columns))) else textsafe.ljust
    if markdown:
        def line(cells: Iterable[str]) -> str:
            return "| " + " | ".join(pad(cell, width) for cell, width in zip(cells, widths)) + " |"
        ruler = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    else:
        def line(cells: Iterable[str]) -> str:
            return "  ".join(pad(cell, width) for cell, width in zip(cells, widths)).rstrip()
        ruler = "  ".join("-" * width for width in widths)
    if not multiline:
        return "\n".join([line(head), ruler, *map(line, zip(*columns))])
    out = [line(parts) for parts in itertools.zip_longest(*map(_LINE_BREAK.split, head), fillvalue="")]
    out.append(ruler)
    tall: bool | None = None  # did the row before take several lines (None: no row yet)
    for row in zip(*columns):  # a row whose values are all empty takes no line
        lines = [line(parts) for parts in itertools.zip_longest(*(text.splitlines() for text in row), fillvalue="")]
        if spaced and lines and tall is not None and (tall or len(lines) > 1):
            out.append("")
        if lines:
            tall = len(lines) > 1
        out.extend(lines)
    return "\n".join(out)


def _lines_width(text: str) -> int:
    return max(map(textsafe.width, _LINE_BREAK.split(text)))


def _total(widths: Sequence[int]) -> int:
    """The length of a plain table's widest line: its columns and two spaces between each two."""
    return sum(widths) + 2 * (len(widths) - 1)


# Fitting a plain table to the terminal: a column whose longest value is longer than this may wrap, at spaces, down
# to this width (texts before figures, see _fitted); shorter values never wrap.
WRAP_MIN = 20


def _fitted(head: list[str], columns: list[list[str]], width: int, drop: Sequence[str]) -> str:
    """The table in at most `width` columns, never a line wider, and below it one line saying what it lost.

    Lossless first: no column empty in every row, no padding beyond the widest value, headers wrapped at their
    spaces, long texts (verdicts, reasons, firmware labels: longer than WRAP_MIN, not starting with a digit, a quarter
    narrower wrapped) wrapped at theirs down to WRAP_MIN. Then the columns named in `drop` go, in that order; then long figures ("1,639 MB/s
    (13,110 Mbit/s)") wrap too; then long values are cut to WRAP_MIN with "…" (abbreviated); then columns go from
    the right, never the first. A first column alone still too wide has its lines cut.
    """
    names = [" ".join(header.split()) for header in head]  # a header as the note names it
    empty = {i for i, column in enumerate(columns) if i and column and not any(column)}  # go first, unsaid
    hinted = [names.index(name) for name in dict.fromkeys(drop) if name in names[1:] and names.index(name) not in empty]
    order = hinted + [i for i in reversed(range(1, len(head))) if i not in hinted and i not in empty]
    tries = [(n, False) for n in range(len(hinted) + 1)] + [(n, True) for n in range(len(hinted), len(order) + 1)]
    targets: list[int] | None = None
    kept: list[int] = [0]
    for count, lossy in tries:
        kept = [i for i in range(len(head)) if i not in order[:count] and i not in empty]
        targets = _fit_widths([head[i] for i in kept], [columns[i] for i in kept], width, lossy)
        if targets is not None:
            break
    if targets is None:  # the first column alone does not fit: its lines are cut below
        targets = [max(width, 1)]
    abbreviated: list[int] = []
    new_head, new_columns = [], []
    for i, target in zip(kept, targets):
        header, cut_header = _wrap(head[i], target)
        cells = [_wrap(text, target) for text in columns[i]]
        if len({text for text, _ in cells}) < len(set(columns[i])):  # router-…-01 and -02 cut alike: keep their ends
            cells = [_wrap(text, target, middle=True) for text in columns[i]]
        if cut_header or any(cut for _, cut in cells):
            abbreviated.append(i)
        new_head.append(header)
        new_columns.append([text for text, _ in cells])
    multiline = any(_LINE_BREAK.search(text) for text in (*new_head, *(t for column in new_columns for t in column)))
    widths = [max(_lines_width(header), max(map(_lines_width, column), default=0))
              for header, column in zip(new_head, new_columns)]
    lines = _layout(new_head, new_columns, widths, multiline, markdown=False, spaced=True).split("\n")
    cut_lines = any(textsafe.width(line) > width for line in lines)
    lines = [line if textsafe.width(line) <= width else textsafe.cut(line, width - 1) + "…" for line in lines]
    dropped = [names[i] for i in order if i not in kept]
    said = ([f"dropped {', '.join(dropped)}"] if dropped else []) + (
        [f"abbreviated {', '.join(names[i] for i in abbreviated)}"] if abbreviated else []) + (
        ["lines cut"] if cut_lines else [])
    if said:  # one line: the way back to every column only where it fits
        note = f"fitted to {width} columns: {'; '.join(said)}"
        hint = " (--width 0 shows all)"
        lines += [note + hint] if len(note + hint) <= width else textwrap.wrap(note, max(width, 20))
    return "\n".join(lines)


def _fit_widths(head: list[str], columns: list[list[str]], width: int, lossy: bool) -> list[int] | None:
    """Widths of these columns that fit `width`, or None (see _fitted): headers wrapped at spaces, then text wrapped;
    when `lossy`, figures wrapped too, then long values cut."""
    def words(text: str) -> int:  # the longest word
        return max(map(textsafe.width, _SPACES.split(_glued(text))), default=0)

    values = [max(map(_lines_width, column), default=0) for column in columns]
    widths = [max(_lines_width(header), value) for header, value in zip(head, values)]
    if _total(widths) <= width:
        return widths
    header_words = [words(header) for header in head]
    widths = [max(word, value) for word, value in zip(header_words, values)]  # every header wraps: they align
    long = [max(column, key=_lines_width) if value > WRAP_MIN else "" for column, value in zip(columns, values)]
    wrap = [max(WRAP_MIN, max(map(words, column))) if text else value  # the narrowest a column wraps to
            for column, text, value in zip(columns, long, values)]
    # a verdict, a reason, a firmware label: not a figure with units, nor a name that wrapping would hardly narrow
    text = [bool(t) and not t[0].isdigit() and 4 * w <= 3 * value for t, w, value in zip(long, wrap, values)]
    floors = [[max(word, w if is_text else value) for word, w, is_text, value in zip(header_words, wrap, text, values)]]
    if lossy:
        floors.append([max(word, w) for word, w in zip(header_words, wrap)])  # figures wrap too
        floors.append([max(word, min(value, WRAP_MIN)) for word, value in zip(header_words, values)])  # values cut
    for floor in floors:
        widths = _shrink(widths, floor, _total(widths) - width)
    return widths if _total(widths) <= width else None


def _wrapped(text: str, width: int) -> list[str]:
    """Lines of at most `width` at spaces, a figure kept with its unit ("16384 B" / "MB/s", never "16384" / "B")."""
    lines = textwrap.wrap(_glued(text), width, break_long_words=False, break_on_hyphens=False)
    return [line.replace(_GLUE, " ") for line in lines]


_GLUE = "\u00a0"  # a no-break space: textwrap never breaks a line there (str.split does)
_SPACES = re.compile("[ \t\r\n]+")  # where textwrap breaks
_UNIT = re.compile(r"(?<=\d) (?=(?:B|kB/s|MB/s|Mbit/s|MHz|ops/s|cores?)\b)")


def _glued(text: str) -> str:
    return _UNIT.sub(_GLUE, text)


def _shrink(widths: list[int], floors: list[int], excess: int) -> list[int]:
    """Take `excess` characters off the widest columns above their floors, one at a time."""
    widths = list(widths)
    while excess > 0:
        wide = [i for i, (w, floor) in enumerate(zip(widths, floors)) if w > floor]
        if not wide:
            break
        widest = max(wide, key=lambda i: (widths[i], -i))
        widths[widest] -= 1
        excess -= 1
    return widths


def _wrap(text: str, width: int, middle: bool = False) -> tuple[str, bool]:
    """A value within `width`: its lines wrapped at spaces, a word longer than that cut with "…" (at its end, or in
    its `middle` to keep the end that tells it apart); and whether cut."""
    if _lines_width(text) <= width:
        return text, False
    lines: list[str] = []
    cut = False
    for line in text.splitlines():
        for part in _wrapped(line, width) or [""]:
            if textsafe.width(part) > width:
                tail = (width - 1) // 2 if middle else 0
                end = textsafe.cut(part[::-1], tail)[::-1] if tail else ""
                part, cut = textsafe.cut(part, width - 1 - tail) + "…" + end, True
            lines.append(part)
    return "\n".join(lines), cut


_LINE_BREAK = re.compile("[\r\n]")
