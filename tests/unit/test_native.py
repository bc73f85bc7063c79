"""The mypyc-compiled parser (orchestrator.parse.native): same results as the Python source, used only when it
matches that source."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.parse import native, native_build, parse_console

DATA = Path(__file__).resolve().parent.parent / "data"
SAMPLES = sorted((DATA / "speed").glob("*.txt")) + sorted((DATA / "console").glob("*.txt"))


def shapes(text: str) -> list[str]:
    """Each sample as users paste it: as is, CRLF, doubled newlines, behind a prompt, every 5th newline lost."""
    pieces = text.split("\n")
    lost = "".join(piece + ("" if i % 5 == 4 else "\n") for i, piece in enumerate(pieces))
    return [text, text.replace("\n", "\r\n"), text.replace("\n", "\n\n"), "root@OpenWrt:~# openssl speed\n" + text,
            lost]


PURE_PARSE = """
import json, sys
from orchestrator.parse import native, parse_console
assert not native.in_use(), "SSLBENCH_PURE_PYTHON=1 must load the .py modules"
texts = json.load(open(sys.argv[1]))
json.dump([parse_console(text).to_dict() for text in texts], open(sys.argv[2], "w"))
"""


def test_compiled_and_pure_python_parsers_agree_on_every_sample_in_every_shape(tmp_path):
    if not native.in_use():
        assert not os.environ.get("SSLBENCH_REQUIRE_NATIVE"), (
            "the compiled parser is not in use: `make setup` did not build it (see its output)")
        pytest.skip("no compiled parser built here (make setup builds it; needs a C compiler)")
    texts = [shape for sample in SAMPLES for shape in shapes(sample.read_text(errors="replace"))]
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    subprocess.run([sys.executable, "-c", PURE_PARSE, str(tmp_path / "texts.json"), str(tmp_path / "pure.json")],
                   check=True, env={**os.environ, native.PURE_ENV: "1"}, timeout=300)
    pure = json.loads((tmp_path / "pure.json").read_text())
    compiled = json.loads(json.dumps([parse_console(text).to_dict() for text in texts]))
    assert len(pure) == len(texts) == 5 * len(SAMPLES) and len(SAMPLES) > 50
    mismatches = [i for i, (a, b) in enumerate(zip(pure, compiled)) if a != b]
    assert not mismatches, f"{len(mismatches)} differ, first: {texts[mismatches[0]][:200]!r}"
    assert sum(len(log["measurements"]) for log in compiled) > 2_000


def fake_build(tmp_path: Path, recorded: str, name: str = "native-parser") -> Path:
    build_dir = tmp_path / name
    build_dir.mkdir()
    (build_dir / native.FINGERPRINT_FILE).write_text(recorded + "\n")
    (build_dir / "0123abcd__mypyc.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    return build_dir


def test_a_build_is_used_only_while_it_matches_the_source(tmp_path, monkeypatch):
    monkeypatch.delenv(native.PURE_ENV, raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    matching = fake_build(tmp_path, native.fingerprint())
    package_path = ["/src/orchestrator/parse"]
    assert native.enable(package_path, matching)
    assert package_path == [str(matching / "orchestrator" / "parse"), "/src/orchestrator/parse"]
    assert str(matching) in sys.path

    stale = fake_build(tmp_path, "0" * 64, "stale")  # built from a parser edited since
    package_path = ["/src/orchestrator/parse"]
    assert not native.enable(package_path, stale)
    assert package_path == ["/src/orchestrator/parse"]
    assert not native.enable(package_path, tmp_path / "never-built")
    assert package_path == ["/src/orchestrator/parse"]
    for library in matching.glob("*__mypyc.*"):
        library.unlink()  # a build without mypyc's shared library could load no module
    assert not native.enable(package_path, matching)
    assert package_path == ["/src/orchestrator/parse"]


def test_the_fingerprint_changes_with_any_compiled_source(tmp_path):
    for name in native.MODULES:
        (tmp_path / f"{name}.py").write_text(f"# {name}\n")
    before = native.fingerprint(tmp_path)
    assert native.fingerprint(tmp_path) == before
    (tmp_path / "speed.py").write_text("# speed, edited\n")
    assert native.fingerprint(tmp_path) != before


@pytest.mark.parametrize("value, used", [("1", False), ("yes", False), ("0", True), ("", True)])
def test_sslbench_pure_python_turns_the_build_off(tmp_path, monkeypatch, value, used):
    monkeypatch.setattr(sys, "path", list(sys.path))
    build_dir = fake_build(tmp_path, native.fingerprint())
    monkeypatch.setenv(native.PURE_ENV, value)
    package_path: list[str] = []
    assert native.enable(package_path, build_dir) is used
    assert package_path == ([str(build_dir / "orchestrator" / "parse")] if used else [])


@pytest.mark.parametrize("require, code", [(False, 0), (True, 1)])
def test_a_failed_build_says_the_pure_parser_is_used(monkeypatch, capsys, require, code):
    def no_compiler(build_dir=None):
        raise RuntimeError("mypyc failed:\nerror: command 'gcc' failed: No such file or directory")

    monkeypatch.setattr(native_build, "build", no_compiler)
    assert native_build.main(["--require"] if require else []) == code
    err = capsys.readouterr().err
    assert "gcc" in err and "the pure-Python parser will be used" in err
