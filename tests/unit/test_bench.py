"""The bench phase's decisions (orchestrator/bench.py): when each host is asked again, and what makes it done,
dead or unreachable. Fed with the Collector's events as a pass of `run.sh poll` produces them."""
from __future__ import annotations

import pytest

from orchestrator import bench
from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE
from orchestrator.runner import host_event
from test_runner import make_collector, runner_event


def poll(collector, state, stdout=None, unreachable=None, now=100.0, schedule=None):
    """One collect pass for one host, then bench's decision: (done?, schedule)."""
    state.poll_state = state.poll_problem = None
    collector.bench_phase = True
    if unreachable:
        collector.on_event(host_event(runner_event("runner_on_unreachable", host=state.name, msg=unreachable,
                                                   task="Poll the benchmark")))
    else:
        collector.on_event(host_event(runner_event("runner_on_ok", host=state.name, stdout=stdout,
                                                   task="Poll the benchmark")))
    schedule = schedule or bench.Schedule(due=now, deadline=now + 1000)
    return bench._after_poll(collector, state.name, schedule, now), schedule


RUNNING = "@@sslbench-progress\nstart 1 2 001-evp-chacha20-poly1305-t1-r0\n@@sslbench-state running\n"


def test_an_ssh_failure_is_retried_with_backoff_before_unreachable(tmp_path):
    collector, state = make_collector(tmp_path)
    schedule = None
    dues = []
    for attempt in range(len(bench.RETRY_WAITS)):
        done, schedule = poll(collector, state, unreachable="Failed to connect to the host via ssh: timeout",
                              now=100.0, schedule=schedule)
        assert not done and state.result.status == HOST_OK
        dues.append(schedule.due - 100.0)
    assert dues == list(bench.RETRY_WAITS)
    done, _ = poll(collector, state, unreachable="Failed to connect to the host via ssh: timeout", schedule=schedule)
    assert done and state.result.status == HOST_UNREACHABLE and "timeout" in state.result.reason


def test_a_poll_that_answers_again_resets_the_retries(tmp_path):
    collector, state = make_collector(tmp_path)
    _, schedule = poll(collector, state, unreachable="Connection reset by peer")
    done, schedule = poll(collector, state, RUNNING, schedule=schedule)
    assert not done and schedule.retries == 0


def test_a_runner_is_dead_only_when_seen_so_twice(tmp_path):
    collector, state = make_collector(tmp_path)
    died = "@@sslbench-progress\n@@sslbench-runner-output\nsh: out of memory\n@@sslbench-state died\n"
    done, schedule = poll(collector, state, died)
    assert not done and schedule.due == 100.0 + bench.DIED_RECHECK and state.result.status == HOST_OK
    done, _ = poll(collector, state, died, schedule=schedule)
    assert done and state.result.status == HOST_FAILED and "out of memory" in state.result.reason


def test_a_runner_found_dead_then_finished_is_not_dead(tmp_path):
    collector, state = make_collector(tmp_path)
    _, schedule = poll(collector, state, "@@sslbench-progress\n@@sslbench-state died\n")
    state.cells_done = {c.id for c in state.plan.cells}
    done, _ = poll(collector, state, "@@sslbench-progress\n@@sslbench-state finished\n", schedule=schedule)
    assert done and state.result.status == HOST_OK


@pytest.mark.parametrize("left, expected", [(0.0, bench.MIN_WAIT), (30.0, 30.0), (600.0, 60.0)])
def test_a_running_host_is_asked_again_when_its_cells_should_be_done(tmp_path, left, expected):
    collector, state = make_collector(tmp_path)
    view = collector.view.host(state.name)
    view.planned = {c.id: left / 2 for c in state.plan.cells}
    done, schedule = poll(collector, state, "@@sslbench-progress\n@@sslbench-state running\n",
                          schedule=bench.Schedule(due=100.0, deadline=1100.0, every=60.0))
    assert not done and schedule.due == pytest.approx(100.0 + expected)


def test_long_matrices_are_asked_at_least_four_times_but_not_more_than_each_ten_seconds(tmp_path):
    collector, state = make_collector(tmp_path)
    for cell, seconds in zip(state.plan.cells, (2.0, 3.0)):
        cell.seconds = seconds
    assert bench.progress_wait(state.plan) == 10.0  # a 5 s matrix: asked once, when it should be done
    state.plan.cells[0].seconds = 117.0
    assert bench.progress_wait(state.plan) == 30.0
    state.plan.cells[0].seconds = 3600.0
    assert bench.progress_wait(state.plan) == 60.0


def test_pending_logs_are_fetched_at_once_and_a_late_host_fails(tmp_path):
    collector, state = make_collector(tmp_path)
    done, schedule = poll(collector, state, "@@sslbench-progress\n@@sslbench-state pending\n")
    assert not done and schedule.due == 100.0
    late = bench.Schedule(due=0.0, deadline=50.0)
    done, _ = poll(collector, state, RUNNING, schedule=late)
    assert done and state.result.status == HOST_FAILED and "did not finish in time" in state.result.reason


def test_a_pass_that_brought_no_word_of_a_host_counts_as_an_ssh_failure(tmp_path):
    collector, state = make_collector(tmp_path)
    state.poll_state = state.poll_problem = None  # its worker died: no event at all
    schedule = bench.Schedule(due=100.0, deadline=1100.0)
    for wait in bench.RETRY_WAITS:
        assert not bench._after_poll(collector, state.name, schedule, 100.0) and schedule.due == 100.0 + wait
        state.poll_state = state.poll_problem = None
    assert bench._after_poll(collector, state.name, schedule, 100.0)
    assert state.result.status == HOST_UNREACHABLE and "no answer" in state.result.reason


def test_a_host_that_failed_or_was_stopped_is_cleaned_up_not_one_unreachable_or_done(tmp_path):
    """A runner that died or ran far past its deadline left its openssl and work dir on the host (a router's tmpfs
    /tmp stayed full): the cleanup play is for them too, not only after Ctrl-C."""
    collector, state = make_collector(tmp_path, host="dead")
    died = "@@sslbench-progress\n@@sslbench-runner-output\n./run.sh: 106: echo: echo: I/O error\nsh: x\n" \
           "@@sslbench-state died\n"
    _, schedule = poll(collector, state, died)
    poll(collector, state, died, schedule=schedule)
    assert state.result.status == HOST_FAILED and "\n" not in state.result.reason  # one line in every table
    for name, status in (("gone", HOST_UNREACHABLE), ("fine", HOST_OK), ("running", HOST_OK)):
        other = collector.host(name)
        other.result.status, other.finished = status, name != "running"
    launched = ["dead", "gone", "fine", "running"]
    assert bench.left_behind(collector, launched, interrupted=False) == ["dead"]
    assert bench.left_behind(collector, launched, interrupted=True) == ["dead", "running"]
    # what the cleanup ships of a host already finished changes nothing: its result is final
    measured = len(state.result.measurements)
    cell_id = state.plan.cells[0].id
    collector.on_event(host_event(runner_event(
        "runner_on_ok", host="dead", task="Ship the logs of the finished cells",
        stdout=f"@@sslbench-progress\n@@sslbench-log {cell_id}\n+F:1:x:2\n\n@@sslbench-endlog {cell_id}\n")))
    assert len(state.result.measurements) == measured
