"""What the scripts on the hosts print to the controller, and how it is split again: the one place that knows
the markers of playbooks/files/*.sh and the playbooks.

  detect.sh       `@@sslbench:NAME` before each file or command output (SECTION); its `cpu clusters` section
                  holds conditions.sh's `@@ NAME` sub-sections (cpus, cpufreq, topology, hybrid, tools)
  run.sh poll     `@@sslbench-progress`, new progress lines, `@@sslbench-log ID` … `@@sslbench-endlog ID` per
                  shipped cell log, `@@sslbench-runner-output` + the runner's last words when it died,
                  `@@sslbench-state STATE` last (`gone`: the poll step found no work dir; `stranded`: the
                  runner's lease lapsed); `poll again`: what the poll before shipped, once more
  install step    `@@sslbench-installed` before the package manager's versions of what was installed
  run.sh launch   `@@sslbench-state started`; told to wait, then a poll's output
  conditions.sh   `@@ begin sslbench-KIND N LABEL` … `@@ end sslbench-KIND` around each snapshot, idle gate and
                  cell's evidence; inside a snapshot, `@@ SECTION [NAME]` before each part (SUBSECTION) and
                  `note: ...` for what the host lacks (orchestrator/evidence/conditions.py reads the parts)
Two dialects stay: every stored run's raw logs (conditions evidence in each cell log) must parse again.

A login shell may print text before the command's output (a `.bashrc` setting the terminal title, a board
banner), without a newline: `own_lines` puts every marker back at the start of a line of its own.
Pure: text in, plain data out.
"""
from __future__ import annotations

import re

MARK = "@@sslbench"
SECTION = "@@sslbench:"
PROGRESS = "@@sslbench-progress"
LOG = "@@sslbench-log "
ENDLOG = "@@sslbench-endlog "
RUNNER_OUTPUT = "@@sslbench-runner-output"
STATE = "@@sslbench-state "
INSTALLED = "@@sslbench-installed"  # the install step: what the package manager says is installed, after it

# conditions.sh's blocks and the sub-sections inside them
BLOCK_BEGIN = "@@ begin sslbench-"
BLOCK_END = "@@ end sslbench-"
SUBSECTION = "@@ "
NOTE = "note: "
_BEGIN = re.compile("^" + BLOCK_BEGIN + r"(\w+) (\d+)(?: (.*))?$")
_END = re.compile("^" + BLOCK_END + r"(\w+)$")

_GLUED_MARK = re.compile(r"(?<=[^\n])(?=" + MARK + "|@@ (?:begin|end) sslbench-)")


def own_lines(text: str) -> str:
    """Line ends made `\\n`, and every marker at the start of a line, whatever came before it."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _GLUED_MARK.sub("\n", text) if MARK in text or "sslbench-" in text else text


def split_sections(text: str) -> dict[str, str]:
    """detect.sh's output: the text after each `@@sslbench:<name>` line, keyed by the name."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in own_lines(text).split("\n"):
        if line.startswith(SECTION):
            current = sections.setdefault(line[len(SECTION):].strip(), [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip("\n") + ("\n" if any(lines) else "") for name, lines in sections.items()}


def split_logs(stdout: str) -> list[tuple[str, str]]:
    """(cell id, log text) for every `@@sslbench-log ID` … `@@sslbench-endlog ID` block a poll printed."""
    logs = []
    current: str | None = None
    lines: list[str] = []
    for line in own_lines(stdout).split("\n"):
        if line.startswith(LOG):
            current, lines = line[len(LOG):].strip(), []
        elif current is not None and line.strip() == f"{ENDLOG}{current}":
            logs.append((current, "\n".join(lines)))  # the file as it is: ship_logs' `echo ""` was the last \n
            current = None
        elif current is not None:
            lines.append(line)
    return logs


def progress_part(stdout: str) -> str:
    """The progress lines a poll printed (between `@@sslbench-progress` and the next marker)."""
    text = own_lines(stdout)
    if PROGRESS not in text:
        return ""
    body = text.split(PROGRESS, 1)[1]
    return re.split("^" + MARK, body, maxsplit=1, flags=re.MULTILINE)[0]


def exit_codes(progress_text: str) -> dict[str, int]:
    """Cell id -> openssl's exit code, from the runner's `done K TOTAL ID RC` progress lines."""
    codes = {}
    for line in progress_text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0] == "done":
            codes[parts[3]] = int(parts[4]) if parts[4].lstrip("-").isdigit() else 1
    return codes


def installed_part(stdout: str) -> str:
    """What the install step printed after `@@sslbench-installed` (the package manager's list of versions)."""
    text = own_lines(stdout)
    return text.split(INSTALLED, 1)[1] if INSTALLED in text else ""


def state(stdout: str) -> str | None:
    """The runner's state a poll or launch printed last: started, running, pending, finished, stopped, died, gone,
    stranded."""
    found = re.findall("^" + STATE + r"(\w+)", own_lines(stdout), flags=re.MULTILINE)
    return found[-1] if found else None


def runner_output(stdout: str) -> str:
    """What a dead runner printed last (its shell's error, say), as a poll shipped it."""
    text = own_lines(stdout)
    if RUNNER_OUTPUT not in text:
        return ""
    body = text.split(RUNNER_OUTPUT, 1)[1]
    return re.split("^" + MARK, body, maxsplit=1, flags=re.MULTILINE)[0].strip()


def without_markers(text: str) -> list[str]:
    """The lines of an output that are not markers (what the host said around them), stripped, non-empty."""
    return [line.strip() for line in own_lines(text).split("\n") if line.strip() and not line.startswith(MARK)]


def blocks(text: str) -> list[tuple[str, str, list[str]]]:
    """(kind, label, lines) for every `@@ begin sslbench-KIND` … `@@ end` block in `text`, in order.

    A block cut short (the connection dropped, the output was truncated) is still returned with what it had,
    so a partial snapshot beats none.
    """
    found: list[tuple[str, str, list[str]]] = []
    current: tuple[str, str, list[str]] | None = None
    for line in own_lines(text).split("\n"):
        begin = _BEGIN.match(line)
        if begin:
            if current:
                found.append(current)
            current = (begin.group(1), (begin.group(3) or "").strip(), [])
            continue
        if current and _END.match(line):
            found.append(current)
            current = None
            continue
        if current:
            current[2].append(line)
    if current:
        found.append(current)
    return found


def subsection(line: str) -> tuple[str, str] | None:
    """(section, name) of a `@@ SECTION [NAME]` line, else None."""
    if not line.startswith(SUBSECTION) or line.startswith((BLOCK_BEGIN, BLOCK_END)):
        return None
    parts = line[len(SUBSECTION):].split(None, 1)
    return (parts[0] if parts else "", parts[1].strip() if len(parts) > 1 else "")


def split_evidence(text: str) -> tuple[str, str]:
    """A cell log with the wrapper's evidence appended -> (what openssl printed, the evidence)."""
    at = text.find(BLOCK_BEGIN)
    while at > 0 and text[at - 1] != "\n":  # only at the start of a line
        at = text.find(BLOCK_BEGIN, at + 1)
    if at < 0:
        return text, ""
    return text[:at], text[at:]
