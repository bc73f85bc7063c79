"""A plain `pip install .` must carry the playbooks and the default inventory: `sslbench run`
without -i uses them, and users rarely install from a checkout in editable mode."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_carries_every_playbook_script_and_inventory_file(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                           check=True, capture_output=True, text=True)
    assert "is absent from the `packages` configuration" not in built.stdout + built.stderr  # a future setuptools drops them
    (wheel,) = tmp_path.glob("sslbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"orchestrator/{p.relative_to(ROOT)}" for top in ("playbooks", "inventory")
               for p in (ROOT / top).rglob("*") if p.is_file()}
    shipped |= {f"orchestrator/reference/known/{p.name}" for p in (ROOT / "orchestrator/reference/known").iterdir()}
    assert shipped, "nothing found under playbooks/ and inventory/"
    assert shipped <= names, f"missing from the wheel: {sorted(shipped - names)}"
    assert "orchestrator/parse/speed/__init__.py" in names and "orchestrator/commands/run.py" in names


def test_runner_finds_the_playbooks_and_the_default_inventory():
    from orchestrator import runner
    assert (runner.PLAYBOOK_DIR / runner.MAIN_PLAYBOOK).is_file()
    assert (runner.PLAYBOOK_DIR / "files" / "sslbench-run.sh").is_file()
    assert runner.default_inventory().is_file()


def test_runtime_dependencies_are_what_the_code_imports():
    """Every runtime dependency has a job in orchestrator/, and orchestrator/ imports nothing undeclared
    (test-only packages go to the `test` extra; mypyc, for the optional compiled parser, to `native`)."""
    import ast
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # the `plots` extra is runtime too: orchestrator/extras.py asks for it before report.py and site.py import it
    declared = {re.match(r"[A-Za-z0-9_.-]+", spec).group().lower()
                for spec in project["dependencies"] + project["optional-dependencies"]["plots"]}
    # distribution -> the module orchestrator imports; ansible-core has none: ansible-runner runs its ansible-playbook
    module_of = {"ansible-core": None, "ansible-runner": "ansible_runner"}
    wanted = {module_of.get(name, name) for name in declared} - {None}
    imported = set()
    for path in (ROOT / "orchestrator").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"orchestrator", "mypyc"}
    assert third_party == wanted


def test_matplotlib_is_only_imported_where_extras_said_it_is_there():
    """Without the `plots` extra every command works: matplotlib is imported inside the functions that draw, never at
    a module's top, and only report.py and site.py draw."""
    import ast

    for path in (ROOT / "orchestrator").rglob("*.py"):
        tree = ast.parse(path.read_text())
        top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        names = {alias.name.split(".")[0] for node in top for alias in node.names if isinstance(node, ast.Import)}
        names |= {node.module.split(".")[0] for node in top if isinstance(node, ast.ImportFrom) and node.module}
        assert "matplotlib" not in names, path
        if "matplotlib" in path.read_text() and path.name not in ("report.py", "site.py", "extras.py"):
            assert "import matplotlib" not in path.read_text(), path
