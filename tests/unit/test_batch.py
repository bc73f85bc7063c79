"""parse_many: a batch of logs parsed on every core gives exactly what parse_console gives, in order."""
import gc
import os
from pathlib import Path

import pytest

from orchestrator import gcpause
from orchestrator.model import ParsedLog
from orchestrator.parse import batch
from orchestrator.parse.console import parse_console

DATA = Path(__file__).resolve().parent.parent / "data"
TEXTS = [p.read_text() for p in sorted((DATA / "speed").glob("*.txt")) + sorted((DATA / "console").glob("*.txt"))]


def tagged_with_pid(text: str) -> ParsedLog:
    log = parse_console(text)
    log.skipped.append(f"pid {os.getpid()}")
    return log


def test_workers_give_what_one_process_gives_in_order(monkeypatch):
    monkeypatch.setattr(batch, "MIN_LOGS_PER_WORKER", 10)
    texts = TEXTS * 2  # > 2 workers x 10
    monkeypatch.setattr(batch, "parse_console", tagged_with_pid)
    parsed = batch.parse_many(texts, jobs=2)
    pids = {log.skipped.pop() for log in parsed}
    assert f"pid {os.getpid()}" not in pids and len(pids) >= 1  # parsed in worker processes
    want = [parse_console(text) for text in texts]
    assert [log.to_dict() for log in parsed] == [log.to_dict() for log in want]
    assert sum(len(log.measurements) for log in parsed) > 500


def test_small_batches_stay_in_this_process(monkeypatch):
    monkeypatch.setattr(batch, "parse_console", tagged_with_pid)
    parsed = batch.parse_many(TEXTS[:5], jobs=8)
    assert {log.skipped[-1] for log in parsed} == {f"pid {os.getpid()}"}


def test_a_killed_worker_loses_nothing(monkeypatch):
    parent = os.getpid()

    def dies_in_a_worker(text: str) -> ParsedLog:
        if os.getpid() != parent:
            os._exit(9)  # as the kernel's OOM killer would end it
        return parse_console(text)

    monkeypatch.setattr(batch, "MIN_LOGS_PER_WORKER", 10)
    monkeypatch.setattr(batch, "parse_console", dies_in_a_worker)
    parsed = batch.parse_many(TEXTS, jobs=2)
    assert [log.to_dict() for log in parsed] == [parse_console(text).to_dict() for text in TEXTS]


def test_the_collector_is_paused_inside_and_restored_after():
    assert gc.isenabled()
    with gcpause.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gcpause.paused():
        raise RuntimeError("a failing batch")
    assert gc.isenabled()
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_no_worker_processes_possible_parses_here(monkeypatch):
    def no_semaphores(*args, **kwargs):
        raise NotImplementedError("This platform lacks a functioning sem_open implementation")

    monkeypatch.setattr(batch, "MIN_LOGS_PER_WORKER", 10)
    monkeypatch.setattr(batch, "ProcessPoolExecutor", no_semaphores)
    parsed = batch.parse_many(TEXTS, jobs=2)
    assert [log.to_dict() for log in parsed] == [parse_console(text).to_dict() for text in TEXTS]


def pid_and_items(items):
    return [os.getpid(), list(items)]


def test_chunks_come_back_whole_and_in_order_from_the_workers(monkeypatch):
    monkeypatch.setattr(batch, "MIN_LOGS_PER_WORKER", 10)
    items = list(range(1000))
    chunks = list(batch.chunks_in_workers(pid_and_items, items, jobs=2))
    assert len(chunks) == 2 * batch.CHUNKS_PER_WORKER
    assert [item for _, part in chunks for item in part] == items
    assert os.getpid() not in {pid for pid, _ in chunks}  # done in worker processes
    assert list(batch.chunks_in_workers(pid_and_items, items[:15], jobs=2)) == [[os.getpid(), items[:15]]]  # small
    assert list(batch.chunks_in_workers(pid_and_items, [], jobs=2)) == []


PARENT = os.getpid()


def dies_in_a_worker(items):
    if os.getpid() != PARENT:
        os._exit(9)  # as the kernel's OOM killer would end it
    return pid_and_items(items)


def test_chunks_of_a_killed_worker_are_done_here(monkeypatch):
    monkeypatch.setattr(batch, "MIN_LOGS_PER_WORKER", 10)
    chunks = list(batch.chunks_in_workers(dies_in_a_worker, list(range(100)), jobs=2))
    assert [item for _, part in chunks for item in part] == list(range(100))
    assert {pid for pid, _ in chunks} == {PARENT}
