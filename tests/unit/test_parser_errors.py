"""A reader's bug never hides as a skipped note (issue 37): the parser's safety net records an exception a reader
raised as an internal error (ParsedLog.errors), apart from the notes on the log, and no log of any corpus in
tests/data, whole or mangled, gives one."""
from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import cli
from orchestrator.parse import parse_console, parse_speed
from orchestrator.parse.batch import parse_many

DATA = Path(__file__).resolve().parents[1] / "data"
CORPUS = sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".txt", ".log", ".md"))
PROGRESS = DATA / "speed" / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"


def test_the_corpus_is_every_kind_of_log():
    kinds = {p.relative_to(DATA).parts[0] for p in CORPUS}
    assert {"speed", "console", "conditions", "detect", "hostile", "facts"} <= kinds and len(CORPUS) > 150


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(DATA)))
def test_no_log_of_any_corpus_meets_a_readers_bug(path: Path):
    text = path.read_text(encoding="utf-8", errors="replace")
    for log in (parse_console(text), parse_speed(text)):
        assert log.errors == [], log.errors
        assert not [note for note in log.skipped if "internal error" in note]


def _broken(*_: object, **__: object) -> None:
    raise IndexError("a reader's bug")


def test_a_bug_in_a_line_reader_is_an_internal_error_not_a_skipped_note(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("orchestrator.parse.speed.read_progress", _broken)
    text = PROGRESS.read_text()
    for log in (parse_speed(text), parse_console(text), parse_many([text], jobs=1)[0]):
        assert log.errors and all("IndexError: a reader's bug" in error for error in log.errors), log.errors
        assert not [note for note in log.skipped if "IndexError" in note or "internal error" in note]
        assert log.to_dict()["errors"] == log.errors


def test_a_bug_in_resolving_is_an_internal_error_and_the_build_is_kept(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("orchestrator.parse.speed.finish", _broken)
    log = parse_speed(PROGRESS.read_text())
    assert log.openssl.version == "3.0.19" and log.measurements == []
    assert log.errors == ["internal error resolving the results: IndexError: a reader's bug"]


def test_parse_and_import_say_a_readers_bug_loudly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]):
    monkeypatch.setattr("orchestrator.parse.speed.read_error", _broken)
    log = tmp_path / "speed.txt"
    log.write_text(PROGRESS.read_text() + "speed: Unknown algorithm aes-999\n")
    assert cli.main(["parse", str(log)]) == 0
    err = capsys.readouterr().err
    assert "internal error" in err and "a bug in sslbench" in err
    assert cli.main(["import", str(log), "--host", "a", "--results", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "internal error" in err and "a bug in sslbench" in err

