"""A plain `pip install .` must carry the playbooks and the default inventory: `sslbench run`
without -i uses them, and users rarely install from a checkout in editable mode."""
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# Files a checkout gathers that are nobody's source: what Python, editors and test runs leave behind.
LEFTOVER = re.compile(r"(^|/)(__pycache__|\.pytest_cache|\.mypy_cache)/|\.py[co]$|~$|\.sw[po]$|\.orig$|\.rej$|(^|/)#[^/]*#$")


def tracked_shipped_files(root: Path) -> set[str]:
    """What the wheel must carry of the playbooks, the inventory and the known boards, as the wheel names
    them: the files git tracks (a checkout's caches and leftovers are not the project's), else every file
    that is no leftover (an unpacked sdist has no git)."""
    tops = ("playbooks", "inventory", "orchestrator/reference/known")
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "--", *tops], capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout.strip():
        paths = listed.stdout.splitlines()
    else:
        paths = [str(p.relative_to(root)) for top in tops for p in (root / top).rglob("*") if p.is_file()]
    paths = [p for p in paths if not LEFTOVER.search(p)]
    return {p if p.startswith("orchestrator/") else f"orchestrator/{p}" for p in paths}


def build_wheel(source: Path, into: Path) -> set[str]:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(into), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "is absent from the `packages` configuration" not in built.stdout + built.stderr  # a future setuptools drops them
    (wheel,) = into.glob("sslbench-*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


def package_files(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith("orchestrator/")}


@pytest.mark.slow
def test_wheel_carries_every_playbook_script_and_inventory_file_and_nothing_left_over(tmp_path):
    names = build_wheel(ROOT, tmp_path)
    shipped = tracked_shipped_files(ROOT)
    assert shipped, "nothing found under playbooks/ and inventory/"
    assert shipped <= names, f"missing from the wheel: {sorted(shipped - names)}"
    assert "orchestrator/parse/speed/__init__.py" in names and "orchestrator/commands/run.py" in names
    assert not [n for n in names if LEFTOVER.search(n)], "caches or editor leftovers in the wheel"
    tracked = set(subprocess.run(["git", "-C", str(ROOT), "ls-files", "orchestrator"], capture_output=True,
                                 text=True).stdout.splitlines())
    if tracked:  # a git checkout: the package ships nothing the project does not have
        strays = package_files(names) - tracked - shipped
        assert not strays, f"in the wheel but not in the project: {sorted(strays)}"


@pytest.mark.slow
def test_a_checkout_full_of_leftovers_builds_the_same_wheel(tmp_path):
    """What an ordinary machine writes into a checkout (bytecode caches from ansible-playbook and pytest,
    editor backups, the build/ a previous `pip install .` left, with a module deleted since) never ships."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True).stdout.splitlines()
    if not files:
        pytest.skip("not a git checkout: the tracked files are unknown")
    clean, dirty = tmp_path / "clean", tmp_path / "dirty"
    for tree in (clean, dirty):
        for name in files:
            if (ROOT / name).is_file():
                (tree / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, tree / name)
    for leftover in ("playbooks/action_plugins/__pycache__/sslbench_step.cpython-311.pyc",
                     "orchestrator/__pycache__/cli.cpython-311.pyc", "playbooks/files/run.sh~",
                     "playbooks/.sslbench.yml.swp", "inventory/localhost.yml.orig",
                     "build/lib/orchestrator/deleted_since.py"):
        (dirty / leftover).parent.mkdir(parents=True, exist_ok=True)
        (dirty / leftover).write_bytes(b"x = 1\n")
    clean_names = package_files(build_wheel(clean, tmp_path / "w1"))
    dirty_names = package_files(build_wheel(dirty, tmp_path / "w2"))
    assert dirty_names == clean_names, f"left over in the wheel: {sorted(dirty_names - clean_names)}"


def test_runner_finds_the_playbooks_and_the_default_inventory():
    from orchestrator.run import inventory, runner
    assert (runner.PLAYBOOK_DIR / runner.MAIN_PLAYBOOK).is_file()
    assert (runner.PLAYBOOK_DIR / "files" / "sslbench-run.sh").is_file()
    assert inventory.default_inventory().is_file()


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
    # distribution -> the module orchestrator imports; ansible-core's: its config lookup (inventory.ansible_setting)
    module_of = {"ansible-core": "ansible", "ansible-runner": "ansible_runner"}
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
    a module's top, and only report.py and site_plots.py draw."""
    import ast

    for path in (ROOT / "orchestrator").rglob("*.py"):
        tree = ast.parse(path.read_text())
        top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        names = {alias.name.split(".")[0] for node in top for alias in node.names if isinstance(node, ast.Import)}
        names |= {node.module.split(".")[0] for node in top if isinstance(node, ast.ImportFrom) and node.module}
        assert "matplotlib" not in names, path
        if "matplotlib" in path.read_text() and path.name not in ("report.py", "site_plots.py", "extras.py"):
            assert "import matplotlib" not in path.read_text(), path
