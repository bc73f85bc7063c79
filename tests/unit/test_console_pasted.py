"""Whole sessions as the field pastes them (a field tester's report, 2026-12-05): real sessions
(tests/data/console/openssl-3.0.22-*-session.txt, README there) quoted in an e-mail or a forum post (`> `, `>`,
nested `> > `, `>>`), with every newline lost (`tr '\\n' ' '`), and through a real Markdown renderer and back to
text (markdown-it-py, html2text: without re-wrapping, and with its default 78-column re-wrap).

Each command's run must stay apart: the same figures, APIs and thread counts as the plain session, every figure
`ok` in both (a merged run gives the 1-thread figures the -multi run's thread count, and a cell the median of both).
"""
from __future__ import annotations

from pathlib import Path

import html2text
import pytest
from markdown_it import MarkdownIt

from orchestrator.parse import parse_console

CONSOLE = Path(__file__).resolve().parents[1] / "data" / "console"
TWO_RUNS = (CONSOLE / "openssl-3.0.22-x86_64-two-runs-multi2-session.txt").read_text()
TWO_APIS = (CONSOLE / "openssl-3.0.22-x86_64-legacy-and-evp-session.txt").read_text()


def cells(log) -> dict[tuple, tuple]:
    return {(m.algorithm, m.api, m.threads, m.block_size, m.operation): (m.value, m.status, tuple(m.flags))
            for m in log.measurements}


def quoted(text: str, mark: str) -> str:
    """`sed 's/^/MARK/'`: every line, the empty ones too."""
    return "".join(mark + line for line in text.splitlines(keepends=True))


def through_a_page(markdown: str, width: int) -> str:
    """Rendered (CommonMark: the session is one paragraph, its newlines soft breaks) and flattened back to text;
    width 0: no re-wrap (every soft break a space), else html2text re-wraps paragraphs to `width` columns."""
    flatten = html2text.HTML2Text()
    flatten.body_width = width
    return flatten.handle(MarkdownIt("commonmark").render(markdown))


def test_the_plain_sessions_are_read_apart():
    two_runs = cells(parse_console(TWO_RUNS))
    assert sorted((k[2], k[3]) for k in two_runs) == [(1, 16), (1, 64), (1, 256), (1, 1024), (1, 8192),
                                                      (1, 16384), (2, 16384)]
    assert two_runs[("aes-128-gcm", "evp", 1, 16384, None)][0] == 6814475.56e3
    assert two_runs[("aes-128-gcm", "evp", 2, 16384, None)][0] == 8284372.99e3
    assert {v[1] for v in two_runs.values()} == {"ok"}
    two_apis = cells(parse_console(TWO_APIS))
    assert sorted(k[1] for k in two_apis) == ["evp", "legacy"]


@pytest.mark.parametrize("mark", ["> ", ">", "> > ", ">> ", "  > "])
@pytest.mark.parametrize("session", [TWO_RUNS, TWO_APIS], ids=["threads", "apis"])
def test_a_quoted_session_keeps_each_run_apart(session, mark):
    assert cells(parse_console(quoted(session, mark))) == cells(parse_console(session))


@pytest.mark.parametrize("session", [TWO_RUNS, TWO_APIS], ids=["threads", "apis"])
def test_a_session_with_every_newline_lost_keeps_each_run_apart(session):
    one_line = session.replace("\n", " ")  # tr '\n' ' '
    assert "\n" not in one_line
    assert cells(parse_console(one_line)) == cells(parse_console(session))


@pytest.mark.parametrize("width", [0, 78, 60])
@pytest.mark.parametrize("quote", [False, True], ids=["paragraph", "blockquote"])
@pytest.mark.parametrize("session", [TWO_RUNS, TWO_APIS], ids=["threads", "apis"])
def test_a_session_through_a_page_keeps_each_run_apart(session, quote, width):
    text = through_a_page(quoted(session, "> ") if quote else session, width)
    if width:
        assert max(map(len, text.splitlines())) < 100 and "\nDoing" not in text  # re-wrapped mid-line
    assert cells(parse_console(text)) == cells(parse_console(session)), text[:600]


def test_a_quoted_session_beside_a_reply_keeps_the_reply_out():
    text = "On Tue, a tester wrote:\n" + quoted(TWO_RUNS, "> ") + "\nThanks, the 2-thread figure looks low.\n"
    assert cells(parse_console(text)) == cells(parse_console(TWO_RUNS))
