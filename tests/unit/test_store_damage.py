"""One damaged run.json never takes the store down: every reader of the whole store skips it in one line that
names the run and the field, and answers from the rest (issue 37, item 5)."""
from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from orchestrator import cli, runschema, store
from orchestrator.errors import UserError
from orchestrator.render import formats

DATA = Path(__file__).resolve().parents[1] / "data" / "speed"
GCM_X86 = DATA / "openssl-3.0.19-x86_64-evp-aes-128-gcm.txt"
GCM_ARM = DATA / "openssl-1.1.1w-armv7l-qemu-evp-aes-128-gcm.txt"


def _set(*path: Any) -> Callable[[dict[str, Any]], None]:
    *where, key, value = path

    def damage(data: dict[str, Any]) -> None:
        target: Any = data
        for step in where:
            target = target[step]
        target[key] = value
    return damage


def _kind(data: dict[str, Any], kind: object) -> None:
    """A schema 4 row whose kind is not a name: the row filled out to every field, the fields named."""
    from orchestrator.model import Measurement
    host = data["hosts"][0]
    names = [f.name for f in dataclasses.fields(Measurement)]
    row = host["measurements"][0]
    defaults = [None, None, None, None, None, 1, None, None, None, None, "ok", None, 0, [], None]
    host["measurements"][0] = row + defaults[len(row):] + [kind]
    host["measurement_fields"] = names[:len(host["measurements"][0])]


# the damage, and the field the skip line must name
DAMAGES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "schema-string": (_set("schema", "3"), "run.schema"),
    "created-null": (_set("created", None), "run.created"),
    "hosts-string": (_set("hosts", "x"), "run.hosts"),
    "firmware-number": (_set("hosts", 0, "firmware", 42), "hosts[0].firmware"),
    "block-size-string": (_set("hosts", 0, "measurements", 0, 1, "16"), "hosts[0].measurements[0].block_size"),
    "host-null": (_set("hosts", 0, None), "hosts[0]"),
    "host-name-null": (_set("hosts", 0, "host", None), "hosts[0].host"),
    "run-id-number": (_set("run_id", 7), "run.run_id"),
    "command-string": (_set("command", "sslbench run"), "run.command"),
    "matrix-list": (_set("matrix", []), "run.matrix"),
    "complete-string": (_set("complete", "no"), "run.complete"),
    "status-unknown": (_set("hosts", 0, "status", "fine"), "hosts[0].status"),
    "cpu-count-string": (_set("hosts", 0, "cpu", "logical_cpus", "4"), "hosts[0].cpu.logical_cpus"),
    "os-list": (_set("hosts", 0, "os", []), "hosts[0].os"),
    "flags-of-numbers": (_set("hosts", 0, "flags", [1]), "hosts[0].flags[0]"),
    "conditions-list": (_set("hosts", 0, "conditions", []), "hosts[0].conditions"),
    "row-object": (_set("hosts", 0, "measurements", 0, {}), "hosts[0].measurements[0]"),
    "row-empty": (_set("hosts", 0, "measurements", 0, []), "hosts[0].measurements[0]"),
    "value-string": (_set("hosts", 0, "measurements", 0, 2, "fast"), "hosts[0].measurements[0].bytes_per_second"),
    "threads-true": (_set("hosts", 0, "measurements", 0, 5, True), "hosts[0].measurements[0].threads"),
    "fields-number": (_set("hosts", 0, "measurement_fields", 3), "hosts[0].measurement_fields"),
    "kind-number": (lambda data: _kind(data, 4), "hosts[0].measurements[0].kind"),
    # a name no kind in the registry has: every type fits, and each reader asking the registry about it would stop
    "kind-unknown": (lambda data: _kind(data, "foo"), "hosts[0].measurements[0].kind"),
    "tunnels-of-strings": (_set("hosts", 0, "tunnels", ["wireguard"]), "hosts[0].tunnels[0]"),
    "tunnel-mtu-string": (_set("hosts", 0, "tunnels", [{"tunnel": "wireguard", "implementation": "kernel",
                                                        "mtu": "1420"}]), "hosts[0].tunnels[0].mtu"),
}


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two imported runs of one router, under two firmware labels: what every reader answers from."""
    results = tmp_path_factory.mktemp("good") / "results"
    for log, firmware in ((GCM_ARM, "old-fw"), (GCM_X86, "new-fw")):
        assert cli.main(["import", str(log), "--host", "router", "--firmware", firmware, "--date",
                         "2026-01-0%dT00:00:00Z" % (1 if firmware == "old-fw" else 2), "--results", str(results)]) == 0
    return results


def _damaged(good: Path, tmp: Path, names: list[str]) -> Path:
    """The good store and, after it, one run per damage: each a copy of the newest good run, damaged once."""
    results = tmp / "results"
    for run in store.list_runs(good):
        (results / run.name).mkdir(parents=True)
        (results / run.name / store.RUN_FILE).write_bytes((run / store.RUN_FILE).read_bytes())
    base = json.loads((store.list_runs(good)[-1] / store.RUN_FILE).read_text())
    for index, name in enumerate(names):
        data = copy.deepcopy(base)
        data["run_id"] = f"20990101T0000{index:02d}Z-{name}"
        data["created"] = "2099-01-01T00:00:00+00:00"
        DAMAGES[name][0](data)
        (results / f"20990101T0000{index:02d}Z-{name}").mkdir()
        (results / f"20990101T0000{index:02d}Z-{name}" / store.RUN_FILE).write_text(json.dumps(data))
    return results


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_a_damaged_run_is_skipped_in_one_line_naming_it_and_the_field(name: str, good: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]):
    results = _damaged(good, tmp_path, [name])
    runs = store.load_all(results)
    assert [run.hosts[0].firmware for run in runs] == ["old-fw", "new-fw"]
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert name in lines[0] and f"{DAMAGES[name][1]}:" in lines[0] and lines[0].startswith("sslbench: skipping ")
    with pytest.raises(UserError, match=DAMAGES[name][1].replace("[", r"\[").replace("]", r"\]")):
        store.load_run(store.list_runs(results)[-1])


def _every_reader(results: Path, tmp: Path) -> list[list[str]]:
    where = ["--results", str(results)]
    commands = [["report", "--all", "--format", fmt, *where] for fmt in formats.REPORT_FORMATS
                if not formats.get(fmt).page_only]
    commands += [["report", "--all", "--format", fmt, "-o", str(tmp / f"report.{fmt}"), *where]
                 for fmt in formats.REPORT_FORMATS if formats.get(fmt).page_only]
    commands += [["history", "router", *where], ["history", "router", "--runs", *where],
                 ["trend", "router", *where], ["trend", "router", "--format", "json", *where],
                 ["diff", "--host", "router", "--by", "firmware", "--from", "old-fw", "--to", "new-fw", *where],
                 ["publish", str(results), "-o", str(tmp / "site")]]
    return commands


def test_every_reader_of_the_store_answers_past_every_damaged_run(good: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]):
    results = _damaged(good, tmp_path, sorted(DAMAGES))
    capsys.readouterr()
    for command in _every_reader(results, tmp_path):
        assert cli.main(command) == 0, command
        err = capsys.readouterr().err
        skipped = [line for line in err.splitlines() if line.startswith("sslbench: skipping ")]
        assert len(skipped) == len(DAMAGES), (command, err)
        assert "Traceback" not in err
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_host_json_of_the_wrong_shape_counts_as_unfinished(tmp_path: Path):
    """A running run's host.json is read through the same schema: a damaged one is a host that did not finish."""
    from orchestrator.model import HostResult, Run
    run_dir = store.new_run_dir(tmp_path)
    store.save_run(run_dir, Run(run_id=run_dir.name, created=store.utc_now(), hosts=[HostResult("a")],
                                complete=False))
    store.host_dir(run_dir, "a")
    (run_dir / "a" / store.HOST_FILE).write_text(json.dumps({"host": "a", "firmware": 42}))
    (host,) = store.load_run(run_dir).hosts
    assert host.status == "failed" and host.reason == store.UNFINISHED


def test_the_schema_follows_the_dataclasses():
    """A field added to model.py is checked without a change to runschema (its type read from the annotation)."""
    from orchestrator.model import HostResult, InstalledPackage, Measurement, Run, TunnelEvidence, TunnelMethod
    import dataclasses
    for cls in (Measurement, HostResult, Run, TunnelMethod, TunnelEvidence, InstalledPackage):
        checked = set(runschema._specs(cls))
        unchecked = {f.name for f in dataclasses.fields(cls)} - checked
        assert unchecked <= {"cpu", "os", "openssl"}, (cls, unchecked)  # nested records, checked as records
