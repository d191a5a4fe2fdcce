"""Grades back to the course platform: `export canvas-grades` and `export moodle-grades`.

Each file is read back by a model of the platform's importer (tests/gradebook_import_readers.py), never
by the code that wrote it: the grade each roster student gets under their platform id, who is left out
and why, hostile roster names and file names, and the file format details both importers depend on.
The gradebooks are written by the class runner itself, so the exports read what `grade` writes.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from problemgen.classes.rows import GRADED, ClassRow
from problemgen.classes.runner import run_class
from problemgen.errors import ProblemgenError
from problemgen.exports import canvas_grades, moodle_grades
from problemgen.sheets.reports import CheckResult, Report
from tests.gradebook_import_readers import Refused, read_canvas, read_moodle

ROSTER = """id,name,canvas_id,email
ana,Ana Silva,4101,ana@uni.example
bob,Bob Stone,4102,bob@uni.example
zoe,Zoë Núñez,4103,zoe@uni.example
dan,Dan Wu,4104,dan@uni.example
eve,Eve Adams,4105,eve@uni.example
fay,Fay Ray,4106,fay@uni.example
gus,Gus Lee,4107,gus@uni.example
hal,Hal Kim,4108,hal@uni.example
ivy,Ivy Cole,4109,ivy@uni.example
"""
CANVAS_IDS = {"4101": "ana", "4102": "bob", "4103": "zoe", "4104": "dan", "4105": "eve", "4106": "fay",
              "4107": "gus", "4108": "hal", "4109": "ivy"}
EMAILS = {f"{s}@uni.example": s for s in CANVAS_IDS.values()}


def _report(*scores: float, meta: dict | None = None) -> Report:
    """A sheet of one-point parts scoring ``scores``."""
    return Report("Homework", tuple(CheckResult(f"p{i}.x", "correct" if s == 1 else "wrong", s == 1, s, 1.0, group=f"p{i}")
                                    for i, s in enumerate(scores, start=1)), meta or {})


def _wrong(*values) -> tuple:
    return tuple((f"p{i}.x", v) for i, v in enumerate(values, start=1))


def _class_run(tmp_path: Path, rows: list[ClassRow]) -> Path:
    run_class(rows, tmp_path / "grades", "text", "Homework")
    return tmp_path / "grades" / "gradebook.csv"


def _every_status(tmp_path: Path) -> Path:
    """One row of every status (and a grader fault, a possible copy, a stray entry), by the class runner."""
    return _class_run(tmp_path, [
        ClassRow("ana", GRADED, _report(1, 1, 1, 0.5)),  # 3.5 of 4
        ClassRow("bob", GRADED, _report(1, 0, 0, 0), wrong_answers=_wrong(7, 8, 9)),  # 1 of 4, a copy of ivy's?
        ClassRow("zoe", "missing"),
        ClassRow("dan", "unreadable", _report(0, 0, 0, 0), message="not UTF-8 text"),
        ClassRow("eve", "variant-mismatch: belongs to ana", _report(1, 1, 1, 1)),
        ClassRow("fay", "duplicate-submission", message="2 entries are fay's (fay.toml, Fay.toml)"),
        ClassRow("gus", "refused: symbolic link"),
        ClassRow("hal", GRADED, _report(1, 1, 1, 0, meta={"faults": ["p4.x"]})),
        ClassRow("ivy", GRADED, _report(1, 0, 0, 0), wrong_answers=_wrong(7, 8, 9)),
        ClassRow("=HYPERLINK(\"http://x\").toml", "refused: not on the roster: no student matches"),
    ])


@pytest.fixture
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    return path


def _canvas(tmp_path, gradebook, roster, **options):
    out = tmp_path / "canvas.csv"
    message = canvas_grades.build(gradebook=gradebook, roster=roster, assignment="Homework 3", assignment_id="48213",
                                  output=out, **options)
    return read_canvas(out.read_bytes()), message


def _moodle(tmp_path, gradebook, roster, **options):
    out = tmp_path / "moodle.csv"
    message = moodle_grades.build(gradebook=gradebook, roster=roster, assignment="Homework 3", output=out, **options)
    return read_moodle(out.read_bytes(), "email", "Homework 3", EMAILS), message


# ------------------------------------------------------------------------------------------ statuses


def test_canvas_imports_each_graded_sheet_under_the_students_canvas_id_and_nothing_for_the_rest(tmp_path, roster):
    canvas, message = _canvas(tmp_path, _every_status(tmp_path), roster)
    assert canvas.assignments == [("Homework 3", "48213")] and canvas.points_possible == {0: "4"}
    grades = {CANVAS_IDS[i]: g for i, g in canvas.grades_by_id("48213").items()}
    assert grades == {"ana": "3.5", "bob": "1", "ivy": "1"}  # each back under its roster id
    assert [s["name"] for s in canvas.students] == ["Ana Silva", "Bob Stone", "Ivy Cole"]
    assert "no submission, no grade written (--missing-zero writes 0): zoe" in message
    for line in ("dan: unreadable (not UTF-8 text)", "eve: variant-mismatch: belongs to ana",
                 "fay: duplicate-submission (2 entries are fay's (fay.toml, Fay.toml))", "gus: refused: symbolic link",
                 "hal: grader fault on p4.x: regrade after a fix",
                 '=HYPERLINK("http://x").toml: no roster student; refused: not on the roster'):
        assert f"\n  {line}" in message, message
    assert "bob: possible copy: shares 3 wrong answers only with ivy" in message  # written, and said


def test_moodle_imports_the_same_grades_by_email_and_never_stops_on_a_row(tmp_path, roster):
    grades, message = _moodle(tmp_path, _every_status(tmp_path), roster)
    assert grades == {"ana": 3.5, "bob": 1.0, "ivy": 1.0}
    assert "eve: variant-mismatch: belongs to ana" in message and "map from 'email'" in message


@pytest.mark.parametrize("export", ["canvas", "moodle"])
def test_a_student_without_a_submission_gets_zero_only_when_asked(tmp_path, roster, export):
    gradebook = _every_status(tmp_path)
    if export == "canvas":
        canvas, message = _canvas(tmp_path, gradebook, roster, missing_zero=True)
        grades = {CANVAS_IDS[i]: g for i, g in canvas.grades_by_id("48213").items()}
        assert grades["zoe"] == "0"
    else:
        grades, message = _moodle(tmp_path, gradebook, roster, missing_zero=True)
        assert grades["zoe"] == 0.0
    assert set(grades) == {"ana", "bob", "ivy", "zoe"} and "no submission" not in message  # and nobody else


def test_points_are_scaled_to_the_points_possible_and_written_as_both_platforms_read_them(tmp_path, roster):
    gradebook = _class_run(tmp_path, [ClassRow("ana", GRADED, _report(1, 1, 0.5)), ClassRow("bob", GRADED, _report(1, 1, 0)),
                                      ClassRow("zoe", GRADED, _report(1, 1, 1))])
    canvas, _ = _canvas(tmp_path, gradebook, roster, points_possible="100")
    assert canvas.points_possible == {0: "100"}
    assert canvas.grades_by_id("48213") == {"4101": "83.33", "4102": "66.67", "4103": "100"}
    out = tmp_path / "moodle.csv"
    message = moodle_grades.build(gradebook=gradebook, roster=roster, assignment="HW", output=out,
                                  points_possible="1000000")
    assert read_moodle(out.read_bytes(), "email", "HW", EMAILS, unlimited_grades=True) == {
        "ana": 833333.33, "bob": 666666.67, "zoe": 1000000.0}
    assert out.read_text(encoding="utf-8-sig").splitlines()[1:] == [  # never an exponent
        "ana@uni.example,833333.33", "bob@uni.example,666666.67", "zoe@uni.example,1000000"]
    assert "Moodle refuses grades above 100 unless the site allows unlimited grades" in message


def test_students_of_different_maximum_points_need_the_points_possible_given(tmp_path, roster):
    gradebook = _class_run(tmp_path, [ClassRow("ana", GRADED, _report(1, 1)), ClassRow("bob", GRADED, _report(1, 1, 1))])
    with pytest.raises(ProblemgenError, match=r"give --points-possible .*rows give 2, 3"):
        _canvas(tmp_path, gradebook, roster)
    canvas, _ = _canvas(tmp_path, gradebook, roster, points_possible="10")
    assert canvas.grades_by_id("48213") == {"4101": "10", "4102": "10"}


# ------------------------------------------------------------------------------------------ identities


def test_roster_ids_round_trip_to_platform_ids_whatever_the_id_column_and_case(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("Student_ID;Full Name;Canvas User;E-Mail\nS-01;Ana;9001;Ana@Uni.Example\n"
                      "s02;Bob;9002;bob@uni.example\ns.3;Cy;9003;cy@uni.example\n", encoding="utf-8")
    gradebook = _class_run(tmp_path, [ClassRow("s-01", GRADED, _report(1)), ClassRow("S02", GRADED, _report(0)),
                                      ClassRow("s.3", GRADED, _report(1))])
    canvas, _ = _canvas(tmp_path, gradebook, roster, match_by="Canvas User")
    assert canvas.grades_by_id("48213") == {"9001": "1", "9002": "0", "9003": "1"}
    out = tmp_path / "moodle.csv"
    moodle_grades.build(gradebook=gradebook, roster=roster, assignment="Homework 3", output=out, match_by="e-mail")
    users = {"Ana@Uni.Example": "S-01", "bob@uni.example": "s02", "cy@uni.example": "s.3"}  # written as the roster has them
    assert read_moodle(out.read_bytes(), "e-mail", "Homework 3", users) == {"S-01": 1.0, "s02": 0.0, "s.3": 1.0}


def test_a_student_the_platform_could_not_find_is_left_out_with_the_reason(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text('id,canvas_id,email\nana,,=1+1@x.example\nbob,41-02,"b""ob@x.example"\nzoe,4103,0\n'
                      'dan,4104,+dan@x.example\neve,4105,eve@x.example\n', encoding="utf-8")
    gradebook = _class_run(tmp_path, [ClassRow(s, GRADED, _report(1)) for s in ("ana", "bob", "zoe", "dan", "eve")])
    canvas, message = _canvas(tmp_path, gradebook, roster)
    assert canvas.grades_by_id("48213") == {"4103": "1", "4104": "1", "4105": "1"}
    assert "ana: no Canvas user id in the roster" in message and "bob: '41-02' is not a Canvas user id" in message
    out = tmp_path / "moodle.csv"
    message = moodle_grades.build(gradebook=gradebook, roster=roster, assignment="Homework 3", output=out)
    assert read_moodle(out.read_bytes(), "email", "Homework 3", {"eve@x.example": "eve"}) == {"eve": 1.0}
    for student in ("ana", "bob", "zoe", "dan"):  # each would have stopped Moodle's whole import
        assert f"\n  {student}: " in message


def test_two_students_with_one_platform_id_are_refused_before_anything_is_written(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,canvas_id\nana,4101\nbob,4101\n", encoding="utf-8")
    gradebook = _class_run(tmp_path, [ClassRow("ana", GRADED, _report(1)), ClassRow("bob", GRADED, _report(0))])
    with pytest.raises(ProblemgenError, match="canvas_id '4101' is also ana's"):
        _canvas(tmp_path, gradebook, roster)
    assert not (tmp_path / "canvas.csv").exists()


@pytest.mark.parametrize("export, column, values", [(_canvas, "canvas_id", ("4101", "04101")),
                                                    (_moodle, "email", ("ana@uni.example", "Ana@Uni.Example"))])
def test_one_platform_id_spelt_two_ways_is_still_refused_as_two_students_sharing_it(tmp_path, export, column,
                                                                                     values):
    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,{column}\nana,{values[0]}\nbob,{values[1]}\n", encoding="utf-8")
    gradebook = _class_run(tmp_path, [ClassRow("ana", GRADED, _report(1)), ClassRow("bob", GRADED, _report(0))])
    with pytest.raises(ProblemgenError, match=f"line 3: {column} '{values[1]}' is also ana's") as refused:
        export(tmp_path, gradebook, roster)
    # the reason given is the one that applies: 04101 and 4101 differ in a leading zero, not in case
    assert f"('{values[0]}': to the platform both are '{values[0]}')" in str(refused.value)
    assert [p.name for p in tmp_path.glob("*.csv")] == ["roster.csv"]  # nothing written


# ------------------------------------------------------------------------------------------ hostile text


GRADEBOOK_HEADER = "student,status,score,points,max_points,variant,flags,overrides,message\n"
"""The header a class run writes on gradebook.csv, for gradebooks edited by hand."""

HOSTILE_NAMES = ["=cmd|' /C calc'!A0", "Doe, Jane", 'Say "hi"', "two\nlines", "Zoë Núñez 山田", "@SUM(A1)", "+1", "-2",
                 "\tTab"]


def test_hostile_roster_names_are_one_cell_each_and_never_a_formula(tmp_path):
    roster = tmp_path / "roster.csv"
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerows([["id", "name", "canvas_id", "section"],
                      *([f"s{i}", name, str(5000 + i), name] for i, name in enumerate(HOSTILE_NAMES))])
    roster.write_text(buffer.getvalue(), encoding="utf-8")
    gradebook = _class_run(tmp_path, [ClassRow(f"s{i}", GRADED, _report(1)) for i in range(len(HOSTILE_NAMES))])
    canvas, _ = _canvas(tmp_path, gradebook, roster)
    expected = ["'=cmd|' /C calc'!A0", "Doe, Jane", 'Say "hi"', "two lines", "Zoë Núñez 山田", "'@SUM(A1)", "'+1", "'-2",
                "Tab"]
    assert [s["name"] for s in canvas.students] == expected
    assert [s["section"] for s in canvas.students] == expected  # any roster cell the file copies
    assert [s["id"] for s in canvas.students] == [str(5000 + i) for i in range(len(HOSTILE_NAMES))]
    lines = (tmp_path / "canvas.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 + len(HOSTILE_NAMES)  # one physical line per row: Canvas sniffs the separator by lines


def test_a_hostile_file_name_in_the_gradebook_reaches_neither_the_file_nor_the_terminal_raw(tmp_path, roster):
    gradebook = _class_run(tmp_path, [ClassRow("ana", GRADED, _report(1)),
                                      ClassRow("=cmd()\x1b[2J.toml", "refused: not on the roster")])
    canvas, message = _canvas(tmp_path, gradebook, roster)
    assert canvas.grades_by_id("48213") == {"4101": "1"} and "cmd" not in (tmp_path / "canvas.csv").read_text()
    assert "=cmd()\\x1b[2J.toml: no roster student" in message and "\x1b" not in message


def test_the_assignment_column_is_the_canvas_assignment_of_that_id_whatever_its_name(tmp_path, roster):
    gradebook = _class_run(tmp_path, [ClassRow("ana", GRADED, _report(1))])
    out = tmp_path / "canvas.csv"
    for name in ("Quiz (2), part 3", '=HW "1"', "Ünïcode – quiz"):
        canvas_grades.build(gradebook=gradebook, roster=roster, assignment=name, assignment_id="77", output=out)
        (title, assignment_id), = read_canvas(out.read_bytes()).assignments
        assert assignment_id == "77" and title.removeprefix("'") == name


# ------------------------------------------------------------------------------------------ the file


def test_the_file_is_utf8_with_a_byte_order_mark_that_both_importers_read_past(tmp_path, roster):
    gradebook = _class_run(tmp_path, [ClassRow("zoe", GRADED, _report(1))])
    canvas, _ = _canvas(tmp_path, gradebook, roster)
    assert (tmp_path / "canvas.csv").read_bytes().startswith(b"\xef\xbb\xbfStudent,ID,SIS User ID,SIS Login ID,Section,")
    assert canvas.students[0]["name"] == "Zoë Núñez"
    grades, _ = _moodle(tmp_path, gradebook, roster)
    assert grades == {"zoe": 1.0}


@pytest.mark.parametrize("name", ["Final Grade", "HW1 current score", "two\nlines", ""])
def test_an_assignment_name_canvas_would_drop_or_misread_is_refused(tmp_path, roster, name):
    gradebook = _class_run(tmp_path, [ClassRow("ana", GRADED, _report(1))])
    with pytest.raises(ProblemgenError, match="--assignment"):
        canvas_grades.build(gradebook=gradebook, roster=roster, assignment=name, assignment_id="1",
                            output=tmp_path / "c.csv")
    assert not (tmp_path / "c.csv").exists()
    assert read_canvas(b"Student,ID,Section,Final Grade (1)\n").assignments == []  # what Canvas would have done


# ------------------------------------------------------------------------------------------ the command


def _run(capsys, *args: str) -> tuple[int, str]:
    from problemgen.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return exit_info.value.code, capsys.readouterr().err


def test_the_command_writes_the_file_and_says_who_got_no_grade(tmp_path, roster, capsys):
    gradebook = _every_status(tmp_path)
    out = tmp_path / "grades" / "canvas-import.csv"  # beside the gradebook: no input is overwritten
    code, err = _run(capsys, "export", "canvas-grades", "--gradebook", str(gradebook), "--roster", str(roster),
                     "--assignment", "Homework 3", "--assignment-id", "48213", "-o", str(out))
    assert code == 0, err
    assert f"wrote {out}: 3 grades for Canvas assignment 48213, out of 4 points" in err
    assert "eve: variant-mismatch: belongs to ana" in err
    assert set(read_canvas(out.read_bytes()).grades_by_id("48213")) == {"4101", "4102", "4109"}


@pytest.mark.parametrize("export, args, message", [
    ("canvas-grades", ["--assignment-id", "48-213"], "--assignment-id '48-213': expected the digits"),
    ("canvas-grades", ["--points-possible", "0"], "--points-possible '0': expected a number of points above 0"),
    ("moodle-grades", ["--points-possible", "nan"], "--points-possible 'nan'"),
    ("canvas-grades", ["--points-possible", "1e30"], "--points-possible '1e30': expected a number of points above 0 "
                                                     "and at most 1,000,000,000"),
    ("canvas-grades", ["--match-by", "sis_id"], "no column 'sis_id' with the platform's ids"),
    ("moodle-grades", ["--gradebook", "grades/summary.json"], "not a gradebook.csv"),
    ("moodle-grades", ["-o", "roster.csv"], "is the --roster"),
    ("canvas-grades", ["-o", "grades/gradebook.csv"], "is the --gradebook"),
])
def test_what_cannot_work_is_one_error_line_and_writes_nothing(tmp_path, roster, capsys, monkeypatch, export, args,
                                                               message):
    gradebook = _every_status(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = {p: p.read_bytes() for p in (gradebook, roster)}
    options = {"--gradebook": str(gradebook), "--roster": "roster.csv", "--assignment": "HW",
               "-o": "out.csv", **({"--assignment-id": "1"} if export == "canvas-grades" else {})}
    options.update(dict(zip(args[::2], args[1::2])))
    code, err = _run(capsys, "export", export, *(x for pair in options.items() for x in pair))
    assert code == 2 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "out.csv").exists() and {p: p.read_bytes() for p in before} == before


def test_the_library_too_refuses_to_write_over_what_it_reads(tmp_path, roster):
    gradebook = _class_run(tmp_path, [ClassRow("ana", GRADED, _report(1))])
    before = gradebook.read_bytes(), roster.read_bytes()
    for output in (gradebook, roster):
        with pytest.raises(ProblemgenError, match="choose another output"):
            moodle_grades.build(gradebook=gradebook, roster=roster, assignment="HW", output=output)
    assert (gradebook.read_bytes(), roster.read_bytes()) == before


@pytest.mark.parametrize("row, message", [
    ("ana,graded,1.0,ten,10,,,,", r"gradebook.csv, line 2: points 'ten' is not a number of points"),
    ("ana,passed,1.0,10,10,,,,", r"line 2: unknown status 'passed'"),
    ("ana,graded,1.0,,10,,,,", r"line 2: points '' is not a number of points"),  # a blank is no 0
    ("ana,graded,1.0", r"line 2: points cell missing \(the row is cut short\)"),
])
def test_a_gradebook_someone_edited_into_nonsense_is_refused_with_its_line(tmp_path, roster, row, message):
    gradebook = tmp_path / "gradebook.csv"
    gradebook.write_text(GRADEBOOK_HEADER + row + "\n", encoding="utf-8")
    with pytest.raises(ProblemgenError, match=message):
        _canvas(tmp_path, gradebook, roster)


def test_a_gradebook_of_another_class_is_refused_rather_than_an_empty_file_written(tmp_path, roster):
    gradebook = _class_run(tmp_path, [ClassRow("zed", GRADED, _report(1)), ClassRow("yan", GRADED, _report(0))])
    with pytest.raises(ProblemgenError, match="no student of the roster is in the gradebook"):
        _moodle(tmp_path, gradebook, roster)
    assert not (tmp_path / "moodle.csv").exists()


def test_a_gradebook_edited_to_give_more_than_the_maximum_is_refused_with_its_line(tmp_path, roster):
    gradebook = tmp_path / "gradebook.csv"
    gradebook.write_text(GRADEBOOK_HEADER +
                         "ana,graded,1.0,10,10,,,,\nbob,graded,3.0,30,10,,,,\n", encoding="utf-8")
    with pytest.raises(ProblemgenError, match=r"gradebook.csv, line 3: points '30' above max_points '10'"):
        _canvas(tmp_path, gradebook, roster)
    assert not (tmp_path / "canvas.csv").exists()


def test_the_moodle_model_refuses_what_moodle_refuses():
    """The reader is only a check if it fails where Moodle fails."""
    with pytest.raises(Refused, match="no user 'nobody@x'"):
        read_moodle(b"email,HW\nnobody@x,1\n", "email", "HW", {})
    with pytest.raises(Refused, match="gradevaluetoobig"):
        read_moodle(b"email,HW\na@x,101\n", "email", "HW", {"a@x": "a"})
    with pytest.raises(Refused, match="csvweirdcolumns"):
        read_moodle(b"email,HW\na@x,1,2\n", "email", "HW", {"a@x": "a"})
    assert read_moodle(b"email,HW\na@x,\n", "email", "HW", {"a@x": "a"}) == {"a": None}  # a blank erases
    with pytest.raises(Refused, match="invalid header"):
        read_canvas(b"Name,ID,Section,HW (1)\n")


# ------------------------------------------------------------------------------------------ end to end


def test_a_canvas_download_graded_with_its_layout_goes_back_to_canvas_under_the_same_ids(tmp_path, roster, capsys,
                                                                                       monkeypatch):
    """download -> grade --layout canvas -> export canvas-grades -> what Canvas imports."""
    from problemgen.documents import worksheet

    monkeypatch.setenv("GRADES_BACK_TEST_SECRET", "a long class secret for the grades-back tests")
    class_set = tmp_path / "class"
    worksheet.write_class_set(worksheet.WorksheetJob("masking", class_set), roster, "GRADES_BACK_TEST_SECRET")
    key = (class_set / "keys" / "ana" / "key.toml").read_text(encoding="utf-8")
    download = tmp_path / "canvas_download"
    download.mkdir()
    (download / "silvaana_4101_9001_answers.toml").write_text(key, encoding="utf-8")
    (download / "stonebob_4102_9002_answers.toml").write_text(key, encoding="utf-8")  # ana's sheet, handed in by bob
    (download / "nunezzoe_4103_9003_answers.toml").write_bytes(b"\xff\xfe not text")
    code, err = _run(capsys, "grade", str(download), "--variants", str(class_set), "-o", str(tmp_path / "grades"),
                     "--layout", "canvas", "--roster", str(roster))
    assert code == 0, err
    out = tmp_path / "grades" / "canvas-import.csv"
    code, err = _run(capsys, "export", "canvas-grades", "--gradebook", str(tmp_path / "grades" / "gradebook.csv"),
                     "--roster", str(roster), "--assignment", "Masking", "--assignment-id", "501",
                     "--points-possible", "10", "-o", str(out))
    assert code == 0, err
    assert read_canvas(out.read_bytes()).grades_by_id("501") == {"4101": "10"}
    assert "bob: variant-mismatch: belongs to ana" in err and "zoe: unreadable" in err
    assert "no submission, no grade written (--missing-zero writes 0): dan, eve, fay, gus, hal, ivy" in err


def test_a_moodle_download_graded_with_its_layout_goes_back_to_moodle_by_email(tmp_path, roster, capsys, monkeypatch):
    """download -> grade --layout moodle -> export moodle-grades -> what Moodle imports."""
    from problemgen.documents import worksheet

    monkeypatch.setenv("GRADES_BACK_TEST_SECRET", "a long class secret for the grades-back tests")
    class_set = tmp_path / "class"
    worksheet.write_class_set(worksheet.WorksheetJob("masking", class_set), roster, "GRADES_BACK_TEST_SECRET")
    download = tmp_path / "moodle_download"
    for student, name in (("ana", "Ana Silva"), ("zoe", "Zoë Núñez")):
        folder = download / f"{name}_70{len(name)}_assignsubmission_file"
        folder.mkdir(parents=True)
        (folder / "answers.toml").write_bytes((class_set / "keys" / student / "key.toml").read_bytes())
    code, err = _run(capsys, "grade", str(download), "--variants", str(class_set), "-o", str(tmp_path / "grades"),
                     "--layout", "moodle", "--roster", str(roster))
    assert code == 0, err
    out = tmp_path / "grades" / "moodle-import.csv"
    code, err = _run(capsys, "export", "moodle-grades", "--gradebook", str(tmp_path / "grades" / "gradebook.csv"),
                     "--roster", str(roster), "--assignment", "Masking", "--points-possible", "100", "-o", str(out))
    assert code == 0, err
    assert read_moodle(out.read_bytes(), "email", "Masking", EMAILS) == {"ana": 100.0, "zoe": 100.0}
