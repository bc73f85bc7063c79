"""Running the same inputs as an Ansible user would, through ansible-playbook and through sslbench, from the
user's project directory (test_ansible_user.py: this machine; test_ansible_user_ssh.py: a rig host over SSH)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

BIN = Path(sys.executable).parent
VAULT_PASSWORD = "correct horse battery staple"
PLAYBOOK = textwrap.dedent("""\
    - hosts: all
      gather_facts: false
      tasks:
        - ansible.builtin.raw: echo {{ sslbench_check | default('') }} answered
""")
# the env a user's shell has: no ANSIBLE_* of this machine's leaks into a case
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None,
        timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env={**CLEAN_ENV, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


def ansible_playbook(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    (project / ".check.yml").write_text(PLAYBOOK)
    return run([str(BIN / "ansible-playbook"), "-v", *args, ".check.yml"], project, env)


def sslbench(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run([str(BIN / "sslbench"), *args], project, env)


def hosts(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return sslbench(project, "hosts", "--idle-wait", "0", "--format", "json", *args, env=env)


def same_outcome(project: Path, args: list[str], env: dict[str, str] | None = None, *,
                 expect_ok: bool = True) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """The inputs through ansible-playbook and through sslbench: both reach the host, or neither does."""
    theirs = ansible_playbook(project, *args, env=env)
    ours = hosts(project, *args, env=env)
    if expect_ok:
        assert theirs.returncode == 0, theirs.stdout + theirs.stderr
        assert "answered" in theirs.stdout
        assert ours.returncode == 0, ours.stdout + ours.stderr
        assert '"status": "ok"' in ours.stdout
    else:
        assert theirs.returncode != 0, theirs.stdout
        assert ours.returncode != 0, ours.stdout
    return theirs, ours


def gave_up(result: subprocess.CompletedProcess, words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr, result.stderr
    assert "unreachable" not in result.stdout + result.stderr and "site worker" not in result.stderr
    assert "Traceback" not in result.stderr
