"""The judges read typed records (evidence/records.py). A record read back from a run.json whose evidence has an
odd shape (a section null, a list where a dict was, an older layout) degrades to "no evidence" in
`Snapshot.from_dict` instead of a traceback in `report` or `diff`; a cell's evidence missing a part is judged on
what is there."""
from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.evidence import conditions as ev
from orchestrator.evidence.clusters import detect_clusters, host_pins, pinning_held
from orchestrator.evidence.records import IdleGate, IdleOutcome, Snapshot
from orchestrator.evidence.validity import (StoredConditions, cell_verdict, crypto_evidence, host_verdict, measured_mhz,
                                            offline_cpus)

DATA = Path(__file__).resolve().parents[1] / "data" / "conditions"
BEFORE = ev.read_snapshot((DATA / "rk3576-before.txt").read_text())
AFTER = ev.read_snapshot((DATA / "rk3576-after-hot-capped.txt").read_text())
CELL = ev.read_cell((DATA / "rk3576-cell-cpu7-throttled.txt").read_text())
ODD_VALUES = [None, [], {}, "text", 7]
assert BEFORE is not None and AFTER is not None
STORED_BEFORE, STORED_AFTER = BEFORE.to_dict(), AFTER.to_dict()


def test_the_fixtures_carry_every_section_the_readers_know():
    # otherwise the corruption below would not reach the code it means to test
    assert {"cpus", "policies", "thermal", "cpu_times", "topology", "tools", "crypto", "swap"} <= (
        set(STORED_BEFORE) & set(STORED_AFTER))
    assert CELL.run and CELL.run.samples and CELL.before
    assert len(detect_clusters(BEFORE)) == 2 and host_verdict(BEFORE, AFTER).flags
    assert cell_verdict(CELL, threads=1, host_before=BEFORE, pinned_cpu=7).flags


@pytest.mark.parametrize("odd", ODD_VALUES, ids=repr)
@pytest.mark.parametrize("section", sorted(set(STORED_BEFORE) | set(STORED_AFTER)))
def test_a_snapshot_section_of_any_shape_gives_a_verdict_not_a_traceback(section: str, odd: Any):
    stored_before, stored_after = copy.deepcopy(STORED_BEFORE), copy.deepcopy(STORED_AFTER)
    stored_before[section] = stored_after[section] = odd
    before, after = Snapshot.from_dict(stored_before), Snapshot.from_dict(stored_after)
    verdict = host_verdict(before, after)
    assert isinstance(verdict.flags, list)
    detect_clusters(before)
    host_pins(before)
    crypto_evidence(before)
    offline_cpus(before)


@pytest.mark.parametrize("odd", ODD_VALUES, ids=repr)
@pytest.mark.parametrize("key", ["idle", "samples", "notes", "params", "waited", "reason"])
def test_a_stored_idle_gate_of_any_shape_reads(key: str, odd: Any):
    stored = ev.parse_idle("@@ begin sslbench-idle 1 gate\nparams max=60\nsample waited=5 load1=112 "
                           "cpu_centicores=101\nidle no waited=60 reason=timeout\n@@ end sslbench-idle\n")
    whole = IdleGate.from_dict(copy.deepcopy(stored))
    stored[key] = odd
    gate = IdleGate.from_dict(stored)
    # the damaged key reads as what it still says (a number stays a waited time, a string a reason) or as nothing;
    # every other field reads as it did
    expected = {
        "idle": {"outcome": IdleOutcome.SKIPPED},  # decided (it waited) but says neither yes nor no
        "samples": {"samples": []},
        "notes": {"notes": []},
        "params": {"params": {} if odd == {} else None},
        "waited": {"waited": odd if type(odd) is int else None},
        "reason": {"reason": odd if isinstance(odd, str) else None},
    }[key]
    assert gate == dataclasses.replace(whole, **expected)
    # the gate said "not idle" (busy); a damaged sample list, note or reason leaves that standing, a damaged
    # verdict leaves the host judged on its snapshots alone
    flags = host_verdict(BEFORE, AFTER, gate).flags
    assert flags == (["throttled", "hot"] if key == "idle" else ["busy", "throttled", "hot"])


@pytest.mark.parametrize("part", ["run", "before", "after"])
def test_a_cell_missing_a_part_gives_a_verdict_not_a_traceback(part: str):
    cell = copy.deepcopy(CELL)
    setattr(cell, part, None)
    cell_verdict(cell, threads=1, host_before=BEFORE, pinned_cpu=7)
    assert pinning_held(cell.run, 7).held in (True, False, None)


@pytest.mark.parametrize("odd", ODD_VALUES, ids=repr)
def test_stored_verdicts_of_any_shape_give_no_clock_rather_than_a_traceback(odd: Any):
    assert measured_mhz({"cells": odd, "verdict": odd}) is None
    assert measured_mhz({"cells": {"c1": {"facts": odd}}, "verdict": {"facts": odd}}) is None
    assert StoredConditions.from_dict({"before": odd, "after": odd, "idle": odd}).cell_clocks_khz == []


def test_the_records_give_what_the_parser_stored():
    assert BEFORE.online_cpus == STORED_BEFORE["cpus"]["online"]
    assert {name: p.to_dict() for name, p in (BEFORE.policies or {}).items()} == STORED_BEFORE["policies"]
    assert CELL.run is not None and CELL.run.observed_cpus == [7]
    assert BEFORE.policy("policy4").cpus == [4, 5, 6, 7]


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.txt")))
def test_a_stored_form_reads_back_to_the_same_bytes(name: str):
    # run.json holds to_dict's form: reading it back and writing it again changes nothing
    text = (DATA / name).read_text()
    for snap in ev.read_snapshots(text):
        stored = json.dumps(snap.to_dict())
        assert json.dumps(Snapshot.from_dict(json.loads(stored)).to_dict()) == stored
    gate = ev.read_idle(text)
    if gate is not None:
        stored = json.dumps(gate.to_dict())
        assert json.dumps(IdleGate.from_dict(json.loads(stored)).to_dict()) == stored


def test_the_stored_form_is_the_one_run_json_always_held():
    # stored-forms.json: what the dict-building parser before the typed records gave for each capture, byte
    # for byte (json.dumps with compact separators, as store.py writes it)
    expected = json.loads((DATA / "stored-forms.json").read_text())
    for path in sorted(DATA.glob("*.txt")):
        text = path.read_text()
        now = {"all": ev.parse_all_conditions(text), "idle": ev.parse_idle(text), "cell": ev.parse_cell(text)}
        assert json.dumps(now, separators=(",", ":")) == json.dumps(expected[path.name], separators=(",", ":"))
