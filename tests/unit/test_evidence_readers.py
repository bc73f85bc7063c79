"""The judges read the parsed evidence through evidence/conditions.py's readers, so a run.json whose
evidence has an odd shape (a section null, a list where a dict was, an older layout) degrades to
"no evidence" instead of a traceback in `report` or `diff`."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from orchestrator.evidence import conditions as ev
from orchestrator.evidence.clusters import detect_clusters, host_pins, pinning_held
from orchestrator.evidence.validity import cell_verdict, crypto_evidence, host_verdict, measured_mhz, offline_cpus

DATA = Path(__file__).resolve().parents[1] / "data" / "conditions"
BEFORE = ev.parse_conditions((DATA / "rk3576-before.txt").read_text())
AFTER = ev.parse_conditions((DATA / "rk3576-after-hot-capped.txt").read_text())
CELL = ev.parse_cell((DATA / "rk3576-cell-cpu7-throttled.txt").read_text())
ODD_VALUES = [None, [], {}, "text", 7]


def test_the_fixtures_carry_every_section_the_readers_know():
    # otherwise the corruption below would not reach the code it means to test
    assert {"cpus", "policies", "thermal", "cpu_times", "topology", "tools", "crypto", "swap"} <= set(BEFORE) & set(AFTER)
    assert ev.run_samples(ev.cell_run(CELL)) and ev.cell_snapshot(CELL, "before")
    assert len(detect_clusters(BEFORE)) == 2 and host_verdict(BEFORE, AFTER).flags
    assert cell_verdict(CELL, threads=1, host_before=BEFORE, pinned_cpu=7).flags


@pytest.mark.parametrize("odd", ODD_VALUES, ids=repr)
@pytest.mark.parametrize("section", sorted(set(BEFORE) | set(AFTER)))
def test_a_snapshot_section_of_any_shape_gives_a_verdict_not_a_traceback(section: str, odd: Any):
    before, after = copy.deepcopy(BEFORE), copy.deepcopy(AFTER)
    before[section] = after[section] = odd
    verdict = host_verdict(before, after)
    assert isinstance(verdict.flags, list)
    detect_clusters(before)
    host_pins(before)
    crypto_evidence(before)
    offline_cpus(before)


@pytest.mark.parametrize("odd", ODD_VALUES, ids=repr)
@pytest.mark.parametrize("part", ["run", "before", "after"])
def test_a_cell_part_of_any_shape_gives_a_verdict_not_a_traceback(part: str, odd: Any):
    cell = copy.deepcopy(CELL)
    cell[part] = odd
    cell_verdict(cell, threads=1, host_before=BEFORE, pinned_cpu=7)
    assert pinning_held(ev.cell_run(cell), 7).held in (True, False, None)


@pytest.mark.parametrize("odd", ODD_VALUES, ids=repr)
def test_stored_verdicts_of_any_shape_give_no_clock_rather_than_a_traceback(odd: Any):
    assert measured_mhz({"cells": odd, "verdict": odd}) is None
    assert measured_mhz({"cells": {"c1": {"facts": odd}}, "verdict": {"facts": odd}}) is None


def test_the_readers_give_what_the_parser_stored():
    assert ev.online_cpus(BEFORE) == BEFORE["cpus"]["online"]
    assert ev.policies(BEFORE) == BEFORE["policies"]
    assert ev.observed_cpus(ev.cell_run(CELL)) == [7]
    assert ev.policy_cpus(ev.policy(BEFORE, "policy4")) == [4, 5, 6, 7]
