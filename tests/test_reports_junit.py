"""JUnit XML against its strict Ant-style shape and against a real consumer (junitparser, from PyPI).

The strict schema (the Ant/``JUnit.xsd`` one many validators use) requires on every testsuite
``name``, ``timestamp`` (xs:dateTime without zone), ``hostname``, ``tests``, ``failures``, ``errors``,
``time``, and inside ``<testsuites>`` also ``package`` and ``id``; children ``properties``, then the
testcases, then ``system-out`` and ``system-err``; testcases need ``name``, ``classname`` and ``time``;
failures and errors need ``message`` and ``type``. The checks are written here from that description;
the repository holds no third-party schema file.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from junitparser import Error, Failure, JUnitXml

from problemgen.sheets.reports import CheckResult, Report, render

SUITE_REQUIRED = ("name", "timestamp", "hostname", "tests", "failures", "errors", "time", "package", "id")


def report() -> Report:
    results = (
        CheckResult("p1.a", "correct", True, 1.0, 1.0, group="p1"),
        CheckResult("p1.b", "wrong", False, 0.0, 2.0, mistake="no_scaling", feedback="forgot 1/√d_k", group="p1"),
        CheckResult("p2.c", "invalid", False, 0.0, 1.0, feedback="cannot read 'x'", group="p2"),
        CheckResult("public/one", "CRASH", False, 0.0, 1.0, feedback="ZeroDivisionError", group="public"),
        CheckResult("public/two", "OK", True, 1.0, 1.0, group="public"),
    )
    return Report("Sheet <1>", results, {"warnings": ["unknown key ignored"], "error": "partly unreadable"})


def test_every_testsuite_carries_the_strict_attributes_and_children_in_order():
    root = ET.fromstring(render(report(), "junit").encode())
    suites = root.findall("testsuite")
    assert len(suites) == 3
    for index, suite in enumerate(suites):
        assert all(suite.get(a) for a in SUITE_REQUIRED), suite.attrib
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.get("timestamp"))
        assert suite.get("id") == str(index) and suite.get("package") == "problemgen"
        float(suite.get("time"))
        tags = [child.tag for child in suite]
        assert tags[0] == "properties" and tags[-2:] == ["system-out", "system-err"]
        assert set(tags[1:-2]) == {"testcase"}
        for case in suite.findall("testcase"):
            assert case.get("name") and case.get("classname") and case.get("time") is not None
            for verdict in case:
                assert verdict.get("message") and verdict.get("type")
    assert "partly unreadable" in suites[0].find("system-out").text
    assert "unknown key ignored" in suites[0].find("system-out").text


def test_junitparser_reads_the_same_counts(tmp_path):
    path = tmp_path / "report.xml"
    path.write_text(render(report(), "junit"), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    suites = {suite.name: suite for suite in xml}
    assert sorted(suites) == ["p1", "p2", "public"]
    assert (suites["p1"].tests, suites["p1"].failures, suites["p1"].errors) == (2, 1, 0)
    assert (suites["p2"].tests, suites["p2"].failures, suites["p2"].errors) == (1, 0, 1)
    assert (suites["public"].tests, suites["public"].failures, suites["public"].errors) == (2, 0, 1)
    verdicts = {case.name: [type(r) for r in case.result] for suite in xml for case in suite}
    assert verdicts == {"p1.a": [], "p1.b": [Failure], "p2.c": [Error], "public/one": [Error], "public/two": []}
    assert (xml.tests, xml.failures, xml.errors) == (5, 1, 2)
    recounted = JUnitXml.fromfile(str(path))
    recounted.update_statistics()
    assert (recounted.tests, recounted.failures, recounted.errors) == (5, 1, 2)


def test_the_timestamp_follows_source_date_epoch(monkeypatch):
    import problemgen.sheets.reports as reports

    monkeypatch.setattr(reports, "_JUNIT_STARTED", None)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    root = ET.fromstring(render(report(), "junit").encode())
    assert {s.get("timestamp") for s in root} == {"2023-11-14T22:13:20"}
    monkeypatch.setattr(reports, "_JUNIT_STARTED", None)


@pytest.mark.parametrize("fmt", ["junit"])
def test_two_renders_in_one_run_are_identical(fmt):
    assert render(report(), fmt) == render(report(), fmt)
