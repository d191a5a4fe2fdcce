"""Report formats checked against what their consumers accept: JUnit XML, Gradescope results.json, JSON.

The JUnit checks follow the common JUnit XSD conventions CI systems use (testsuites > testsuite >
testcase; ``tests``/``failures``/``errors`` counts; ``failure``/``error`` children with a ``message``);
the Gradescope checks follow the autograder specification of ``results.json`` (top-level ``score``,
``tests`` with ``score``, ``max_score``, ``name``, ``output``, ``visibility``, optional ``status``).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from problemgen.sheets.reports import (
    FORMATS,
    CheckResult,
    Report,
    render,
    render_gradescope,
)


def sample_report(**meta) -> Report:
    results = (
        CheckResult("p1.weights", "correct", True, 2.0, 2.0, group="p1"),
        CheckResult("p1.top", "wrong", False, 0.0, 1.0, mistake="no_scaling",
                    feedback="Attention computed without the 1/√d_k scaling? Divide.", group="p1"),
        CheckResult("p2.w1", "invalid", False, 0.0, 1.5, feedback="entry (1, 2) is 'x\x1b[31m' <b>&</b>", group="p2"),
        CheckResult("p2.half", "wrong", False, 0.75, 1.5, feedback="1 of 4 entries are not within ±0.005: (2, 1)",
                    group="p2"),
        CheckResult("p3.hidden", "correct", True, 1.0, 1.0, visible=False, group="p3"),
    )
    return Report("Fixture <sheet> & co", results, {"variant": "v/1", "student": "s1", "warnings": ["w1"], **meta})


# ------------------------------------------------------------------------------------------ model


def test_the_score_is_the_fraction_of_points():
    report = sample_report()
    assert report.points == pytest.approx(3.75) and report.max_points == pytest.approx(7.0)
    assert report.score == pytest.approx(3.75 / 7.0)
    assert Report("empty", ()).score == 0.0


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_deterministic_and_ends_with_a_newline(fmt):
    assert render(sample_report(), fmt) == render(sample_report(), fmt)
    assert render(sample_report(), fmt).endswith("\n")


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown report format"):
        render(sample_report(), "pdf")


# ------------------------------------------------------------------------------------------ JSON


def test_json_has_the_score_and_per_problem_parts():
    data = json.loads(render(sample_report(), "json"))
    assert data["score"] == pytest.approx(3.75 / 7, abs=1e-6)
    assert 0 <= data["score"] <= 1
    assert [p["id"] for p in data["problems"]] == ["p1", "p2", "p3"]
    for problem in data["problems"]:
        for part in problem["parts"]:
            assert part["status"] in ("correct", "wrong", "invalid")
            assert part["mistake"] is None or isinstance(part["mistake"], str)
            assert isinstance(part["feedback"], str)
            assert 0 <= part["score"] <= part["max_score"]
    top = data["problems"][0]["parts"][1]
    assert (top["name"], top["mistake"]) == ("p1.top", "no_scaling")


# ------------------------------------------------------------------------------------------ JUnit


def check_junit(xml_text: str) -> ET.Element:
    """Validate the structure the common JUnit XSD prescribes; return the root."""
    root = ET.fromstring(xml_text.encode("utf-8"))
    assert root.tag == "testsuites"
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for suite in root:
        assert suite.tag == "testsuite"
        for attribute in ("name", "tests", "failures", "errors"):
            assert attribute in suite.attrib, attribute
        children = [c.tag for c in suite]
        allowed_order = ["properties", "testcase", "system-out", "system-err"]
        assert children == sorted(children, key=allowed_order.index), "children out of XSD order"
        cases = suite.findall("testcase")
        failures = errors = 0
        for case in cases:
            assert case.get("name") and case.get("classname")
            kinds = [c.tag for c in case]
            assert set(kinds) <= {"failure", "error", "skipped", "system-out", "system-err"}
            for child in case:
                if child.tag in ("failure", "error"):
                    assert "message" in child.attrib and "\n" not in child.get("message")
            failures += kinds.count("failure")
            errors += kinds.count("error")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == failures and int(suite.get("errors")) == errors
        for key, value in (("tests", len(cases)), ("failures", failures), ("errors", errors)):
            totals[key] += value
    for key, value in totals.items():
        assert int(root.get(key)) == value
    return root


def test_json_report_meta_keeps_numbers_numbers_and_writes_other_objects_as_text(tmp_path):
    import numpy as np

    text = render(sample_report(seconds=np.float64(0.25), counts=np.array([1, 2]), path=tmp_path, ids={3: "x"}),
                  "json")
    meta = json.loads(text)["meta"]
    assert meta["seconds"] == 0.25 and meta["counts"] == [1, 2]
    assert meta["path"] == str(tmp_path) and meta["ids"] == {"3": "x"}


def test_compact_and_indented_json_reports_hold_the_same_data_in_key_order():
    from problemgen.sheets.reports import render_json

    compact, indented = render_json(sample_report(), compact=True), render_json(sample_report())
    assert "\n" not in compact[:-1] and indented.startswith('{\n  "')
    key_orders = []
    data = json.loads(indented, object_pairs_hook=lambda pairs: key_orders.append([k for k, _ in pairs]) or dict(pairs))
    assert data == json.loads(compact) and all(keys == sorted(keys) for keys in key_orders)


def test_junit_has_one_testcase_per_part_failures_for_wrong_errors_for_invalid():
    root = check_junit(render(sample_report(), "junit"))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert sorted(cases) == ["p1.top", "p1.weights", "p2.half", "p2.w1", "p3.hidden"]
    assert [c.tag for c in cases["p1.top"]] == ["failure"]
    assert [c.tag for c in cases["p2.w1"]] == ["error"]
    assert list(cases["p1.weights"]) == []
    assert "no_scaling" in cases["p1.top"].find("failure").text
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "2", "1")


def test_junit_escapes_markup_and_drops_control_characters():
    text = render(sample_report(), "junit")
    assert "\x1b" not in text
    root = check_junit(text)
    error = next(c for c in root.iter("testcase") if c.get("name") == "p2.w1").find("error")
    assert "<b>&</b>" in error.get("message")


def test_code_grader_statuses_map_crashes_to_errors_and_wrong_values_to_failures():
    results = tuple(CheckResult(f"t{i}", status, False, 0.0, 1.0, group="task")
                    for i, status in enumerate(["WRONG", "CRASH", "TIMEOUT", "BAD_OUTPUT"]))
    root = check_junit(render(Report("code", results), "junit"))
    assert (root.get("failures"), root.get("errors")) == ("1", "3")


def test_junit_validator_rejects_wrong_counts():
    text = render(sample_report(), "junit").replace('errors="1"', 'errors="0"', 1)
    with pytest.raises(AssertionError):
        check_junit(text)


# ------------------------------------------------------------------------------------------ Gradescope

GRADESCOPE_TOP = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
                  "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
GRADESCOPE_TEST = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format",
                   "tags", "visibility", "extra_data"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def check_gradescope(text: str) -> dict:
    data = json.loads(text)
    assert set(data) <= GRADESCOPE_TOP
    assert isinstance(data["score"], (int, float)) and not isinstance(data["score"], bool)
    assert data.get("visibility", "visible") in VISIBILITY
    assert isinstance(data["tests"], list)
    for test in data["tests"]:
        assert set(test) <= GRADESCOPE_TEST
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert 0 <= test["score"] <= test["max_score"]
        assert test["visibility"] in VISIBILITY
        assert test.get("status", "passed") in ("passed", "failed")
    assert data["score"] == pytest.approx(sum(t["score"] for t in data["tests"]))
    return data


def test_gradescope_results_follow_the_specification():
    data = check_gradescope(render(sample_report(), "gradescope"))
    assert data["score"] == pytest.approx(3.75)
    tests = {t["name"]: t for t in data["tests"]}
    assert tests["p3.hidden"]["visibility"] == "hidden"
    assert tests["p1.top"]["status"] == "failed" and "scaling" in tests["p1.top"]["output"]
    assert tests["p2.half"]["score"] == pytest.approx(0.75) and tests["p2.half"]["max_score"] == pytest.approx(1.5)


def test_gradescope_validator_rejects_unknown_keys():
    data = json.loads(render(sample_report(), "gradescope"))
    data["tests"][0]["points"] = 1
    with pytest.raises(AssertionError):
        check_gradescope(json.dumps(data))


# ------------------------------------------------------------------------------------------ people


def test_text_report_shows_score_feedback_and_neutralises_escape_sequences():
    text = render(sample_report(), "text")
    assert "score: 3.75/7 (54%)" in text and "warning: w1" in text
    assert "\x1b" not in text and "\\x1b" in text
    assert "wrong    p1.top  0/1" in text


def test_markdown_report_is_one_table_with_escaped_cells():
    text = render(sample_report(error="sheet unreadable"), "md")
    assert "| p2.w1 | invalid | 0/1.5 |" in text
    assert "&lt;b&gt;" in text and "\x1b" not in text
    assert "Error: sheet unreadable" in text


def test_well_formed_reports_carry_file_names_that_were_not_utf8_as_escapes():
    from problemgen.sheets.reports import well_formed
    from problemgen.userfiles import well_formed_text

    assert well_formed_text("l\udcf6sung.py") == "l\\xf6sung.py" and well_formed_text("a\ud800b") == "a\\ud800b"
    assert well_formed_text("Lösung ∑") == "Lösung ∑"
    name = "l\udcf6sung"
    report = Report(f"softmax: {name}", (CheckResult(f"{name}.a", "wrong", False, 0.0, 1.0, None, name, True, name),),
                    {"student": name, "notes": [name, (name,)]})
    cleaned = well_formed(report)
    for fmt in FORMATS:
        render(cleaned, fmt).encode("utf-8")  # every format can be written
    assert cleaned.meta == {"student": "l\\xf6sung", "notes": ["l\\xf6sung", ("l\\xf6sung",)]}
    assert cleaned.results[0].feedback == "l\\xf6sung" and cleaned.title == "softmax: l\\xf6sung"


@pytest.mark.parametrize("visibility, shown", [
    ("hidden", "hidden from students"), ("after_due_date", "shown after the due date"),
    ("after_published", "shown when grades are published"),
])
def test_gradescope_top_level_output_never_reveals_what_hidden_tests_score(visibility, shown):
    """The top-level output is always visible: with the total in it, students could probe hidden results."""
    results = (CheckResult("public/1", "OK", True, 1.0, 1.0, group="public"),
               CheckResult("public/2", "OK", True, 1.0, 1.0, group="public"),
               CheckResult("hidden/1", "OK", True, 1.0, 1.0, visible=False, group="hidden"),
               CheckResult("hidden/2", "WRONG", False, 0.0, 2.0, visible=False, group="hidden"))
    data = check_gradescope(render_gradescope(Report("softmax: ada", results), visibility))
    assert data["output"] == f"softmax: ada: 2/2 points on the visible tests; 2 more tests, 3 points, {shown}"
    one_hidden = render_gradescope(Report("softmax: ada", results[:3]), visibility)
    assert check_gradescope(one_hidden)["output"].endswith(f"visible tests; 1 more test, 1 point, {shown}")
    assert data["score"] == 3  # Gradescope itself keeps the total from students while tests are hidden
    assert {t["name"]: t["visibility"] for t in data["tests"]}["hidden/2"] == visibility


def test_gradescope_output_gives_the_total_when_every_test_is_visible():
    results = (CheckResult("public/1", "OK", True, 1.0, 1.0), CheckResult("hidden/1", "WRONG", False, 0.0, 2.0, visible=False))
    assert json.loads(render_gradescope(Report("t", results), "visible"))["output"] == "t: 1/3 points"
    assert json.loads(render_gradescope(Report("t", results[:1]), "after_due_date"))["output"] == "t: 1/1 points"
