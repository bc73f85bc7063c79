"""The shape of the package (docs/ARCHITECTURE.md): data flows one way, so no module imports another that imports it
back and every import points down the wings (base, parse, evidence, analysis, run, render, commands); every project
import is at the top of its module; commands are thin shells that import no other command; argparse stays in the
commands; no module runs over 500 lines nor function over 60; few untyped dicts; and the package, which ships
py.typed, type-checks with mypy --strict."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "orchestrator"
COMMAND_MAX_LINES = 200  # "each under ~200 lines": argparse, calls, printing


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imported_modules(path: Path, node: ast.AST) -> set[str]:
    """The project modules one import statement names (`from orchestrator import x` names orchestrator.x if that is
    a module, else orchestrator)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    if isinstance(node, ast.Import):
        found = {alias.name for alias in node.names}
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parent = package.split(".")[:len(package.split(".")) - (node.level - 1)]
            base = ".".join(parent + ([node.module] if node.module else []))
        found = {f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names}
    return {m for m in found if m in MODULES}


def module_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports are for the type checker only
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= imported_modules(path, node)
    return found


def test_no_project_import_inside_a_function():
    inside = []
    for name, path in MODULES.items():
        for func in ast.walk(ast.parse(path.read_text())):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside += [f"{name}.{func.name}: {sorted(imported_modules(path, n))}" for n in ast.walk(func)
                           if isinstance(n, (ast.Import, ast.ImportFrom)) and imported_modules(path, n)]
    assert inside == []


def test_no_import_cycle():
    graph = {name: module_level_imports(path) - {name} for name, path in MODULES.items()}
    # a package's __init__ importing its own submodules is how it re-exports them, not a cycle of ideas
    for name in graph:
        graph[name] = {m for m in graph[name] if not m.startswith(name + ".")}
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


# The wings, bottom up (docs/ARCHITECTURE.md "Wings"): the wings a module of each may import besides its own. The base
# is orchestrator's own modules (model, errors, units, store ...); `cli` is the entry point that loads the commands.
WINGS_BELOW = {
    "base": set(),
    "parse": {"base"},
    "evidence": {"base", "parse"},
    "analysis": {"base", "parse", "evidence"},
    "reference": {"base", "parse", "evidence", "analysis"},
    "run": {"base", "parse", "evidence"},
    "render": {"base", "parse", "evidence", "analysis", "reference"},
    "commands": {"base", "parse", "evidence", "analysis", "reference", "run", "render"},
    "cli": {"base", "commands"},
}


def wing_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in WINGS_BELOW:
        return parts[1]
    return "cli" if module in ("orchestrator.cli", "orchestrator.__main__") else "base"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import of `graph` (module -> the modules it imports) that does not point down the wings."""
    return [f"{name} ({wing_of(name)}) imports {other} ({wing_of(other)})"
            for name, imports in sorted(graph.items()) for other in sorted(imports)
            if wing_of(other) != wing_of(name) and wing_of(other) not in WINGS_BELOW[wing_of(name)]]


def test_imports_point_down_the_wings():
    graph = {name: module_level_imports(path) - {name} for name, path in MODULES.items()}
    assert upward_imports(graph) == []


def test_the_wing_check_sees_an_import_that_climbs():
    assert {wing_of(m) for m in MODULES} == set(WINGS_BELOW)  # every wing has modules, and no module is lost
    graph = {"orchestrator.evidence.validity": {"orchestrator.run.matrix", "orchestrator.parse.protocol"},
             "orchestrator.logfiles": {"orchestrator.render.tables"},
             "orchestrator.render.tables": {"orchestrator.analysis.cells"}}
    assert upward_imports(graph) == [
        "orchestrator.evidence.validity (evidence) imports orchestrator.run.matrix (run)",
        "orchestrator.logfiles (base) imports orchestrator.render.tables (render)"]


def test_no_argparse_below_the_commands():
    """Options are read in commands/ (and cli.py); what lies below gets typed values, never an argparse namespace."""
    found = [name for name, path in MODULES.items() if wing_of(name) not in ("commands", "cli")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, (ast.Import, ast.ImportFrom))
             and "argparse" in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module])]
    assert found == []


def test_commands_are_thin_and_import_no_other_command():
    for path in (PACKAGE / "commands").glob("*.py"):
        lines = len(path.read_text().splitlines())
        assert lines <= COMMAND_MAX_LINES, f"{path.name}: {lines} lines; move the logic out of the command"
        others = {m for m in module_level_imports(path) if m.startswith("orchestrator.commands.")}
        # options.py is no command: the options several commands share
        assert others - {"orchestrator.commands", "orchestrator.commands.options"} == set(), path.name


def test_the_structure_checks_see_the_imports(tmp_path):
    """The checks above read real imports: the engine is imported by the run command, the parser by parse."""
    assert "orchestrator.run.fleet" in module_level_imports(MODULES["orchestrator.commands.run"])
    assert "orchestrator.parse.speed.numbers" in module_level_imports(MODULES["orchestrator.parse.speed.resolve"]) \
        or "orchestrator.parse.speed" in module_level_imports(MODULES["orchestrator.parse.speed.resolve"])


def test_mypy_strict_passes():
    mypy = Path(sys.executable).with_name("mypy")
    result = subprocess.run([str(mypy), "--strict", "--no-error-summary", "orchestrator"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


# The output formats (render/formats.py) and the dashboards' names: a branch on one of them is a format's layout,
# which lives in render/.
FORMAT_NAMES = frozenset(("table", "markdown", "csv", "json", "junit", "html", "openmetrics", "influx"))


def format_branches(name: str, source: str) -> list[str]:
    """Each comparison (==, !=, in, not in) of a value against an output format's name in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare) or not all(
                isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            continue
        for operand in (node.left, *node.comparators):
            values = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            if any(isinstance(v, ast.Constant) and v.value in FORMAT_NAMES for v in values):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
                break
    return found


def test_no_module_outside_render_branches_on_an_output_format():
    """A format is one module of render/ and one entry of render/formats.py: commands pass its name on, and ask a
    Format what it is for, never which one it is."""
    found = [branch for name, path in MODULES.items() if wing_of(name) != "render"
             for branch in format_branches(name, path.read_text())]
    assert found == []


def test_the_format_check_sees_a_planted_branch():
    planted = ('def main(args, fmt):\n    if args.format in ("table", "markdown"):\n        pass\n'
               '    if fmt == "json":\n        pass\n    return "csv" != fmt\n')
    assert format_branches("planted", planted) == [
        'planted:2: args.format in (\'table\', \'markdown\')', "planted:4: fmt == 'json'", "planted:6: 'csv' != fmt"]
    assert format_branches("fine", 'if kind == "cell":\n    pass\nformats.get(name).reading\n') == []


MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500
# `dict[str, Any]` says "some JSON, look inside": data crossing a boundary is typed instead (a dataclass, an enum,
# or `dict[str, object]` where the value really is open JSON, which makes the reader check what it takes).
MAX_UNTYPED_DICTS = 30


def oversized(name: str, text: str) -> list[str]:
    """The module (over MAX_MODULE_LINES) and functions (over MAX_FUNCTION_LINES) of one source that are too long."""
    found = [f"{name}: {len(text.splitlines())} lines"] if len(text.splitlines()) > MAX_MODULE_LINES else []
    return found + [f"{name}.{node.name}: {node.end_lineno - node.lineno + 1} lines"
                    for node in ast.walk(ast.parse(text)) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def test_modules_and_functions_are_small():
    """A module too long to read in one sitting is two modules; a function that is a screen and more is two."""
    assert [entry for name, path in MODULES.items() for entry in oversized(name, path.read_text())] == []


def test_the_size_check_sees_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert oversized("planted", f"def long():\n{body}") == [f"planted.long: {MAX_FUNCTION_LINES + 1} lines"]
    assert oversized("fine", "def short():\n    return 1\n") == []


def test_few_untyped_dicts_cross_the_package():
    count = sum(path.read_text().count("dict[str, Any]") for path in MODULES.values())
    assert count < MAX_UNTYPED_DICTS, f"{count} times dict[str, Any]: type the data instead"


def test_the_grouping_and_the_tables_judge_nothing_themselves():
    """cells groups figures with the busy rule it is handed (validity.busy_below), and tables lay out what analysis
    gives them: neither reaches for the judge or the answers itself."""
    assert not {m for m in module_level_imports(MODULES["orchestrator.analysis.cells"])
                if m.startswith("orchestrator.evidence")}
    assert "orchestrator.analysis.insights" not in module_level_imports(MODULES["orchestrator.render.tables"])
