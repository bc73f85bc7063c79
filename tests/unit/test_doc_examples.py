"""Every example in README.md and docs/*.md is run and must print what it shows (as Go's testable examples).

The convention, for whoever writes docs:
- A fenced block whose info string is `console` holds examples: a line `$ sslbench ARGS` is a command (split as a
  shell would, no pipes or redirections), the lines up to the next `$ ` line or the block's end are what it prints
  (stdout and stderr as a terminal interleaves them). Trailing spaces do not count.
- A line that is only `...` stands for any number of lines; `[...]` inside a line for any text (a figure measured
  on the machine, a run id).
- The commands run in a fresh directory holding `results/`, the store of tests/unit/fleet_store.py (five boards
  over three months, and a router measured every night) and `speed.log` (a Raspberry Pi 4's published paste), with
  no terminal (nothing is cut to a width).
  `sslbench run` examples run on this machine (the default inventory), where openssl is installed.
- Other blocks (```sh, ```toml ...) are not run: use them for commands that need your own hosts or files.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import fleet_store

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SSLBENCH = str(Path(sys.executable).parent / "sslbench")
SPEED_LOG = ROOT / "orchestrator" / "reference" / "known" / "rpi4b-armhf-aes256gcm-openssl300.txt"  # a real paste


@dataclass
class Example:
    doc: Path
    line: int
    argv: list[str]
    expected: list[str]

    def __str__(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def examples_in(doc: Path) -> list[Example]:
    found: list[Example] = []
    in_console = False
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            in_console = not in_console and line.strip() == "```console"
            continue
        if not in_console:
            continue
        if line.startswith("$ "):
            argv = shlex.split(line[2:])
            assert argv[0] == "sslbench", f"{doc}:{number}: a console example runs sslbench only"
            found.append(Example(doc, number, argv[1:], []))
        elif found:
            found[-1].expected.append(line.rstrip())
    return found


EXAMPLES = [example for doc in DOCS for example in examples_in(doc)]


def matches(expected: list[str], actual: list[str]) -> bool:
    """`...` lines match any lines, `[...]` any text within a line."""
    def line_ok(want: str, got: str) -> bool:
        pattern = ".*".join(re.escape(part) for part in want.split("[...]"))
        return re.fullmatch(pattern, got) is not None

    def walk(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(actual)
        if expected[i] == "...":
            return any(walk(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and line_ok(expected[i], actual[j]) and walk(i + 1, j + 1)

    return walk(0, 0)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("docs")
    fleet_store.save(fleet_store.fleet_runs() + fleet_store.nightly_runs(), root / "results")
    shutil.copy(SPEED_LOG, root / "speed.log")
    return root


def test_the_docs_have_examples():
    assert len(EXAMPLES) >= 5 and any(e.doc.name == "README.md" for e in EXAMPLES)


def test_every_example_with_a_prompt_is_in_a_console_block():
    """A `$ sslbench` line shows output as real: it must be checked (a ```sh block without `$` shows a command)."""
    for doc in DOCS:
        prompts = sum(1 for line in doc.read_text(encoding="utf-8").splitlines() if line.startswith("$ sslbench"))
        assert prompts == sum(1 for e in EXAMPLES if e.doc == doc), doc


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_example(example: Example, planted: Path, tmp_path: Path):
    if example.argv[:1] == ["run"] and shutil.which("openssl") is None:
        pytest.skip("needs openssl on this machine")
    cwd = tmp_path / "here"
    shutil.copytree(planted, cwd)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "SSLBENCH_"))}
    # unbuffered: stdout and stderr interleave as on a terminal
    env.update(COLUMNS="100", LC_ALL="C.UTF-8", TZ="UTC", PYTHONUNBUFFERED="1")
    done = subprocess.run([SSLBENCH, *example.argv], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    actual = [line.rstrip() for line in done.stdout.splitlines()]
    while actual and not actual[-1]:
        actual.pop()
    expected = list(example.expected)
    while expected and not expected[-1]:
        expected.pop()
    assert matches(expected, actual), (
        f"{example}: `sslbench {shlex.join(example.argv)}` printed (exit {done.returncode}):\n" + "\n".join(actual))


def test_the_matcher():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and matches(["a", "...", "b"], ["a", "b"])
    assert matches(["x [...] y"], ["x 12.5 MB/s y"]) and not matches(["x [...] y"], ["x 1 z"])
    assert not matches(["a"], ["a", "b"]) and not matches(["a", "b"], ["a"])
