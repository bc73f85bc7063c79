"""Fixtures the unit tests of the run wing share: ansible-runner's events as it hands them over, a planned cell, a
Collector with one planned host. (tests/unit/fake_fleet.py is the fleet without SSH the engine's tests drive.)"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from orchestrator import store
from orchestrator.model import Run
from orchestrator.run import matrix
from orchestrator.run.fleet import Collector, HostState
from orchestrator.run.progress import ProgressView


def _runner_event(name: str, host: str = "r1", task: str = "Wait for the benchmark cells", **res: Any) -> dict:
    return {"event": name, "uuid": "x", "event_data": {"host": host, "task": task, "res": res}}


def _cell(**kw: Any) -> matrix.CellPlan:
    base: dict[str, Any] = dict(id="001-evp-chacha20-poly1305-t1-r0", algorithm="chacha20-poly1305", kind="cipher",
                                api="evp", threads=1, sizes=matrix.SIZES_NEW,
                                args=["speed", "-mr", "-evp", "chacha20-poly1305"], seconds=18.0)
    base.update(kw)
    return matrix.CellPlan(**base)


def _make_collector(tmp_path: Path, host: str = "r1") -> tuple[Collector, HostState]:
    run_dir = store.new_run_dir(tmp_path)
    run = Run(run_id=run_dir.name, created="now")
    collector = Collector(run, run_dir, ProgressView(live=False, stream=open(tmp_path / "progress.txt", "w")))
    state = collector.host(host)
    state.result.openssl.version = "3.0.19"
    state.plan = matrix.HostPlan(host=host, capabilities=matrix.capabilities("3.0.19"),
                                 cells=[_cell(), _cell(id="002-evp-chacha20-poly1305-t2-r0", threads=2)])
    return collector, state


@pytest.fixture
def runner_event() -> Callable[..., dict]:
    """runner_event(name, host="r1", task=..., **res): one ansible-runner event (`res`: the task's result)."""
    return _runner_event


@pytest.fixture
def cell() -> Callable[..., matrix.CellPlan]:
    """cell(**fields): a planned chacha20-poly1305 cell (EVP, one thread, every size), fields replaced."""
    return _cell


@pytest.fixture
def make_collector() -> Callable[..., tuple[Collector, HostState]]:
    """make_collector(tmp_path, host="r1"): a storing Collector and its one host, planned two chacha20 cells on
    OpenSSL 3.0.19."""
    return _make_collector


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The engine's time, virtual (tests/unit/fake_fleet.py's Clock): its waits (polls at a host's ETA, retries
    after 5 s) take no time; `clock.now` reads it."""
    from fake_fleet import Clock

    return Clock(monkeypatch)
