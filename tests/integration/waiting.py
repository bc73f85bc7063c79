"""Waiting in the integration tests for something a run does on its own time (a cell's log, a process's end)."""
import time

import pytest


def wait_for(predicate, what, timeout=90.0, every=0.2):
    """Polls `predicate` every `every` seconds until it holds; the test fails naming `what` after `timeout`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(every)
    pytest.fail(f"{what} never happened")
