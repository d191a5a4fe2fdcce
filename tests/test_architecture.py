"""The dependency rules of the house plan, enforced by reading every module's imports.

Rule 1: `reference` imports only numpy, sympy and the standard library; rendering, grading, reports and
the sandbox never import `reference` (answers are already in the Problem); nothing imports the CLI.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STDLIB = set(sys.stdlib_module_names)


def python_files(*packages: str) -> list[Path]:
    return sorted(p for package in packages for p in (ROOT / package).rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    """Top-level dotted names imported anywhere in the file (including inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_reference_imports_only_numpy_sympy_and_stdlib():
    for path in python_files("reference"):
        for name in imported_modules(path):
            top = name.split(".")[0]
            assert top in STDLIB | {"numpy", "sympy", "reference", "__future__"}, f"{path}: imports {name}"


@pytest.mark.parametrize(
    "module",
    ["problemgen/documents", "problemgen/sheets", "problemgen/answers", "problemgen/classes",
     "problemgen/practice", "problemgen/code/sandbox", "problemgen/exports"],
)
def test_presentation_and_grading_never_import_reference(module):
    target = ROOT / module
    paths = sorted(target.rglob("*.py")) if target.is_dir() else [target]
    for path in [p for p in paths if p.exists()]:
        leaks = {n for n in imported_modules(path) if n.split(".")[0] == "reference"}
        assert not leaks, f"{path.relative_to(ROOT)} imports {sorted(leaks)}"


def test_nothing_outside_the_cli_imports_the_cli():
    cli_dir = ROOT / "problemgen" / "cli"
    for path in python_files("problemgen", "reference"):
        if path.is_relative_to(cli_dir) or path.name == "__main__.py":
            continue
        leaks = {n for n in imported_modules(path) if n == "problemgen.cli" or n.startswith("problemgen.cli.")}
        assert not leaks, f"{path.relative_to(ROOT)} imports the CLI"


def test_the_core_model_imports_no_numpy_at_module_level():
    """core, registry and the CLI entry must stay cheap to import (start-up target)."""
    for name in ("problemgen/model/core.py", "problemgen/model/registry.py", "problemgen/cli/__init__.py"):
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        top_level = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        modules = {a.name for n in top_level if isinstance(n, ast.Import) for a in n.names}
        modules |= {n.module for n in top_level if isinstance(n, ast.ImportFrom) and n.module}
        assert not modules & {"numpy", "sympy", "jinja2"}, f"{name} imports {modules & {'numpy', 'sympy', 'jinja2'}}"
