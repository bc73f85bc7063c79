"""The runs of one `openssl speed` segment of a console session (console.parse_console): outputs saved one after
the other without a prompt between are read apart, each with its own threads, -mr and version."""
from __future__ import annotations

import re

# Where a run of `openssl speed` starts (its first progress line, its first -multi or -mr line, its version
# block) and where a run has printed its results (table, public-key header, the parent's `+F` lines).
_RUN_START = r"[ \t>]*(?:Doing \S|Forked child \d|\+DTP?:|\+H:|version: \d|(?:Open|Libre)SSL \d)"
_PROGRESS = r"[ \t>]*(?:Doing \S|\+DTP?:)"  # (stderr: `Forked child N` and `Got:` are stdout)
_AFTER_CHILDREN = r"[ \t>]*(?:Doing \S|Forked child 0\b)"
_PARENT_RESULTS = r"[ \t>]*(?:The 'numbers' are|type[ \t\r\f\v]+\d+ bytes|\+F\d*:"
_RESULTS = _PARENT_RESULTS + r"|Got: \+F\d*:"  # and a -multi child's figure
# A public-key table's header line (`sign verify sign/s verify/s`): found from its end (`/s` then the line's end,
# which re finds with a fast scan), then tried from its line's start.
_PK_HEADER_END = re.compile(r"/s[ \t\r\f\v]*$", re.M)
_PK_HEADER_LINE = re.compile(r"[ \t>]*(?:\S+[ \t\r\f\v]+)*(?:verify|op|decr\.|decaps?)/s[ \t\r\f\v]*$", re.M)


class _LineStart:
    """A pattern tried at the start of every line of a body (never across a line: [ \t\r\f\v], not \s, within
    one). Searched led by the literal newline, which re finds with a fast scan (a leading ^ in MULTILINE mode is
    tried at every character of a body); `pk_header`: a public-key table's header line matches too."""

    def __init__(self, pattern: str, pk_header: bool = False) -> None:
        self._at = re.compile(f"(?:{pattern})")
        self._after_newline = re.compile(f"\n(?:{pattern})")
        self._pk_header = pk_header

    def find(self, body: str, pos: int = 0) -> int:
        """Where the first line at or after `pos` that matches starts, or -1."""
        if (pos == 0 or body[pos - 1] == "\n") and self._at.match(body, pos):
            found = pos
        else:
            after = self._after_newline.search(body, pos)
            found = -1 if after is None else after.start() + 1
        if self._pk_header and "/s" in body:
            for end in _PK_HEADER_END.finditer(body, pos):
                start = body.rfind("\n", 0, end.start()) + 1
                if 0 <= found <= start:
                    break
                if start >= pos and _PK_HEADER_LINE.match(body, start):
                    return start
        return found


_RUN_START_LINE = _LineStart(_RUN_START)
_PROGRESS_LINE = _LineStart(_PROGRESS)
_AFTER_CHILDREN_LINE = _LineStart(_AFTER_CHILDREN)
_PARENT_RESULTS_LINE = _LineStart(_PARENT_RESULTS + ")", pk_header=True)
_RESULTS_LINE = _LineStart(_RESULTS + ")", pk_header=True)


def speed_runs(body: str) -> list[str]:
    """The runs of one speed segment: two `openssl speed` outputs saved one after the other (no prompt
    between) are two runs, each with its own threads, -mr and version. A run starts where, after a
    run's results, a progress line, a -multi/-mr line or a version block starts; a part with no results
    of its own after a run with no progress lines (stderr saved after stdout: progress lines after the
    tables) stays with the run before it (else it is a run cut off before its results).

    The lines are found by searching the whole body (_LineStart), not line by line: one run, by far the
    most common, costs a search or two."""
    if "/s" not in body and "+F" not in body and "'numbers'" not in body:
        return [body]  # no results at all: one run (a cut-off log)
    starts = [0]  # where each run starts
    at = 0
    after_children = -1  # the next line after -multi children's figures that starts a run
    while True:
        results = _RESULTS_LINE.find(body, at)
        while results >= 0 and _after_got(body, results):  # a child's line a mail wrapped after `Got:`
            results = _RESULTS_LINE.find(body, body.find("\n", results) + 1 or len(body))
        if results < 0:
            break
        line_end = body.find("\n", results)
        if line_end < 0:
            break
        if body[results:line_end].lstrip(" \t>").startswith("Got:"):
            # a -multi child's figure: its run's version block and summary row come after it; a human progress
            # line (openssl's children always print -mr lines) or a new `Forked child 0` starts the next run,
            # unless a results line of the parent's (`+F:`, a table) comes first: the usual rule then applies
            if after_children < 0 or after_children <= line_end:
                after_children = _AFTER_CHILDREN_LINE.find(body, line_end + 1)
            parent = _PARENT_RESULTS_LINE.find(body, line_end + 1)
            if after_children >= 0 and (parent < 0 or after_children < parent):
                start = after_children
            else:
                if parent < 0:
                    break
                at = parent
                continue
        else:
            start = _RUN_START_LINE.find(body, line_end + 1)
        if start < 0:
            break
        starts.append(start)
        at = start
    if len(starts) == 1:
        return [body]
    runs = [body[begin:end - 1] for begin, end in zip(starts, starts[1:])] + [body[starts[-1]:]]
    texts: list[str] = []
    progress = True  # the run before has progress lines (its stderr) of its own
    for text in runs:
        if texts and not progress and _RESULTS_LINE.find(text) < 0:
            texts[-1] += "\n" + text  # the stderr of a run saved after its stdout (no results of its own)
        else:
            texts.append(text)
        progress = _PROGRESS_LINE.find(text) >= 0
    return texts


def _after_got(body: str, start: int) -> bool:
    """Does the last non-blank line before `start` end with `Got:` (its blanks and `>` quoting aside)?"""
    before = body[max(0, start - 400):start].rstrip(" \t>\n")
    return before.endswith("Got:")
