"""A host's stages (PerfKitBenchmarker's prepare/run/cleanup, as sslbench runs them on a router) and the one script
each stage sends: detect, install OpenSSL, detect again, launch, poll, forget.

Each `Step` is one stage's script for one host, due at a moment; orchestrator/run/engine.py decides which comes
next from what the last one printed. The scripts are POSIX sh for BusyBox ash, written here on the controller and
run on the host's `sh -s` (playbooks/action_plugins/sslbench_step.py), so the hosts need no Python.
"""
from __future__ import annotations

import enum
import functools
import hashlib
import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from orchestrator import kinds
from orchestrator.model import TUNNEL
from orchestrator.parse import protocol
from orchestrator.run import platforms
from orchestrator.run.matrix import HostPlan, cells_text
from orchestrator.run.tunnels import tunnels_text
from orchestrator.run.runner import PLAYBOOK_DIR

# The playbook's one task, as Ansible's events name it
STEP_TASK = "Run the host's steps"
HEREDOC = "SSLBENCH_{}_EOF"
# A launch that waited for a short matrix, and a last poll, remove the work dir themselves, unless the results
# have less room than this: should writing them fail, what the host shipped must still be on it (the controller
# removes a work dir only after saving its logs)
ROOM_TO_FORGET = 64 * 1024 * 1024


class Stage(enum.Enum):
    """A host's stages in the order they come; each value is how failure reasons name it ("Poll the benchmark:
    ..."). Until the launch one failed step is the end of a host (after retries of a busy SSH server); from the
    launch on (`bench`) the engine decides: asked again, or unreachable after RETRY_WAITS."""

    DETECT = "Detect host facts"
    INSTALL = "Install openssl with the host's package manager"
    DETECT_AGAIN = "Detect host facts again after installing"
    LAUNCH = "Ship the runner and its cells, and start it"
    POLL = "Poll the benchmark"
    FORGET = "Remove the work dir of a finished benchmark"

    @property
    def bench(self) -> bool:
        """A stage of the benchmark itself: its runner may be on the host, so one failure is not the end."""
        return self in (Stage.LAUNCH, Stage.POLL, Stage.FORGET)


@dataclass
class Step:
    """What a host runs next, and from when (time.monotonic())."""

    stage: Stage
    script: str
    due: float = 0.0
    forgets: bool = False  # a poll that removes the work dir itself once the run finished and all is shipped

    @property
    def task(self) -> str:
        """The step as failure reasons and the progress view name it."""
        return self.stage.value


@functools.cache
def host_file(name: str) -> str:
    """One of playbooks/files/, read once per run however many hosts get it."""
    return (PLAYBOOK_DIR / "files" / name).read_text()


def detect_script() -> str:
    """detect.sh, told which release files and package managers to look for (orchestrator/run/platforms.py)."""
    managers = " ".join(pm.name for pm in platforms.PACKAGE_MANAGERS)
    return (f"SSLBENCH_RELEASE_FILES={shlex.quote(' '.join(platforms.RELEASE_FILES))}\n"
            f"SSLBENCH_PACKAGE_MANAGERS={shlex.quote(managers)}\n" + host_file("detect.sh"))


def work_dir(run_id: str, host: str) -> str:
    """A host's work dir for the run: the run id's [0-9A-Za-z-] and a hash of the inventory name, so that one box
    listed under two names (its LAN and WAN address, two aliases) runs two launchers that do not share a dir."""
    name = hashlib.sha1(host.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"/tmp/sslbench.{''.join(c for c in run_id if c.isalnum() or c == '-')}.{name}"


def work_dirs(run_id: str, hosts: list[str]) -> dict[str, dict[str, str]]:
    """The extra vars of the cleanup play: each host's work dir."""
    return {"sslbench_workdirs": {host: work_dir(run_id, host) for host in hosts}}


def launcher_script(run_id: str, plan: HostPlan, openssl: str, idle_max: int, wait: int = 0) -> str:
    """The one script a host gets: it writes the work dir (the runner, the conditions script, its cells) and
    starts the runner detached; with `wait`, it stays until the runner ends (at most that many seconds) and
    prints what a poll prints. Asked again after a lost answer, it finds its runner and says it started."""
    parts = [
        "#!/bin/sh",
        f"# sslbench launcher, run {run_id}: the work dir and the runner (orchestrator/run/stages.py writes this)",
        "umask 077",
        f"dir={shlex.quote(work_dir(run_id, plan.host))}",
        'if [ -s "$dir/pid" ]; then echo "@@sslbench-state started"; exit 0; fi  # launched before: answer lost',
        '[ ! -e "$dir" ] || rm -rf "$dir"',
        # a file cut short (/tmp full) must not run: say so, and leave no half work dir filling /tmp
        'cannot() { echo "sslbench: cannot write $1 in $dir (is /tmp full or read-only?)" >&2; cd /; rm -rf "$dir";'
        ' exit 1; }',
        'mkdir "$dir" "$dir/logs" "$dir/shipped" && cd "$dir" || cannot "the work dir"',
    ]
    files = [("run.sh", host_file("sslbench-run.sh")), ("conditions.sh", host_file("conditions.sh"))]
    if plan.tunnels:
        # the tunnel kind's host script (orchestrator/kinds/tunnel.py names it)
        files.append(("tunnel.sh", host_file(kinds.get(TUNNEL).script.removeprefix("files/"))))
    for name, text in files:
        marker = HEREDOC.format(name.split(".")[0].upper())
        parts += [f"cat > {name} <<'{marker}' || cannot {name}", text.rstrip("\n"), marker]
    # lines of checked tokens (no backslash, no leading dash): the shell's own echo, no cat
    cells = shlex.quote(cells_text(plan.cells).rstrip("\n"))
    parts.append(f"echo {cells} > cells.txt || cannot cells.txt")
    if plan.tunnels:
        parts.append(f"echo {shlex.quote(tunnels_text(plan.tunnels).rstrip(chr(10)))} > tunnels.txt || cannot tunnels.txt")
    # run.sh read by this shell, not a new one: a process fewer on the host
    parts.append(f"set -- launch {shlex.quote(openssl)} {int(idle_max)}" + (f" {int(wait)}" if wait else ""))
    parts.append(". ./run.sh")
    return "\n".join(parts) + "\n"


def runner_command(run_id: str, host: str, command: str) -> str:
    """A command of the host's runner (run.sh in its work dir)."""
    return f"sh {shlex.quote(work_dir(run_id, host))}/run.sh {command}\n"


def poll_step(run_id: str, host: str, due: float, *, forgets: bool, again: bool = False) -> Step:
    """A poll. With `forgets` (the results have room), the poll that finds the run finished and ships its last
    logs removes the work dir too: no forget step (an SSH exec) after it. `again`: the last poll's answer was lost,
    so what earlier polls shipped comes again. A work dir already gone says so instead of failing the shell."""
    work = shlex.quote(work_dir(run_id, host))
    words = "poll" + (" forget" if forgets else "") + (" again" if again else "")
    gone = f'[ -d {work} ] || {{ echo; echo "{protocol.STATE}gone"; exit 0; }}\n'
    script = gone + runner_command(run_id, host, words)
    return Step(Stage.POLL, script, due, forgets)


def results_have_room(run_dir: Path) -> bool:
    """Room to write the results, and the right to (a filesystem remounted read-only has room but takes nothing)."""
    try:
        return shutil.disk_usage(run_dir).free >= ROOM_TO_FORGET and os.access(run_dir, os.W_OK)
    except OSError:
        return False
