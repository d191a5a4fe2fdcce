"""One per-check vocabulary for answer sheets and code: every check is correct, wrong or invalid.

The code grader keeps its detailed statuses (``OK``, ``CRASH``, ``TIMEOUT``…) and answer parts theirs,
but reports, JUnit and the class item statistics read the shared outcome, so a crashed test and an
unreadable answer are counted alike.
"""

from __future__ import annotations

import json

import pytest

from problemgen.classes.statistics import ItemStatistics
from problemgen.sheets.reports import OUTCOMES, CheckResult, Report, outcome, render


@pytest.mark.parametrize("status,passed,expected", [
    ("correct", True, "correct"), ("wrong", False, "wrong"), ("invalid", False, "invalid"),  # answer parts
    ("OK", True, "correct"), ("WRONG", False, "wrong"), ("CRASH", False, "invalid"),  # code checks
    ("TIMEOUT", False, "invalid"), ("MEMORY", False, "invalid"), ("IMPORT_ERROR", False, "invalid"),
])
def test_sheet_and_code_statuses_map_to_one_outcome(status, passed, expected):
    assert outcome(status, passed) == expected and expected in OUTCOMES


def _report(*checks: tuple[str, str, bool]) -> Report:
    results = tuple(CheckResult(name, status, passed, 1.0 if passed else 0.0, 1.0, group="p1")
                    for name, status, passed in checks)
    return Report("r", results)


def test_reports_carry_the_outcome_beside_the_graders_status():
    report = _report(("a", "OK", True), ("b", "CRASH", False), ("c", "wrong", False))
    parts = json.loads(render(report, "json"))["problems"][0]["parts"]
    assert [(p["status"], p["outcome"]) for p in parts] == [("OK", "correct"), ("CRASH", "invalid"), ("wrong", "wrong")]
    markdown = render(report, "md")
    assert "| a | correct |" in markdown and "| b | invalid (CRASH) |" in markdown and "| c | wrong |" in markdown
    assert "  invalid (CRASH) b" in render(report, "text")


def test_item_statistics_count_crashed_code_and_unreadable_answers_alike_as_invalid():
    stats = ItemStatistics()
    stats.add("s1", _report(("t", "CRASH", False)), {})
    stats.add("s2", _report(("t", "invalid", False)), {})
    stats.add("s3", _report(("t", "OK", True)), {})
    stats.add("s4", _report(("t", "WRONG", False)), {})
    (item,) = stats.items()
    assert item["invalid_rate"] == 0.5
