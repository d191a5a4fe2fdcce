"""What a killed run leaves: the hidden ``.partial`` temporaries of :mod:`problemgen.safewrite` (SIGKILL gives
no clean-up). They are never graded or read as outputs, but nothing removed them: they piled up in a
class set's student folders and a report folder, and an export folder shipped them (a task's GitHub
Classroom template carried the class keys of an earlier export, sealed, in a temporary). The next run
that holds the folder removes those of its own names, and nothing else.
"""

from __future__ import annotations

import sys

import pytest

from problemgen.classes.rows import ClassRow
from problemgen.classes.runner import run_class
from problemgen.documents import worksheet
from problemgen.exports.bundle import Bundle, write_directory
from problemgen.safewrite import final_name
from problemgen.sheets.reports import CheckResult, Report

SECRET_ENV = "PROBLEMGEN_LEFTOVER_TEST_SECRET"
TOKEN = "0123abcd"


def left(folder, name: str, data: str = "half") -> str:
    """Plant what a killed run writing ``folder/name`` leaves; returns the temporary's name."""
    folder.mkdir(parents=True, exist_ok=True)
    temporary = f".{name}.{TOKEN}.partial"
    (folder / temporary).write_text(data, encoding="utf-8")
    return temporary


def hidden_files(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".*") if p.is_file())


def graded(student: str) -> ClassRow:
    return ClassRow(student, "graded", Report("t", (CheckResult("c", "OK", True, 1.0, 1.0, group="g"),), {}))


def test_a_temporary_name_gives_its_final_name_and_nothing_else_does():
    assert final_name(f".key.toml.{TOKEN}.partial") == "key.toml"
    assert final_name(".gradebook.csv.1a2b3c4d.partial") == "gradebook.csv"
    for other in ("key.toml", ".key.toml.partial", f".key.toml.{TOKEN}", f"key.toml.{TOKEN}.partial",
                  ".key.toml.0123ABCD.partial", ".notes.partial"):
        assert final_name(other) is None, other


def test_a_class_run_removes_the_unfinished_files_a_killed_run_left_and_keeps_a_users(tmp_path):
    out = tmp_path / "grades"
    left(out / "reports", "ana.txt")
    left(out / "reports", "bo.md")  # a report of another format, written by a killed run in that format
    left(out, "gradebook.csv")
    left(out, "summary.json")
    mine = left(out, "notes.txt")  # not a class run's name: the user's, or another tool's
    run_class([graded("ana")], out, "text", "class")
    assert hidden_files(out) == [mine]
    assert sorted(p.name for p in (out / "reports").iterdir()) == ["ana.txt"]


@pytest.mark.skipif(sys.platform == "win32", reason="folders held with flock")
def test_a_class_set_rerun_removes_a_killed_runs_unfinished_handouts_keys_and_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "0123456789abcdef0123456789abcdef")
    roster, out = tmp_path / "roster.csv", tmp_path / "class"
    roster.write_text("id\nana\nbo\n", encoding="utf-8")
    worksheet.write_class_set(worksheet.WorksheetJob("masking", out, jobs=1), roster, SECRET_ENV)
    left(out / "handouts" / "ana", "worksheet.md")
    left(out / "keys" / "bo", "variant.json")
    left(out / "handouts" / "cyd", "answers.toml")  # a student since dropped, stopped midway
    left(out, "manifest.json")
    mine = left(out / "handouts", "README.txt")
    worksheet.write_class_set(worksheet.WorksheetJob("masking", out, force=True, jobs=1), roster, SECRET_ENV)
    assert hidden_files(out) == [f"handouts/{mine}"]
    assert sorted(p.name for p in (out / "handouts").iterdir() if p.is_dir()) == ["ana", "bo"]


def test_a_worksheet_rerun_removes_a_killed_runs_unfinished_files(tmp_path):
    out = tmp_path / "sheet"
    worksheet.write_worksheet(worksheet.WorksheetJob("masking", out))
    left(out, "variant.json")
    left(out, "worksheet.pdf")  # a format this run does not write: still a worksheet's name
    worksheet.write_worksheet(worksheet.WorksheetJob("masking", out, force=True))
    assert hidden_files(out) == []


def test_an_export_folder_ships_no_unfinished_file_of_a_killed_export(tmp_path):
    target = tmp_path / "export"
    bundle = Bundle()
    bundle.add("tests/run.sh", "#!/bin/sh\n", executable=True)
    bundle.add("info.json", "{}\n")
    left(target / "tests", "run.sh")
    left(target / "tests", "problemgen-0.9-py3-none-any.whl")  # an earlier version's wheel: an owned name
    left(target / ".problemgen", "class-keys.sealed")  # neither written nor owned: not this export's to remove
    write_directory(bundle, target, force=True, owned=("tests/problemgen-*.whl",))
    assert hidden_files(target) == [f".problemgen/.class-keys.sealed.{TOKEN}.partial"]

