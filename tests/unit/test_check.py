"""`sslbench check`: every run that cannot be read and why, and everything a stopped sslbench left in the store;
exit 1 when there is any (issue 37, "What to build": a store check as restic check / borg check)."""
from __future__ import annotations

import dataclasses
import json
import shutil
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from orchestrator import cli, privatedir, store, storecheck
from orchestrator.model import HostResult, Measurement, Run

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "data" / "speed" / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"


def _good(results: Path) -> Path:
    assert cli.main(["import", str(LOG), "--host", "router", "--results", str(results)]) == 0
    return store.list_runs(results)[-1]


def test_a_whole_store_checks_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # no runner dirs of other tests' runs
    (tmp_path / "tmp").mkdir()
    results = tmp_path / "results"
    _good(results)
    capsys.readouterr()
    assert cli.main(["check", "--results", str(results)]) == 0
    assert capsys.readouterr().out == f"no problems in {results} (1 run)\n"


def _damaged_store(results: Path) -> dict[storecheck.Kind, Path]:
    good = _good(results)
    bad = results / "20260101T000000Z-bad"
    bad.mkdir()
    data = json.loads((good / store.RUN_FILE).read_text())
    data["hosts"][0]["firmware"] = 42
    (bad / store.RUN_FILE).write_text(json.dumps(data))
    running = store.new_run_dir(results)
    store.save_run(running, Run(run_id=running.name, created=store.utc_now(), complete=False,
                                hosts=[HostResult("a"), HostResult("b")]))
    store.save_unfinished_host(running, "a", HostResult("a", measurements=[Measurement("sha256", 16, 1e6)]))
    store.host_dir(running, "b")
    (running / "b" / store.HOST_FILE).write_text('{"host": "b", "flags": "busy"}')
    orphan = results / "20260102T000000Z-orphan"
    store.host_dir(orphan, "r1")
    (orphan / "r1" / "cell-01.log").write_text("aes-128-gcm 1.00k\n")
    aside, _ = store.aside_dir(results)  # what an import killed between writing and renaming leaves
    half = good / "run.json.tmp"
    half.write_text('{"run_id": "cut')
    return {storecheck.Kind.UNREADABLE: bad / store.RUN_FILE, storecheck.Kind.UNFINISHED: running,
            storecheck.Kind.BAD_HOST: running / "b" / store.HOST_FILE, storecheck.Kind.NO_RUN_FILE: orphan,
            storecheck.Kind.ASIDE: aside, storecheck.Kind.HALF_WRITTEN: half}


def test_every_kind_of_damage_and_leftover_is_named_with_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    killed, old = tmp_path / "tmp" / "sslbench-runner-k9x2", tmp_path / "tmp" / "sslbench-runner-old1"
    killed.mkdir(parents=True)
    (killed / privatedir.OWNER).write_text(f"{os.getpid()} 1\n")  # our pid, another start time: another process
    old.mkdir()
    monkeypatch.setattr(storecheck, "_other_sslbench", lambda: [])  # the machine's other tests run sslbench too
    results = tmp_path / "results"
    expected = _damaged_store(results)
    capsys.readouterr()
    assert cli.main(["check", "--results", str(results)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"8 problems in {results} (3 runs)"
    for kind, path in expected.items():
        (line,) = [line for line in out if line.startswith(f"{path}: {kind.value}: ")]
    assert any("hosts[0].firmware: a string or null expected, not 42" in line for line in out)
    assert any("host.flags: an array expected" in line for line in out)
    assert any("sslbench-runner-k9x2: runner directory left behind" in line for line in out)
    assert f"{old}: runner directory of an older sslbench: made by an older sslbench (no owner file): no run " \
           "removes it; remove it by hand" in out


def test_only_runner_dirs_whose_sslbench_is_gone_are_called_left_behind(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    """privatedir's owner rule: the dir of a live sslbench (this process, made by privatedir.make) is not a
    killed run's; one whose owner is gone is, and `run` would remove it; one with no owner file is said apart."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(storecheck, "_other_sslbench", lambda: [])
    results = tmp_path / "results"
    _good(results)
    live = privatedir.make()
    gone = tmp_path / "tmp" / f"{privatedir.PREFIX}gone"
    gone.mkdir()
    (gone / privatedir.OWNER).write_text(f"{os.getpid()} 1\n")
    old = tmp_path / "tmp" / f"{privatedir.PREFIX}old"
    old.mkdir()
    found = {f.path: f.kind for f in storecheck.check(results)}
    assert found == {gone: storecheck.Kind.RUNNER_DIR, old: storecheck.Kind.OLD_RUNNER_DIR}
    assert live not in found and privatedir.owner(live) is privatedir.Owner.LIVE
    assert privatedir.clean_stale() == [gone] and live.exists() and old.exists()  # what `run` removes: the same
    assert {f.path: f.kind for f in storecheck.check(results)} == {old: storecheck.Kind.OLD_RUNNER_DIR}
    monkeypatch.setattr(storecheck, "_other_sslbench", lambda: [12345])  # another at work: maybe making one now
    assert storecheck.check(results) == []


def test_while_another_sslbench_is_at_work_its_runs_are_not_called_dead(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    """A real other sslbench (an import waiting for its stdin): unfinished runs may be its, runner dirs too."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp" / "sslbench-runner-live").mkdir(parents=True)
    results = tmp_path / "results"
    _damaged_store(results)
    other = subprocess.Popen([sys.executable, "-m", "orchestrator", "import", "-", "--host", "x", "--results",
                              str(tmp_path / "elsewhere")], cwd=ROOT, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        found = storecheck.check(results)
    finally:
        other.kill()
        other.wait()
    (unfinished,) = [f for f in found if f.kind is storecheck.Kind.UNFINISHED]
    assert f"pid {other.pid}" in unfinished.why or "an sslbench is running" in unfinished.why
    assert not [f for f in found if f.kind is storecheck.Kind.RUNNER_DIR]


def test_an_import_at_work_holds_the_lock_and_its_aside_is_not_called_left(tmp_path: Path):
    results = tmp_path / "results"
    _good(results)
    aside, _ = store.aside_dir(results)
    with store.locked(results):
        assert not [f for f in storecheck.check(results) if f.kind is storecheck.Kind.ASIDE]
    assert [f.path for f in storecheck.check(results) if f.kind is storecheck.Kind.ASIDE] == [aside]


def test_a_damaged_reference_entry_is_named_by_check_and_skipped_by_its_readers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(storecheck, "_other_sslbench", lambda: [])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    results = tmp_path / "results"
    _good(results)
    for board in ("myboard", "other"):
        assert cli.main(["import", str(LOG), "--reference", "--host", board, "--source", "https://example.org/log",
                         "--results", str(results)]) == 0
    capsys.readouterr()
    assert cli.main(["check", "--results", str(results)]) == 0, capsys.readouterr().out
    entry = next((results / store.REFERENCE_DIR).glob("myboard*"))
    data = json.loads((entry / store.RUN_FILE).read_text())
    data["hosts"][0]["cpu"] = "fast"
    (entry / store.RUN_FILE).write_text(json.dumps(data))
    capsys.readouterr()
    assert cli.main(["check", "--results", str(results)]) == 1
    (line, summary) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{entry / store.RUN_FILE}: unreadable run: ") and "hosts[0].cpu: an object expected" in line
    assert cli.main(["report", "--all", "--against", "known", "--results", str(results)]) == 0
    out, err = capsys.readouterr()
    assert "other" in out and err.count("sslbench: skipping ") == 1 and "myboard" in err


def test_a_run_with_a_kind_no_registry_knows_is_named_by_check(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch):
    """A measurement of kind "foo" fits every type; the registry knows no such kind, so the run is one check
    names (and every reader skips), not one that stops `report --format openmetrics` for the whole store."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    results = tmp_path / "results"
    good = _good(results)
    _good(tmp_path / "other")  # a good run the readers answer from (its own store: import takes a log once)
    shutil.copytree(store.list_runs(tmp_path / "other")[-1], results / "20990101T000000Z-good")
    data = json.loads((good / store.RUN_FILE).read_text())
    host = data["hosts"][0]
    fields = [f.name for f in dataclasses.fields(Measurement)]
    host["measurements"] = [list(dataclasses.astuple(dataclasses.replace(Measurement.from_dict(dict(zip(
        host["measurement_fields"], row))), kind="foo"))) for row in host["measurements"]]
    host["measurement_fields"] = fields
    (good / store.RUN_FILE).write_text(json.dumps(data))
    capsys.readouterr()
    assert cli.main(["check", "--results", str(results)]) == 1
    out = capsys.readouterr().out
    assert f"{good / store.RUN_FILE}: unreadable run: hosts[0].measurements[0].kind: a benchmark kind" in out
    assert "'foo'" in out or '"foo"' in out
    assert cli.main(["report", "--all", "--format", "openmetrics", "--results", str(results)]) == 0
