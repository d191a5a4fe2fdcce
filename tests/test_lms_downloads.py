"""Grading the submission folders course platforms hand out (``--layout canvas|moodle|classroom``).

Each layout is graded end to end through the CLI from names as the platform writes them, with the tricky
ones: underscores and non-ASCII letters in names, a name in the decomposed Unicode form a Mac unzips to,
Canvas's ``_LATE_`` and ``-1`` resubmission names, stray files, two submissions of one student, a name that
fits two students, and names built to pass one student's file off as another's. The plain layout (names
are roster ids) would refuse every one of these entries.
"""

from __future__ import annotations

import csv
import json
import unicodedata

import pytest

from problemgen.errors import ProblemgenError

SECRET_ENV = "PROBLEMGEN_LMS_TEST_SECRET"
ROSTER = """id,name,canvas_id,github,participant
ana,Ana Silva,4101,ana-s,Participant 7001
bob,Seán O'Brien_Smith,4102,bob-obs,7002
zoe,Zoë Núñez,4103,zn,7003
dan,Dan Wu,4104,dan,7004
eve,Eve Adams,4105,eve,7005
fay,Fay Ray,4106,fay,7006
gus,Lee Chan,4107,gus,7007
hal,Lee Chan,4108,al-gus,7008
"""
STUDENTS = ["ana", "bob", "zoe", "dan", "eve", "fay", "gus", "hal"]


@pytest.fixture
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    return path


@pytest.fixture
def class_set(tmp_path, roster, monkeypatch):
    from problemgen.documents import worksheet

    monkeypatch.setenv(SECRET_ENV, "a long class secret for the platform tests")
    out = tmp_path / "class"
    worksheet.write_class_set(worksheet.WorksheetJob("masking", out), roster, SECRET_ENV)
    return out


def _key(class_set, student: str) -> str:
    return (class_set / "keys" / student / "key.toml").read_text(encoding="utf-8")


def _run(capsys, *args: str) -> tuple[int, str]:
    from problemgen.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return exit_info.value.code, capsys.readouterr().err


def _gradebook(out) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}


def _nfd(text: str) -> str:
    """A name as a Mac's unzip writes it: é as e and a combining accent."""
    return unicodedata.normalize("NFD", text)


def test_a_canvas_download_is_graded_under_roster_ids_by_canvas_user_id(class_set, roster, tmp_path, capsys):
    subs = tmp_path / "canvas"
    subs.mkdir()
    files = {
        "silvaana_4101_9001_answers.toml": _key(class_set, "ana"),
        "silvaana_4101_9014_notes.pdf": "",  # a second upload of another type: a stray row, ana still graded
        "obrien_smithseán_4102_9002_answers.toml": _key(class_set, "bob"),  # "_" kept in the name, é too
        "núñezzoë_4103_9003_my_answers_2_3_.toml": _key(class_set, "zoe"),  # digits in the file's own name
        "wudan_LATE_4104_9004_answers-1.toml": _key(class_set, "dan"),  # late, and a resubmission's name
        "adamseve_4105_9005_answers.toml": _key(class_set, "eve"),
        "adamseve_4105_9010_answers-1.toml": _key(class_set, "eve"),  # two files of one student
        "anon_4106_9011_answers.toml": _key(class_set, "fay"),  # an anonymous id that is fay's user id
        "lorymal_7777_9013_x_4101_1_answers.toml": _key(class_set, "ana"),  # ana's id inside the file name
        "notes.txt": "",
    }
    for name, text in files.items():
        (subs / name).write_text(text, encoding="utf-8")
    code, err = _run(capsys, "grade", str(subs), "--variants", str(class_set), "-o", str(tmp_path / "g"),
                     "--layout", "canvas", "--roster", str(roster))
    assert code == 0, err
    rows = _gradebook(tmp_path / "g")
    assert list(rows)[:8] == STUDENTS  # roster ids, in roster order, then the strays
    assert {s: (rows[s]["status"], rows[s]["score"]) for s in ("ana", "bob", "zoe", "dan")} == {
        s: ("graded", "1.0000") for s in ("ana", "bob", "zoe", "dan")}
    assert rows["eve"]["status"] == "duplicate-submission" and "answers-1.toml" in rows["eve"]["message"]
    assert [rows[s]["status"] for s in ("fay", "gus", "hal")] == ["missing"] * 3
    assert rows["anon_4106_9011_answers.toml"]["status"].startswith("refused: anonymous Canvas download")
    assert rows["lorymal_7777_9013_x_4101_1_answers.toml"]["status"] == (
        "refused: not on the roster: no student's canvas_id matches the Canvas user id 7777")
    assert rows["silvaana_4101_9014_notes.pdf"]["status"].startswith("refused: unsupported type")
    assert rows["notes.txt"]["status"].startswith("refused: not a Canvas download name")
    assert len(rows) == 12
    assert sorted(p.name for p in (tmp_path / "g" / "reports").iterdir()) == [f"{s}.txt" for s in
                                                                             sorted(["ana", "bob", "zoe", "dan"])]
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    assert "Canvas marked 1 submission late: dan" in summary["warnings"] and "warning: Canvas marked" in err


def test_a_moodle_download_is_graded_by_full_name_never_guessing_between_two_of_one_name(class_set, roster, tmp_path,
                                                                                          capsys):
    subs = tmp_path / "moodle"
    folders = {
        "Ana Silva_7001_assignsubmission_file": {"answers (1).toml": _key(class_set, "ana")},  # renamed upload
        "Seán OBrien Smith_7002_assignsubmission_file_": {"answers.toml": _key(class_set, "bob")},  # older "_"
        "Dan Wu_7004_assignsubmission_onlinetext": {"onlinetext.html": "<p>see attached</p>"},
        "Eve Adams_7005_assignsubmission_file": {"a.toml": _key(class_set, "eve"), "b.toml": _key(class_set, "eve")},
        "Fay Ray_7006_assignsubmission_file": {},
        "Lee Chan_7007_assignsubmission_file": {"answers.toml": _key(class_set, "gus")},  # gus or hal?
        "Mal Lory_7999_assignsubmission_file": {"answers.toml": _key(class_set, "dan")},
    }
    for folder, files in folders.items():
        (subs / folder).mkdir(parents=True)
        for name, text in files.items():
            (subs / folder / name).write_text(text, encoding="utf-8")
    (subs / "Fay Ray_7006_assignsubmission_file" / "answers.toml").symlink_to(tmp_path / "class" / "keys" / "fay"
                                                                               / "key.toml")
    (subs / _nfd("Zoë Núñez_7003_assignsubmission_file_answers.toml")).write_text(_key(class_set, "zoe"))  # flat
    code, err = _run(capsys, "grade", str(subs), "--variants", str(class_set), "-o", str(tmp_path / "g"),
                     "--layout", "moodle", "--roster", str(roster))
    assert code == 0, err
    rows = _gradebook(tmp_path / "g")
    assert [rows[s]["status"] for s in ("ana", "bob", "zoe")] == ["graded"] * 3
    assert [rows[s]["score"] for s in ("ana", "bob", "zoe")] == ["1.0000"] * 3
    assert rows["eve"]["status"] == "duplicate-submission" and "a.toml, b.toml" in rows["eve"]["message"]
    assert rows["fay"]["status"] == "refused: answers.toml is a symbolic link"
    assert [rows[s]["status"] for s in ("dan", "gus", "hal")] == ["missing"] * 3
    assert rows["Lee Chan_7007_assignsubmission_file"]["status"] == "refused: ambiguous: the name fits gus and hal"
    assert rows["Dan Wu_7004_assignsubmission_onlinetext"]["status"] == (
        "refused: a Moodle onlinetext submission, not an uploaded file")
    assert rows["Mal Lory_7999_assignsubmission_file"]["status"].startswith("refused: not on the roster")
    assert len(rows) == 11
    assert "gus and hal share the name 'lee chan'" in err


def test_a_moodle_blind_marking_download_grades_code_by_participant_id(roster, tmp_path, capsys):
    from problemgen.code.tasks.mutation import solution_source

    subs = tmp_path / "moodle"
    (subs / "Participant_7001_assignsubmission_file").mkdir(parents=True)
    (subs / "Participant_7001_assignsubmission_file" / "softmax.py").write_text(solution_source("softmax"))
    (subs / "Participant_7002_assignsubmission_file_my softmax-1.py").write_text("def softmax(x):\n    return x\n")
    (subs / "Participant_7099_assignsubmission_file_softmax.py").write_text(solution_source("softmax"))
    code, err = _run(capsys, "grade-code", str(subs), "--task", "softmax", "--public-only", "-o", str(tmp_path / "g"),
                     "--layout", "moodle", "--roster", str(roster), "--match-by", "participant")
    assert code == 0, err
    rows = _gradebook(tmp_path / "g")
    assert (rows["ana"]["status"], rows["ana"]["score"]) == ("graded", "1.0000")
    assert (rows["bob"]["status"], rows["bob"]["score"]) == ("graded", "0.0000")
    assert all(rows[s]["status"] == "missing" for s in STUDENTS[2:])  # a code class with a roster has missing rows
    assert rows["Participant_7099_assignsubmission_file_softmax.py"]["status"].startswith("refused: not on the roster")
    assert len(rows) == 9


def test_a_github_classroom_clone_grades_code_by_login(roster, tmp_path, capsys):
    from problemgen.code.tasks.mutation import solution_source

    subs = tmp_path / "hw1-submissions"
    for repository in ("hw1-ana-s", "hw1-bob-obs", "hw1-ZN", "hw1-al-gus", "hw1-ghost"):
        (subs / repository / ".git" / "hooks").mkdir(parents=True)
        (subs / repository / "softmax.py").write_text(solution_source("softmax"))
    (subs / "hw1-bob-obs" / "softmax.py").write_text("def softmax(x):\n    return x\n")
    (subs / "hw1-dan").symlink_to(subs / "hw1-ana-s")  # a link is never graded, whoever's name it has
    (subs / "README.md").write_text("")
    code, err = _run(capsys, "grade-code", str(subs), "--task", "softmax", "--public-only", "-o", str(tmp_path / "g"),
                     "--layout", "classroom", "--roster", str(roster))
    assert code == 0, err
    rows = _gradebook(tmp_path / "g")
    assert {s: (rows[s]["status"], rows[s]["score"]) for s in ("ana", "bob", "zoe", "hal")} == {
        "ana": ("graded", "1.0000"), "bob": ("graded", "0.0000"), "zoe": ("graded", "1.0000"),
        "hal": ("graded", "1.0000")}  # hw1-al-gus ends in the logins al-gus (hal's) and gus: the longest
    assert rows["dan"]["status"] == "refused: symbolic link: hw1-dan"
    assert [rows[s]["status"] for s in ("eve", "fay", "gus")] == ["missing"] * 3
    assert rows["hw1-ghost"]["status"].startswith("refused: not on the roster")
    assert rows["README.md"]["status"].startswith("refused: not a cloned repository")
    assert len(rows) == 10
    assert sorted(p.stem for p in (tmp_path / "g" / "reports").iterdir()) == ["ana", "bob", "hal", "zoe"]
    line = ("hw1-al-gus fits the GitHub logins al-gus and gus: taken as al-gus's, the longest (GitHub Classroom "
            "gives every repository of an assignment the same prefix)")
    assert json.loads((tmp_path / "g" / "summary.json").read_text())["warnings"] == [line]
    assert f"warning: {line}" in err


def test_two_github_classroom_repositories_read_as_one_login_are_a_duplicate_submission(roster, tmp_path, capsys):
    """The longest login is wrong only for a prefix ending in ``-al`` with al-gus on the roster: it shows."""
    from problemgen.code.tasks.mutation import solution_source

    subs = tmp_path / "hw1-al-submissions"
    for repository in ("hw1-al-gus", "hw1-al-al-gus"):  # gus's and al-gus's under the prefix hw1-al
        (subs / repository).mkdir(parents=True)
        (subs / repository / "softmax.py").write_text(solution_source("softmax"))
    code, err = _run(capsys, "grade-code", str(subs), "--task", "softmax", "--public-only", "-o", str(tmp_path / "g"),
                     "--layout", "classroom", "--roster", str(roster))
    assert code == 0, err
    rows = _gradebook(tmp_path / "g")
    assert rows["hal"]["status"] == "duplicate-submission" and "hw1-al-al-gus, hw1-al-gus" in rows["hal"]["message"]
    assert rows["gus"]["status"] == "missing"
    assert [w.split(" fits ")[0] for w in json.loads((tmp_path / "g" / "summary.json").read_text())["warnings"]] == [
        "hw1-al-al-gus", "hw1-al-gus"]


def test_the_canvas_user_id_is_never_read_from_the_file_name_a_student_chose():
    """Canvas collapses ``_<digits>_`` runs in user names, so only a split with none before it is a reading."""
    from problemgen.classes import layouts

    reading = layouts.read_canvas("lorymal_7777_9013_x_4101_1_answers.toml", False)
    assert [c.key for c in reading.candidates] == ["7777"]
    both = layouts.read_canvas("wu_12_LATE_345_678_f.py", False)  # a name ending in _12, then _LATE_
    assert [(c.key, c.file_name, c.late) for c in both.candidates] == [("345", "f.py", True)]
    two = layouts.read_canvas("abc_12_456_789_file.py", False)  # "abc" with id 12, or "abc_12" with id 456
    assert [c.key for c in two.candidates] == ["12", "456"]


# --------------------------------------------------------------------------- class size: linear, counted


def test_reading_a_classroom_download_folds_each_roster_login_once_not_once_per_repository(monkeypatch):
    """Every repository name was tried against every login of the roster (5,000 repositories against
    5,000 logins: 25 million folds and comparisons, 4 s of a class run); the logins are now indexed once
    and each name looks up its few endings."""
    from problemgen.classes import layouts, logins

    folds = []
    real = logins.fold_login
    monkeypatch.setattr(logins, "fold_login", lambda login: folds.append(login) or real(login))
    students = 400
    logins = {f"user-{i}x": (f"s{i}",) for i in range(students)} | {"bob": ("b",), "x-bob": ("xb",)}
    read = layouts.reader("classroom", layouts.Identities(logins, "github"))
    readings = [read(f"hw1-user-{i}X", True) for i in range(students)]
    assert [(r.candidates[0].key, r.note) for r in readings] == [(f"user-{i}x", "") for i in range(students)]
    two = read("hw1-x-bob", True)  # the longest login the name ends in, said in a note
    assert two.candidates[0].key == "x-bob" and "fits the GitHub logins x-bob and bob" in two.note
    assert len(folds) <= len(logins)


class _CountedId(str):
    """A roster id that counts how often it is compared with another."""

    comparisons = 0

    def __eq__(self, other):
        _CountedId.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_students_canvas_marked_late_are_listed_once_each_without_comparing_every_pair(monkeypatch, tmp_path):
    """Each late file was checked against the list of late students so far: a download where all 5,000
    are late compared 12.5 million pairs."""
    from problemgen.classes import entries, layouts

    students = 2000
    names = [f"student_LATE_{100 + i}_{900 + i}_answers.toml" for i in range(students)]
    names.append(f"student_LATE_{100}_{5000}_answers-1.toml")  # a second late file of the first student
    monkeypatch.setattr(entries, "listing", lambda directory: [n.encode() for n in names])
    monkeypatch.setattr(entries, "examine", lambda directory, raw: entries.Entry(raw.decode(), tmp_path / raw.decode()))
    known = layouts.Identities({str(100 + i): (_CountedId(f"s{i}"),) for i in range(students)}, "canvas_id")
    _CountedId.comparisons = 0
    download = layouts.sort_download(tmp_path, "canvas", known, (".toml",), lambda folder: True)
    compared, _CountedId.comparisons = _CountedId.comparisons, 0
    assert download.late == [f"s{i}" for i in range(students)]
    assert compared < students  # every pair: 2 million


@pytest.mark.parametrize("args, message", [
    (["--roster", "{roster}"], "give --layout canvas, moodle or classroom"),
    (["--layout", "canvas"], "--layout canvas needs --roster roster.csv"),
    (["--layout", "canvas", "--roster", "{roster}", "--match-by", "email"], "no column 'email' to match"),
])
def test_download_options_that_do_not_fit_are_one_error_line(class_set, roster, tmp_path, capsys, args, message):
    (tmp_path / "subs").mkdir()
    code, err = _run(capsys, "grade", str(tmp_path / "subs"), "--variants", str(class_set), "-o", str(tmp_path / "g"),
                     *[a.format(roster=roster) for a in args])
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err


def test_a_roster_giving_two_students_one_platform_identity_is_refused_before_grading(tmp_path):
    from problemgen.classes import layouts

    roster = tmp_path / "roster.csv"
    roster.write_text("id,canvas_id,github\nana,4101,ana\nbob,4101,bob\n", encoding="utf-8")
    with pytest.raises(ProblemgenError, match="ana, bob share the canvas_id '4101'"):
        layouts.identities(layouts.make_layout("canvas", roster), ["ana", "bob"])
    roster.write_text("id,canvas_id\nana,4101\nbob,S-4102\n", encoding="utf-8")
    with pytest.raises(ProblemgenError, match="line 3: canvas_id 'S-4102' is not a Canvas user id"):
        layouts.identities(layouts.make_layout("canvas", roster), ["ana", "bob"])


def test_a_student_without_a_platform_identity_is_named_in_a_warning(tmp_path):
    from problemgen.classes import layouts

    roster = tmp_path / "roster.csv"
    roster.write_text("id,github\nana,ana-s\nbob,\n", encoding="utf-8")
    known = layouts.identities(layouts.make_layout("classroom", roster), ["ana", "bob"])
    assert known.keys == {"ana-s": ("ana",)}
    assert known.warnings == ("1 student without a github in roster.csv: no entry can be theirs (bob)",)


def test_an_entry_named_as_a_roster_id_that_is_nobodys_never_takes_that_students_name(roster, tmp_path, capsys):
    from problemgen.code.tasks.mutation import solution_source

    subs = tmp_path / "canvas"
    subs.mkdir()
    (subs / "stonebob_4102_9002_softmax.py").write_text(solution_source("softmax"))  # bob's own file
    (subs / "bob").write_text("def softmax(x):\n    return x\n")  # put in by hand: not a Canvas name
    (subs / "Dan").mkdir()
    (subs / "Dan" / "softmax.py").write_text(solution_source("softmax"))
    code, err = _run(capsys, "grade-code", str(subs), "--task", "softmax", "--public-only", "-o", str(tmp_path / "g"),
                     "--layout", "canvas", "--roster", str(roster))
    assert code == 0, err
    with (tmp_path / "g" / "gradebook.csv").open(encoding="utf-8") as handle:
        names = [row["student"] for row in csv.DictReader(handle)]
    assert names == [*STUDENTS, "./Dan", "./bob"]  # one row per roster id, and the strays apart
    rows = _gradebook(tmp_path / "g")
    assert (rows["bob"]["status"], rows["dan"]["status"]) == ("graded", "missing")
    assert rows["./bob"]["status"].startswith("refused: not a Canvas download name")


@pytest.mark.parametrize("layout, column, values", [("canvas", "canvas_id", ("4101", "04101")),
                                                    ("moodle", "participant", ("7001", "Participant 07001"))])
def test_one_platform_id_spelt_with_a_leading_zero_is_still_one_id_two_students_share(tmp_path, layout, column,
                                                                                        values):
    from problemgen.classes import layouts

    roster = tmp_path / "roster.csv"
    roster.write_text(f"id,{column}\nana,{values[0]}\nbob,{values[1]}\n", encoding="utf-8")
    with pytest.raises(ProblemgenError, match=f"ana, bob share the {column}"):
        layouts.identities(layouts.make_layout(layout, roster, column), ["ana", "bob"])
