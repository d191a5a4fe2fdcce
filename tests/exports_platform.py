"""Shared by the export tests: a small class set, and running an export the way its platform does.

Not a test module (no ``test_`` prefix): helpers imported by ``test_exports_*.py`` (and the filled
starter notebook by ``test_notebooks.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "problemgen" / "code" / "tasks" / "solutions"
CLASS_SECRET = "an-export-test-class-secret-0123456789"
GRADER_SECRET = "an-export-test-grader-secret-0123456789"
ROSTER = "id,email,github,name\ns001,Ada@Uni.edu,ada-l,Ada\ns002,bob@uni.edu,bobby,Bob\ns003,cy@uni.edu,cy,Cy\n"
HOSTILE_SHEET = (b"\x00\xff\xfe" * 300 + b"\n[meta]\nvariant = '\x1b[31m'\n[p1]\nQ = \"__import__('os').system('id')\"\n"
                 + b"A" * 70_000)


def make_class(tmp: Path) -> tuple[Path, Path]:
    """(class directory, roster CSV) of a three-student class set of the attention_basics bank."""
    from problemgen.documents.worksheet import WorksheetJob, write_class_set

    roster = tmp / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    os.environ["PROBLEMGEN_TEST_CLASS_SECRET"] = CLASS_SECRET
    write_class_set(WorksheetJob("attention_basics", tmp / "class"), roster, "PROBLEMGEN_TEST_CLASS_SECRET")
    return tmp / "class", roster


def student_file(class_dir: Path, student: str, name: str) -> Path:
    """A file of one student's class-set directory, in whichever layout the class set has."""
    for candidate in (class_dir / "keys" / student / name, class_dir / "handouts" / student / name,
                      class_dir / student / name):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"{name} of {student} in {class_dir}")


def filled_starter_notebook(*tasks: str, legacy: bool = False) -> str:
    """The starter notebook of ``tasks`` with each reference solution in its starter cell, as a student saves it.

    ``legacy``: as the starter was written before its install cell carried a role (no metadata, the old
    first line), so notebooks handed out then are checked too.
    """
    import nbformat

    from problemgen.code.notebook import LEGACY_INSTALL_LINES
    from problemgen.code.tasks import get_task
    from problemgen.code.tasks.notebooks import INSTALL_CELL, build_notebook

    notebook = build_notebook(list(tasks))
    cells = {cell.source: cell for cell in notebook.cells}
    for task in tasks:
        cells[get_task(task).starter.rstrip()].source = (SOLUTIONS / f"{task}.py").read_text(encoding="utf-8")
    if legacy:
        cells[INSTALL_CELL].source = "\n".join(LEGACY_INSTALL_LINES)
        cells[INSTALL_CELL].metadata = {}
    return nbformat.writes(notebook)


def platform_env(**extra: str) -> dict[str, str]:
    """The environment of the platform's container: problemgen importable, nothing else of ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROBLEMGEN_")}
    env.update(PYTHONPATH=str(ROOT), PROBLEMGEN_PYTHON=sys.executable, **extra)
    return env


def run_script(script: Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(script)], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def cli(args: list[str]) -> int:
    """Run ``problemgen ARGS`` in this process; return its exit code."""
    import pytest

    from problemgen.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(args)
    return exit_info.value.code


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
