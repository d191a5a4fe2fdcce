"""Two runs of problemgen on one folder at the same time (CI jobs on one host, a second run started before the
first ended): the second stops at once with one line naming the first, and the first's output stays whole.

Each race is made deterministic by starting the second run from inside the first (from its rows or its
progress callback), while the first is known to hold the folder; a lock is per open folder, so a second
run in the same process meets it as a second process would.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from problemgen.classes.rows import ClassRow
from problemgen.classes.runner import run_class
from problemgen.classes.sheet_class import grade_class
from problemgen.documents import worksheet
from problemgen.errors import ProblemgenError
from problemgen.exports.bundle import Bundle, write_directory
from problemgen.outputlock import FolderBusy, holding
from problemgen.sheets.reports import CheckResult, Report

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="runs are kept apart with flock")

SECRET_ENV = "PROBLEMGEN_CONCURRENT_TEST_SECRET"


def graded(student: str) -> ClassRow:
    return ClassRow(student, "graded", Report("t", (CheckResult("c", "OK", True, 1.0, 1.0, group="g"),), {}))


def gradebook_students(out) -> list[str]:
    with open(out / "gradebook.csv", encoding="utf-8") as stream:
        return [row["student"] for row in csv.DictReader(stream)]


def test_a_second_class_run_into_a_folder_being_written_stops_and_the_first_stays_whole(tmp_path):
    """Two grade runs into one -o: the second used to write its reports and gradebook beside the first's,
    and the first, finishing, removed the second's fresh reports as "left by an earlier run"."""
    out, met = tmp_path / "grades", []

    def first_rows():
        yield graded("ana")
        try:
            run_class([graded("bo"), graded("cyd")], out, "text", "second run")
        except FolderBusy as exc:
            met.append(str(exc))
        yield graded("dee")

    run_class(first_rows(), out, "text", "first run")
    assert len(met) == 1 and "another problemgen run is writing into this folder" in met[0]
    assert f"pid {os.getpid()}" in met[0] and met[0].count("\n") == 0
    assert sorted(p.name for p in (out / "reports").iterdir()) == ["ana.txt", "dee.txt"]
    assert gradebook_students(out) == ["ana", "dee"]


def test_the_folder_is_free_again_once_a_run_ends_however_it_ends(tmp_path):
    out = tmp_path / "grades"

    def failing_rows():
        yield graded("ana")
        raise RuntimeError("the grader broke")

    with pytest.raises(RuntimeError):
        run_class(failing_rows(), out, "text", "broken run")
    run_class([graded("bo")], out, "text", "next run")
    assert gradebook_students(out) == ["bo"]


def test_a_killed_run_leaves_no_lock_and_while_alive_is_named_by_pid_and_command(tmp_path):
    """The holder is another process here, as in a real clash; killed, it holds nothing any more."""
    folder = tmp_path / "grades"
    folder.mkdir()
    holder = tmp_path / "holder.py"
    holder.write_text(textwrap.dedent(f"""
        import sys
        from problemgen.outputlock import holding
        with holding({str(folder)!r}, writing=True):
            print("held", flush=True)
            sys.stdin.read()
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen([sys.executable, str(holder), "grade-marker"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout.readline() == "held\n"
        with pytest.raises(FolderBusy, match=rf"pid {process.pid}: .*grade-marker"):
            with holding(folder, writing=True):
                pass
    finally:
        process.kill()
        process.wait()
    with holding(folder, writing=True):
        pass


def test_a_second_class_set_into_the_folder_being_written_stops(tmp_path, monkeypatch):
    """Two `worksheet --roster` runs into one folder mixed two rosters' handouts under one manifest."""
    monkeypatch.setenv(SECRET_ENV, "0123456789abcdef0123456789abcdef")
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("id\nana\nbo\n", encoding="utf-8")
    second.write_text("id\ncyd\ndee\n", encoding="utf-8")
    out, met = tmp_path / "class", []

    def start_the_second(done: int, total: int) -> None:
        if done == 1:
            try:
                worksheet.write_class_set(worksheet.WorksheetJob("masking", out, force=True, jobs=1), second, SECRET_ENV)
            except FolderBusy as exc:
                met.append(str(exc))

    worksheet.write_class_set(worksheet.WorksheetJob("masking", out, jobs=1), first, SECRET_ENV, start_the_second)
    assert len(met) == 1 and "writing into this folder" in met[0]
    assert sorted(p.name for p in (out / "handouts").iterdir()) == ["ana", "bo"]
    assert sorted(p.name for p in (out / "keys").iterdir()) == ["ana", "bo"]


def test_a_class_set_is_not_rewritten_while_a_run_grades_from_it_and_readers_share_it(tmp_path, monkeypatch):
    """Rewritten under a grading run, some sheets were graded on the old keys and some on the new."""
    monkeypatch.setenv(SECRET_ENV, "0123456789abcdef0123456789abcdef")
    roster, classes, subs = tmp_path / "roster.csv", tmp_path / "class", tmp_path / "subs"
    roster.write_text("id\nana\nbo\n", encoding="utf-8")
    worksheet.write_class_set(worksheet.WorksheetJob("masking", classes, jobs=1), roster, SECRET_ENV)
    subs.mkdir()
    for student in ("ana", "bo"):
        shutil.copy(classes / "keys" / student / "key.toml", subs / f"{student}.toml")
    met, beside = [], []

    def meanwhile(done: int, total: int) -> None:
        if done == 1:
            try:
                worksheet.write_class_set(worksheet.WorksheetJob("masking", classes, seed=99, force=True, jobs=1),
                                          roster, SECRET_ENV)
            except FolderBusy as exc:
                met.append(str(exc))
            beside.append(grade_class(subs, classes, tmp_path / "beside", "text"))  # a second reader is welcome

    run = grade_class(subs, classes, tmp_path / "grades", "text", progress=meanwhile)
    assert len(met) == 1 and "another problemgen run is reading this folder" in met[0]
    assert [r.score for r in run.records] == [1.0, 1.0] and [r.score for r in beside[0].records] == [1.0, 1.0]


def test_an_export_folder_being_written_is_not_written_by_a_second_export(tmp_path):
    target = tmp_path / "export"
    target.mkdir()
    with holding(target, writing=True):
        with pytest.raises(FolderBusy, match="writing into this folder"):
            write_directory(Bundle({"a.txt": b"a"}), target, force=True)
    assert not (target / "a.txt").exists()


def test_an_export_that_starts_as_another_ends_needs_force_for_what_that_one_wrote(tmp_path, monkeypatch):
    """The "not empty" check ran before the folder was held: an export that ended between the check and
    the hold had its files replaced by a second export run without --force."""
    import problemgen.exports.bundle as bundle

    target, held = tmp_path / "export", bundle.holding

    def first_export_ends_meanwhile(folder, **how):
        (target / "a.txt").write_bytes(b"the first export's")
        return held(folder, **how)

    monkeypatch.setattr(bundle, "holding", first_export_ends_meanwhile)
    with pytest.raises(ProblemgenError, match="directory is not empty; use --force"):
        write_directory(Bundle({"a.txt": b"the second export's"}), target)
    assert (target / "a.txt").read_bytes() == b"the first export's"


def test_an_export_of_a_class_set_holds_it_as_grading_does(tmp_path, monkeypatch):
    """An export read the class set with no hold: a `worksheet --roster` rewriting it meanwhile gave the
    export some students' old keys and others' new ones (grading already held it for reading)."""
    from problemgen.exports.common import read_class

    monkeypatch.setenv(SECRET_ENV, "0123456789abcdef0123456789abcdef")
    roster, classes = tmp_path / "roster.csv", tmp_path / "class"
    roster.write_text("id\nana\nbo\n", encoding="utf-8")
    worksheet.write_class_set(worksheet.WorksheetJob("masking", classes, jobs=1), roster, SECRET_ENV)
    with holding(classes, writing=True):  # a class set being rewritten, its manifest not yet forgotten
        with pytest.raises(FolderBusy, match="writing into this folder"):
            read_class(classes)
    with holding(classes, writing=False):  # beside a grading run, as graders share it
        assert read_class(classes).students == ("ana", "bo")


def test_whose_holds_the_class_set_as_grading_does(tmp_path, monkeypatch):
    """`whose` read the class set with no hold: a class set being made again under it answered from a mix of
    its old and new files, or "nobody" for a leaked sheet of the set."""
    from problemgen.classes.whose import whose

    monkeypatch.setenv(SECRET_ENV, "0123456789abcdef0123456789abcdef")
    roster, classes = tmp_path / "roster.csv", tmp_path / "class"
    roster.write_text("id\nana\nbo\n", encoding="utf-8")
    worksheet.write_class_set(worksheet.WorksheetJob("masking", classes, jobs=1), roster, SECRET_ENV)
    leaked = classes / "handouts" / "bo" / "answers.toml"
    with holding(classes, writing=True):
        with pytest.raises(FolderBusy, match="writing into this folder"):
            whose(str(leaked), classes)
    with holding(classes, writing=False):  # beside a grading run
        assert whose(str(leaked), classes).student == "bo"
