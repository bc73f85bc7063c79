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
import itertools
import os
import re
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
# The cleanup play removes a stopped run's work dir after shipping its logs only while the results have this much
# room: should writing them fail, what the host shipped must still be on it
ROOM_TO_FORGET = 64 * 1024 * 1024
# The lease each launch, poll and forget renews (playbooks/files/sslbench-run.sh: the runner stops once it lapses).
# While the step's `sh -s` session lives (sslbench_step keeps one open for all of a host's steps where it can) the
# lease holds; once that session is gone, LEASE_GRACE seconds are left: the controller died, or it is done with the
# host. Without a session (single execs, polls from a later pass), each step grants TTL: at most two poll intervals,
# the retries of an SSH failure, and LEASE_MARGIN for a pass of Ansible to reach the host among many.
LEASE_GRACE = 30
LEASE_MARGIN = 120
_lease_serial = itertools.count(1)


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
    # after detect: the logs a run whose controller died left on the host (orchestrator/run/stranded.py)
    COLLECT = "Collect the logs a stopped run left on the host"
    COLLECT_FORGET = "Remove the work dir a stopped run left, its logs saved"

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


def lease(every: float, retries: float, *, held: bool) -> str:
    """SSLBENCH_LEASE for one step: a serial of its own (the runner sees a renewal by the change), the TTL for a
    host polled every `every` seconds whose SSH failures are retried over `retries`, and the grace once its session
    is gone: LEASE_GRACE where the controller `held` the session for the host's next steps, else the whole TTL (its
    task ends after this step, closing the session, and a later pass or exec asks next)."""
    ttl = int(2 * every + retries + LEASE_MARGIN)
    return f"{next(_lease_serial)} {ttl} {LEASE_GRACE if held else ttl}"


def unheld(script: str) -> str:
    """A step's script whose lease gives the whole TTL as grace: its session will not be held for the next step."""
    return re.sub(r"SSLBENCH_LEASE='(\d+) (\d+) \d+'", r"SSLBENCH_LEASE='\1 \2 \2'", script)


def launcher_script(run_id: str, plan: HostPlan, openssl: str, idle_max: int, wait: int = 0,
                    lease_words: str = "") -> str:
    """The one script a host gets: it writes the work dir (the runner, the conditions script, its cells) and
    starts the runner detached; with `wait`, it stays until the runner ends (at most that many seconds) and
    prints what a poll prints. Asked again after a lost answer, it finds its runner and says it started."""
    parts = [
        "#!/bin/sh",
        f"# sslbench launcher, run {run_id}: the work dir and the runner (orchestrator/run/stages.py writes this)",
        "umask 077",
        f"dir={shlex.quote(work_dir(run_id, plan.host))}",
        *([f"SSLBENCH_LEASE={shlex.quote(lease_words)}"] if lease_words else []),
        # launched before, its answer lost: its runner's lease renewed (the session it named may be the lost one)
        'if [ -s "$dir/pid" ]; then SSLBENCH_LEASE=$SSLBENCH_LEASE sh "$dir/run.sh" renew;'
        ' echo "@@sslbench-state started"; exit 0; fi',
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


def runner_command(run_id: str, host: str, command: str, lease_words: str = "") -> str:
    """A command of the host's runner (run.sh in its work dir), renewing its lease when given."""
    renew = f"SSLBENCH_LEASE={shlex.quote(lease_words)} " if lease_words else ""
    return f"{renew}sh {shlex.quote(work_dir(run_id, host))}/run.sh {command}\n"


def poll_step(run_id: str, host: str, due: float, *, again: bool = False, lease_words: str = "") -> Step:
    """A poll, renewing the runner's lease. It never removes the work dir: the controller may die between its answer
    and saving the logs in it (a `forget` follows once they are saved). `again`: the last poll's answer was lost, so
    what earlier polls shipped comes again. A work dir already gone says so instead of failing the shell."""
    work = shlex.quote(work_dir(run_id, host))
    words = "poll" + (" again" if again else "")
    gone = f'[ -d {work} ] || {{ echo; echo "{protocol.STATE}gone"; exit 0; }}\n'
    script = gone + runner_command(run_id, host, words, lease_words)
    return Step(Stage.POLL, script, due)


def results_have_room(run_dir: Path) -> bool:
    """Room to write the results, and the right to (a filesystem remounted read-only has room but takes nothing)."""
    try:
        return shutil.disk_usage(run_dir).free >= ROOM_TO_FORGET and os.access(run_dir, os.W_OK)
    except OSError:
        return False
