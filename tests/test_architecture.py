"""The dependency rules of the house plan, enforced by reading every module's imports.

Every module belongs to one *room* (a package, or a leaf module such as ``problemgen.errors``), and
``MAY_IMPORT`` says which rooms each room may import — at module level or inside a function alike.
The table is the layering of DESIGN.md rule 1: ``reference`` knows nothing of problems; documents,
sheets, classes, practice, the sandbox and exports never import ``reference``; nothing imports the CLI;
the sandbox imports nothing of the project but itself and the error type. A room missing from the
table, a table entry that names no code, an import the table does not allow, or a cycle (between
rooms or between modules) fails here.

Function-level imports of project modules are allowed only at the CLI edge or with a comment on the
import line (or the line above) saying why: a lazy import hides a dependency from the reader.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STDLIB = set(sys.stdlib_module_names)
THIRD_PARTY = {"numpy", "sympy", "mpmath", "click", "jinja2", "flask", "pexpect", "nbformat", "orjson",
               "markupsafe", "werkzeug", "latex2mathml"}  # the last three come with jinja2 / the web extra

_BASE = {"problemgen.errors", "problemgen.resources", "problemgen.userfiles", "problemgen.secret_env",
         "problemgen.outputs", "problemgen.outputlock", "problemgen.safewrite", "problemgen.wording",
         "problemgen.processes"}
_CONTENT = _BASE | {"problemgen.model", "problemgen.answers", "problemgen.misconceptions"}
_GRADING = _CONTENT | {"problemgen.sheets", "problemgen.documents"}
_CODE = {"problemgen.code", "problemgen.code.tasks", "problemgen.code.sandbox"}

MAY_IMPORT: dict[str, set[str]] = {
    "reference": set(),
    "problemgen.errors": set(),
    "problemgen.resources": set(),
    "problemgen.userfiles": {"problemgen.errors"},
    "problemgen.secret_env": {"problemgen.errors"},
    "problemgen.outputs": {"problemgen.errors", "problemgen.safewrite"},
    "problemgen.outputlock": {"problemgen.errors"},
    "problemgen.safewrite": {"problemgen.errors"},
    "problemgen.wording": set(),
    "problemgen.processes": set(),
    "problemgen.model": {"problemgen.errors", "problemgen.misconceptions.entries", "problemgen.userfiles",
                         "problemgen.wording"},
    "problemgen.misconceptions.entries": set(),
    "problemgen.answers": {"problemgen.errors", "problemgen.model", "problemgen.userfiles", "problemgen.wording"},
    "problemgen.misconceptions": {
        "problemgen.errors", "problemgen.model", "problemgen.answers", "problemgen.misconceptions.entries", "reference",
    },
    "problemgen.problems": _CONTENT | {"reference"},
    "problemgen.sheets": _CONTENT,
    "problemgen.documents": _CONTENT | {"problemgen.sheets"},
    "problemgen.code.sandbox": {"problemgen.errors", "problemgen.userfiles"},
    "problemgen.code": _CONTENT | {"problemgen.sheets", "problemgen.code.sandbox"},
    "problemgen.code.tasks": _CONTENT | {"reference", "problemgen.code", "problemgen.code.sandbox"},
    "problemgen.classes": _GRADING | _CODE,
    "problemgen.practice": _GRADING | {"problemgen.problems"},
    "problemgen.exports": _GRADING | _CODE | {"problemgen", "problemgen.classes"},
    "problemgen.selfcheck": _GRADING | {"problemgen.problems"} | _CODE,
    "problemgen.variety": _GRADING,
    "problemgen": _GRADING | _CODE | {"problemgen.classes", "problemgen.problems", "problemgen.practice"},
    "problemgen.cli": _GRADING | _CODE | {
        "problemgen", "problemgen.classes", "problemgen.problems", "problemgen.practice", "problemgen.exports",
        "problemgen.selfcheck", "problemgen.variety",
    },
    "problemgen.__main__": {"problemgen.cli"},
}
"""Room -> the rooms it may import (itself always). ``problemgen`` is the public API in ``__init__``."""

CLI_EDGE = {"problemgen.cli", "problemgen.__main__"}


def python_files() -> list[Path]:
    return sorted([*(ROOT / "problemgen").rglob("*.py"), *(ROOT / "reference").rglob("*.py")])


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str) -> str | None:
    """The longest table entry that is the module or one of its packages."""
    candidates = [room for room in MAY_IMPORT if module == room or module.startswith(room + ".")]
    return max(candidates, key=len, default=None)


@cache
def imports_of(path: Path) -> tuple[tuple[str, int, bool], ...]:
    """(imported module, line, inside a function or class) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from pkg import mod` imports pkg.mod when it is a module: count both.
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [(name, node.lineno, id(node) not in top_level) for name in names]
    return tuple(found)


def project_imports(path: Path) -> list[tuple[str, int, bool]]:
    """Imports of project modules (those that exist as files), dropping `from x import name` non-modules."""
    known = set(MODULES)
    return [(name, line, nested) for name, line, nested in imports_of(path) if name in known]


MODULES = {module_name(path): path for path in python_files()}


def test_every_module_has_a_room_and_every_room_has_code():
    homeless = sorted(m for m in MODULES if room_of(m) is None)
    assert not homeless, f"modules outside the layering table: {homeless}"
    empty = sorted(room for room in MAY_IMPORT if not any(room_of(m) == room for m in MODULES))
    assert not empty, f"table entries with no code: {empty}"


def test_the_layering_table_has_no_cycles():
    graph = {room: allowed - {room} for room, allowed in MAY_IMPORT.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"the layering table allows a cycle: {exc.args[1]}")


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_each_room_imports_only_what_the_table_allows(room):
    allowed = MAY_IMPORT[room] | {room}
    leaks = []
    for module, path in sorted(MODULES.items()):
        if room_of(module) != room:
            continue
        for name, line, _ in project_imports(path):
            if room_of(name) not in allowed:
                leaks.append(f"{path.relative_to(ROOT)}:{line} imports {name} ({room_of(name)})")
    assert not leaks, "\n".join(leaks)


def test_reference_imports_only_numpy_sympy_and_stdlib():
    for module, path in MODULES.items():
        if room_of(module) != "reference":
            continue
        for name, line, _ in imports_of(path):
            top = name.split(".")[0]
            assert top in STDLIB | {"numpy", "sympy", "reference", "__future__"}, f"{path}:{line} imports {name}"


def test_third_party_imports_are_declared_or_standard():
    """A module may use the standard library, declared dependencies, or the project itself."""
    for path in MODULES.values():
        for name, line, _ in imports_of(path):
            top = name.split(".")[0]
            assert top in STDLIB | THIRD_PARTY | {"problemgen", "reference", "__future__", ""}, f"{path}:{line}: {name}"


def test_no_import_cycles_between_modules():
    """Counting function-level imports too: a lazy import does not make a cycle go away."""
    graph = {}
    for module, path in MODULES.items():
        targets = {name for name, _, _ in project_imports(path)} - {module}
        # a module imports its parent packages' __init__ on the way; that is not a dependency edge
        graph[module] = {t for t in targets if not module.startswith(t + ".")}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle between modules: {' -> '.join(exc.args[1])}")


def test_function_level_project_imports_say_why():
    unexplained = []
    for module, path in sorted(MODULES.items()):
        if room_of(module) in CLI_EDGE:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for line_no in sorted({line for _, line, nested in project_imports(path) if nested}):
            if not _explained(lines, line_no - 1):
                unexplained.append(f"{path.relative_to(ROOT)}:{line_no}: {lines[line_no - 1].strip()}")
    assert not unexplained, "function-level imports without a reason:\n" + "\n".join(unexplained)


def _explained(lines: list[str], index: int) -> bool:
    """A comment on the import line, or on the line above the block of imports it belongs to."""
    if "#" in lines[index]:
        return True
    while index > 0 and lines[index - 1].strip().startswith(("from ", "import ")):
        index -= 1
    return lines[index - 1].strip().startswith("#")


def test_the_cheap_entry_points_import_no_numpy_at_module_level():
    """core, registry, the CLI entry and the public API must stay cheap to import (start-up target)."""
    heavy = {"numpy", "sympy", "jinja2"}
    for name in ("problemgen/__init__.py", "problemgen/model/core.py", "problemgen/model/registry.py",
                 "problemgen/cli/__init__.py"):  # fmt: skip
        top_level = {n for n, _, nested in imports_of(ROOT / name) if not nested}
        assert not {n.split(".")[0] for n in top_level} & heavy, f"{name} imports {top_level & heavy}"
