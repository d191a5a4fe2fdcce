"""`problemgen grade`: single sheets (formats, -o, exit codes) and class runs (layouts, outputs, failures)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "grading"))
import grading_fixture as fx  # noqa: E402

from problemgen.sheets.answersheet import blank_sheet, key_sheet  # noqa: E402
from problemgen.cli import main  # noqa: E402

STUDENTS = ["ada", "ben", "cy", "dee", "eve"]


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


@pytest.fixture
def single(tmp_path):
    variant = fx.fixture_variant()
    (tmp_path / "variant.json").write_text(variant.to_json(), encoding="utf-8")
    (tmp_path / "key.toml").write_text(key_sheet(variant), encoding="utf-8")
    half = key_sheet(variant).replace("params = 1050624", "params = 1048576")  # 4·512²: forgot the biases
    (tmp_path / "half.toml").write_text(half, encoding="utf-8")
    return tmp_path


def class_dir(root: Path, with_manifest: bool = True) -> Path:
    """A class directory shaped like `problemgen worksheet --roster` output."""
    out = root / "class"
    for student in STUDENTS:
        (out / "keys" / student).mkdir(parents=True)
        (out / "keys" / student / "variant.json").write_text(fx.fixture_variant(student).to_json(), encoding="utf-8")
    if with_manifest:
        entries = [{"student": s, "key": f"keys/{s}", "variant_id": fx.fixture_variant(s).variant_id} for s in STUDENTS]
        manifest = {"schema": "problemgen.manifest/1", "title": "Fixture class", "students": entries}
        (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return out


def submissions(root: Path) -> Path:
    """ada: key (flat file); ben: key (directory layout); cy: blank; dee: broken UTF-8; eve: none."""
    subs = root / "subs"
    (subs / "ben").mkdir(parents=True)
    (subs / "ada.toml").write_text(key_sheet(fx.fixture_variant("ada")), encoding="utf-8")
    (subs / "ben" / "answers.toml").write_text(key_sheet(fx.fixture_variant("ben")), encoding="utf-8")
    (subs / "cy.toml").write_text(blank_sheet(fx.fixture_variant("cy")), encoding="utf-8")
    (subs / "dee.toml").write_bytes(b"[p1]\ntop = \"\xff\"\n")
    (subs / "zed.toml").write_text("", encoding="utf-8")
    return subs


# ------------------------------------------------------------------------------------------ single sheets


def test_the_key_grades_full_marks_and_exits_0(single, capsys):
    code, out, _ = run(["grade", str(single / "key.toml"), "--variant", str(single / "variant.json"),
                        "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["score"] == 1.0


def test_a_wrong_answer_names_its_misconception(single, capsys):
    code, out, _ = run(["grade", str(single / "half.toml"), "--variant", str(single / "variant.json"),
                        "--format", "json"], capsys)
    data = json.loads(out)
    parts = {p["name"]: p for problem in data["problems"] for p in problem["parts"]}
    assert code == 0 and parts["p3.params"]["mistake"] == "forgot_biases"
    assert parts["p3.params"]["status"] == "wrong" and data["score"] < 1.0


@pytest.mark.parametrize("threshold, code", [("0.99", 1), ("0.5", 0)])
def test_fail_under_sets_the_exit_code(single, capsys, threshold, code):
    args = ["grade", str(single / "half.toml"), "--variant", str(single / "variant.json"), "--fail-under", threshold]
    assert run(args, capsys)[0] == code


@pytest.mark.parametrize("fmt, start", [("junit", "<?xml"), ("gradescope", "{"), ("md", "## "), ("text", "Grading")])
def test_output_file_in_each_format(single, capsys, fmt, start):
    target = single / f"report.{fmt}"
    code, out, _ = run(["grade", str(single / "key.toml"), "--variant", str(single / "variant.json"),
                        "--format", fmt, "-o", str(target)], capsys)
    assert code == 0 and out == "" and target.read_text(encoding="utf-8").startswith(start)


def test_a_malformed_sheet_is_reported_not_a_crash(single, capsys):
    (single / "bad.toml").write_bytes(b"\xff\xfe garbage")
    code, out, err = run(["grade", str(single / "bad.toml"), "--variant", str(single / "variant.json")], capsys)
    assert code == 0 and "error: bad.toml is not valid UTF-8" in out and "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["grade", "missing.toml", "--variant", "VARIANT"], "no such file"),
    (["grade", "KEY", "--variant", "missing.json"], "cannot read variant file"),
    (["grade", "KEY"], "either --variant"),
    (["grade", "KEY", "--variant", "VARIANT", "--variants", "."], "either --variant"),
    (["grade", "KEY", "--variant", "VARIANT", "--fail-under", "80"], "0<=x<=1"),
    (["grade", "KEY", "--variant", "KEY"], "not valid JSON"),
])
def test_usage_errors_exit_2_with_one_line(single, capsys, args, message):
    args = [str(single / "key.toml") if a == "KEY" else str(single / "variant.json") if a == "VARIANT" else a
            for a in args]
    code, out, err = run(args, capsys)
    assert code == 2 and message in err and "Traceback" not in err


# ------------------------------------------------------------------------------------------ class runs


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_class_run_writes_gradebook_reports_and_summary(tmp_path, capsys, jobs):
    out_dir = tmp_path / "grades"
    code, out, err = run(["grade", str(submissions(tmp_path)), "--variants", str(class_dir(tmp_path)),
                          "-o", str(out_dir), "--format", "json", "--jobs", jobs], capsys)
    assert code == 0
    rows = {r["student"]: r for r in csv.DictReader((out_dir / "gradebook.csv").open(encoding="utf-8"))}
    assert list(rows) == [*STUDENTS, "zed.toml"]
    assert [rows[s]["status"] for s in STUDENTS] == ["graded", "graded", "graded", "unreadable", "missing"]
    assert rows["zed.toml"]["status"] == "refused: not a student of this class"
    assert rows["ada"]["score"] == rows["ben"]["score"] == "1.0000" and rows["cy"]["score"] == "0.0000"
    assert json.loads((out_dir / "reports" / "ben.json").read_text())["score"] == 1.0
    assert "not valid UTF-8" in json.loads((out_dir / "reports" / "dee.json").read_text())["meta"]["error"]
    assert not (out_dir / "reports" / "eve.json").exists()
    summary = json.loads((out_dir / "summary.json").read_text())
    assert json.loads(out) == summary  # --format json: the summary on stdout is JSON too
    assert summary["status_counts"] == {"graded": 3, "missing": 1, "unreadable": 1, "variant-mismatch": 0,
                                        "duplicate-submission": 0, "refused": 1}
    assert [a["student"] for a in summary["attention"]] == ["dee", "eve", "zed.toml"]


def test_class_runs_are_the_same_with_and_without_workers(tmp_path, capsys):
    subs, classes = submissions(tmp_path), class_dir(tmp_path)
    for jobs in ("1", "2"):
        run(["grade", str(subs), "--variants", str(classes), "-o", str(tmp_path / jobs)], capsys)
    files = sorted(p.relative_to(tmp_path / "1") for p in (tmp_path / "1").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "2") for p in (tmp_path / "2").rglob("*") if p.is_file())
    for name in files:
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes()


def test_without_a_manifest_students_are_the_directories_with_a_variant(tmp_path, capsys):
    code, _, _ = run(["grade", str(submissions(tmp_path)), "--variants", str(class_dir(tmp_path, False)),
                      "-o", str(tmp_path / "g")], capsys)
    assert code == 0
    assert len((tmp_path / "g" / "gradebook.csv").read_text().splitlines()) == 1 + len(STUDENTS) + 1  # + zed.toml


def test_two_submissions_for_one_student_are_a_duplicate_for_that_student_only(tmp_path, capsys):
    subs = submissions(tmp_path)
    (subs / "ada").mkdir()
    (subs / "ada" / "answers.toml").write_text("", encoding="utf-8")
    code, out, _ = run(["grade", str(subs), "--variants", str(class_dir(tmp_path)), "-o", str(tmp_path / "g")], capsys)
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "g" / "gradebook.csv").open(encoding="utf-8"))}
    assert code == 0 and rows["ada"]["status"] == "duplicate-submission" and rows["ben"]["status"] == "graded"
    assert "ada: duplicate-submission" in out


def test_a_symlinked_submission_is_refused(tmp_path, capsys):
    subs = submissions(tmp_path)
    (subs / "cy.toml").unlink()
    (subs / "cy.toml").symlink_to(subs / "ada.toml")
    run(["grade", str(subs), "--variants", str(class_dir(tmp_path)), "-o", str(tmp_path / "g")], capsys)
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "g" / "gradebook.csv").open(encoding="utf-8"))}
    assert rows["cy"]["status"] == "refused: symbolic link" and rows["cy"]["score"] == "0.0000"


def test_an_unsafe_directory_in_the_manifest_is_refused(tmp_path, capsys):
    classes = class_dir(tmp_path)
    manifest = json.loads((classes / "manifest.json").read_text())
    manifest["students"][0]["student"] = "../../etc"
    (classes / "manifest.json").write_text(json.dumps(manifest))
    code, _, err = run(["grade", str(submissions(tmp_path)), "--variants", str(classes)], capsys)
    assert code == 2 and "not a safe name" in err


def test_fail_under_is_refused_in_class_mode(tmp_path, capsys):
    code, _, err = run(["grade", str(tmp_path), "--variants", str(class_dir(tmp_path)), "--fail-under", "0.5"], capsys)
    assert code == 2 and "one sheet" in err


def test_progress_bar_only_on_request_when_stderr_is_not_a_terminal(tmp_path, capsys):
    subs, classes = submissions(tmp_path), class_dir(tmp_path)
    _, _, quiet = run(["grade", str(subs), "--variants", str(classes), "-o", str(tmp_path / "a")], capsys)
    _, _, loud = run(["grade", str(subs), "--variants", str(classes), "-o", str(tmp_path / "b"), "--progress"], capsys)
    assert "grading" not in quiet and "grading" in loud


def test_grade_help_states_the_shape_rule_for_names_products_and_numbers(capsys):
    code, out, _ = run(["grade", "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0
    assert "names match by name" in text and "h*d_k = d_k*h" in text
    assert "a different name of the same size is wrong" in text
