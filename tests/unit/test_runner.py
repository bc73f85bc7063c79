"""Runner events -> host events -> progress, stored logs, measurements and host statuses."""
from pathlib import Path

from orchestrator import store
from orchestrator.run import matrix
from orchestrator.run.fleet import HostState, apply_facts, cell_measurements, failure_reason, provisioning_decision
from orchestrator.model import ERROR, HOST_FAILED, HOST_OK, HOST_UNREACHABLE, OK, UNSUPPORTED, HostResult, Run
from orchestrator.parse.protocol import exit_codes, progress_part, split_logs
from orchestrator.run.progress import HostProgress, ProgressView
from orchestrator.run.config import RunConfig
from orchestrator.run.inventory import InventoryChoice, InventorySource
from orchestrator.run.runner import Driver, HostEvent, host_event

DATA = Path(__file__).resolve().parent.parent / "data" / "speed"
MR_LOG = (DATA / "openssl-3.0.19-x86_64-mr-chacha20-poly1305.txt").read_text()


def test_retry_event_becomes_host_event_with_unix_line_ends(runner_event):
    ev = host_event(runner_event("runner_retry", stdout="@@sslbench-progress\r\nstart 1 2 a\r\n", rc=0))
    assert ev.kind == "retry" and ev.host == "r1" and ev.stdout == "@@sslbench-progress\nstart 1 2 a\n"


def test_unreachable_and_failed_events_carry_the_message(runner_event):
    ev = host_event(runner_event("runner_on_unreachable", msg="Failed to connect to the host via ssh: refused"))
    assert ev.kind == "unreachable" and "refused" in ev.message
    ev = host_event(runner_event("runner_on_failed", stdout="", stderr="boom", rc=1))
    assert ev.kind == "failed" and ev.message == "boom" and ev.rc == 1


def test_events_without_host_are_ignored_but_never_rejected():
    assert host_event({"event": "playbook_on_stats", "event_data": {}}) is None
    assert host_event({"event": "verbose", "stdout": "x"}) is None


def config_of(tmp_path, **options):
    """A run's config for the driver: an inventory typed with -i, and `options`."""
    return RunConfig(InventoryChoice(tmp_path / "inv.yml", InventorySource.OPTION), **options)


def test_driver_keeps_host_key_checking_on_unless_asked(tmp_path):
    with Driver(config_of(tmp_path), tmp_path) as driver:
        assert driver.envvars()["ANSIBLE_HOST_KEY_CHECKING"] == "True"
        private = driver.private_dir
        assert private.is_dir()
    assert not private.exists()  # fresh per run, removed after
    with Driver(config_of(tmp_path, insecure_no_host_key_check=True), tmp_path) as driver:
        assert driver.envvars()["ANSIBLE_HOST_KEY_CHECKING"] == "False"


def test_run_json_matrix_is_written_from_the_config_in_the_layout_stores_have(tmp_path):
    """run.json's `matrix`: the request the run began with, then the idle gate, the budget, each host's plan and,
    with site workers, which ran each host: in this order, with these keys, as stored runs have it."""
    from orchestrator.run.config import PlanOptions
    from orchestrator.run.fleet import plan_for, record_matrix
    from orchestrator.run.workers import Worker

    request = matrix.MatrixRequest(algorithms=("sha256",), sizes=(16,), threads=("1",), apis=("evp",), seconds=1)
    options = PlanOptions(request, budget_seconds=600, idle_wait=5)
    state = HostState(name="r1", result=HostResult(host="r1"))
    state.result.openssl.version, state.logical_cpus = "3.0.19", 2
    plan = plan_for(state, options)
    run = Run(run_id="x", created="now", matrix=request.to_dict())
    config = config_of(tmp_path, plan=options, workers=(Worker("lab", "pi@lab", "lab_g"),))
    record_matrix(run, config, {"r1": (state, plan)}, {"r2": "lab"})
    assert list(run.matrix) == [*request.to_dict(), "idle_wait", "budget_seconds", "hosts", "workers", "host_workers"]
    assert (run.matrix["idle_wait"], run.matrix["budget_seconds"]) == (5, 600)
    assert run.matrix["hosts"] == {"r1": {"openssl": plan.capabilities.label, "cells": [c.to_dict() for c in plan.cells],
                                          "eta_seconds": plan.eta_seconds, "notes": plan.notes, "pins": [],
                                          "budget": state.budget.to_dict()}}
    assert run.matrix["workers"] == {"lab": {"ssh": "pi@lab", "hosts": "lab_g"}}
    assert run.matrix["host_workers"] == {"r2": "lab"}
    record_matrix(run, config_of(tmp_path, plan=PlanOptions(request, idle_wait=5)), {}, {})  # no budget, no workers
    assert list(run.matrix) == [*request.to_dict(), "idle_wait", "hosts"]


def test_progress_counts_cells_and_eta_from_planned_seconds():
    p = HostProgress(host="r1", phase="bench", planned={"a": 10.0, "b": 20.0, "c": 30.0}, total=3)
    assert p.remaining_seconds(now=0) == 60
    assert p.update("start 1 3 a\n", now=0)
    assert p.remaining_seconds(now=4) == 56
    assert p.update("start 1 3 a\ndone 1 3 a 0\nstart 2 3 b\n", now=10)
    assert not p.update("start 1 3 a\ndone 1 3 a 0\nstart 2 3 b\n", now=11)  # same file again: no change
    assert p.remaining_seconds(now=15) == 45
    assert p.describe(now=15) == "cell 2/3 b, ETA 45s"
    p.update("done 2 3 b 0\nstart 3 3 c\ndone 3 3 c 1\n", now=40)
    assert p.remaining_seconds(now=40) == 0 and p.done == {"a": 0, "b": 0, "c": 1}


POLL = ("@@sslbench-progress\nstart 1 2 001-evp-x\ndone 1 2 001-evp-x 0\nstart 2 2 002-evp-y\ndone 2 2 002-evp-y 1\n"
        "@@sslbench-log 001-evp-x\nline one\n+F:1:x:2\n\n@@sslbench-endlog 001-evp-x\n"
        "@@sslbench-log 002-evp-y\nspeed: Unknown algorithm y\n\n@@sslbench-endlog 002-evp-y\n"
        "@@sslbench-state finished\n")


def test_poll_output_splits_into_progress_exit_codes_and_logs():
    assert exit_codes(progress_part(POLL)) == {"001-evp-x": 0, "002-evp-y": 1}
    logs = split_logs(POLL)
    assert [cell for cell, _ in logs] == ["001-evp-x", "002-evp-y"]
    assert logs[0][1] == "line one\n+F:1:x:2\n"


def test_a_cut_log_block_is_not_taken():
    assert split_logs("@@sslbench-log 001-a\nhalf of it") == []


def test_cell_log_becomes_measurements_with_repeat_and_version(cell):
    ms = cell_measurements(cell(repeat=2), MR_LOG, "3.0.19", rc=0)
    assert {m.block_size for m in ms} == set(matrix.SIZES_NEW)
    assert all(m.status == OK and m.repeat == 2 and m.api == "evp" and m.algorithm == "chacha20-poly1305" for m in ms)
    assert all(m.bytes_per_second > 0 for m in ms)


def test_sizes_filtered_when_the_host_has_no_bytes_option(cell):
    ms = cell_measurements(cell(sizes=(1024,)), MR_LOG, "3.0.19", rc=0)
    assert [m.block_size for m in ms] == [1024]


def test_refused_cell_is_unsupported_with_openssls_words(cell):
    ms = cell_measurements(cell(sizes=(16, 64)), "speed: Unknown algorithm chacha20-poly1305\n", "1.0.2u", rc=1)
    assert [(m.block_size, m.status) for m in ms] == [(16, UNSUPPORTED), (64, UNSUPPORTED)]
    assert "Unknown algorithm chacha20-poly1305" in ms[0].reason


def test_crashed_cell_is_an_error(cell):
    ms = cell_measurements(cell(sizes=(16,)), "Segmentation fault\n", "3.0.19", rc=139)
    assert ms[0].status == ERROR and "Segmentation fault" in ms[0].reason


DETECT = """@@sslbench:/etc/openwrt_release
DISTRIB_ID='OpenWrt'
DISTRIB_RELEASE='23.05.3'
DISTRIB_REVISION='r23809-234f1a2efa'
@@sslbench:uname -a
Linux OpenWrt 5.15.150 #0 SMP Fri Mar 22 22:09:42 2024 mips GNU/Linux
@@sslbench:/proc/cpuinfo
system type		: MediaTek MT7621 ver:1 eco:3
processor		: 0
cpu model		: MIPS 1004Kc V2.15
@@sslbench:nproc
4
@@sslbench:openssl

@@sslbench:package managers
opkg
@@sslbench:tmp free kb
120000
@@sslbench:end
"""


def test_detect_output_gives_facts_and_a_provisioning_choice():
    state = HostState(name="r1", result=HostResult(host="r1"))
    apply_facts(state, DETECT.replace("\n", "\r\n"))
    assert state.result.os.family == "openwrt"
    assert state.logical_cpus == 4 and state.openssl_path is None
    assert state.package_managers == ["opkg"]
    assert provisioning_decision(state, no_provision=False, upgrade=False).name == "opkg"


def test_missing_openssl_without_package_manager_fails_the_host_with_a_reason():
    state = HostState(name="r1", result=HostResult(host="r1"))
    apply_facts(state, DETECT.replace("opkg\n", ""))
    assert provisioning_decision(state, no_provision=False, upgrade=False) is None
    assert state.result.status == HOST_FAILED and "install openssl by hand" in state.result.reason
    state = HostState(name="r2", result=HostResult(host="r2"))
    apply_facts(state, DETECT)
    provisioning_decision(state, no_provision=True, upgrade=False)
    assert "--no-provision" in state.result.reason


def test_opkg_failure_reason_keeps_the_last_lines():
    ev = HostEvent(kind="failed", host="r1", task="Install openssl-util with opkg",
                   stdout="Downloading http://feed/Packages.gz\n*** Failed to download the package list from "
                          "http://feed/Packages.gz\n\nwget returned 4.\n", message="non-zero return code", rc=255)
    reason = failure_reason(ev)
    assert reason.startswith("Install openssl-util with opkg: ") and "wget returned 4" in reason
    assert "exit code 255" in reason


def test_a_failed_launch_is_told_by_the_hosts_stderr_not_its_login_banner(runner_event):
    """sslbench_step runs without a pty: the host's words are in stderr, behind raw's generic msg."""
    ev = host_event(runner_event(
        "runner_on_failed", task="Ship the runner and its cells, and start it", msg="non-zero return code", rc=1,
        stdout="Raspberry Pi OS: start-up banner\n\x1b]0;root@pi: /root\x07",
        stderr="cat: write error: No space left on device\n"
               "sslbench: cannot write run.sh in /tmp/sslbench.x (is /tmp full or read-only?)\n"))
    reason = failure_reason(ev)
    assert reason.startswith("Ship the runner and its cells, and start it: cat: write error: No space left on device"
                             " | sslbench: cannot write run.sh"), reason
    assert reason.endswith("exit code 1")


def test_collector_stores_logs_and_saves_the_run_when_a_host_finishes(tmp_path, make_collector, runner_event):
    collector, state = make_collector(tmp_path, host="../evil; rm -rf ~")
    collector.run.complete = False  # as `sslbench run` stores it at the start
    collector.save()
    poll = ("@@sslbench-progress\nstart 1 2 001-evp-chacha20-poly1305-t1-r0\n"
            "done 1 2 001-evp-chacha20-poly1305-t1-r0 0\n"
            f"@@sslbench-log 001-evp-chacha20-poly1305-t1-r0\n{MR_LOG}\n@@sslbench-endlog 001-evp-chacha20-poly1305-t1-r0\n"
            "@@sslbench-log ../../etc/passwd\nroot\n@@sslbench-endlog ../../etc/passwd\n"
            "@@sslbench-state running\n")
    collector.on_event(host_event(runner_event("runner_retry", host=state.name, stdout=poll)))
    logs = list(collector.run_dir.rglob("*.log"))
    assert [p.name for p in logs] == ["001-evp-chacha20-poly1305-t1-r0.log"]  # the unplanned name was refused
    assert logs[0].parent.parent == collector.run_dir  # the host name was made a safe single path component
    assert len(state.result.measurements) == 6
    collector.on_event(host_event(runner_event("runner_on_unreachable", host=state.name,
                                               msg="Failed to connect to the host via ssh")))
    collector.finish(state)  # its host.json: the run itself is rewritten only at the end (or never, if sslbench dies)
    saved = store.load_run(collector.run_dir)
    host = saved.hosts[0]
    assert host.status == HOST_UNREACHABLE and "ssh" in host.reason
    assert len(host.measurements) == 6  # the finished cell was kept
    assert "incomplete" in host.flags


def test_a_log_cut_short_on_the_host_never_gives_a_figure_from_its_cut_line(tmp_path, make_collector, runner_event):
    """The host's /tmp filled while openssl wrote: the log ends inside the last figure, no newline, no evidence.
    `+F:…:3603096935.06` cut to `…:3603` was a plain ok 3.6 kB/s at 16384 bytes."""
    collector, state = make_collector(tmp_path)
    cut = MR_LOG.rstrip("\n")[:-len("096935.06")]
    assert cut.endswith(":3603")
    cell_id = state.plan.cells[0].id
    # run.sh's ship_logs: `cat "$log"; echo ""`
    poll = (f"@@sslbench-progress\nstart 1 2 {cell_id}\ndone 1 2 {cell_id} 0\n"
            f"@@sslbench-log {cell_id}\n{cut}\n@@sslbench-endlog {cell_id}\n@@sslbench-state running\n")
    collector.on_event(host_event(runner_event("runner_retry", host=state.name, stdout=poll)))
    by_size = {m.block_size: m for m in state.result.measurements}
    whole = {m.block_size: m.bytes_per_second for m in cell_measurements(state.plan.cells[0], MR_LOG, "3.0.19")}
    # the cut figure comes from its progress line, and says so; the line's whole figures are kept as they are
    assert "partial" in by_size[16384].flags and abs(by_size[16384].bytes_per_second / whole[16384] - 1) < 1e-6
    assert {size: (m.bytes_per_second, m.flags) for size, m in by_size.items() if size != 16384} == {
        size: (figure, []) for size, figure in whole.items() if size != 16384}
    assert (collector.host_path(state) / f"{cell_id}.log").read_text() == cut  # the raw log as the host had it


def test_collector_marks_missing_cells_when_the_run_stops(tmp_path, make_collector):
    collector, state = make_collector(tmp_path)
    collector.finish(state, "interrupted (Ctrl-C)")
    assert state.result.status == HOST_FAILED and state.result.reason == "interrupted (Ctrl-C)"
    collector2, state2 = make_collector(tmp_path)
    state2.cells_done = {c.id for c in state2.plan.cells}
    collector2.finish(state2)
    assert state2.result.status == HOST_OK


def test_host_names_that_sanitise_alike_get_separate_directories(tmp_path, make_collector):
    collector, first = make_collector(tmp_path, host="a;b")
    second = collector.host("a b")
    second.plan = first.plan
    log = f"{MR_LOG}"
    collector.add_log(first, "001-evp-chacha20-poly1305-t1-r0", log)
    collector.add_log(second, "001-evp-chacha20-poly1305-t1-r0", log)
    dirs = sorted(p.name for p in collector.run_dir.iterdir() if p.is_dir())
    assert len(dirs) == 2 and dirs[0] == "a_b" and dirs[1].startswith("a_b-")
    assert first.result.logs != second.result.logs


def test_retry_events_drive_the_plain_progress_lines(tmp_path, make_collector, runner_event):
    import io

    stream = io.StringIO()
    collector, state = make_collector(tmp_path)
    collector.view = ProgressView(live=False, stream=stream)
    progress = collector.view.host(state.name)
    progress.planned = {c.id: c.seconds for c in state.plan.cells}
    polls = ["@@sslbench-progress\nstart 1 2 001-evp-chacha20-poly1305-t1-r0\n@@sslbench-state running\n",
             "@@sslbench-progress\n@@sslbench-state running\n",  # nothing new: no new line printed
             "@@sslbench-progress\ndone 1 2 001-evp-chacha20-poly1305-t1-r0 0\n"
             "start 2 2 002-evp-chacha20-poly1305-t2-r0\n@@sslbench-state running\n"]
    for poll in polls:
        collector.on_event(host_event(runner_event("runner_retry", stdout=poll)))
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("r1: cell 1/2 001-evp-chacha20-poly1305-t1-r0, ETA ")
    assert lines[1] == "r1: cell 2/2 002-evp-chacha20-poly1305-t2-r0, ETA 18s"
    assert len(lines) == 2


def test_interrupt_turns_sigint_sigterm_and_sighup_into_a_clean_stop():
    import os
    import signal

    from orchestrator.run.runner import Interrupt

    for signum, code, reason in ((signal.SIGINT, 130, "interrupted (Ctrl-C)"),
                                 (signal.SIGTERM, 143, "interrupted (SIGTERM)"),
                                 (signal.SIGHUP, 129, "interrupted (SIGHUP)")):
        before = signal.getsignal(signum)
        with Interrupt() as interrupt:
            os.kill(os.getpid(), signum)  # handled: the test process is not killed
            assert interrupt.requested and interrupt.exit_code == code and interrupt.reason == reason
        assert signal.getsignal(signum) == before  # handlers restored


def test_a_second_ctrl_c_aborts_and_a_third_is_not_heeded_while_the_results_are_saved(tmp_path):
    import os
    import signal

    import pytest

    from orchestrator.run.runner import Interrupt

    with Interrupt(results=tmp_path) as interrupt:
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
        interrupt.abort()
        os.kill(os.getpid(), signal.SIGINT)  # would raise again before abort(): the saving is not cut short
    assert interrupt.exit_code == 130 and interrupt.reason.startswith("interrupted (Ctrl-C) and aborted at once")


# --- the ansible-playbook options users type, passed through -----------------------------------------------------

def ansible_args(*argv):
    import argparse

    from orchestrator.commands.options import add_common_options

    parser = argparse.ArgumentParser()
    add_common_options(parser)
    return parser.parse_args(list(argv))


def test_ansible_options_reach_ansible_playbook_as_typed():
    from orchestrator.commands.options import ansible_options

    asked = []
    args = ansible_args("-u", "pi", "-b", "-K", "-k", "-e", "a=1", "--extra-vars", "@more.yml", "--private-key",
                        "~/.ssh/board", "--ssh-common-args", "-o ProxyJump=gw", "--vault-password-file", "vp",
                        "-J", "-vvv")
    options = ansible_options(args, ask=lambda prompt: asked.append(prompt) or f"pw-{len(asked)}")
    assert asked == ["SSH password: ", "BECOME password: ", "Vault password: "]
    assert options.cmdline() == ["--user", "pi", "--become", "--extra-vars", "a=1", "--extra-vars", "@more.yml",
                                 "--private-key", "~/.ssh/board", "--ssh-common-args", "-o ProxyJump=gw",
                                 "--vault-password-file", "vp", "--ask-pass", "--ask-become-pass",
                                 "--ask-vault-pass"]
    assert options.verbosity == 3
    # each answer goes to its own prompt of ansible-playbook (its exact prompt texts)
    import re

    answers = {re.compile(p, re.M): a for p, a in options.passwords.items()}
    for prompt, answer in (("SSH password: ", "pw-1"), ("BECOME password[defaults to SSH password]: ", "pw-2"),
                           ("BECOME password: ", "pw-2"), ("Vault password: ", "pw-3")):
        assert [a for p, a in answers.items() if p.search(prompt)] == [answer]
    assert not any("pw-" in word for word in options.cmdline())
    assert ansible_options(ansible_args()).cmdline() == []


def test_vault_ids_pass_through_and_a_prompt_one_is_answered_from_here():
    import re

    from orchestrator.commands.options import ansible_options

    asked = []
    options = ansible_options(ansible_args("--vault-id", "prod@vault-pass", "--vault-id", "dev@prompt", "-J"),
                              ask=lambda prompt: asked.append(prompt) or f"pw-{len(asked)}")
    assert asked == ["Vault password: ", "Vault password (dev): "]
    assert options.cmdline() == ["--vault-id", "prod@vault-pass", "--vault-id", "dev@prompt", "--ask-vault-pass"]
    # pexpect takes the first pattern that matches: the labelled prompt gets its own answer
    first = [a for p, a in options.passwords.items() if re.search(p, "Vault password (dev): ", re.M)][0]
    assert first == "pw-2"


def test_a_prompt_left_unanswered_is_a_user_error():
    import pytest

    from orchestrator.commands.options import ansible_options
    from orchestrator.errors import UserError

    def eof(_prompt):
        raise EOFError

    with pytest.raises(UserError, match="BECOME password"):
        ansible_options(ansible_args("-K"), ask=eof)


def test_run_json_keeps_extra_var_names_not_values():
    from orchestrator.run.ansible_options import redacted_command

    assert redacted_command(["sslbench", "run", "-e", "ansible_become_password=s3cret x=1", "--extra-vars=@v.yml",
                             "-e{\"ansible_password\": \"pw\"}", "-eflag=on", "--extra-vars", "k='a b'", "-i", "inv"]) == [
        "sslbench", "run", "-e", "ansible_become_password=*** x=***", "--extra-vars=@v.yml", "-e***", "-eflag=***",
        "--extra-vars", "k=***", "-i", "inv"]


def test_a_large_fleet_gets_one_summary_line_not_a_line_per_host():
    import io

    stream = io.StringIO()
    view = ProgressView(live=False, stream=stream, per_host=3)
    for name in ("a", "b", "c", "d"):
        view.host(name).phase = "bench"
        view.host(name).planned = {"x": 30.0}
    view.host("d").phase = "failed"
    view.refresh("a")
    view.refresh("b")  # within SUMMARY_EVERY: nothing more printed
    assert stream.getvalue().splitlines() == ["4 hosts: 3 bench, 1 failed; ETA 30s"]
    for name in ("a", "b", "c"):
        view.host(name).phase = "done"
    view.refresh("c")  # every host done: said at once
    assert stream.getvalue().splitlines()[-1] == "4 hosts: 3 done, 1 failed"


def test_an_unreachable_hosts_reason_is_one_line(tmp_path, make_collector, runner_event):
    collector, state = make_collector(tmp_path)
    collector.on_event(host_event(runner_event(
        "runner_on_unreachable", host=state.name, task="Detect host facts",
        msg="Failed to connect to the host via ssh: Connection timed out during banner exchange\r\n"
            "Connection to 127.0.0.251 port 2299 timed out\n")))
    assert state.result.status == HOST_UNREACHABLE
    assert state.result.reason == ("Detect host facts: Failed to connect to the host via ssh: Connection timed out "
                                   "during banner exchange | Connection to 127.0.0.251 port 2299 timed out")


def test_a_results_dir_that_cannot_be_written_stops_the_run_once_not_at_every_event(tmp_path, capsys, runner_event):
    """The results disk full mid-run: every event said `internal error … OSError` and the hosts measured on for
    nothing (their copies removed by `forget` once shipped). Now the run stops as Ctrl-C does, said once."""
    from orchestrator.run.runner import Interrupt

    interrupt = Interrupt()
    with Driver(config_of(tmp_path), tmp_path, interrupt=interrupt) as driver:
        def full(event):
            raise OSError(28, "No space left on device", str(tmp_path / "r1" / "001.log"))
        handle = driver._handler(full)
        for _ in range(3):
            assert handle(runner_event("runner_on_ok", stdout="@@sslbench-state running\n"), None) is True
    assert interrupt.requested and interrupt.reason == "cannot write the results (No space left on device)"
    assert interrupt.exit_code == 2  # bad environment, as the CLI's OSError: not 130 as if Ctrl-C
    err = capsys.readouterr().err
    assert err.count("stopping the benchmark") == 1 and "internal error" not in err


def test_the_end_of_ansible_playbook_is_not_followed_by_ptyprocess_close_delay():
    """ansible-runner reaps ansible-playbook before it closes the pty; the 0.1-s sleep after close is ours no more."""
    import time

    import orchestrator.run.runner  # noqa: F401  (sets the delay for every pty it spawns)
    import pexpect

    child = pexpect.spawn("true")
    child.expect(pexpect.EOF)
    while child.isalive():
        time.sleep(0.01)
    start = time.monotonic()
    child.close()
    assert time.monotonic() - start < 0.05 and child.exitstatus == 0


def test_ansible_inventory_is_read_without_dash_i(tmp_path, monkeypatch):
    import pytest

    from orchestrator.errors import UserError
    from orchestrator.run.inventory import default_inventory, resolve_inventory

    (tmp_path / "hosts.yml").write_text("all: {}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANSIBLE_INVENTORY", raising=False)
    assert resolve_inventory(None) == default_inventory().resolve()
    monkeypatch.setenv("ANSIBLE_INVENTORY", "hosts.yml")
    assert resolve_inventory(None) == tmp_path / "hosts.yml"  # relative to where sslbench was started
    assert resolve_inventory(str(default_inventory())) == default_inventory().resolve()  # -i wins, as in Ansible
    monkeypatch.setenv("ANSIBLE_INVENTORY", "hosts.yml,other.yml")
    with pytest.raises(UserError, match="one inventory source"):
        resolve_inventory(None)
    monkeypatch.setenv("ANSIBLE_INVENTORY", "gone.yml")
    with pytest.raises(UserError, match="ANSIBLE_INVENTORY names gone.yml, which does not exist"):
        resolve_inventory(None)


def _isolated_ansible_config(tmp_path, monkeypatch):
    """No ~/.ansible.cfg, no ANSIBLE_* of this machine's; /etc/ansible/ansible.cfg (if any) is the only outside config
    and the cases that must not see it name a config of their own."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("ANSIBLE_INVENTORY", "ANSIBLE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    project.chmod(0o755)  # Ansible ignores ./ansible.cfg in a world-writable directory
    monkeypatch.chdir(project)
    return project


def test_inventory_of_the_ansible_cfg_ansible_would_load(tmp_path, monkeypatch):
    """-i, else ANSIBLE_INVENTORY, else the [defaults] inventory of the config ansible-playbook loads (its path
    relative to that file), else sslbench's own localhost: and the choice is said."""
    import pytest

    from orchestrator.errors import UserError
    from orchestrator.run.inventory import InventorySource, choose_inventory, default_inventory

    project = _isolated_ansible_config(tmp_path, monkeypatch)
    (project / "fleet.yml").write_text("all: {}\n")
    (project / "other.yml").write_text("all: {}\n")
    (project / "empty.cfg").write_text("[defaults]\nforks = 3\n")
    monkeypatch.setenv("ANSIBLE_CONFIG", "empty.cfg")  # a config without inventory: the embedded default
    chosen = choose_inventory(None)
    assert (chosen.path, chosen.source) == (default_inventory().resolve(), InventorySource.DEFAULT)
    assert "this machine" in chosen.said()
    monkeypatch.delenv("ANSIBLE_CONFIG")
    (project / "ansible.cfg").write_text("[defaults]\ninventory = fleet.yml\n")
    chosen = choose_inventory(None)
    assert (chosen.path, chosen.source) == (project / "fleet.yml", InventorySource.CONFIG)
    assert chosen.said() == f"inventory: {project / 'fleet.yml'} (inventory = in {project / 'ansible.cfg'})"
    # ANSIBLE_CONFIG (relative to the directory sslbench was started in); its inventory relative to the file
    (project / "cfg2").mkdir()
    (project / "cfg2" / "ansible.cfg").write_text("[defaults]\ninventory = ../other.yml\n")
    monkeypatch.setenv("ANSIBLE_CONFIG", "cfg2/ansible.cfg")
    assert choose_inventory(None).path == project / "other.yml"
    monkeypatch.setenv("ANSIBLE_INVENTORY", "fleet.yml")  # the variable wins over any config
    assert choose_inventory(None).path == project / "fleet.yml"
    assert choose_inventory(None).source == InventorySource.ENVIRONMENT
    assert choose_inventory("other.yml").source == InventorySource.OPTION  # and -i over both
    monkeypatch.delenv("ANSIBLE_INVENTORY")
    (project / "cfg2" / "ansible.cfg").write_text("[defaults]\ninventory = ../gone.yml\n")
    with pytest.raises(UserError, match=r"inventory = in .*cfg2/ansible.cfg names .*gone.yml, which does not exist"):
        choose_inventory(None)
    (project / "cfg2" / "ansible.cfg").write_text("[defaults]\ninventory = ../fleet.yml, ../other.yml\n")
    with pytest.raises(UserError, match="one inventory source"):
        choose_inventory(None)
    (project / "cfg2" / "ansible.cfg").write_text("[defaults\ninventory = ../fleet.yml\n")
    with pytest.raises(UserError, match="Error reading config file"):  # Ansible's words, not a traceback
        choose_inventory(None)


def test_vault_hint_fits_what_was_given():
    """No secret: how to give one. A secret that does not open the vault: which one, never "give one"."""
    from orchestrator.run.ansible_options import AnsibleOptions
    from orchestrator.run.inventory import vault_hint

    none = AnsibleOptions()
    assert "--vault-password-file FILE" in vault_hint("Attempting to decrypt but no vault secrets found", none)
    wrong = AnsibleOptions(vault_password_files=["wrong-pass"])
    said = vault_hint("Decryption failed (no vault secrets were found that could decrypt)", wrong)
    assert "wrong-pass" in said and "does not open" in said and "give the vault password" not in said
    prompted = AnsibleOptions(passwords={AnsibleOptions.PROMPTS["ask_vault_pass"][1]: "x"})
    assert "typed" in vault_hint("Decryption failed (no vault secrets were found that could decrypt)", prompted)
    assert vault_hint("Unreachable: no route to host", none) == ""
