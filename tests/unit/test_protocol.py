"""The markers the host scripts print and the controller splits on (orchestrator/parse/protocol.py)."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.model import HostResult
from orchestrator.parse import protocol
from orchestrator.run.fleet import HostState, apply_facts

FILES = Path(__file__).resolve().parents[2] / "playbooks"
TOPOLOGY = Path(__file__).resolve().parents[1] / "data" / "topology"


def test_split_sections_reads_detect_output_with_pty_line_ends():
    text = "@@sslbench:/etc/os-release\r\nID=openwrt\r\n@@sslbench:nproc\r\n4\r\n@@sslbench:openssl\r\n\r\n"
    sections = protocol.split_sections(text)
    assert sections["/etc/os-release"] == "ID=openwrt\n"
    assert sections["nproc"] == "4\n"
    assert sections["openssl"].strip() == ""


def test_every_marker_the_scripts_print_is_one_the_controller_knows():
    known = {protocol.SECTION, protocol.PROGRESS, protocol.LOG.strip(), protocol.ENDLOG.strip(),
             protocol.RUNNER_OUTPUT, protocol.STATE.strip()}
    printed = set()
    for path in [*FILES.glob("files/*.sh"), *FILES.glob("*.yml")]:
        for mark in re.findall(r"@@sslbench[-:a-z]*", path.read_text()):
            printed.add(protocol.SECTION if mark.startswith(protocol.SECTION) else mark)
    assert printed == known


def test_every_conditions_section_the_scripts_print_has_a_reader():
    from orchestrator.evidence.conditions import SECTION_READERS

    printed = set()
    for name in ("conditions.sh", "detect.sh"):
        text = (FILES / "files" / name).read_text()
        for kind in re.findall(r'"@@ (begin|end) sslbench-', text):
            assert f"@@ {kind} sslbench-" in (protocol.BLOCK_BEGIN, protocol.BLOCK_END)
        printed |= {m for m in re.findall(r'"@@ ([a-z_]+)', text) if m not in ("begin", "end")}
    assert printed == set(SECTION_READERS)


# What a login shell printed before the command's output, as the field has it: a .bashrc setting the terminal
# title (no newline), a board banner, both.
STARTUP_JUNK = ["\x1b]0;root@router: ~\x07", "Welcome to the board!\n\x1b]0;root@board\x07", "motd line\r\nno newline"]


@pytest.mark.parametrize("junk", STARTUP_JUNK)
def test_shell_startup_text_without_a_newline_does_not_hide_the_first_section(junk):
    detect = (TOPOLOGY / "x86_64-vm-2cpu-cluster-id-per-core.detect.txt").read_text()
    clean, glued = HostState("a", HostResult(host="a")), HostState("b", HostResult(host="b"))
    apply_facts(clean, detect)
    apply_facts(glued, junk + detect.replace("\n", "\r\n"))  # a pty: CRLF line ends
    assert glued.result.os.name and glued.result.os.version
    assert (glued.result.os, glued.result.cpu, glued.result.openssl) == (clean.result.os, clean.result.cpu,
                                                                         clean.result.openssl)


@pytest.mark.parametrize("junk", STARTUP_JUNK)
def test_shell_startup_text_does_not_hide_a_poll(junk):
    poll = ("\n@@sslbench-progress\nstart 1 1 001-a\ndone 1 1 001-a 0\nfinished 1\n"
            "@@sslbench-log 001-a\n+F:1:sha256:100\n\n@@sslbench-endlog 001-a\n@@sslbench-state finished\n")
    for text in (junk + poll, junk + poll.lstrip("\n")):
        assert protocol.split_logs(text) == [("001-a", "+F:1:sha256:100\n")]
        assert protocol.exit_codes(protocol.progress_part(text)) == {"001-a": 0}
        assert protocol.state(text) == "finished"


def test_scripts_start_their_output_on_a_line_of_their_own():
    # run.sh prints an empty line first, so a start-up text without a newline ends before the first marker
    sh = shutil.which("sh")
    out = subprocess.run([sh, str(FILES / "files" / "sslbench-run.sh"), "nothing"], capture_output=True, text=True)
    assert out.stdout.startswith("\n")
    out = subprocess.run([sh, str(FILES / "files" / "detect.sh")], capture_output=True, text=True)
    assert out.stdout.startswith("\n" + protocol.SECTION)


def test_a_dead_runner_reports_its_last_words():
    poll = "@@sslbench-progress\n@@sslbench-runner-output\nrun.sh: line 9: taskset: not found\n@@sslbench-state died\n"
    assert protocol.state(poll) == "died"
    assert protocol.runner_output(poll) == "run.sh: line 9: taskset: not found"


def test_a_shipped_log_is_the_file_as_the_host_has_it():
    # ship_logs prints `cat "$log"; echo ""`: only that newline goes, so a log without its last newline shows
    # (the parser then reads it as cut off: parse/speed/lines.ends_cut)
    ended = "@@sslbench-log 001-a\n+H:16\n+F:1:sha256:100.00\n\n@@sslbench-endlog 001-a\n"
    cut = "@@sslbench-log 001-a\n+H:16\n+F:1:sha256:10\n@@sslbench-endlog 001-a\n"
    assert protocol.split_logs(ended) == [("001-a", "+H:16\n+F:1:sha256:100.00\n")]
    assert protocol.split_logs(cut) == [("001-a", "+H:16\n+F:1:sha256:10")]
