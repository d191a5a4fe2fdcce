"""Grading reports: one result model, rendered for people (text, Markdown) and for CI (JSON, JUnit, Gradescope).

Both graders (answer sheets and student code) produce a :class:`Report` of :class:`CheckResult` rows;
this module is the only place that knows the output formats, so a CI system sees the same structure
whichever grader ran. Rendering is deterministic (no timestamps, stable order) so a re-grade of the same
submission produces identical bytes — except JUnit's ``timestamp`` and ``hostname``, which its strict
format requires (see :func:`junit_stamp`).

Statuses: every check has one **outcome** in a vocabulary shared by answer sheets and code —
``correct``, ``wrong`` or ``invalid`` (could not be checked: an unreadable answer, a crash, a timeout…;
see :data:`ERROR_STATUSES`) — and keeps its grader's detailed ``status`` beside it (answer parts:
``correct`` / ``wrong`` / ``invalid``; code: ``OK``, ``WRONG``, ``CRASH``, ``TIMEOUT``…). Invalid
checks are JUnit *errors*; wrong ones JUnit *failures*.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable

from problemgen.userfiles import well_formed_text
from problemgen.wording import counted

ERROR_STATUSES = frozenset({"invalid", "error", "timeout", "crash", "memory", "import_error", "bad_output",
                            "no_result"})
GRADESCOPE_VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")
OUTCOMES = ("correct", "wrong", "invalid")
"""The per-check vocabulary every report, gradebook and statistic shares, whichever grader ran."""


def outcome(status: str, passed: bool) -> str:
    """``correct`` / ``wrong`` / ``invalid`` for a grader's detailed status (``OK``, ``CRASH``, ``wrong``…)."""
    if passed:
        return "correct"
    return "invalid" if status.lower() in ERROR_STATUSES else "wrong"


@dataclass(frozen=True)
class CheckResult:
    """One graded check: an answer part (``p1.weights``) or one test of a coding task.

    ``score`` is in points, between 0 and ``max_score``; ``group`` is the problem (or task) it belongs to.
    """

    name: str
    status: str
    passed: bool
    score: float
    max_score: float
    mistake: str | None = None
    feedback: str = ""
    visible: bool = True
    group: str = ""

    @property
    def outcome(self) -> str:
        """This check in the shared vocabulary (:data:`OUTCOMES`)."""
        return outcome(self.status, self.passed)


@dataclass(frozen=True)
class Report:
    """All the checks of one submission, plus metadata (variant id, student, warnings, isolation…)."""

    title: str
    results: tuple[CheckResult, ...]
    meta: dict = field(default_factory=dict)

    @property
    def points(self) -> float:
        return sum(r.score for r in self.results)

    @property
    def max_points(self) -> float:
        return sum(r.max_score for r in self.results)

    @property
    def score(self) -> float:
        """The fraction of the available points earned (0 when nothing was gradable)."""
        return self.points / self.max_points if self.max_points > 0 else 0.0

    def groups(self) -> list[tuple[str, list[CheckResult]]]:
        """Results grouped by ``group`` in first-seen order (the order of the sheet)."""
        order: dict[str, list[CheckResult]] = {}
        for result in self.results:
            order.setdefault(result.group, []).append(result)
        return list(order.items())


def render(report: Report, fmt: str) -> str:
    """Render a report as ``text``, ``json``, ``junit``, ``gradescope`` or ``md``; always ends with a newline."""
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return REPORT_FORMATS[fmt].render(report)


def extension(fmt: str) -> str:
    """The file extension of a report in ``fmt`` (``junit`` -> ``xml``)."""
    return REPORT_FORMATS[fmt].extension


def _pts(x: float) -> str:
    """Points for people: integers without decimals, otherwise up to 2 decimals."""
    x = round(float(x), 2)
    return str(int(x)) if x == int(x) else f"{x:g}"


def _round(x: float) -> float:
    """Scores in machine formats: rounded to 6 decimals so float noise never changes the bytes."""
    return round(float(x), 6) + 0.0


def _warnings(report: Report) -> list[str]:
    return [str(w) for w in report.meta.get("warnings", ())]


def _printable(text: str) -> str:
    """Text for a terminal: control characters (escape sequences included) shown as \\xNN, never sent.

    Almost every line is printable already; checking the whole string first keeps reports cheap.
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c == "\n" or c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def _well_formed_value(value):
    if isinstance(value, str):
        return well_formed_text(value)
    if isinstance(value, dict):
        return {_well_formed_value(k): _well_formed_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_well_formed_value(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def well_formed(report: Report) -> Report:
    """The report with all its text (title, checks, metadata) well-formed: see :func:`problemgen.userfiles.well_formed_text`."""
    from dataclasses import replace

    results = tuple(replace(r, **{f: _well_formed_value(getattr(r, f)) for f in
                                  ("name", "status", "mistake", "feedback", "group")}) for r in report.results)
    return Report(well_formed_text(report.title), results, _well_formed_value(report.meta))


def _status(r: CheckResult) -> str:
    """The shared outcome, with the grader's own word when it says more (``invalid (TIMEOUT)``)."""
    detail = r.status.lower() not in (r.outcome, "ok") and not r.passed
    return f"{r.outcome} ({r.status})" if detail else r.outcome


# ------------------------------------------------------------------------------------------ text


def _isolation(report: Report) -> list[str]:
    """``isolation: seccomp+landlock`` for a code report: every format says how confined the code ran."""
    return [f"isolation: {report.meta['isolation']}"] if "isolation" in report.meta else []


def render_text(report: Report) -> str:
    lines = [report.title, f"score: {_pts(report.points)}/{_pts(report.max_points)} ({report.score:.0%})",
             *_isolation(report)]
    if report.meta.get("error"):
        lines.append(f"error: {report.meta['error']}")
    lines += [f"warning: {w}" for w in _warnings(report)]
    lines = [_printable(line) for line in lines]
    for group, results in report.groups():
        got, of = sum(r.score for r in results), sum(r.max_score for r in results)
        lines.append("")
        lines.append(_printable(f"{group or 'checks'}  {_pts(got)}/{_pts(of)}"))
        for r in results:
            lines.append(_printable(f"  {_status(r):<8} {r.name}  {_pts(r.score)}/{_pts(r.max_score)}"))
            if r.feedback:
                lines += [f"           {line}" for line in _printable(r.feedback).splitlines()]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ Markdown


def _md_cell(text: str) -> str:
    """Table-safe Markdown: pipes escaped, newlines folded, HTML-ish characters neutralised."""
    text = _printable(" ".join(str(text).split()))
    for char, escaped in (("\\", "\\\\"), ("|", "\\|"), ("<", "&lt;"), (">", "&gt;"), ("`", "\\`")):
        text = text.replace(char, escaped)
    return text


def render_markdown(report: Report) -> str:
    lines = [f"## {_md_cell(report.title)}", "",
             f"Score: **{_pts(report.points)}/{_pts(report.max_points)}** ({report.score:.0%})", ""]
    lines += [f"Sandbox {_md_cell(line)}" for line in _isolation(report)] + ([""] if _isolation(report) else [])
    if report.meta.get("error"):
        lines += [f"Error: {_md_cell(report.meta['error'])}", ""]
    lines += [f"Warning: {_md_cell(w)}" for w in _warnings(report)]
    if _warnings(report):
        lines.append("")
    lines += ["| check | status | points | feedback |", "|---|---|---|---|"]
    for r in report.results:
        points = f"{_pts(r.score)}/{_pts(r.max_score)}"
        lines.append(f"| {_md_cell(r.name)} | {_md_cell(_status(r))} | {points} | {_md_cell(r.feedback)} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ JSON


def report_dict(report: Report) -> dict:
    """The JSON structure: overall score (fraction), points, and per problem (group) its parts."""
    problems = []
    for group, results in report.groups():
        problems.append({
            "id": group,
            "score": _round(sum(r.score for r in results)),
            "max_score": _round(sum(r.max_score for r in results)),
            "parts": [
                {
                    "name": r.name,
                    "status": r.status,
                    "outcome": r.outcome,
                    "passed": r.passed,
                    "score": _round(r.score),
                    "max_score": _round(r.max_score),
                    "mistake": r.mistake,
                    "feedback": r.feedback,
                    "visible": r.visible,
                }
                for r in results
            ],
        })
    data = {
        "title": report.title,
        "score": _round(report.score),
        "points": _round(report.points),
        "max_points": _round(report.max_points),
        "meta": report.meta,
        "problems": problems,
    }
    if "isolation" in report.meta:  # code reports: CI reads the confinement level at the top level
        data["isolation"] = report.meta["isolation"]
    return data


def render_json(report: Report, *, compact: bool = False) -> str:
    """One JSON object with sorted keys; ``compact`` drops the indentation (a class's reports are compact)."""
    return json_text(report_dict(report), compact=compact)


def json_text(data: dict, *, compact: bool = False) -> str:
    """``data`` as JSON with sorted keys and a final newline, indented by 2 unless ``compact``.

    orjson writes it in a sixth of the standard library's time (a class writes one report per student);
    numpy scalars are written as numbers and anything else it does not know as its ``str``."""
    import orjson  # lazy: only JSON reports pay for the import

    layout = 0 if compact else orjson.OPT_INDENT_2
    option = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE
    return orjson.dumps(data, option=option | layout, default=str).decode("utf-8")


# ------------------------------------------------------------------------------------------ JUnit XML


def _xml_text(text: str) -> str:
    """Drop characters XML 1.0 cannot carry (control characters, lone surrogates) from echoed text."""
    def allowed(c: str) -> bool:
        o = ord(c)
        return o in (0x9, 0xA, 0xD) or 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or 0x10000 <= o <= 0x10FFFF

    return "".join(c if allowed(c) else "\ufffd" for c in str(text))


def _is_error(result: CheckResult) -> bool:
    return result.outcome == "invalid"


def _junit_counts(results: list[CheckResult]) -> dict[str, str]:
    errors = sum(1 for r in results if not r.passed and _is_error(r))
    failures = sum(1 for r in results if not r.passed and not _is_error(r))
    return {"tests": str(len(results)), "failures": str(failures), "errors": str(errors), "skipped": "0"}


def junit_stamp() -> tuple[str, str]:
    """(timestamp, hostname) for JUnit: the strict Ant-style format requires both on every testsuite.

    They are the only non-deterministic bytes problemgen writes, and only in JUnit, because the
    format demands them. The timestamp is the start of this grading process (UTC, to the second; every
    report of one class run shares it), or ``$SOURCE_DATE_EPOCH`` when set, for reproducible builds.
    """
    import datetime
    import socket

    global _JUNIT_STARTED
    if _JUNIT_STARTED is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        when = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch.isdigit()
                else datetime.datetime.now(datetime.timezone.utc))
        _JUNIT_STARTED = when.strftime("%Y-%m-%dT%H:%M:%S")
    return _JUNIT_STARTED, socket.gethostname() or "localhost"


_JUNIT_STARTED: str | None = None


def render_junit(report: Report) -> str:
    """JUnit XML as CI systems read it: testsuites > testsuite (one per problem) > testcase (one per part).

    A wrong part is a ``<failure>``, an invalid (unparseable) one an ``<error>``; points go into
    ``<properties>`` because JUnit itself has no notion of partial credit. Every testsuite carries what
    the strict Ant-style schema requires (``name``, ``timestamp``, ``hostname``, ``tests``, ``failures``,
    ``errors``, ``time``, and ``package`` and ``id`` inside ``<testsuites>``; ``properties``,
    ``system-out`` and ``system-err`` children) and what Jenkins reads (``skipped``, per-case
    ``classname`` and ``time``). Checks are not timed one by one, so ``time`` is 0. The totals on
    ``<testsuites>`` are for the consumers that read them there (Jenkins' own schema declares them,
    junitparser reads them); the strict Ant schema declares no attributes on ``<testsuites>``, so a
    validator of that schema alone would flag these five.
    """
    import xml.etree.ElementTree as ET  # only JUnit output needs it: keep grading start-up light

    timestamp, hostname = junit_stamp()
    root = ET.Element("testsuites", {"name": _xml_text(report.title), **_junit_counts(list(report.results)),
                                     "time": "0"})
    root.attrib.pop("skipped")
    for index, (group, results) in enumerate(report.groups()):
        suite = ET.SubElement(root, "testsuite", {
            "name": _xml_text(group or "checks"), **_junit_counts(results), "time": "0",
            "timestamp": timestamp, "hostname": _xml_text(hostname), "id": str(index), "package": "problemgen",
        })
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", {"name": "points", "value": _pts(sum(r.score for r in results))})
        ET.SubElement(props, "property", {"name": "max_points", "value": _pts(sum(r.max_score for r in results))})
        if "isolation" in report.meta:
            ET.SubElement(props, "property", {"name": "isolation", "value": _xml_text(report.meta["isolation"])})
        for r in results:
            _junit_case(suite, group, r)
        ET.SubElement(suite, "system-out").text = _xml_text("\n".join(_junit_notes(report))) if index == 0 else ""
        ET.SubElement(suite, "system-err").text = ""
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _junit_case(suite, group: str, r: CheckResult) -> None:
    import xml.etree.ElementTree as ET

    case = ET.SubElement(suite, "testcase", {"classname": _xml_text(f"problemgen.{group or 'checks'}"),
                                             "name": _xml_text(r.name), "time": "0"})
    if r.passed:
        return
    tag = "error" if _is_error(r) else "failure"
    message = r.feedback.splitlines()[0] if r.feedback else r.status
    child = ET.SubElement(case, tag, {"message": _xml_text(message), "type": r.status})
    detail = [f"status: {r.status}", f"points: {_pts(r.score)}/{_pts(r.max_score)}"]
    if r.mistake:
        detail.append(f"misconception: {r.mistake}")
    if r.feedback:
        detail.append(r.feedback)
    child.text = _xml_text("\n".join(detail))


def _junit_notes(report: Report) -> list[str]:
    """The report-wide lines (error, warnings) that belong to no check: the first suite's system-out."""
    notes = [f"error: {report.meta['error']}"] if report.meta.get("error") else []
    return notes + [f"warning: {w}" for w in _warnings(report)]


# ------------------------------------------------------------------------------------------ Gradescope


def render_gradescope(report: Report, hidden_visibility: str = "hidden") -> str:
    """Gradescope autograder ``results.json``: top-level points and one test per check.

    Scores are in points (Gradescope sums them against the assignment's total); hidden checks get
    ``hidden_visibility`` (``hidden`` unless an export chooses e.g. ``after_due_date``), and the
    top-level ``output``, which students always see, gives only the visible checks' points. ``status``
    is Gradescope's optional passed/failed marker.
    """
    if hidden_visibility not in GRADESCOPE_VISIBILITY:
        raise ValueError(f"unknown Gradescope visibility {hidden_visibility!r}")
    tests = []
    for r in report.results:
        output = f"{r.status}: {r.feedback}" if r.feedback else r.status
        tests.append({
            "name": r.name,
            "score": _round(r.score),
            "max_score": _round(r.max_score),
            "status": "passed" if r.passed else "failed",
            "output": output,
            "visibility": "visible" if r.visible else hidden_visibility,
        })
    summary = [_gradescope_summary(report, hidden_visibility), *(f"sandbox {line}" for line in _isolation(report))]
    if report.meta.get("error"):
        summary.append(f"error: {report.meta['error']}")
    summary += [f"warning: {w}" for w in _warnings(report)]
    data = {
        "score": _round(report.points),
        "output": "\n".join(summary),
        "visibility": "visible",
        "tests": tests,
    }
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


_WHEN_SHOWN = {"hidden": "hidden from students", "after_due_date": "shown after the due date",
               "after_published": "shown when grades are published"}


def _gradescope_summary(report: Report, hidden_visibility: str) -> str:
    """The always-visible first line: the points of the tests students can see now, never the total.

    Gradescope keeps the total score from students while any test is hidden; a total in this line would
    let them work out their hidden tests' results submission by submission.
    """
    unseen = [r for r in report.results if not r.visible]
    if not unseen or hidden_visibility == "visible":
        return f"{report.title}: {_pts(report.points)}/{_pts(report.max_points)} points"
    seen = [r for r in report.results if r.visible]
    hidden_points = _pts(sum(r.max_score for r in unseen))
    return (f"{report.title}: {_pts(sum(r.score for r in seen))}/{_pts(sum(r.max_score for r in seen))} points "
            f"on the visible tests; {counted(len(unseen), 'more test')}, "
            f"{hidden_points} {'point' if hidden_points == '1' else 'points'}, {_WHEN_SHOWN[hidden_visibility]}")


@dataclass(frozen=True)
class ReportFormat:
    """One report format: how a report is written and the extension of its file."""

    render: Callable[[Report], str]
    extension: str


REPORT_FORMATS: dict[str, ReportFormat] = {
    "text": ReportFormat(render_text, "txt"),
    "json": ReportFormat(render_json, "json"),
    "junit": ReportFormat(render_junit, "xml"),
    "gradescope": ReportFormat(render_gradescope, "json"),
    "md": ReportFormat(render_markdown, "md"),
}
"""The one table of report formats: sheet grading, code grading, class runs and the CLI all read it."""
FORMATS = tuple(REPORT_FORMATS)
