"""``problemgen export gradescope``: the zip, unpacked as Gradescope unpacks it and run as Gradescope runs it.

Each end-to-end test lays out ROOT/source (the zip), ROOT/submission (the student's files) and
ROOT/submission_metadata.json, runs ROOT/source/run_autograder with $PROBLEMGEN_AUTOGRADER_ROOT=ROOT,
and validates ROOT/results/results.json against a JSON Schema written from Gradescope's autograder
specification (results.json: top-level score/output/visibility, tests[] with score, max_score, name,
status passed|failed, output, output_format, visibility hidden|after_due_date|after_published|visible).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from exports_platform import (
    GRADER_SECRET, HOSTILE_SHEET, SOLUTIONS, cli, filled_starter_notebook, make_class, platform_env, read_json,
    run_script, student_file,
)
from problemgen.exports.bundle import unpack_zip

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
GRADESCOPE_RESULTS = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "score": {"type": "number"},
                    "max_score": {"type": "number", "minimum": 0},
                    "status": {"enum": ["passed", "failed"]},
                    "name": {"type": "string"},
                    "number": {"type": "string"},
                    "output": {"type": "string"},
                    "output_format": FORMAT,
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "visibility": VISIBILITY,
                    "extra_data": {"type": "object"},
                },
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    return make_class(tmp_path_factory.mktemp("gradescope-class"))


@pytest.fixture(scope="module")
def sheets_zip(klass, tmp_path_factory):
    class_dir, roster = klass
    target = tmp_path_factory.mktemp("gs") / "autograder.zip"
    assert cli(["export", "gradescope", "--class", str(class_dir), "--roster", str(roster), "-o", str(target)]) == 0
    return target


@pytest.fixture(scope="module")
def code_zip(tmp_path_factory):
    target = tmp_path_factory.mktemp("gs-code") / "softmax.zip"
    os.environ["PROBLEMGEN_TEST_GRADER_SECRET"] = GRADER_SECRET
    args = ["export", "gradescope", "--task", "softmax", "--secret-env", "PROBLEMGEN_TEST_GRADER_SECRET", "-o", str(target)]
    assert cli(args) == 0
    return target



def autograde(archive: Path, tmp: Path, files: dict[str, bytes], users: list[dict] | None) -> dict:
    """Run the autograder on one submission as Gradescope would; return the validated results.json."""
    root = tmp / "autograder"
    shutil.rmtree(root, ignore_errors=True)
    (root / "submission").mkdir(parents=True)
    unpack_zip(archive, root / "source")
    for name, data in files.items():
        (root / "submission" / name).write_bytes(data)
    if users is not None:
        (root / "submission_metadata.json").write_text(json.dumps({"id": 1, "users": users}), encoding="utf-8")
    done = run_script(root / "source" / "run_autograder", platform_env(PROBLEMGEN_AUTOGRADER_ROOT=str(root)), tmp)
    assert done.returncode == 0, done.stderr
    results = read_json(root / "results" / "results.json")
    jsonschema.validate(results, GRADESCOPE_RESULTS)
    return results


ADA = [{"email": "ada@uni.edu", "id": 11, "name": "Ada"}]


def total(results: dict) -> float:
    return sum(t["max_score"] for t in results["tests"])


# ------------------------------------------------------------------------------------------ the zip


def test_the_sheets_zip_holds_the_scripts_variants_and_wheel_but_no_handouts(sheets_zip):
    import zipfile

    with zipfile.ZipFile(sheets_zip) as archive:
        names = set(archive.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in archive.infolist()}
    assert {"setup.sh", "run_autograder", "INSTRUCTOR.md", "problemgen-export.json"} <= names
    assert {f"keys/s00{i}/variant.json" for i in (1, 2, 3)} <= names
    assert any(re.fullmatch(r"problemgen-[\w.]+-py3-none-any\.whl", n) for n in names)
    assert not any(n.endswith(("worksheet.md", "answer_key.md", "key.toml")) for n in names)
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755


def test_the_same_class_exports_to_the_same_bytes(klass, sheets_zip, tmp_path):
    class_dir, roster = klass
    again = tmp_path / "again.zip"
    assert cli(["export", "gradescope", "--class", str(class_dir), "--roster", str(roster), "-o", str(again)]) == 0
    assert again.read_bytes() == sheets_zip.read_bytes()


def test_setup_installs_from_the_shipped_wheel(sheets_zip, tmp_path):
    unpack_zip(sheets_zip, tmp_path)
    setup = (tmp_path / "setup.sh").read_text()
    wheel = next(tmp_path.glob("problemgen-*.whl")).name
    assert f"pip\" install ./{wheel}" in setup and "problemgen-venv" in setup
    assert "python3.11" in setup  # older Gradescope images get a new enough Python


@pytest.mark.parametrize("args, message", [
    (["--task", "softmax", "--class", "."], "exactly one of --task"),
    (["--class", "."], "needs --roster"),
    (["--task", "no_such_task"], "no_such_task"),
])
def test_bad_requests_are_one_error_line(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PROBLEMGEN_GRADER_SECRET", GRADER_SECRET)
    assert cli(["export", "gradescope", *args, "-o", str(tmp_path / "x.zip")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "x.zip").exists()


def test_a_task_export_needs_the_secret(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("PROBLEMGEN_GRADER_SECRET", raising=False)
    assert cli(["export", "gradescope", "--task", "softmax", "-o", str(tmp_path / "x.zip")]) == 2
    assert "PROBLEMGEN_GRADER_SECRET" in capsys.readouterr().err


def test_a_roster_without_the_match_column_is_refused(klass, tmp_path, capsys):
    class_dir, roster = klass
    code = cli(["export", "gradescope", "--class", str(class_dir), "--roster", str(roster), "--match-by", "sid",
                "-o", str(tmp_path / "x.zip")])
    assert code == 2 and "no column 'sid'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ answer sheets


@pytest.mark.slow
def test_the_key_sheet_scores_the_maximum(klass, sheets_zip, tmp_path):
    class_dir, _ = klass
    results = autograde(sheets_zip, tmp_path, {"answers.toml": student_file(class_dir, "s001", "key.toml").read_bytes()}, ADA)
    assert results["tests"] and all(t["status"] == "passed" for t in results["tests"])
    assert results["score"] == pytest.approx(total(results)) and results["score"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("match_by, submitter", [
    ("github", {"email": "bob@uni.edu", "sid": "BOBBY", "name": "Bob"}),
    # Gradescope's own users[].id is internal: the roster's ids can only be Gradescope's student ids (sid)
    ("id", {"email": "bob@other.org", "sid": "S002", "id": 3, "name": "Bob"}),
])
def test_the_submitter_is_matched_by_the_chosen_column(klass, tmp_path, match_by, submitter):
    class_dir, roster = klass
    archive = tmp_path / f"by-{match_by}.zip"
    assert cli(["export", "gradescope", "--class", str(class_dir), "--roster", str(roster), "--match-by", match_by,
                "-o", str(archive)]) == 0
    sheet = {"answers.toml": student_file(class_dir, "s002", "key.toml").read_bytes()}
    results = autograde(archive, tmp_path, sheet, [submitter])
    assert results["score"] == pytest.approx(total(results)) and results["score"] > 0


@pytest.mark.parametrize("match_by, compared", [
    ("email", ["ada@uni.edu"]), ("sid", ["s001"]), ("id", ["ada@uni.edu", "s001"]),
    ("name", ["ada@uni.edu", "s001"]), ("student_number", ["ada@uni.edu", "s001"]),
])
def test_a_roster_column_is_compared_with_gradescopes_email_or_student_id_only(match_by, compared):
    from problemgen.exports.gradescope import submitter_identities

    metadata = {"users": [{"email": "ada@uni.edu", "sid": "s001", "id": 11, "name": "Ada"}]}
    assert submitter_identities(metadata, match_by) == (compared, "ada@uni.edu")


def test_the_instructor_notes_say_what_a_roster_column_is_compared_with(klass, tmp_path):
    import zipfile

    class_dir, roster = klass
    archive = tmp_path / "by-id.zip"
    assert cli(["export", "gradescope", "--class", str(class_dir), "--roster", str(roster), "--match-by", "id",
                "-o", str(archive)]) == 0
    notes = " ".join(zipfile.ZipFile(archive).read("INSTRUCTOR.md").decode().split())
    assert "matched to the roster by Gradescope's e-mail address or student ID (sid), compared with the roster's `id`" in notes
    assert "Student ID" in notes


@pytest.mark.slow
def test_a_blank_sheet_scores_zero_with_a_test_per_part(klass, sheets_zip, tmp_path):
    class_dir, _ = klass
    blank = student_file(class_dir, "s001", "answers.toml").read_bytes()
    results = autograde(sheets_zip, tmp_path, {"answers.toml": blank}, ADA)
    assert results["score"] == 0 and results["tests"]
    assert all(t["status"] == "failed" and "no answer" in t["output"] for t in results["tests"])


@pytest.mark.slow
def test_another_students_sheet_scores_zero_and_says_why(klass, sheets_zip, tmp_path):
    class_dir, _ = klass
    results = autograde(sheets_zip, tmp_path, {"answers.toml": student_file(class_dir, "s002", "key.toml").read_bytes()}, ADA)
    assert results["score"] == 0 and results["tests"] == []
    assert "not yours" in results["output"] and "s002" not in results["output"]


@pytest.mark.slow
def test_a_hostile_sheet_scores_zero_and_the_run_finishes(sheets_zip, tmp_path):
    results = autograde(sheets_zip, tmp_path, {"answers.toml": HOSTILE_SHEET}, ADA)
    assert results["score"] == 0
    assert "\x1b" not in json.dumps(results, ensure_ascii=False)
    assert not (tmp_path / "autograder" / "source" / "pwned").exists()


@pytest.mark.slow
@pytest.mark.parametrize("files, users, message", [
    ({"answers.toml": b""}, [{"email": "mallory@elsewhere.org", "id": 9}], "not on the class roster"),
    ({"answers.toml": b""}, None, "not on the class roster"),
    ({"notes.txt": b"my answers are on paper"}, ADA, "no answers.toml"),
])
def test_submissions_that_cannot_be_graded_score_zero_with_an_explanation(sheets_zip, tmp_path, files, users, message):
    results = autograde(sheets_zip, tmp_path, files, users)
    assert results["score"] == 0 and message in results["output"]


# ------------------------------------------------------------------------------------------ code


def softmax_source(mutated: bool = False) -> bytes:
    source = (SOLUTIONS / "softmax.py").read_text()
    if mutated:  # the global-sum misconception: normalise over the whole array, not each slice
        source = source.replace("np.sum(e, axis=axis, keepdims=True)", "np.sum(e)")
    return source.encode()


@pytest.mark.slow
def test_an_honest_submission_scores_the_maximum_and_hidden_tests_show_after_the_due_date(code_zip, tmp_path):
    files = {"my_softmax.py": softmax_source(), "notes.py": b"TODO = 'tidy up'\n"}
    results = autograde(code_zip, tmp_path, files, ADA)
    assert results["score"] == pytest.approx(total(results)) and results["score"] > 0
    visibility = {t["name"]: t["visibility"] for t in results["tests"]}
    assert {v for n, v in visibility.items() if n.startswith("public/")} == {"visible"}
    assert {v for n, v in visibility.items() if not n.startswith("public/")} == {"after_due_date"}


@pytest.mark.slow
def test_a_buggy_submission_loses_points_and_never_sees_hidden_values(code_zip, tmp_path):
    from problemgen.code.grade import make_plan
    from problemgen.code.tasks import get_task

    results = autograde(code_zip, tmp_path, {"softmax.py": softmax_source(mutated=True)}, ADA)
    assert 0 <= results["score"] < total(results)
    assert "on the visible tests" in results["output"] and f"/{total(results):g} points" not in results["output"]
    assert any(t["status"] == "failed" for t in results["tests"] if not t["name"].startswith("public/"))
    text = json.dumps(results)
    plan = make_plan(get_task("softmax"), secret=GRADER_SECRET)
    hidden_values = [np.asarray(c.expected, float).ravel() for c in plan.cases if c.group == "hidden"]
    hidden_values += [np.asarray(a, float).ravel() for c in plan.cases if c.group == "hidden"
                      for a in c.call.args if isinstance(a, np.ndarray)]
    shown = [f"{v:.4f}" for array in hidden_values for v in array if np.isfinite(v) and abs(v) > 1e-3]
    assert shown and not [s for s in shown if s in text]


@pytest.mark.slow
def test_a_notebook_upload_is_graded_like_the_same_code_in_a_py_file(code_zip, tmp_path):
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("!pip install numpy"),
                                               nbformat.v4.new_code_cell(softmax_source().decode())])
    from_notebook = autograde(code_zip, tmp_path / "nb", {"work.ipynb": nbformat.writes(notebook).encode()}, ADA)
    from_file = autograde(code_zip, tmp_path / "py", {"work.py": softmax_source()}, ADA)
    assert from_notebook["score"] == from_file["score"] == pytest.approx(total(from_file))
    assert [t["status"] for t in from_notebook["tests"]] == [t["status"] for t in from_file["tests"]]


@pytest.mark.slow
@pytest.mark.parametrize("legacy", [False, True], ids=["starter", "old starter"])
def test_the_starter_notebook_filled_with_the_solution_scores_full_marks(code_zip, tmp_path, legacy):
    upload = {"softmax.ipynb": filled_starter_notebook("softmax", legacy=legacy).encode()}
    results = autograde(code_zip, tmp_path, upload, ADA)
    assert total(results) > 0 and results["score"] == pytest.approx(total(results)), results["output"]


@pytest.mark.slow
def test_a_submission_without_the_function_scores_zero_and_names_what_was_uploaded(code_zip, tmp_path):
    results = autograde(code_zip, tmp_path, {"a.py": b"def helper():\n    pass\n", "b.py": b"x = 2\n"}, ADA)
    assert results["score"] == 0 and "softmax" in results["output"] and "a.py, b.py" in results["output"]


WINDOWS_NAME = os.fsdecode(b"l\xf6sung.py")  # as unzip leaves a name a Windows zip wrote in its own code page


def test_a_file_name_that_is_not_utf8_is_shown_escaped_and_the_result_is_written(code_zip, tmp_path):
    results = autograde(code_zip, tmp_path, {WINDOWS_NAME: b"x = 1\n", "notes.py": b"y = 2\n"}, ADA)
    assert results["score"] == 0 and "uploaded: l\\xf6sung.py, notes.py" in results["output"]


@pytest.mark.slow
def test_a_solution_in_a_file_whose_name_is_not_utf8_is_graded(code_zip, tmp_path):
    results = autograde(code_zip, tmp_path, {WINDOWS_NAME: softmax_source()}, ADA)
    assert results["score"] == pytest.approx(total(results)) and results["score"] > 0
    assert "softmax: l\\xf6sung" in results["output"]


def test_an_unexpected_failure_of_the_grader_still_writes_results_saying_so(code_zip, tmp_path, monkeypatch, capsys):
    from problemgen.exports import gradescope

    def broken(root):
        raise RuntimeError("something no one foresaw")

    monkeypatch.setattr(gradescope, "grade", broken)
    assert gradescope.run(tmp_path) == 0
    results = read_json(tmp_path / "results" / "results.json")
    jsonschema.validate(results, GRADESCOPE_RESULTS)
    assert results["score"] == 0 and "the autograder failed (RuntimeError: something no one foresaw)" in results["output"]
    assert "Traceback" in capsys.readouterr().out  # for the instructor, in the autograder log


def test_a_grader_that_cannot_start_still_leaves_a_valid_result(code_zip, tmp_path):
    root = tmp_path / "autograder"
    unpack_zip(code_zip, root / "source")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    (root / "results" / "results.json").write_text('{"score": 99}')  # a stale result must not be taken for this one
    env = {**platform_env(PROBLEMGEN_AUTOGRADER_ROOT=str(root)), "PROBLEMGEN_PYTHON": "/bin/false"}
    done = run_script(root / "source" / "run_autograder", env, tmp_path)
    assert done.returncode == 0, done.stderr
    results = read_json(root / "results" / "results.json")
    jsonschema.validate(results, GRADESCOPE_RESULTS)
    assert results["score"] == 0 and "could not start" in results["output"]


def test_an_oversize_helper_is_neither_read_whole_nor_parsed_by_the_grader(code_zip, tmp_path, monkeypatch):
    """The grader runs outside the sandbox: a 12 MB data.py once took it 4.9 GB and 36 s in ast.parse."""
    import ast

    from problemgen.code.sandbox.staging import MAX_FILE_BYTES
    from problemgen.exports import autograde

    sizes, real = [], ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, *a, **k: sizes.append(len(source)) or real(source, *a, **k))
    unpack_zip(code_zip, tmp_path / "source")
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "data.py").write_text("ROWS = [\n" + "    (1, 2, 3),\n" * 80_000 + "]\n")
    (tmp_path / "submission" / "notes.py").write_text("X = 1\n")
    report = autograde.grade_code_submission(tmp_path / "source", tmp_path / "submission")
    assert f"data.py (Python file larger than {MAX_FILE_BYTES} bytes)" in report.meta["error"]
    assert max(sizes, default=0) <= MAX_FILE_BYTES


@pytest.mark.slow
def test_a_solution_beside_a_large_data_file_is_graded(code_zip, tmp_path):
    data = b"ROWS = [\n" + b"    (1, 2, 3),\n" * 800_000 + b"]\n"  # 12 MB
    results = autograde(code_zip, tmp_path, {"softmax.py": softmax_source(), "data.py": data}, ADA)
    assert results["score"] == pytest.approx(total(results)) and results["score"] > 0


def test_below_the_required_isolation_nothing_runs_and_the_result_says_so(code_zip, tmp_path, monkeypatch):
    from types import SimpleNamespace

    from problemgen.code.sandbox import Sandbox
    from problemgen.exports import autograde

    source, submission = tmp_path / "source", tmp_path / "submission"
    unpack_zip(code_zip, source)
    submission.mkdir()
    (submission / "softmax.py").write_bytes(softmax_source())
    config = json.loads((source / "problemgen-export.json").read_text())
    (source / "problemgen-export.json").write_text(json.dumps({**config, "min_isolation": "seccomp+landlock"}))
    monkeypatch.setattr(Sandbox, "probe", lambda self: SimpleNamespace(isolation="rlimits", confinement={}))
    ran = []
    monkeypatch.setattr(Sandbox, "run", lambda self, *a, **k: ran.append(a))
    report = autograde.grade_code_submission(source, submission)
    assert report.score == 0 and not ran
    assert "below the required 'seccomp+landlock'" in report.meta["error"]


def test_every_export_is_discovered_documented_and_writes_instructor_notes():
    from problemgen.exports import all_exports

    exports = all_exports()
    assert {"gradescope", "github-classroom", "prairielearn"} <= set(exports)
    for export in exports.values():
        assert "Example:" in export.help and f"problemgen export {export.name}" in export.help
        # grader packages carry INSTRUCTOR.md; a question-pool file says in its help how to import it
        assert "INSTRUCTOR.md" in export.help or "Import it in" in export.help
