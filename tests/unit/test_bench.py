"""The bench phase's decisions (orchestrator/run/decisions.py, flow.py): when each host is asked again, and what
makes it done, dead or unreachable. Fed with the Collector's events as a pass of `run.sh poll` produces them; then
the engine (orchestrator/run/engine.py) over a fleet without SSH."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.parse import protocol
from orchestrator.run import engine as bench, flow, stages
from orchestrator.model import HOST_FAILED, HOST_OK, HOST_UNREACHABLE, OK
from orchestrator.run.fleet import StepResult
from orchestrator.run.runner import HostEvent, host_event
from orchestrator.run.stages import Stage


@pytest.fixture
def poll(runner_event):
    """poll(collector, state, stdout=None, unreachable=None, now=100.0, schedule=None): one poll of one host, read
    by the Collector, then the engine's decision: (done?, schedule)."""

    def one(collector, state, stdout=None, unreachable=None, now=100.0, schedule=None):
        if unreachable:
            event = host_event(runner_event("runner_on_unreachable", host=state.name, msg=unreachable,
                                            task=Stage.POLL.value))
        else:
            event = host_event(runner_event("runner_on_ok", host=state.name, stdout=stdout, task=Stage.POLL.value))
        result = collector.step_result(event)
        collector.on_event(event, bench_phase=True)
        schedule = schedule or flow.Schedule(due=now, deadline=now + 1000)
        return flow.judge_poll(collector, state.name, schedule, now, result), schedule

    return one


RUNNING = "@@sslbench-progress\nstart 1 2 001-evp-chacha20-poly1305-t1-r0\n@@sslbench-state running\n"


def test_an_ssh_failure_is_retried_with_backoff_before_unreachable(tmp_path, make_collector, poll):
    collector, state = make_collector(tmp_path)
    schedule = None
    dues = []
    for attempt in range(len(flow.RETRY_WAITS)):
        done, schedule = poll(collector, state, unreachable="Failed to connect to the host via ssh: timeout",
                              now=100.0, schedule=schedule)
        assert not done and state.result.status == HOST_OK
        dues.append(schedule.due - 100.0)
    assert dues == list(flow.RETRY_WAITS)
    done, _ = poll(collector, state, unreachable="Failed to connect to the host via ssh: timeout", schedule=schedule)
    assert done and state.result.status == HOST_UNREACHABLE and "timeout" in state.result.reason


def test_a_poll_that_answers_again_resets_the_retries(tmp_path, make_collector, poll):
    collector, state = make_collector(tmp_path)
    _, schedule = poll(collector, state, unreachable="Connection reset by peer")
    done, schedule = poll(collector, state, RUNNING, schedule=schedule)
    assert not done and schedule.retries == 0


def test_a_runner_is_dead_only_when_seen_so_twice(tmp_path, make_collector, poll):
    collector, state = make_collector(tmp_path)
    died = "@@sslbench-progress\n@@sslbench-runner-output\nsh: out of memory\n@@sslbench-state died\n"
    done, schedule = poll(collector, state, died)
    assert not done and schedule.due == 100.0 + flow.DIED_RECHECK and state.result.status == HOST_OK
    done, _ = poll(collector, state, died, schedule=schedule)
    assert done and state.result.status == HOST_FAILED and "out of memory" in state.result.reason


def test_a_runner_found_dead_then_finished_is_not_dead(tmp_path, make_collector, poll):
    collector, state = make_collector(tmp_path)
    _, schedule = poll(collector, state, "@@sslbench-progress\n@@sslbench-state died\n")
    state.cells_done = {c.id for c in state.plan.cells}
    done, _ = poll(collector, state, "@@sslbench-progress\n@@sslbench-state finished\n", schedule=schedule)
    assert done and state.result.status == HOST_OK


@pytest.mark.parametrize("left, expected", [(0.0, flow.MIN_WAIT), (30.0, 30.0), (600.0, 60.0)])
def test_a_running_host_is_asked_again_when_its_cells_should_be_done(tmp_path, left, expected, make_collector, poll):
    collector, state = make_collector(tmp_path)
    view = collector.view.host(state.name)
    view.planned = {c.id: left / 2 for c in state.plan.cells}
    done, schedule = poll(collector, state, "@@sslbench-progress\n@@sslbench-state running\n",
                          schedule=flow.Schedule(due=100.0, deadline=1100.0, every=60.0))
    assert not done and schedule.due == pytest.approx(100.0 + expected)


def test_long_matrices_are_asked_at_least_four_times_but_not_more_than_each_ten_seconds(tmp_path, make_collector):
    collector, state = make_collector(tmp_path)
    for cell, seconds in zip(state.plan.cells, (2.0, 3.0)):
        cell.seconds = seconds
    assert flow.progress_wait(state.plan) == 10.0  # a 5 s matrix: asked once, when it should be done
    state.plan.cells[0].seconds = 117.0
    assert flow.progress_wait(state.plan) == 30.0
    state.plan.cells[0].seconds = 3600.0
    assert flow.progress_wait(state.plan) == 60.0


def test_pending_logs_are_fetched_at_once_and_a_late_host_fails(tmp_path, make_collector, poll):
    collector, state = make_collector(tmp_path)
    done, schedule = poll(collector, state, "@@sslbench-progress\n@@sslbench-state pending\n")
    assert not done and schedule.due == 100.0
    late = flow.Schedule(due=0.0, deadline=50.0)
    done, _ = poll(collector, state, RUNNING, schedule=late)
    assert done and state.result.status == HOST_FAILED and "did not finish in time" in state.result.reason


def test_a_pass_that_brought_no_word_of_a_host_counts_as_an_ssh_failure(tmp_path, make_collector):
    collector, state = make_collector(tmp_path)
    schedule = flow.Schedule(due=100.0, deadline=1100.0)
    for wait in flow.RETRY_WAITS:  # its worker died: no event at all
        assert not flow.judge_poll(collector, state.name, schedule, 100.0, StepResult())
        assert schedule.due == 100.0 + wait
    assert flow.judge_poll(collector, state.name, schedule, 100.0, StepResult())
    assert state.result.status == HOST_UNREACHABLE and "no answer" in state.result.reason


def test_a_host_that_failed_or_was_stopped_is_cleaned_up_not_one_unreachable_or_done(
        tmp_path, make_collector, runner_event, poll):
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
    assert flow.left_behind(collector, launched, interrupted=False) == ["dead"]
    assert flow.left_behind(collector, launched, interrupted=True) == ["dead", "running"]
    # what the cleanup ships of a host already finished changes nothing: its result is final
    measured = len(state.result.measurements)
    cell_id = state.plan.cells[0].id
    collector.on_event(host_event(runner_event(
        "runner_on_ok", host="dead", task="Ship the logs of the finished cells",
        stdout=f"@@sslbench-progress\n@@sslbench-log {cell_id}\n+F:1:x:2\n\n@@sslbench-endlog {cell_id}\n")))
    assert len(state.result.measurements) == measured


# --- the engine: each host through its steps, over the socket its task asks (tests/unit/fake_fleet.py) --------

@pytest.fixture
def engine_for(make_collector):
    """engine_for(tmp_path, hosts, forks=None, bench_on=True, sizes=(1024,), **FakeDriver's): an Engine over a fleet
    without SSH (tests/unit/fake_fleet.py), planning chacha20-poly1305 at `sizes`: (engine, driver, collector)."""
    from fake_fleet import FakeDriver, config_for
    from orchestrator.run.config import PlanOptions
    from orchestrator.run.matrix import MatrixRequest
    from orchestrator.run.runner import Interrupt

    def build(tmp_path, hosts, *, forks=None, bench_on=True, sizes=(1024,), **driver_kw):
        driver = FakeDriver(tmp_path, hosts, forks=forks, **driver_kw)
        collector, _ = make_collector(tmp_path)
        collector.hosts.clear()
        collector.run.hosts.clear()
        request = MatrixRequest(algorithms=["chacha20-poly1305"], sizes=list(sizes), threads=[1], apis=["evp"],
                                seconds=1)
        engine = bench.Engine(driver, collector, config_for(PlanOptions(request=request, idle_wait=0)),
                              Interrupt(), bench=bench_on)
        if driver.direct:
            engine.exec_step = driver.exec_step
        return engine, driver, collector

    return build


def test_one_task_per_host_carries_it_through_every_step_in_one_pass(tmp_path, engine_for, clock):
    from fake_fleet import router

    engine, driver, collector = engine_for(tmp_path, {"r1": router(), "r2": router(finished_after=3)})
    plans = engine.run()
    assert driver.calls == [("sslbench.yml", ["r1", "r2"])]  # one ansible-playbook, no cleanup pass
    # a short matrix comes back in its launch's exec (which waited for it): no separate first poll. The work dir
    # goes only with a forget, once the logs are saved (#37: a launch that removed it itself lost every cell when
    # its controller died before saving them)
    assert driver.steps == {"r1": ["detect", "launch", "forget"], "r2": ["detect", "launch", "poll", "poll", "forget"]}
    assert sorted(plans) == ["r1", "r2"]
    assert {s.name: s.result.status for s in collector.hosts.values()} == {"r1": HOST_OK, "r2": HOST_OK}
    assert all(s.finished for s in collector.hosts.values())


def test_hosts_beyond_forks_end_their_task_after_the_launch_and_are_polled_in_later_passes(tmp_path, engine_for, clock):
    """No task waits for its host's cells while other hosts wait for a worker: --forks caps SSH, not the fleet."""
    from fake_fleet import router

    engine, driver, collector = engine_for(tmp_path, {f"r{i}": router() for i in range(3)}, forks=2)
    engine.run()
    assert len(driver.calls) >= 2 and driver.calls[0] == ("sslbench.yml", ["r0", "r1", "r2"])
    assert all(steps == ["detect", "launch", "poll", "forget"] for steps in driver.steps.values())
    assert all(s.result.status == HOST_OK and s.finished for s in collector.hosts.values())


def test_hosts_beyond_forks_are_polled_over_their_sessions_command_line_without_another_pass(
        tmp_path, engine_for, clock):
    """A thousand boards through 50 forks: each host's later steps run from the controller with the SSH command
    line its task's session used, not in another ansible-playbook pass (a worker and a task per host each time)."""
    from fake_fleet import router

    engine, driver, collector = engine_for(tmp_path, {f"r{i}": router(finished_after=2) for i in range(3)}, forks=2,
                                           direct=True)
    engine.run()
    assert driver.calls == [("sslbench.yml", ["r0", "r1", "r2"])]  # the first pass only, and no cleanup
    assert all(steps == ["detect", "launch", "poll", "poll", "forget"] for steps in driver.steps.values())
    assert all(steps == ["poll", "poll", "forget"] for steps in driver.direct_steps.values())
    assert all(s.result.status == HOST_OK and s.finished for s in collector.hosts.values())


def test_a_host_its_session_line_cannot_reach_is_asked_through_ansible_again(tmp_path, engine_for, clock):
    """ssh that cannot connect with the session's command line (its master gone, an agent of Ansible's gone with
    its pass): the host's next try goes through Ansible (its ssh, its retries), and the host is not lost."""
    from fake_fleet import router

    engine, driver, collector = engine_for(tmp_path, {"r0": router(), "r1": router()}, forks=1, direct=True,
                                           direct_refused=1)
    engine.run()
    assert len(driver.calls) == 2 and driver.calls[1][1] == ["r0"]  # r0's poll again, through a pass
    assert driver.direct_steps == {"r0": ["poll"], "r1": ["poll", "forget"]}
    assert driver.steps["r0"] == ["detect", "launch", "poll", "forget"]
    assert all(s.result.status == HOST_OK and s.finished for s in collector.hosts.values())


def test_a_host_without_openssl_is_installed_detected_again_and_benchmarked(tmp_path, engine_for, clock):
    from fake_fleet import router

    detects = iter(["rig-openwrt2.detect.txt", "rig-openwrt1.detect.txt"])  # no openssl, then openssl
    steady = router("rig-openwrt1.detect.txt")

    def host(kind, script):
        if kind == "detect":
            return router(next(detects))(kind, script)
        return steady(kind, script)

    engine, driver, collector = engine_for(tmp_path, {"r1": host})
    engine.run()
    assert driver.steps["r1"] == ["detect", "install", "detect", "launch", "forget"]
    assert collector.hosts["r1"].result.status == HOST_OK


def test_a_failed_install_fails_the_host_with_the_package_managers_words(tmp_path, engine_for, clock):
    from fake_fleet import router
    from orchestrator.run.hostlink import Outcome

    no_openssl = router("rig-openwrt2.detect.txt")

    def host(kind, script):
        if kind == "install":
            return Outcome("failed", stdout="Unknown package 'openssl-util'.\n", rc=255,
                           stderr="Collected errors:\n * opkg_install_cmd: Cannot install package openssl-util.")
        return no_openssl(kind, script)

    engine, driver, collector = engine_for(tmp_path, {"r1": host})
    engine.run()
    result = collector.hosts["r1"].result
    assert driver.steps["r1"] == ["detect", "install"]
    assert result.status == HOST_FAILED and result.reason.startswith(Stage.INSTALL.value)
    assert "Cannot install package openssl-util" in result.reason


def test_a_host_turned_away_as_busy_is_detected_again_one_away_is_not(tmp_path, engine_for, clock):
    """Aliases of one dropbear box (5 unauthenticated connections per client), or 30 hosts behind one bastion
    (MaxStartups): the server resets some detect connections. Those hosts are asked again; a refused one is not."""
    from fake_fleet import router
    from orchestrator.run.hostlink import Outcome

    said = {"busy": ["kex_exchange_identification: read: Connection reset by peer"],
            "shared": ["Shared connection to 127.0.0.27 closed.", "Shared connection to 127.0.0.27 closed."],
            "away": ["ssh: connect to host 127.0.0.250 port 22: Connection refused"] * 3}

    def host(name):
        ok = router()

        def answer(kind, script):
            if kind == "detect" and said[name]:
                return Outcome("unreachable", stderr=said[name].pop(0))
            return ok(kind, script)
        return answer

    engine, driver, collector = engine_for(tmp_path, {name: host(name) for name in said}, bench_on=False)
    engine.run()
    assert driver.steps == {"busy": ["detect"] * 2, "shared": ["detect"] * 3, "away": ["detect"]}
    status = {name: state.result.status for name, state in collector.hosts.items()}
    assert status == {"busy": HOST_OK, "shared": HOST_OK, "away": HOST_UNREACHABLE}
    assert "Connection refused" in collector.hosts["away"].result.reason


def test_a_host_still_busy_after_every_retry_stays_unreachable_with_its_reason(tmp_path, engine_for, clock):
    from orchestrator.run.hostlink import Outcome

    def busy(kind, script):
        return Outcome("unreachable", stderr="kex_exchange_identification: Connection closed by remote host")

    engine, driver, collector = engine_for(tmp_path, {"r9": busy})
    engine.run()
    assert driver.steps["r9"] == ["detect"] * (1 + len(flow.DETECT_RETRY_WAITS))
    result = collector.hosts["r9"].result
    assert result.status == HOST_UNREACHABLE and "Connection closed by remote host" in result.reason


def test_a_poll_that_cannot_connect_is_retried_with_backoff_then_the_host_is_unreachable_and_cleaned_up(
        tmp_path, engine_for, clock):
    from fake_fleet import router
    from orchestrator.run.hostlink import Outcome
    from orchestrator.run.runner import CLEANUP_PLAYBOOK

    ok = router(finished_after=5)  # still running when its launch stops waiting: polled after
    asked = []

    def host(kind, script):
        if kind == "poll":
            asked.append(clock.now)
            return Outcome("unreachable", stderr="ssh: connect to host 127.0.0.9 port 22: Connection timed out")
        return ok(kind, script)

    engine, driver, collector = engine_for(tmp_path, {"r1": host})
    engine.run()
    assert [round(b - a) for a, b in zip(asked, asked[1:])] == [round(w) for w in flow.RETRY_WAITS]
    result = collector.hosts["r1"].result
    assert result.status == HOST_UNREACHABLE and "Connection timed out" in result.reason
    assert driver.calls[-1][0] != CLEANUP_PLAYBOOK  # an unreachable host cannot be cleaned up: not asked


def test_a_task_that_fails_before_it_asks_is_retried_then_the_host_is_unreachable_with_its_words(
        tmp_path, engine_for, clock):
    """A later pass whose task dies before it reaches the socket (a crashed fork): no step ran, so nothing is read
    as its output; the host is asked again after RETRY_WAITS, then called unreachable with what the task said."""
    from fake_fleet import router

    engine, driver, collector = engine_for(tmp_path, {"r1": router(), "r2": router()}, forks=1)
    real_task, passes = driver._task, []

    def task(path, name, play_hosts):
        passes.append(name)
        if len(passes) <= 2:  # the first pass: detect and launch, then the task ends (r2 waits for a worker)
            return real_task(path, name, play_hosts)
        raise RuntimeError("sslbench_step: the controller closed its socket")

    def play(*, extravars=None, on_event=None, hosts=None, **kw):
        if hosts is None:
            return FakeDriver_play(extravars=extravars, on_event=on_event, hosts=hosts, **kw)
        driver.calls.append(("sslbench.yml", list(hosts)))
        for name in hosts:
            on_event(HostEvent(kind="start", host=name, task=stages.STEP_TASK))
            try:
                task(extravars["sslbench_socket"], name, len(hosts))
            except RuntimeError as exc:
                on_event(HostEvent(kind="failed", host=name, task=stages.STEP_TASK, message=str(exc)))
        return "successful"

    driver._task = task
    FakeDriver_play, driver.play = driver.play, play
    engine.run()
    for name in ("r1", "r2"):
        result = collector.hosts[name].result
        assert driver.steps[name] == ["detect", "launch"]
        assert result.status == HOST_UNREACHABLE and "the controller closed its socket" in result.reason
    assert len(driver.calls) == 1 + 1 + len(flow.RETRY_WAITS)


def test_an_inventory_ansible_cannot_parse_is_said_with_ansibles_words(tmp_path, engine_for, clock):
    """A YAML typo: Ansible only warns and finds no host; sslbench said "no hosts matched", not why."""
    from orchestrator.errors import UserError

    said = ("[WARNING]: Failed to parse inventory with 'auto' plugin: YAML parsing failed: While parsing "
            "a flow sequence did not find expected ',' or ']'.\n\nFailed to parse inventory with 'auto' "
            "plugin.\n\n<<< caused by >>>\n\nOrigin: /x/hosts.yml:2:1\n\n[WARNING]: Unable to parse "
            "/x/hosts.yml as an inventory source\n[WARNING]: No inventory was parsed\n")
    engine, driver, _ = engine_for(tmp_path, {}, last_stdout=said)
    with pytest.raises(UserError) as raised:
        engine.run()
    assert str(raised.value) == (
        f"no hosts matched in {tmp_path / 'hosts.yml'} (Ansible: Failed to parse inventory with 'auto' plugin: YAML "
        "parsing failed: While parsing a flow sequence did not find expected ',' or ']'. | Origin: /x/hosts.yml:2:1); "
        "check the inventory and the host pattern")


def test_ansible_giving_up_after_the_tasks_started_ends_the_run_with_its_words_not_unreachable_hosts(
        tmp_path, engine_for, clock):
    """A vaulted group_vars of one group, no vault password: ansible-playbook had started the other hosts' tasks
    when it gave up; every host was "unreachable ... (a site worker gone?)" on a run with no site worker."""
    from fake_fleet import router
    from orchestrator.errors import UserError

    engine, driver, collector = engine_for(tmp_path, {"r1": router(), "r2": router()},
                                           abort="Attempting to decrypt but no vault secrets found.")
    with pytest.raises(UserError) as raised:
        engine.run()
    assert str(raised.value) == (
        "Ansible failed before reaching any host: Attempting to decrypt but no vault secrets found; give the vault "
        "password with --vault-password-file FILE, --vault-id LABEL@FILE or --ask-vault-pass")
    assert raised.value.exit_code == 2
    assert all(state.result.status != HOST_UNREACHABLE for state in collector.hosts.values())


def test_a_pass_that_failed_without_a_site_worker_does_not_blame_one(tmp_path, engine_for, clock):
    engine, driver, _ = engine_for(tmp_path, {})
    assert engine.no_answer("r1") == flow.NO_ANSWER and "site worker" not in flow.NO_ANSWER
    driver.workers = {"lab": object()}
    driver.host_worker = {"r2": "lab"}
    assert engine.no_answer("r1") == flow.NO_ANSWER and engine.no_answer("r2") == flow.NO_ANSWER_WORKER


def test_ansibles_error_lines_are_its_words_of_every_version():
    from orchestrator.run.runner import ansible_error

    assert ansible_error("\nPLAY [all] ***\n\nTASK [x] ***\n[ERROR]: Attempting to decrypt but no vault secrets "
                         "found.\n") == "Attempting to decrypt but no vault secrets found."
    assert ansible_error("ERROR! Attempting to decrypt but no vault secrets found\n") == (
        "Attempting to decrypt but no vault secrets found")
    assert ansible_error("ERROR: Error reading config file (/p/ansible.cfg): File contains no section headers.\n"
                         "file: '<string>', line: 1\n") == (
        "Error reading config file (/p/ansible.cfg): File contains no section headers.")
    assert ansible_error("PLAY RECAP ***\nr1 : ok=1\n") == ""
    # 2.19: the file is on the line after the error; an inventory's cause is in the first plugin's warning
    assert ansible_error("[ERROR]: Unable to retrieve file contents.\nCould not find or access '/p/v.yml' on the "
                         "Ansible Controller.\nIf you are using a module ...\n") == (
        "Unable to retrieve file contents. Could not find or access '/p/v.yml' on the Ansible Controller.")
    assert ansible_error("[WARNING]: Failed to parse inventory with 'auto' plugin: Failed to parse '/p/c.yml': "
                         "'x' is undefined\n\n[WARNING]: Failed to parse inventory with 'yaml' plugin: no\n"
                         "[ERROR]: Completely failed to parse inventory source /p/c.yml\n") == (
        "Completely failed to parse inventory source /p/c.yml (Failed to parse inventory with 'auto' plugin: "
        "Failed to parse '/p/c.yml': 'x' is undefined)")


def test_a_bug_of_ours_on_one_hosts_output_fails_that_host_once_and_the_run_goes_on(
        tmp_path, monkeypatch, capsys, engine_for, clock):
    from fake_fleet import router
    from orchestrator.run import fleet

    real_apply = fleet.apply_facts

    def apply_facts(state, stdout):
        if state.name == "odd":
            raise ValueError("unexpected section")
        real_apply(state, stdout)

    monkeypatch.setattr(fleet, "apply_facts", apply_facts)
    engine, driver, collector = engine_for(tmp_path, {"odd": router(), "r1": router()})
    engine.run()
    assert driver.steps == {"odd": ["detect"], "r1": ["detect", "launch", "forget"]}
    odd = collector.hosts["odd"].result
    assert odd.status == HOST_FAILED and odd.reason == "internal error: ValueError: unexpected section"
    assert collector.hosts["r1"].result.status == HOST_OK
    assert "sslbench: internal error on odd" in capsys.readouterr().err


def test_results_that_cannot_be_written_stop_the_run_once(tmp_path, monkeypatch, capsys, engine_for, clock):
    from fake_fleet import router

    engine, driver, collector = engine_for(tmp_path, {"r1": router(), "r2": router()})

    def full(state, name, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(collector, "_store", full)
    engine.run()
    assert engine.interrupt.requested and engine.interrupt.reason == "cannot write the results (No space left on device)"
    assert capsys.readouterr().err.count("stopping the benchmark") == 1
    assert driver.calls[-1][0] == "cleanup.yml"  # launched hosts are stopped, not left measuring for nothing


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a read-only tmpfs for the results")
def test_results_on_a_read_only_filesystem_have_no_room_to_forget(tmp_path):
    disk = tmp_path / "ro"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128m", "tmpfs", str(disk)], check=True)
    try:
        assert stages.results_have_room(disk)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        assert not stages.results_have_room(disk)  # room, but nothing can be written
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs for the results")
def test_a_results_disk_that_fills_up_mid_run_loses_no_log(tmp_path, capsys, engine_for, clock):
    """The results on a real filesystem that another process fills while the cells run: the logs the hosts
    ship can no longer be saved (ENOSPC from the kernel). With so little room no launch removes its own work dir,
    none is told to forget, and the cleanup stops openssl but leaves each work dir, whose path is said."""
    from fake_fleet import router

    disk = tmp_path / "small"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], check=True)
    try:
        def filled_while_running(answer):
            def wrapped(kind, script):
                if kind == "launch":  # someone else's files take the last of the room
                    launches.append(script)
                    with open(disk / "filler", "ab", buffering=0) as filler:
                        try:
                            while True:
                                filler.write(b"x" * 4096)
                        except OSError:
                            pass
                return answer(kind, script)
            return wrapped

        launches: list[str] = []
        engine, driver, collector = engine_for(disk, {"r1": filled_while_running(router()),
                                                      "r2": filled_while_running(router())})
        assert not stages.results_have_room(collector.run_dir)  # 2 MB: under ROOM_TO_FORGET
        engine.run()
        assert engine.unwritable and engine.interrupt.reason == "cannot write the results (No space left on device)"
        # never told to forget: the logs the hosts shipped were not saved
        assert launches
        assert all("forget" not in steps for steps in driver.steps.values()), driver.steps
        assert driver.calls[-1][0] == "cleanup.yml" and driver.extravars[-1]["sslbench_keep_work_dirs"] is True
        left = driver.calls[-1][1]
        assert left, driver.steps
        err = capsys.readouterr().err
        for name in left:
            assert f"{name} {stages.work_dir(collector.run.run_id, name)}" in err
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_after_a_long_first_pass_one_pass_polls_every_host_due_by_its_end(tmp_path, engine_for, clock):
    """1,000 boards through 50 forks: the first pass launches them over minutes, so many are overdue when it
    ends. They are all polled in the next pass, not a few hosts per pass (each pass is an ansible-playbook)."""
    from fake_fleet import router

    def slow(name):
        host = router()

        def answer(kind, script):
            if kind == "launch":
                clock.sleep(3.0)  # a slow SSH exec: the hosts are launched 3 s apart
            return host(kind, script)
        return answer

    engine, driver, collector = engine_for(tmp_path, {f"r{i}": slow(f"r{i}") for i in range(6)}, forks=2)
    engine.run()
    assert [len(hosts) for _playbook, hosts in driver.calls] == [6, 6]
    assert all(s.result.status == HOST_OK and s.finished for s in collector.hosts.values())


def test_a_forget_that_fails_leaves_the_host_ok_and_its_work_dir_to_the_cleanup(tmp_path, engine_for, clock):
    """Every figure is here when the forget runs: losing its answer must not fail the host (it did: the poll
    after it found no work dir), but the dir must not stay on the router either."""
    from fake_fleet import router
    from orchestrator.run.hostlink import Outcome
    from orchestrator.run.runner import CLEANUP_PLAYBOOK

    ok = router(finished_after=2)

    def host(kind, script):
        if kind == "forget":
            return Outcome("unreachable", stderr="Shared connection to 127.0.0.9 closed.")
        return ok(kind, script)

    engine, driver, collector = engine_for(tmp_path, {"r1": host, "r2": router()})
    engine.run()
    assert driver.steps["r1"] == ["detect", "launch", "poll", "forget"]
    assert {s.name: s.result.status for s in collector.hosts.values()} == {"r1": HOST_OK, "r2": HOST_OK}
    assert driver.calls[-1] == (CLEANUP_PLAYBOOK, ["r1"])


LOST = "Shared connection to 127.0.0.9 closed."


def test_a_poll_whose_answer_was_lost_is_followed_by_one_that_ships_everything_again(tmp_path, engine_for, clock):
    """A poll's logs are moved to shipped/ once printed: when that output is lost, the next poll says `again`
    (run.sh then ships them again), and only until one answer comes back whole."""
    from fake_fleet import router
    from orchestrator.run.hostlink import Outcome

    ok = router(finished_after=2)
    polls = []

    def host(kind, script):
        if kind == "poll":
            polls.append(script.rstrip().rsplit("run.sh ", 1)[1])
            if len(polls) == 1:
                return Outcome("unreachable", stderr=LOST)
        return ok(kind, script)

    engine, driver, collector = engine_for(tmp_path, {"r1": host, "r2": router()}, forks=1)
    engine.run()
    assert polls == ["poll", "poll again", "poll"]
    assert collector.hosts["r1"].result.status == HOST_OK


def test_a_work_dir_gone_before_everything_was_shipped_fails_the_host_and_says_so(tmp_path, engine_for, clock):
    """No answer was lost, yet the work dir is gone (a reboot, /tmp cleaned): the cells are not run again behind
    the user's back; the host fails with the reason (it used to be the shell's `can't open run.sh`)."""
    from fake_fleet import router
    from orchestrator.run.hostlink import Outcome

    ok = router()

    def host(kind, script):
        if kind == "poll":
            return Outcome("ok", stdout="\n@@sslbench-state gone\n")
        return ok(kind, script)

    engine, driver, collector = engine_for(tmp_path, {"r1": host, "r2": router()}, forks=1)
    engine.run()
    assert driver.steps["r1"] == ["detect", "launch", "poll"]
    state = collector.hosts["r1"]
    assert state.result.status == HOST_FAILED and "work dir was gone" in state.result.reason


def test_a_poll_step_says_gone_when_its_work_dir_is_not_there_and_never_forgets(tmp_path, engine_for):
    """The poll step's script, run by a real shell: a missing work dir is a state, not a shell error. A poll never
    removes the work dir (#37 failure 2: its answer may reach a controller that dies before saving it); it renews
    the runner's lease."""
    from fake_fleet import router

    engine, _driver, collector = engine_for(tmp_path, {"r1": router()})
    step = engine.decisions.poll_step("r1", 0.0)
    assert step.script.rstrip().endswith("run.sh poll") and "SSLBENCH_LEASE=" in step.script
    assert not Path(stages.work_dir(collector.run.run_id, "r1")).exists()
    for shell in [s for s in ("/bin/sh", shutil.which("busybox")) if s]:
        out = subprocess.run([shell, *(["sh"] if shell.endswith("busybox") else []), "-s"], input=step.script,
                             capture_output=True, text=True, timeout=10)
        assert (out.returncode, protocol.state(out.stdout), out.stderr) == (0, "gone", "")


def test_ctrl_c_while_a_host_launches_still_stops_its_runner(tmp_path, engine_for, clock):
    """The runner is detached the moment the launch runs: a Ctrl-C before its answer came back must still
    send the cleanup (stop openssl, remove the work dir) to that host."""
    from fake_fleet import router
    from orchestrator.run.hostlink import Outcome
    from orchestrator.run.runner import CLEANUP_PLAYBOOK

    ok = router()
    engine_box = []

    def host(kind, script):
        if kind == "launch":
            engine_box[0].interrupt.requested = True  # Ctrl-C: the play is cancelled, the launch's answer lost
            return Outcome("unreachable", stderr="")
        return ok(kind, script)

    engine, driver, collector = engine_for(tmp_path, {"r1": host})
    engine_box.append(engine)
    engine.run()
    assert driver.calls[-1] == (CLEANUP_PLAYBOOK, ["r1"])



@pytest.mark.parametrize("stage", ["detect", "install", "launch", "poll"])
def test_a_stop_at_any_stage_says_so_for_every_host_it_caught(tmp_path, engine_for, clock, stage):
    """#37 failure 3: Ctrl-C or SIGTERM during detect left the host `ok` with 0 figures and no reason, and `report`
    listed it as a good host. Each stage the stop catches a host at is said: run.json's `interrupted` of the host,
    its status (failed, not ok) and its reason."""
    import json

    from fake_fleet import router
    from orchestrator.run import fleet
    from orchestrator.run.hostlink import Outcome

    detects = iter(["rig-openwrt2.detect.txt", "rig-openwrt1.detect.txt"])  # no openssl, then openssl
    steady = router("rig-openwrt1.detect.txt", finished_after=3)
    box = []

    def host(kind, script):
        if kind == stage:  # the signal lands while this step runs: its answer is lost with the cancelled play
            box[0].interrupt.requested, box[0].interrupt.signal_name = True, "SIGTERM"
            return Outcome("unreachable", stderr="")
        if kind == "detect":
            return router(next(detects))(kind, script)
        return steady(kind, script)

    engine, driver, collector = engine_for(tmp_path, {"r1": host})
    box.append(engine)
    engine.run()
    fleet.finish_all(collector, engine.interrupt)
    result = collector.hosts["r1"].result
    expected = {"detect": "detect", "install": "provision", "launch": "cells", "poll": "cells"}[stage]
    assert driver.steps["r1"][-1] == stage
    assert result.status == HOST_FAILED and result.interrupted == expected, (result.status, result.reason)
    assert result.reason.startswith(f"interrupted (SIGTERM) during {expected}")
    stored = json.loads((collector.run_dir / "run.json").read_text())
    assert stored["interrupted"] == "interrupted (SIGTERM)"
    assert [(h["status"], h.get("interrupted")) for h in stored["hosts"]] == [("failed", expected)]


def test_a_write_that_fails_after_a_pass_stops_the_hosts_first_and_says_where_their_logs_are(
        tmp_path, capsys, engine_for, clock):
    """#37 failure 4: the OSError from appending Ansible's output to ansible-stdout.txt (a full results disk) escaped
    engine.run before the cleanup play: openssl went on running and the unsaved logs were not named. Now the
    hosts are stopped (keeping their work dirs), their work dirs are said, and the run stops as a stop of its own
    (exit 2)."""
    from fake_fleet import FakeDriver, router

    engine, driver, collector = engine_for(tmp_path, {"r1": router(finished_after=2), "r2": router(finished_after=2)},
                                           forks=1)
    play = FakeDriver.play

    def full_after_the_pass(self, **kw):
        status = play(self, **kw)
        if kw.get("playbook", "sslbench.yml") == "sslbench.yml":  # as Driver._save_stdout fails once the play ended
            raise OSError(28, "No space left on device")
        return status

    driver.play = full_after_the_pass.__get__(driver)
    engine.run()
    assert engine.unwritable and engine.interrupt.exit_code == 2
    assert engine.interrupt.reason == "cannot write the results (No space left on device)"
    assert driver.calls[-1] == ("cleanup.yml", ["r1", "r2"]) and driver.extravars[-1]["sslbench_keep_work_dirs"]
    err = capsys.readouterr().err
    for name in ("r1", "r2"):
        assert f"{name} {stages.work_dir(collector.run.run_id, name)}" in err


@pytest.mark.parametrize("forks", [None, 1])
def test_the_lease_leaves_a_short_grace_only_where_the_session_is_held_for_the_next_steps(
        tmp_path, engine_for, clock, forks):
    """A task that ends after its launch (more hosts than --forks) closes its session while the controller lives: the
    runner must then outlive that session until the next poll (the whole TTL), or every run of a big fleet would stop
    itself 30 s after its launch. Held for the next steps (the fleet fits --forks), 30 s once it is gone."""
    from fake_fleet import router

    leases: dict[str, list[list[int]]] = {"r1": [], "r2": []}

    def host(name):
        ok = router(finished_after=2)

        def run(kind, script):
            for words in re.findall(r"SSLBENCH_LEASE='(\d+) (\d+) (\d+)'", script):
                leases[name].append([int(w) for w in words])
            return ok(kind, script)
        return run

    engine, driver, collector = engine_for(tmp_path, {"r1": host("r1"), "r2": host("r2")}, forks=forks)
    engine.run()
    assert all(s.result.status == HOST_OK for s in collector.hosts.values())
    for name, seen in leases.items():
        assert seen and len({serial for serial, _, _ in seen}) == len(seen)  # each renewal a serial of its own
        grace = {g for _serial, _ttl, g in seen}
        ttl = {t for _serial, t, _g in seen}
        if forks is None:
            assert grace == {stages.LEASE_GRACE} and min(ttl) > stages.LEASE_GRACE
        else:  # its launch's task ended: the launch's grace is its TTL
            assert seen[0][2] == seen[0][1] >= stages.LEASE_MARGIN


def test_a_step_decided_while_held_but_handed_out_unheld_gives_the_whole_ttl():
    script = "SSLBENCH_LEASE='12 277 30' sh /tmp/sslbench.x.y/run.sh poll\n"
    assert stages.unheld(script) == "SSLBENCH_LEASE='12 277 277' sh /tmp/sslbench.x.y/run.sh poll\n"
    assert stages.unheld("sh run.sh forget\n") == "sh run.sh forget\n"
