"""A field tester's report, re-run through the real CLI on real logs (tests/data/speed): host and firmware names
with control characters, CJK letters, slashes and case twins; references and a site that must not overwrite
what is not theirs; the sentences that count things. See docs/trust.md, "Text from hosts"."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from orchestrator import cli, reference
from orchestrator.render import site

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"
GCM_X86 = DATA / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"
GCM_ARM = DATA / "openssl-1.1.1w-armv7l-qemu-evp-aes-128-gcm.txt"
ONE_CELL = DATA / "openssl-1.1.1w-x86_64-bytes1400-aes-128-gcm.txt"  # `-bytes 1400`: one figure
GCM_X86_111 = DATA / "openssl-1.1.1w-x86_64-evp-aes-128-gcm.txt"  # 6 figures, another log than GCM_X86's


@pytest.fixture
def ONE_CELL_AGAIN(tmp_path: Path) -> Path:
    """The same one-figure cell measured again: a second run prints other counts (the same log twice is one
    measurement, and import refuses it)."""
    again = tmp_path / "again.txt"
    again.write_text(ONE_CELL.read_text().replace("1585480 aes-128-gcm's in 0.59s", "1585123 aes-128-gcm's in 0.59s")
                     .replace("3762155.93k", "3761308.81k"))
    return again
EVIL = "evil\x1b]0;pwned\x07"
RED = "h\x1b[31m"
ACTING = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def run(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = cli.main(list(words))
    out, err = capsys.readouterr()
    return code, out, err


def imported(capsys: pytest.CaptureFixture[str], results: Path, host: str, log: Path,
             firmware: str | None = None) -> str:
    code, out, err = run(capsys, "import", str(log), "--host", host, "--results", str(results),
                         *(["--firmware", firmware] if firmware else []))
    assert code == 0, err
    return out


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    results = tmp_path / "results"
    imported(capsys, results, EVIL, GCM_X86, "fw1")
    imported(capsys, results, EVIL, GCM_ARM, "fw2")
    imported(capsys, results, RED, GCM_X86, "fw1")
    imported(capsys, results, RED, GCM_ARM, "fw2\x01\x1b[31m")
    return results


def test_junit_of_hostile_names_is_well_formed_xml(store, capsys):
    code, out, err = run(capsys, "trend", EVIL, "--results", str(store), "--format", "junit")
    assert code == 0, err
    root = ElementTree.fromstring(out)  # a raw ESC or BEL is not allowed in XML 1.0: the parser would refuse it
    assert root.tag == "testsuites" and "evil\\x1b]0;pwned\\x07" in root.get("name", "")
    code, out, err = run(capsys, "diff", "--host", RED, "--by", "firmware", "--format", "junit",
                         "--results", str(store))
    assert code == 0, err
    assert {case.get("classname") for case in ElementTree.fromstring(out).iter("testcase")} == {"h\\x1b[31m"}


def test_import_message_counts_and_shows_escapes(tmp_path, capsys):
    out = imported(capsys, tmp_path / "r", EVIL, ONE_CELL)
    assert not ACTING.search(out.replace("\n", "")), repr(out)
    assert re.search(r"imported 1 measurement of evil\\x1b\]0;pwned\\x07 from 1 log as run ", out), out
    code, out, err = run(capsys, "import", str(GCM_X86), str(GCM_X86_111), "--host", "two", "--results",
                         str(tmp_path / "r"))
    assert "imported 12 measurements of two from 2 logs as run " in out, out


def test_trend_and_diff_say_one_run_and_one_cell(store, capsys, ONE_CELL_AGAIN):
    code, out, err = run(capsys, "trend", RED, "--results", str(store))
    assert code == 0, err
    assert "2 runs under 2 firmware versions" in out and "(1 run, " in out and "1 runs" not in out
    assert "fw2\\x01\\x1b[31m" in out and not ACTING.search(out.replace("\n", ""))
    imported(capsys, store, "solo", ONE_CELL, "fw1")
    code, out, err = run(capsys, "trend", "solo", "--results", str(store))
    assert "1 run under 1 firmware version\n" in out, out
    imported(capsys, store, "solo", ONE_CELL_AGAIN, "fw2")
    code, out, err = run(capsys, "diff", "--host", "solo", "--by", "firmware", "--results", str(store))
    assert "note: 1 of 1 cell has one sample on a side" in out, out


def test_diff_of_a_run_with_itself_says_so(store, capsys):
    code, out, err = run(capsys, "diff", "latest", "latest", "--results", str(store))
    assert code == 0, err
    assert "compared with itself" in out
    code, out, err = run(capsys, "diff", "latest", "latest", "--results", str(store), "--format", "csv")
    assert "compared with itself" in err and "itself" not in out  # the CSV stays data


@pytest.mark.parametrize("name", [" sp", "sp ", "sp\t", " "])
def test_host_names_with_white_space_at_an_end_are_refused(tmp_path, capsys, name):
    code, out, err = run(capsys, "import", str(GCM_X86), "--host", name, "--results", str(tmp_path / "r"))
    assert code == 2 and "starts or ends with white space" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
    code, out, err = run(capsys, "import", str(GCM_X86), "--host", name, "--reference", "--source", "https://x.example",
                         "--results", str(tmp_path / "r"))
    assert code == 2 and "white space" in err


def test_reference_entries_whose_names_sanitise_alike_get_their_own_directories(tmp_path, capsys):
    results = tmp_path / "r"
    dirs = []
    for name in ["路由器", "交换机", "a/b", "a_b", "Router", "router"]:
        code, out, err = run(capsys, "import", str(GCM_X86), "--reference", "--host", name,
                             "--source", "https://x.example/log", "--results", str(results))
        assert code == 0, err
        assert f"stored reference '{name}'" in out
        dirs.append(Path(out.strip().splitlines()[-1]).name)
    assert len({d.casefold() for d in dirs}) == 6, dirs
    code, out, err = run(capsys, "import", str(GCM_X86), "--reference", "--host", "交换机",
                         "--source", "https://x.example/log", "--results", str(results))
    assert code == 2 and f"'交换机' is already stored in {results / 'reference' / dirs[1]}" in err
    assert sorted(h.host for r in reference.stored(results) for h in r.hosts) == sorted(
        ["路由器", "交换机", "a/b", "a_b", "Router", "router"])  # each its own entry, none replaced


def test_reference_error_names_the_command_once(tmp_path, capsys):
    code, out, err = run(capsys, "import", "--reference", "--host", "y", "--source", "https://x.example",
                         "--unit", "bogus", "--figure", "aes-128-gcm:16384=1", "--results", str(tmp_path / "r"))
    assert code == 2 and err.startswith("sslbench: import --reference: reference 'y': unit 'bogus'"), err


def test_publish_refuses_a_directory_it_did_not_write(store, tmp_path, capsys):
    own = tmp_path / "mine"
    own.mkdir()
    (own / "index.html").write_text("my own page\n")
    code, out, err = run(capsys, "publish", str(store), "-o", str(own), "--no-known")
    assert code == 2 and "not written by `sslbench publish`" in err and "--force" in err
    assert (own / "index.html").read_text() == "my own page\n"
    code, out, err = run(capsys, "publish", str(store), "-o", str(own), "--no-known", "--force")
    assert code == 0 and (own / site.MARKER).is_file() and (own / "index.html").read_text() != "my own page\n"
    fresh = tmp_path / "site"
    for _ in range(2):  # a new directory, then the site it wrote
        code, out, err = run(capsys, "publish", str(store), "-o", str(fresh), "--no-known")
        assert code == 0, err
    pages = sorted(fresh.glob("*.html"))
    assert f"wrote {len(pages)} pages" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(capsys, "publish", str(store), "-o", str(empty), "--no-known")[0] == 0
