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
    return flatten.handle(MarkdownIt("commonmark").enable("table").render(markdown))  # GitHub's tables


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


BYTES_16384 = (Path(__file__).resolve().parents[1] / "data" / "speed"
               / "openssl-3.0.22-x86_64-bytes16384-evp-aes-128-gcm.txt").read_text()


def without(text: str, start: str) -> str:
    """`grep -v '^START'`: the log less the lines a paste dropped."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(start))


def test_a_single_column_row_without_its_header_is_never_placed_by_guess():
    whole = parse_console(BYTES_16384)
    assert [(m.block_size, m.value, m.status, m.flags) for m in whole.measurements] == [
        (16384, 6860584.42e3, "ok", [])]
    no_header = parse_console(without(BYTES_16384, "type "))
    # the only figure is the progress line's, flagged, and the notes say why the row was not read
    assert [(m.block_size, m.flags) for m in no_header.measurements] == [(16384, ["partial"])]
    assert "ends before" not in no_header.measurements[0].reason.split("(")[0]
    assert any("no table header" in note for note in no_header.skipped)
    alone = parse_console(without(without(BYTES_16384, "type "), "Doing "))
    assert alone.measurements == [] and any("no table header" in note for note in alone.skipped)


def test_the_message_of_a_log_without_a_readable_figure_says_why():
    from orchestrator.errors import UserError
    from orchestrator.logfiles import checked

    text = without(without(BYTES_16384, "type "), "Doing ")
    with pytest.raises(UserError) as raised:
        checked("x.log", parse_console(text))
    assert "no table header" in str(raised.value) and "ends before" not in str(raised.value)


@pytest.mark.parametrize("width", [0, 78])
def test_a_pipe_table_pasted_alone_is_read(width):
    table = [line for line in TWO_RUNS.split("$ openssl", 2)[1].splitlines() if line.startswith(("type", "AES"))]
    cells_ = ["|" + "|".join(c.strip() for c in __import__("re").split(r"\s{2,}", line.strip())) + "|"
              for line in table]
    markdown = "\n".join([cells_[0], "|" + "---|" * 7, *cells_[1:]]) + "\n"
    want = {k: v for k, v in cells(parse_console(TWO_RUNS)).items() if k[2] == 1}
    assert cells(parse_console(markdown)) == want
    assert cells(parse_console(through_a_page(markdown, width))) == cells(parse_console(markdown))


@pytest.mark.parametrize("width", [0, 78])
def test_bold_figures_and_curly_quotes_through_a_page_keep_the_runs(width):
    import re

    source = re.sub(r"(?<![\w.:-])(\d[\d.]*k?)(?=\s|$)", r"**\1**", TWO_RUNS)
    md = MarkdownIt("commonmark", {"typographer": True}).enable(["replacements", "smartquotes"])
    flatten = html2text.HTML2Text()
    flatten.body_width = width
    page = flatten.handle(md.render(source))
    assert "\u2019s in" in page
    assert cells(parse_console(page)) == cells(parse_console(TWO_RUNS)), page[:800]


@pytest.mark.parametrize("lost", [False, True], ids=["lines", "tr"])
def test_a_multi_run_saved_before_a_single_run_without_prompts_keeps_them_apart(lost):
    # the -multi run's summary row has no header; the run after it starts at its first progress line
    # (openssl's -multi children print -mr lines only: a human `Doing` line is never theirs)
    multi, single = TWO_RUNS.split("$ openssl speed", 2)[2], TWO_RUNS.split("$ openssl speed", 2)[1]
    text = multi.split("\n", 1)[1] + single.split("\n", 1)[1]
    if lost:
        text = text.replace("\n", " ")
    assert cells(parse_console(text)) == cells(parse_console(TWO_RUNS))
