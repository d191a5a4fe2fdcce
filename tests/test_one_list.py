"""One list of everything: kinds, topics, tasks and formats are discovered or kept in one table.

A new kind, task or report format must show up everywhere without a second list to update; these tests
fail when a second list creeps back or when something is left out of the curriculum by accident.
"""

from __future__ import annotations

import ast
from pathlib import Path

from problemgen.classes.rows import GRADED, ClassRow
from problemgen.classes.runner import run_class
from problemgen.code import tasks as task_package
from problemgen.model import registry
from problemgen.practice.rules import load_curriculum
from problemgen.problems import index
from problemgen.sheets import reports
from problemgen.sheets.reports import CheckResult, Report, ReportFormat

ROOT = Path(__file__).resolve().parents[1]

OUTSIDE_CURRICULUM: dict[str, str] = {}
"""Kinds deliberately left out of question_banks/curriculum.toml, each with the reason."""


def test_every_kind_is_in_the_curriculum_or_deliberately_outside_it():
    in_units = {kind for unit in load_curriculum().units for kind in unit.kinds}
    kinds = {spec.name for spec in registry.all_kinds()}
    forgotten = sorted(kinds - in_units - set(OUTSIDE_CURRICULUM))
    assert not forgotten, f"kinds in no curriculum unit (add them, or to OUTSIDE_CURRICULUM with a reason): {forgotten}"
    assert not set(OUTSIDE_CURRICULUM) & in_units, "a kind listed as outside the curriculum is in it"
    assert set(OUTSIDE_CURRICULUM) <= kinds, "OUTSIDE_CURRICULUM names a kind that does not exist"


def test_topics_are_the_generator_modules():
    modules = sorted(p.stem for p in (ROOT / "problemgen" / "problems").glob("*.py")
                     if not p.name.startswith("_") and p.name != "index.py")  # fmt: skip
    assert registry.topic_modules() == index.topic_modules() == modules
    assert {spec.topic for spec in registry.all_kinds()} == set(modules)


def test_a_new_report_format_reaches_class_outputs(tmp_path, monkeypatch):
    """The crash this guards against: a format added to one table, missing from a second one."""
    monkeypatch.setitem(reports.REPORT_FORMATS, "csv", ReportFormat(lambda report: "score\n1\n", "csv"))
    monkeypatch.setattr(reports, "FORMATS", tuple(reports.REPORT_FORMATS))
    report = Report("t", (CheckResult("c1", "correct", True, 1.0, 1.0),))
    assert reports.render(report, "csv") == "score\n1\n"
    run_class([ClassRow("amy", GRADED, report)], tmp_path, "csv", "t")
    assert (tmp_path / "reports" / "amy.csv").read_text(encoding="utf-8") == "score\n1\n"


def test_no_module_keeps_a_second_table_of_report_formats():
    """A dict or tuple literal naming both junit and gradescope outside reports.py is a second table."""
    owners = []
    for path in sorted((ROOT / "problemgen").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Dict, ast.Tuple, ast.List, ast.Set)):
                items = node.keys if isinstance(node, ast.Dict) else node.elts
                words = {n.value for n in items if isinstance(n, ast.Constant)}
                if {"junit", "gradescope"} <= words:
                    owners.append(str(path.relative_to(ROOT)))
    assert owners == ["problemgen/sheets/reports.py"], owners


def test_coding_tasks_are_discovered_from_their_modules():
    found = [task.name for task in task_package.all_tasks().values()]
    for path in sorted((ROOT / "problemgen" / "code" / "tasks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        made = {t.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and getattr(n.value.func, "id", "") == "Task" for t in n.targets}  # fmt: skip
        listed = {t.id for n in tree.body if isinstance(n, ast.Assign)
                  and any(getattr(t, "id", "") == "TASKS" for t in n.targets) for t in n.value.elts}  # fmt: skip
        assert made == listed, f"{path.name}: tasks defined but not in TASKS: {sorted(made - listed)}"
    assert len(found) == len(set(found)) and found, found
