"""The one class pipeline: entries, statuses, integrity, item statistics, overrides, outputs."""

from __future__ import annotations

import csv
import json
import os
import pickle
import re
import shutil
import signal

import pytest

from problemgen.classes import entries
from problemgen.classes.overrides import Override, apply_overrides, read_overrides
from problemgen.classes.rows import ClassRow, Record
from problemgen.classes.runner import gradebook_csv, run_class
from problemgen.classes.statistics import ItemStatistics, possible_copies
from problemgen.classes.summary import class_summary, flag_copies, render_summary
from problemgen.errors import ProblemgenError
from problemgen.sheets.reports import CheckResult, Report

SECRET_ENV = "PROBLEMGEN_CLASS_TEST_SECRET"


# --------------------------------------------------------------------------- entries


@pytest.fixture
def no_hang():
    """Fail instead of hanging forever if anything opens a FIFO."""
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("a FIFO was opened: the scan blocked"))
    signal.alarm(10)
    yield
    signal.alarm(0)


def test_every_entry_gets_a_row_and_only_files_and_directories_are_accepted(tmp_path, no_hang):
    (tmp_path / "ana.py").write_text("x = 1\n")
    (tmp_path / "bo").mkdir()
    (tmp_path / "link.py").symlink_to(tmp_path / "ana.py")
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / ".hidden.py").write_text("")
    (tmp_path / "nb.ipynb").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / os.fsdecode(b"bad\xff.py")).write_text("")
    found = {e.name: e.refused for e in entries.scan(tmp_path, (".py", ".ipynb"))}
    assert found == {
        ".hidden.py": "hidden entry", "ana": "", "bad\\xff.py": "unreadable name (not UTF-8)", "bo": "",
        "fifo.py": "special file (FIFO)", "link.py": "symbolic link",
        "nb": "",  # a notebook is a student; whether it can be read is decided when it is graded
        "notes.txt": "unsupported type (expected .py or .ipynb or a directory)",
    }


def test_an_answer_sheet_class_takes_no_notebook_so_it_is_no_second_submission(tmp_path):
    """A sheet class once took ana.ipynb as a submission, so ana.toml beside it was refused as a duplicate."""
    (tmp_path / "ana.toml").write_text("")
    (tmp_path / "ana.ipynb").write_text("{}")
    assert sorted((e.name, e.refused) for e in entries.scan(tmp_path, (".toml",))) == [
        ("ana", ""), ("ana.ipynb", "unsupported type (expected .toml or a directory)")]


def test_two_names_equal_in_their_first_80_characters_refuse_only_those_two(tmp_path):
    stem = "x" * 80
    (tmp_path / f"{stem}a.py").write_text("")
    (tmp_path / f"{stem}b.py").write_text("")
    (tmp_path / "ana.py").write_text("")
    found = entries.scan(tmp_path, (".py",))
    assert [(e.name, e.accepted) for e in found][0] == ("ana", True)
    assert [e.refused.startswith("duplicate-submission") for e in found[1:]] == [True, True]
    assert len({e.name for e in found}) == 3  # every row keeps its own name


def test_a_non_utf8_entry_name_never_breaks_report_writing(tmp_path):
    rows = [ClassRow("bad\\xff.py", "refused: unreadable name (not UTF-8)", message="unreadable name (not UTF-8)"),
            ClassRow("ok", "graded", Report("t", (CheckResult("c", "OK", True, 1.0, 1.0, group="g"),), {}))]
    run = run_class(rows, tmp_path / "out", "text", "T")
    assert [r.status for r in run.records] == ["refused: unreadable name (not UTF-8)", "graded"]
    assert "bad\\xff.py: refused: unreadable name" in (tmp_path / "out" / "summary.txt").read_text()


# --------------------------------------------------------------------------- statistics


def report(fractions: dict[str, float], *, mistakes=None, blank=()) -> Report:
    return Report("t", tuple(
        CheckResult(name, "correct" if f == 1 else "wrong", f == 1, f, 1.0, mistake=(mistakes or {}).get(name),
                    feedback="no answer" if name in blank else "", group=name.split(".")[0])
        for name, f in fractions.items()), {})


def items_of(rows: list[tuple[str, Report, str]]) -> dict[str, dict]:
    stats = ItemStatistics()
    for student, sheet, structure in rows:
        stats.add(student, sheet, {group: structure for group, _ in sheet.groups()})
    return {i["part"]: i for i in stats.items()}


def test_item_statistics_give_mean_discrimination_blank_rate_and_misconceptions_by_student():
    items = items_of([
        ("a", report({"p1.x": 1, "p2.y": 1, "p3.z": 1}), "-"),
        ("b", report({"p1.x": 1, "p2.y": 1, "p3.z": 0}), "-"),
        ("c", report({"p1.x": 0, "p2.y": 0, "p3.z": 1}, mistakes={"p1.x": "no_scale"}), "-"),
        ("d", report({"p1.x": 0, "p2.y": 0, "p3.z": 0}, mistakes={"p1.x": "no_scale"}, blank=("p2.y",)), "-"),
    ])
    assert items["p1.x"]["answers"] == 4
    assert items["p1.x"]["mean"] == 0.5 and items["p2.y"]["blank_rate"] == 0.25
    # p1.x = (1, 1, 0, 0) against the rest of each sheet (1, .5, .5, 0): r = .5 / sqrt(.5)
    assert items["p1.x"]["discrimination"] == 0.7071
    assert items["p3.z"]["discrimination"] == 0.0  # (1, 0, 1, 0) against (1, 1, 0, 0): tells nothing
    assert items["p1.x"]["misconceptions"] == {"no_scale": ["c", "d"]}
    assert items["p1.x"]["variants"] == {}


def test_structurally_varied_items_report_the_mean_per_variant():
    items = items_of([("a", report({"p1.x": 1, "p2.y": 1}), "4x4"), ("b", report({"p1.x": 0, "p2.y": 1}), "3x2"),
                      ("c", report({"p1.x": 1, "p2.y": 0}), "4x4")])
    assert items["p1.x"]["variants"] == {"3x2": {"students": 1, "mean": 0.0}, "4x4": {"students": 2, "mean": 1.0}}


def test_only_graded_rows_enter_the_item_statistics(tmp_path):
    rows = [ClassRow("a", "graded", report({"p1.x": 1})), ClassRow("b", "graded", report({"p1.x": 0})),
            ClassRow("e", "variant-mismatch: belongs to a", report({"p1.x": 1})), ClassRow("f", "missing")]
    run = run_class(rows, tmp_path / "out", "json", "T")
    assert run.summary["items"][0]["answers"] == 2 and run.summary["items"][0]["mean"] == 0.5
    assert run.summary["scores"]["mean"] == 0.5 and run.reports == 3


def test_the_summary_counts_one_entry_in_the_singular(tmp_path):
    run = run_class([ClassRow("a", "graded", report({"p1.x": 1}))], tmp_path / "out", "json", "T")
    assert "\n1 entry (1 graded); over the 1 graded" in render_summary(run.summary)


def record(student: str, wrong=()) -> Record:
    return Record(student, "graded", points=0, max_points=3, wrong_answers=frozenset(wrong))


def test_sheets_sharing_rare_wrong_values_are_flagged_but_a_common_mistake_is_not():
    common = ("p1.x", "0.5")
    records = [
        record("a", wrong=[common, ("p2.y", "17"), ("p3.z", "[1, 2]")]),
        record("b", wrong=[common, ("p2.y", "17"), ("p3.z", "[1, 2]")]),
        record("c", wrong=[common, ("p2.y", "99")]),
        record("d", wrong=[("p2.y", "99")]),
    ]
    assert possible_copies(records) == [("a", "b", 2)]  # c and d share only one: chance
    copies = flag_copies(records)
    assert records[0].flags == ["possible copy: shares 2 wrong answers only with b"]
    summary = class_summary("T", records, [], copies)
    assert "possible copy: a and b share 2 wrong answers nobody else gave" in render_summary(summary)
    assert "possible copy" in next(csv.DictReader(gradebook_csv(records).splitlines()))["flags"]


def test_wrong_answers_are_kept_as_stable_fingerprints_equal_only_for_the_same_part_and_text():
    """Copy detection compares fingerprints; they must agree between worker processes and runs."""
    import subprocess
    import sys

    from problemgen.classes.sheet_class import _fingerprint

    assert _fingerprint("p1.x", "[1, 2]") == _fingerprint("p1.x", "[1, 2]")
    assert len({_fingerprint("p1.x", "[1, 2]"), _fingerprint("p1.y", "[1, 2]"), _fingerprint("p1.x", "[1, 3]"),
                _fingerprint("p1.x\x00[1", " 2]")}) == 4
    assert 0 <= _fingerprint("p1.x", "\ud800") < 2**56  # a lone surrogate from a sheet is hashed, not refused
    other = subprocess.run([sys.executable, "-c", "from problemgen.classes.sheet_class import _fingerprint; "
                            "print(_fingerprint('p1.x', '[1, 2]'))"], capture_output=True, text=True, check=True)
    assert int(other.stdout) == _fingerprint("p1.x", "[1, 2]")


def test_a_wrong_answer_too_deep_to_write_back_loses_its_fingerprint_not_the_class_run():
    """An answer no reader takes is fingerprinted by its text, which recurses: a list nested deeper than
    Python's recursion limit is skipped, and the rest of the sheet keeps its evidence."""
    from types import SimpleNamespace

    from problemgen.classes.sheet_class import _wrong_answers
    from problemgen.model.core import AnswerPart

    deep = 1
    for _ in range(5000):
        deep = [deep]
    def wrong(name: str) -> CheckResult:
        return CheckResult(name, "wrong", False, 0.0, 1.0, feedback="not the expected value", group="p1")

    parts = [AnswerPart("x", "matrix", [1.0, 2.0]), AnswerPart("y", "matrix", [1.0, 3.0])]
    variant = SimpleNamespace(problems=[SimpleNamespace(id="p1", problem=SimpleNamespace(parts=parts))])
    answers = SimpleNamespace(tables={"p1": {"x": deep, "y": [1, 2]}})
    assert len(_wrong_answers(Report("t", (wrong("p1.x"), wrong("p1.y"))), answers, variant)) == 1


def test_overrides_are_read_applied_and_listed(tmp_path):
    path = tmp_path / "overrides.toml"
    path.write_text('[[override]]\nstudent = "s1"\npart = "p1.x"\nscore = 1\nreason = "accepted 1/8"\n'
                    '[[override]]\nstudent = "s1"\npart = "p9.q"\nscore = 0.5\nreason = "typo"\n')
    overrides = read_overrides(path)
    assert overrides == {"s1": [Override("s1", "p1.x", 1.0, "accepted 1/8"), Override("s1", "p9.q", 0.5, "typo")]}
    report = Report("t", (CheckResult("p1.x", "wrong", False, 0.0, 2.0, group="p1"),), {})
    regraded, applied, skipped = apply_overrides(report, overrides["s1"])
    assert regraded.points == 2.0 and regraded.results[0].status == "override"
    assert "accepted 1/8" in regraded.results[0].feedback
    assert applied == ("p1.x: 0 -> 2 of 2 points (accepted 1/8)",)
    assert skipped == ("p9.q: not applied, the sheet has no such part (typo)",)


def test_a_part_regraded_to_full_marks_no_longer_counts_its_student_under_a_misconception(tmp_path):
    """The grader named no_scaling; the instructor accepted the answer as right. The class summary listed
    the student under no_scaling all the same (and the report said right and misconceived at once). A
    partial regrade keeps the grader's diagnosis."""
    def graded(student: str) -> Report:
        return Report("t", (CheckResult("p1.x", "wrong", False, 0.0, 2.0, mistake="no_scaling", feedback="hint",
                                        group="p1"),), {})

    accepted, _, _ = apply_overrides(graded("a"), [Override("a", "p1.x", 1.0, "0.12 for 1/8 is what I meant")])
    partly, _, _ = apply_overrides(graded("b"), [Override("b", "p1.x", 0.5, "right method")])
    assert (accepted.results[0].passed, accepted.results[0].mistake) == (True, None)
    assert partly.results[0].mistake == "no_scaling"
    run = run_class([ClassRow("a", "graded", accepted), ClassRow("b", "graded", partly)], tmp_path / "out", "json", "T")
    assert [(m["tag"], m["students"]) for m in run.summary["misconceptions"]] == [("no_scaling", ["b"])]
    assert run.summary["items"][0]["misconceptions"] == {"no_scaling": ["b"]}


@pytest.mark.parametrize("text, message", [
    ('[[override]]\nstudent = "s1"\npart = "p1.x"\nscore = 2\nreason = "r"\n', "from 0 to 1"),
    ('[[override]]\nstudent = "s1"\npart = "p1.x"\nscore = 1\n', "exactly student, part, score and reason"),
    ("[[override]\n", "not a UTF-8 TOML file"),
])
def test_bad_override_files_are_one_clear_error(tmp_path, text, message):
    path = tmp_path / "o.toml"
    path.write_text(text)
    with pytest.raises(ProblemgenError, match=message):
        read_overrides(path)


# --------------------------------------------------------------------------- end to end


@pytest.fixture
def class_set(tmp_path, monkeypatch):
    from problemgen.documents import worksheet

    monkeypatch.setenv(SECRET_ENV, "a long class secret for tests")
    roster = tmp_path / "roster.csv"
    roster.write_text("id\n" + "".join(f"s{i}\n" for i in range(1, 8)), encoding="utf-8")
    out = tmp_path / "class"
    worksheet.write_class_set(worksheet.WorksheetJob("masking", out), roster, SECRET_ENV)
    return out


def _key(class_dir, student: str) -> str:
    return (class_dir / "keys" / student / "key.toml").read_text(encoding="utf-8")


def _wrong(sheet: str) -> str:
    """The same two rare wrong values, whatever the variant."""
    sheet = re.sub(r"(?m)^allowed = .*$", "allowed = 424242", sheet)
    return re.sub(r"(?m)^empty_rows = .*$", "empty_rows = 424243", sheet)


def test_a_class_run_reports_integrity_statistics_and_overrides(class_set, tmp_path, capsys):
    from problemgen.cli import main

    subs = tmp_path / "subs"
    (subs / "s6").mkdir(parents=True)
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    (subs / "s2.toml").write_text(_key(class_set, "s1"))  # s1's sheet handed in by s2
    (subs / "s3.toml").write_text(_wrong(_key(class_set, "s3")))
    (subs / "s4.toml").write_text(_wrong(_key(class_set, "s4")))  # s3's rare wrong values: a copy?
    (subs / "s5.toml").write_text(_key(class_set, "s5"))
    (subs / "s6" / "answers.toml").write_text(_key(class_set, "s6"))
    (subs / "s6.toml").write_text(_key(class_set, "s6"))
    (subs / "s7.toml").symlink_to(subs / "s5.toml")
    (subs / "stranger.toml").write_text("")
    overrides = tmp_path / "overrides.toml"
    overrides.write_text('[[override]]\nstudent = "s3"\npart = "p2.allowed"\nscore = 1\nreason = "read 424242 as 42"\n')
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", str(subs), "--variants", str(class_set), "-o", str(tmp_path / "g"), "--overrides", str(overrides)])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "g" / "gradebook.csv").open(encoding="utf-8"))}
    assert {s: r["status"] for s, r in rows.items()} == {
        "s1": "graded", "s2": "variant-mismatch: belongs to s1", "s3": "graded", "s4": "graded", "s5": "graded",
        "s6": "duplicate-submission", "s7": "refused: symbolic link",
        "stranger.toml": "refused: not a student of this class"}
    assert "possible copy" in rows["s3"]["flags"] and "s4" in rows["s3"]["flags"]
    assert rows["s3"]["overrides"].startswith("p2.allowed: 0 -> ") and "read 424242 as 42" in rows["s3"]["overrides"]
    assert out.index("Needs attention") < out.index("s2: variant-mismatch: belongs to s1") < out.index("Items")
    assert "possible copy: s3 and s4" in out
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    allowed = next(i for i in summary["items"] if i["part"] == "p2.allowed")
    assert allowed["answers"] == 4  # s1, s3, s4, s5: the mismatched sheet is not counted
    items = list(csv.DictReader((tmp_path / "g" / "items.csv").open(encoding="utf-8")))
    assert [i["part"] for i in items] == [i["part"] for i in summary["items"]]
    assert {"mean", "discrimination", "blank_rate", "misconceptions", "variant_means"} <= set(items[0])


def test_two_sheets_sharing_wrong_values_written_differently_are_a_possible_copy(class_set, tmp_path):
    """The README promises sheets sharing two wrong *values*; the sheet says quotes are optional. So ``424242``
    and ``"424,242"``, or ``424243`` and ``424243.0``, are one wrong answer for copy detection."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "s3.toml").write_text(_wrong(_key(class_set, "s3")))
    s4 = re.sub(r"(?m)^allowed = .*$", 'allowed = "424,242"', _key(class_set, "s4"))
    (subs / "s4.toml").write_text(re.sub(r"(?m)^empty_rows = .*$", "empty_rows = 424243.0", s4))
    run = run_class(_rows(subs, class_set).values(), tmp_path / "g", "json", "t")
    assert run.summary["possible_copies"] == [{"students": ["s3", "s4"], "shared_wrong_answers": 2}]


def _overrides(tmp_path, *students: str):
    path = tmp_path / "overrides.toml"
    path.write_text("".join(f'[[override]]\nstudent = "{s}"\npart = "p2.allowed"\nscore = 1\nreason = "by hand"\n'
                            for s in students))
    return path


def test_overrides_for_students_without_a_graded_sheet_are_listed_as_not_applied(class_set, tmp_path, capsys):
    """Missing, duplicate and refused students: no score is invented, and the override shows everywhere."""
    from problemgen.cli import main

    subs = tmp_path / "subs"
    (subs / "s2").mkdir(parents=True)
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    (subs / "s2.toml").write_text(_key(class_set, "s2"))
    (subs / "s2" / "answers.toml").write_text(_key(class_set, "s2"))  # a duplicate
    (subs / "s3.toml").symlink_to(subs / "s1.toml")  # refused
    overrides = _overrides(tmp_path, "s2", "s3", "s4", "S5")  # s4 and s5 are missing; S5 is s5's
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", str(subs), "--variants", str(class_set), "-o", str(tmp_path / "g"), "--overrides", str(overrides)])
    captured = capsys.readouterr()
    assert exit_info.value.code == 0
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "g" / "gradebook.csv").open(encoding="utf-8"))}
    expected = {"s2": "duplicate-submission", "s3": "refused: symbolic link", "s4": "missing", "s5": "missing"}
    for student, status in expected.items():
        line = f"p2.allowed: not applied, no sheet was graded: {status} (by hand)"
        assert rows[student]["status"] == status and rows[student]["score"] == "0.0000"
        assert rows[student]["overrides"] == line
        assert f"warning: override for {student}: {line}" in captured.err
        assert f"override for {student}: {line}" in captured.out.split("Score distribution")[0]  # needs attention
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    assert summary["overrides"] == [] and len(summary["overrides_not_applied"]) == 4


def test_an_override_for_a_student_not_on_the_roster_is_an_error_before_grading(class_set, tmp_path, capsys):
    from problemgen.cli import main

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", str(subs), "--variants", str(class_set), "-o", str(tmp_path / "g"),
              "--overrides", str(_overrides(tmp_path, "s1", "zed", "s1x"))])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert "not on the roster: 'zed', 's1x' (did you mean 's1'?)" in err
    assert not (tmp_path / "g").exists()


def test_an_override_matches_its_student_ignoring_case_and_is_applied(class_set, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "s1.toml").write_text(_wrong(_key(class_set, "s1")))
    rows = _rows(subs, class_set, overrides=read_overrides(_overrides(tmp_path, "S1")))
    assert rows["s1"].overrides[0].startswith("p2.allowed: 0 -> ") and rows["s1"].unapplied_overrides == ()


@pytest.mark.parametrize("args, message", [
    (["--variant", "CLASS"], "is a directory; for a class directory use --variants"),
    (["--variants", "VARIANT"], "is a file; for one sheet's variant.json use --variant"),
    (["--variants", "CLASS", "-o", "FILE/out"], "is a file"),
    (["--variant", "VARIANT", "--overrides", "VARIANT"], "--overrides applies to a class run"),
])
def test_path_misuse_is_one_error_line_and_exit_2(class_set, tmp_path, capsys, args, message):
    from problemgen.cli import main

    (tmp_path / "FILE").write_text("x")
    places = {"CLASS": str(class_set), "VARIANT": str(class_set / "keys" / "s1" / "variant.json"),
              "FILE/out": str(tmp_path / "FILE" / "out")}
    (tmp_path / "subs").mkdir()
    answers = str(class_set / "handouts" / "s1" / "answers.toml") if "--variant" in args else str(tmp_path / "subs")
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", answers, *[places.get(a, a) for a in args]])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert message in err


def _rows(subs, class_set, **options) -> dict:
    from problemgen.classes.sheet_class import class_rows

    return {row.student: row for row in class_rows(subs, class_set, **options)[2]}


def test_sheet_names_match_roster_ids_ignoring_case_and_keep_the_roster_spelling(class_set, tmp_path):
    subs = tmp_path / "subs"
    for folder in ("s3", "s4"):
        (subs / folder).mkdir(parents=True)
    (subs / "S1.toml").write_text(_key(class_set, "s1"))
    (subs / "s2.TOML").write_text(_key(class_set, "s2"))
    (subs / "s3" / "Answers.toml").write_text(_key(class_set, "s3"))
    (subs / "s4" / "answers.TOML").write_text(_key(class_set, "s4"))
    rows = _rows(subs, class_set)
    assert list(rows) == [f"s{i}" for i in range(1, 8)]  # no stray row for S1.toml
    assert [rows[f"s{i}"].status for i in range(1, 5)] == ["graded"] * 4
    assert rows["s1"].report.score == 1.0 and rows["s3"].report.score == 1.0


def test_two_entries_for_one_student_that_differ_only_in_case_are_a_duplicate(class_set, tmp_path):
    subs = tmp_path / "subs"
    (subs / "s1").mkdir(parents=True)
    (subs / "S1.toml").write_text(_key(class_set, "s1"))
    (subs / "s1" / "answers.toml").write_text(_key(class_set, "s1"))
    (subs / "s2").mkdir()
    (subs / "s2" / "answers.toml").write_text(_key(class_set, "s2"))
    (subs / "s2" / "ANSWERS.toml").write_text(_key(class_set, "s2"))
    rows = _rows(subs, class_set)
    assert rows["s1"].status == rows["s2"].status == "duplicate-submission"
    assert "ignoring case" in rows["s1"].message and "ANSWERS.toml, answers.toml" in rows["s2"].message
    assert len(rows) == 7  # both entries of s1 are s1's row, not strays


def _without_variant_line(sheet: str) -> str:
    return re.sub(r"(?m)^variant = .*\n", "", sheet)


def test_a_sheet_naming_another_student_in_any_case_is_a_variant_mismatch(class_set, tmp_path):
    """Roster ids match ignoring case everywhere, the sheet's ``student`` line too: s2 handing in s1's
    sheet with the variant line deleted and ``student = "S1"`` is s1's sheet."""
    subs = tmp_path / "subs"
    subs.mkdir()
    s1 = _without_variant_line(_key(class_set, "s1"))
    (subs / "s2.toml").write_text(re.sub(r'(?m)^student = .*$', 'student = "S1"', s1))
    (subs / "s3.toml").write_text(re.sub(r'(?m)^student = .*$', 'student = "S3"', _without_variant_line(_key(class_set, "s3"))))
    rows = _rows(subs, class_set)
    assert rows["s2"].status == "variant-mismatch: belongs to s1"
    assert rows["s3"].status == "graded"  # one's own id in capitals is still one's own sheet


def _with_a_big_variant_index(monkeypatch, extra: int) -> None:
    """The class's variant index padded with ``extra`` variants of students elsewhere: what a
    5,000-student manifest puts in it, without writing 5,000 variants."""
    from problemgen.classes import sheet_class

    real = sheet_class.variant_owners
    monkeypatch.setattr(sheet_class, "variant_owners",
                        lambda class_dir: {**real(class_dir), **{f"other-{i:012x}": f"x{i}" for i in range(extra)}})


def test_a_sheet_naming_someone_off_the_roster_costs_a_look_up_not_a_walk_over_the_class(class_set, tmp_path,
                                                                                          monkeypatch):
    """Each sheet whose variant line was deleted and whose ``student`` line names someone else once
    walked every variant of the class, folding each id: quadratic in the class size (a 4,000-student
    class whose sheets say a name took 1.9 s of CPU against 1.0 s)."""
    _with_a_big_variant_index(monkeypatch, 5000)
    folded = []
    real_key = entries.student_key
    monkeypatch.setattr(entries, "student_key", lambda name: folded.append(name) or real_key(name))
    subs = tmp_path / "subs"
    subs.mkdir()
    for i in range(2, 8):
        sheet = _without_variant_line(_key(class_set, f"s{i}"))
        (subs / f"s{i}.toml").write_text(re.sub(r"(?m)^student = .*$", 'student = "Ana Lopez"', sheet))
    rows = _rows(subs, class_set)
    assert [rows[f"s{i}"].status for i in range(2, 8)] == ["graded"] * 6
    assert len(folded) < 2 * 5000  # the index is made once (5,000 folds); six walks of it were 30,000


def test_the_jobs_sent_to_workers_do_not_grow_with_the_class(class_set, tmp_path, monkeypatch):
    """Every job once carried the class's whole variant index, pickled again with each batch sent to a
    worker: bytes growing as the class times the batches. The index now goes to each worker once."""
    from problemgen.classes import sheet_class

    _with_a_big_variant_index(monkeypatch, 5000)
    sent = []
    real_map = sheet_class.ordered_map
    monkeypatch.setattr(sheet_class, "ordered_map", lambda function, items, *rest: sent.extend(items) or
                        real_map(function, items, *rest))
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    (subs / "s2.toml").write_text(_key(class_set, "s1"))  # s1's sheet handed in by s2
    rows = _rows(subs, class_set, jobs=2)
    assert rows["s1"].status == "graded" and rows["s2"].status == "variant-mismatch: belongs to s1"
    assert max(len(pickle.dumps(job)) for job in sent) < 1000


def test_a_meta_line_given_twice_is_a_warning_and_a_gradebook_flag_not_silently_dropped(class_set, tmp_path):
    """A duplicated ``[meta]`` entry cannot say whose sheet it is: the report warns and the gradebook flags
    the student (as a part answered twice is reported), instead of grading it as though it said nothing."""
    subs = tmp_path / "subs"
    subs.mkdir()
    manifest = {e["student"]: e for e in json.loads((class_set / "manifest.json").read_text())["students"]}
    own = manifest["s2"]["variant_id"]
    (subs / "s2.toml").write_text(_key(class_set, "s2").replace(
        f'variant = "{own}"', f'variant = "{manifest["s3"]["variant_id"]}"\nvariant = "{own}"'))
    (subs / "s4.toml").write_text(_key(class_set, "s4").replace('student = "s4"', 'student = "s4\nstudent = "s1"'))
    run = run_class(_rows(subs, class_set).values(), tmp_path / "g", "json", "t")
    records = {r.student: r for r in run.records}
    report = json.loads((tmp_path / "g" / "reports" / "s2.json").read_text())
    assert any(w.startswith("[meta] variant: given more than once (lines 5 and 6)") for w in report["meta"]["warnings"])
    gradebook = {r["student"]: r for r in csv.DictReader((tmp_path / "g" / "gradebook.csv").open(encoding="utf-8"))}
    assert "[meta] variant: given more than once" in gradebook["s2"]["flags"]
    assert "[meta] student:" in gradebook["s4"]["flags"] and gradebook["s1"]["flags"] == ""
    assert {a["student"] for a in run.summary["attention"]} >= {"s2", "s4"}
    assert records["s2"].score == 1.0  # still graded against the student's own variant


def test_code_entries_that_differ_only_in_case_are_one_student_refused_as_a_duplicate(tmp_path):
    from problemgen.classes.code_class import class_entries

    (tmp_path / "Ana.py").write_text("")
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / "softmax.py").write_text("")
    (tmp_path / "ben.py").write_text("")
    found = {e.path.name: e for e in class_entries(tmp_path)}
    assert [found[n].refused.startswith("duplicate-submission") for n in ("Ana.py", "ana")] == [True, True]
    assert found["ben.py"].accepted and found["ben.py"].name == "ben"
    assert {found["Ana.py"].name, found["ana"].name} == {"Ana.py", "ana"}  # each row keeps its own spelling


def test_a_folder_without_an_answer_file_is_no_second_submission(class_set, tmp_path):
    subs = tmp_path / "subs"
    for folder in ("s1", "S3", "s3", "S4", "s4"):
        (subs / folder).mkdir(parents=True)
    (subs / "s1.toml").write_text(_key(class_set, "s1"))  # beside an empty s1/
    (subs / "s4" / "answers.toml").write_text(_key(class_set, "s4"))  # beside an empty S4/
    rows = _rows(subs, class_set)
    assert (rows["s1"].status, rows["s1"].report.score) == ("graded", 1.0)
    assert rows["s3"].status == "missing"  # two empty folders are no submission at all, not two
    assert (rows["s4"].status, rows["s4"].report.score) == ("graded", 1.0)
    assert len(rows) == 7


def test_a_code_folder_without_a_py_file_beside_a_submission_is_left_out(tmp_path):
    from problemgen.classes.code_class import class_entries

    for folder in ("ana", "ben", "cy"):
        (tmp_path / folder).mkdir()
    (tmp_path / "ana.py").write_text("")
    (tmp_path / "ben.py").write_text("")
    (tmp_path / "ben" / "notes.txt").write_text("")
    found = [(e.path.name, e.name, e.refused) for e in class_entries(tmp_path)]
    assert found == [("ana.py", "ana", ""), ("ben.py", "ben", ""), ("cy", "cy", "")]  # cy alone is still a row


APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        "
"""The first bytes of a ._name file, the metadata macOS writes beside a file it zips or copies."""


def test_files_the_operating_system_adds_get_no_rows_and_the_summary_counts_them(class_set, tmp_path, capsys):
    """A folder unzipped on a Mac or shown by Windows gains .DS_Store, ._s1.toml, __MACOSX, Thumbs.db: not
    submissions, and as refused rows they filled "Needs attention" and the entry count."""
    from problemgen.cli import main

    subs = tmp_path / "subs"
    (subs / "__MACOSX").mkdir(parents=True)
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    for name in ("._s1.toml", ".DS_Store", "Thumbs.db", "desktop.ini", "__MACOSX/._s1.toml"):
        (subs / name).write_bytes(APPLE_DOUBLE)
    (subs / ".hidden.toml").write_text("")  # any other hidden entry is still a refused row
    with pytest.raises(SystemExit):
        main(["grade", str(subs), "--variants", str(class_set), "-o", str(tmp_path / "g")])
    rows = {r["student"]: r["status"] for r in csv.DictReader((tmp_path / "g" / "gradebook.csv").open(encoding="utf-8"))}
    assert rows["s1"] == "graded" and rows[".hidden.toml"] == "refused: hidden entry" and len(rows) == 8
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    assert summary["warnings"] == ["left out 5 files the operating system added, not submissions: "
                                   ".DS_Store, ._s1.toml, Thumbs.db, __MACOSX, desktop.ini"]
    assert "warning: left out 5 files the operating system added" in capsys.readouterr().err


def test_a_folder_holding_only_apple_double_files_is_no_second_code_submission(tmp_path):
    """Staging skips ._softmax.py, but the class scan counted it as code: a leftover ana/ with only macOS's
    metadata made ana.py a duplicate-submission, graded nowhere."""
    from problemgen.classes.code_class import class_entries

    (tmp_path / "ana.py").write_text("def softmax(x):\n    return x\n")
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / "._softmax.py").write_bytes(APPLE_DOUBLE)
    assert [(e.path.name, e.name, e.refused) for e in class_entries(tmp_path)] == [("ana.py", "ana", "")]


def test_a_code_folder_zipped_on_a_mac_grades_as_without_its_apple_double_files(tmp_path):
    """macOS writes ._softmax.py beside softmax.py; staging took it for a module and refused the submission."""
    from problemgen.code.sandbox.staging import collect

    folder = tmp_path / "ana"
    folder.mkdir()
    (folder / "softmax.py").write_text("def softmax(x):\n    return x\n")
    (folder / "._softmax.py").write_bytes(APPLE_DOUBLE)
    sources, entry = collect(folder, entry_names=("softmax.py",))
    assert list(sources) == ["softmax.py"] and entry == "softmax.py"


def test_a_class_whose_student_ids_differ_only_in_case_is_refused(class_set, tmp_path):
    from problemgen.classes.sheet_class import roster

    manifest = json.loads((class_set / "manifest.json").read_text())
    manifest["students"][0]["student"] = "S2"  # beside s2
    (class_set / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ProblemgenError, match="'S2' and 's2' differ only in case"):
        roster(class_set)


def test_a_class_set_that_did_not_finish_writing_is_refused_not_graded_with_fewer_students(class_set, tmp_path,
                                                                                           capsys):
    """manifest.json is written last (and removed when a rerun starts): without it, students the run never
    reached would not be in the gradebook at all, and their sheets would be strays."""
    from problemgen.cli import main

    (class_set / "manifest.json").unlink()
    shutil.rmtree(class_set / "keys" / "s7")  # the run stopped before the last student
    subs = tmp_path / "subs"
    subs.mkdir()
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", str(subs), "--variants", str(class_set), "-o", str(tmp_path / "g")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "did not finish writing" in err and err.count("\n") == 1
    assert "again with --force" in err  # the folder is not empty: without --force the rerun is refused
    assert not (tmp_path / "g").exists()


def test_sheet_and_code_classes_share_one_status_vocabulary():
    from problemgen.classes import code_class, sheet_class
    from problemgen.classes.rows import STATUSES

    assert STATUSES == ("graded", "missing", "unreadable", "variant-mismatch", "duplicate-submission", "refused")
    assert sheet_class.run_class is code_class.run_class


@pytest.mark.slow
def test_class_grading_memory_grows_by_a_small_record_per_sheet(tmp_path, monkeypatch):
    """Reports are written as produced: the memory held per extra sheet is a compact record."""
    import gc
    import tracemalloc

    from problemgen.classes.sheet_class import grade_class
    from problemgen.documents import worksheet

    monkeypatch.setenv(SECRET_ENV, "a long class secret for tests")
    peaks = {}
    for n in (20, 80):
        roster = tmp_path / f"roster{n}.csv"
        roster.write_text("id\n" + "".join(f"s{i}\n" for i in range(n)), encoding="utf-8")
        worksheet.write_class_set(worksheet.WorksheetJob("mixed_exam", tmp_path / f"c{n}"), roster, SECRET_ENV)
        subs = tmp_path / f"subs{n}"
        subs.mkdir()
        for i in range(n):
            shutil.copy(tmp_path / f"c{n}" / "keys" / f"s{i}" / "key.toml", subs / f"s{i}.toml")
        gc.collect()
        tracemalloc.start()
        grade_class(subs, tmp_path / f"c{n}", tmp_path / f"g{n}")
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    per_sheet = (peaks[80] - peaks[20]) / 60
    # measured alone: about 2.5 KB (a report held until the end cost about 18 KB); margin for other tests' state
    assert per_sheet < 6 * 1024, f"{per_sheet / 1024:.1f} KB held per extra sheet"


# --------------------------------------------------------------------------- whose


def test_whose_traces_sheets_worksheets_files_and_variant_ids_to_their_student(class_set, tmp_path, capsys):
    from problemgen.classes.whose import whose
    from problemgen.cli import main

    manifest = {e["student"]: e for e in json.loads((class_set / "manifest.json").read_text())["students"]}
    leaked = tmp_path / "leaked.md"
    leaked.write_text("posted online:\n" + (class_set / "handouts" / "s3" / "worksheet.md").read_text())
    assert whose(str(leaked), class_set).student == "s3"
    assert whose(str(class_set / "keys" / "s5" / "key.toml"), class_set).student == "s5"
    assert whose(str(class_set / "handouts" / "s2" / "answers.toml"), class_set).student == "s2"
    assert whose(manifest["s4"]["variant_id"], class_set).student == "s4"
    assert whose("masking-000000000000", class_set) is None
    with pytest.raises(SystemExit) as exit_info:
        main(["whose", str(leaked), "--class", str(class_set)])
    assert exit_info.value.code == 0 and capsys.readouterr().out.startswith(f"s3: variant {manifest['s3']['variant_id']}")
    with pytest.raises(SystemExit) as exit_info:
        main(["whose", "masking-000000000000", "--class", str(class_set)])
    assert exit_info.value.code == 1
    with pytest.raises(SystemExit) as exit_info:  # neither a file nor a variant id: bad input
        main(["whose", "nobody", "--class", str(class_set)])
    assert exit_info.value.code == 2


@pytest.mark.grader_fault
def test_a_grader_fault_costs_one_answer_and_flags_the_student_for_a_regrade(class_set, tmp_path, monkeypatch):
    """A reader that raises by mistake (a bug) makes that answer invalid; the rest of the sheet is graded and
    the gradebook and the summary name the student and the part."""
    from problemgen.answers import types
    from problemgen.classes.sheet_class import class_rows

    def faulty(original):
        def read(self, part, raw):
            if raw == 424242:
                raise RuntimeError("a bug in a reader")
            return original(self, part, raw)
        return read

    for name in ("integer", "number"):
        kind = type(types.get(name))
        monkeypatch.setattr(kind, "read", faulty(kind.read))
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    (subs / "s2.toml").write_text(re.sub(r"(?m)^allowed = .*$", "allowed = 424242", _key(class_set, "s2")))
    run = run_class(class_rows(subs, class_set)[2], tmp_path / "g", "json", "t")
    records = {r.student: r for r in run.records}
    assert records["s2"].status == "graded" and records["s2"].faults == ("p2.allowed",)
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "g" / "gradebook.csv").open(encoding="utf-8"))}
    assert rows["s2"]["flags"] == "grader fault on p2.allowed: regrade after a fix" and rows["s1"]["flags"] == ""
    assert {"student": "s2", "status": "graded", "message": "grader fault on p2.allowed"} in run.summary["attention"]
    report = json.loads((tmp_path / "g" / "reports" / "s2.json").read_text())
    part = next(p for g in report["problems"] for p in g["parts"] if p["name"] == "p2.allowed")
    assert part["status"] == "invalid" and "fault in problemgen" in part["feedback"]
    assert records["s2"].points == records["s1"].points - part["max_score"]  # the faulted part's points alone
    assert report["meta"]["faults"] == ["p2.allowed"] and "RuntimeError: a bug in a reader" in report["meta"]["warnings"][0]


def test_whose_finds_the_owner_of_an_edited_latex_handout_of_a_bank_whose_id_has_an_underscore(tmp_path,
                                                                                                monkeypatch):
    """LaTeX prints `attention\\_basics-…`; the id was not found once the file's bytes had changed."""
    from problemgen.classes.whose import whose
    from problemgen.documents import worksheet

    monkeypatch.setenv(SECRET_ENV, "a long class secret for tests")
    roster = tmp_path / "roster.csv"
    roster.write_text("id\nana\nbo\n", encoding="utf-8")
    out = tmp_path / "class"
    worksheet.write_class_set(worksheet.WorksheetJob("attention_basics", out, formats=("md", "tex")), roster, SECRET_ENV)
    tex = (out / "handouts" / "bo" / "worksheet.tex").read_text(encoding="utf-8")
    assert "attention\\_basics-" in tex
    leaked = tmp_path / "leaked.tex"
    leaked.write_text(tex.replace("bo", "??"), encoding="utf-8")  # the name line edited away
    assert whose(str(leaked), out).student == "bo"
    variant = json.loads((out / "manifest.json").read_text())["students"][1]["variant_id"]
    assert whose(variant.replace("_", "\\_"), out).student == "bo"


def test_whose_calls_a_mistyped_path_an_error_not_a_leak_from_no_student(class_set, tmp_path):
    """Anything not a file was looked up as a variant id, so a wrong path said "matches no student"."""
    from problemgen.classes.whose import whose

    with pytest.raises(ProblemgenError, match="no such file, and not a variant id"):
        whose(str(tmp_path / "leaked" / "worksheet.md"), class_set)
    assert whose("masking-000000000000", class_set) is None


def test_a_regrade_into_the_same_folder_removes_reports_the_new_run_did_not_write(class_set, tmp_path, capsys):
    """A sheet withdrawn since the last run must not leave its old graded report beside a gradebook that
    now says missing (a course hands out reports/ as it is). Reports in another format, and files that
    are no reports, are other outputs and stay."""
    from problemgen.cli import main

    subs, out = tmp_path / "subs", tmp_path / "g"
    subs.mkdir()
    for student in ("s1", "s2"):
        (subs / f"{student}.toml").write_text(_key(class_set, student))
    for fmt in ("md", "json"):
        with pytest.raises(SystemExit):
            main(["grade", str(subs), "--variants", str(class_set), "-o", str(out), "--format", fmt])
    (out / "reports" / "notes.txt").write_text("kept")
    (subs / "s2.toml").unlink()
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", str(subs), "--variants", str(class_set), "-o", str(out), "--format", "json"])
    assert exit_info.value.code == 0
    assert sorted(p.name for p in (out / "reports").iterdir()) == ["notes.txt", "s1.json", "s1.md", "s2.md"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["warnings"] == ["removed reports/s2.json, left by an earlier run: this run wrote no report for it"]
    assert "warning: removed reports/s2.json" in capsys.readouterr().err


def test_a_class_run_that_fails_midway_keeps_the_reports_of_the_earlier_run(class_set, tmp_path):
    """Stale reports go only once every new one is written: a run that stops early loses nothing."""
    subs, out = tmp_path / "subs", tmp_path / "g"
    subs.mkdir()
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    run_class(_rows(subs, class_set).values(), out, "json", "t")

    def failing_rows():
        yield ClassRow("s2", "missing", message="no answer sheet submitted")
        raise RuntimeError("the run stops here")

    with pytest.raises(RuntimeError):
        run_class(failing_rows(), out, "json", "t")
    assert (out / "reports" / "s1.json").exists()


@pytest.mark.parametrize("inside", ["subs", "subs/grades", "class", "class/handouts/graded"])
def test_an_output_directory_inside_an_input_folder_is_refused_before_anything_is_written(class_set, tmp_path, capsys,
                                                                                         inside):
    """Grades written into the submissions are taken for entries by the next run; written into the class set,
    they sit among what students are handed. Either is one error line, exit 2, and nothing written."""
    from problemgen.cli import main

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    before = sorted(p for p in tmp_path.rglob("*"))
    out = tmp_path / inside if not inside.startswith("class") else class_set.parent / inside
    with pytest.raises(SystemExit) as exit_info:
        main(["grade", str(subs), "--variants", str(class_set), "-o", str(out)])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith("error: -o ") and err.count("\n") == 1
    assert "choose an output outside it" in err or "choose another output" in err
    assert sorted(p for p in tmp_path.rglob("*")) == before


def test_a_code_class_refuses_an_output_directory_inside_its_submissions(tmp_path):
    from problemgen.classes.code_class import grade_class

    (tmp_path / "ana.py").write_text("def softmax(x):\n    return x\n")
    with pytest.raises(ProblemgenError, match="is the submissions directory"):
        grade_class(None, tmp_path, None, tmp_path)


def test_grade_code_repeats_the_summarys_warnings_on_stderr_as_grade_does(tmp_path, capsys):
    """grade prints each warning of the class summary (files left out, stale reports removed, platform notes)
    on stderr, then what it wrote; grade-code printed neither, so a log of stderr missed them for code."""
    from problemgen.cli import main

    subs, out = tmp_path / "subs", tmp_path / "g"
    subs.mkdir()
    for student in ("ana", "ben"):
        (subs / f"{student}.py").write_text("def softmax(x):\n    return x\n")
    argv = ["grade-code", str(subs), "--task", "softmax", "--public-only", "-o", str(out), "--format", "json"]
    with pytest.raises(SystemExit):
        main(argv)
    capsys.readouterr()
    (subs / "ben.py").unlink()
    (subs / ".DS_Store").write_bytes(APPLE_DOUBLE)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    assert capsys.readouterr().err.splitlines() == [
        "warning: left out 1 file the operating system added, not submissions: .DS_Store",
        "warning: removed reports/ben.json, left by an earlier run: this run wrote no report for it",
        f"wrote 6 files to {out}"]


def test_a_regrade_never_removes_the_report_it_wrote_found_under_another_name(class_set, tmp_path):
    """On a case-insensitive file system (macOS, Windows) an earlier run's reports/S1.json is the very file
    this run writes as s1.json (a code class names reports after the submitted files, whose case may
    change); removing it as stale would remove the new report. A hard link to the new report, made the
    moment it is written, stands in for that here (reports are replaced by new files, not rewritten in
    place, so a link made before the run would be an earlier run's file)."""
    subs, out = tmp_path / "subs", tmp_path / "g"
    subs.mkdir()
    (subs / "s1.toml").write_text(_key(class_set, "s1"))
    run_class(_rows(subs, class_set).values(), out, "json", "t")
    reports = out / "reports"

    def same_file_under_another_name(done, total):
        (reports / "S1.json").unlink(missing_ok=True)
        os.link(reports / "s1.json", reports / "S1.json")

    run = run_class(_rows(subs, class_set).values(), out, "json", "t", progress=same_file_under_another_name)
    assert (out / "reports" / "S1.json").exists() and run.summary["warnings"] == []
