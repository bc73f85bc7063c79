"""The playbooks pass ansible-lint and ansible-playbook --syntax-check, and use only raw/ansible.builtin."""
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = sorted((ROOT / "playbooks").glob("*.yml"))
BIN = Path(sys.executable).parent


def tasks_of(playbook):
    for play in yaml.safe_load(playbook.read_text()):
        for task in play.get("tasks", []):
            yield from task.get("block", [task]) + task.get("always", [])


def test_ansible_lint_passes():
    result = subprocess.run([str(BIN / "ansible-lint"), "--offline", "--nocolor", "playbooks/"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_syntax_check():
    for playbook in PLAYBOOKS:
        result = subprocess.run([str(BIN / "ansible-playbook"), "--syntax-check", "-i", "localhost,", str(playbook)],
                                cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr


def test_only_builtin_modules_and_no_fact_gathering():
    assert PLAYBOOKS
    for playbook in PLAYBOOKS:
        for play in yaml.safe_load(playbook.read_text()):
            assert play["gather_facts"] is False
        for task in tasks_of(playbook):
            modules = [k for k in task if k.startswith("ansible.") or k == "sslbench_step"]
            assert modules, task["name"]
            # raw and our sslbench_step (playbooks/action_plugins: sh reading each script on stdin) need no Python
            assert all(m in ("ansible.builtin.raw", "sslbench_step") for m in modules), modules


def test_inventory_values_reach_the_shell_only_through_quote():
    # Every Jinja expression inside a raw command is a path built from controller-checked values and
    # passes through `quote`, or is the cells list / lookup of our own script (heredoc with a quoted marker),
    # or the install command of orchestrator/run/platforms.py's table, which the controller passes whole.
    for playbook in PLAYBOOKS:
        for task in tasks_of(playbook):
            command = task.get("ansible.builtin.raw")
            if not command:
                continue
            for expr in command.split("{{")[1:]:
                expr = expr.split("}}")[0].strip()
                assert ("| quote" in expr or expr.startswith("lookup(") or expr in ("item", "item.1", "sslbench_install_command")), expr
