"""``problemgen export prairielearn``: the question directory, graded as PrairieLearn's external grader runs it.

Each end-to-end test lays out ROOT/tests (the question's tests/), ROOT/student (the submitted file) and
ROOT/data/data.json, runs ROOT/tests/run.sh with $PROBLEMGEN_AUTOGRADER_ROOT=ROOT, and validates
ROOT/results/results.json against the fields PrairieLearn documents for external grading results:
``gradable`` (bool; false needs no score and may carry ``format_errors``), ``score`` in [0, 1],
``message``, ``output``, and ``tests`` with ``name``, ``description``, ``points``, ``max_points``,
``message``, ``output``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import jsonschema
import pytest

from exports_platform import GRADER_SECRET, SOLUTIONS, cli, filled_starter_notebook, platform_env, read_json, run_script

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")
SECRET_ENV = "PROBLEMGEN_TEST_PL_SECRET"

PL_TEST = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"}, "description": {"type": "string"}, "points": {"type": "number"},
        "max_points": {"type": "number", "minimum": 0}, "message": {"type": "string"}, "output": {"type": "string"},
        "images": {"type": "array"},
    },
}
PL_RESULTS = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "gradable": {"type": "boolean"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "message": {"type": "string"},
        "output": {"type": "string"},
        "format_errors": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "tests": {"type": "array", "items": PL_TEST},
        "images": {"type": "array"},
    },
    "if": {"properties": {"gradable": {"const": False}}, "required": ["gradable"]},
    "then": {"required": ["format_errors"]},
    "else": {"required": ["score"]},
}



@pytest.fixture(scope="module")
def question(tmp_path_factory):
    os.environ[SECRET_ENV] = GRADER_SECRET
    out = tmp_path_factory.mktemp("pl") / "softmax"
    try:
        assert cli(["export", "prairielearn", "--task", "softmax", "--secret-env", SECRET_ENV, "-o", str(out)]) == 0
    finally:
        os.environ.pop(SECRET_ENV, None)
    return out


def grade(question: Path, tmp: Path, files: dict[str, bytes]) -> dict:
    root = tmp / "grade"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(question / "tests", root / "tests")
    (root / "student").mkdir()
    (root / "data").mkdir()
    (root / "data" / "data.json").write_text(json.dumps({"params": {}, "submitted_answers": {}}), encoding="utf-8")
    for name, data in files.items():
        (root / "student" / name).write_bytes(data)
    done = run_script(root / "tests" / "run.sh", platform_env(PROBLEMGEN_AUTOGRADER_ROOT=str(root)), tmp)
    assert done.returncode == 0, done.stderr
    results = read_json(root / "results" / "results.json")
    jsonschema.validate(results, PL_RESULTS)
    return results


def test_info_json_enables_external_grading_with_the_shipped_entry_point(question):
    info = read_json(question / "info.json")
    assert uuid.UUID(info["uuid"]) and info["type"] == "v3" and info["gradingMethod"] == "External"
    options = info["externalGradingOptions"]
    assert options["enabled"] is True and options["entrypoint"] == "/grade/tests/run.sh"
    assert 0 < options["timeout"] <= 600 and options["enableNetworking"] is False
    assert os.access(question / "tests" / "run.sh", os.X_OK)
    assert list((question / "tests").glob("problemgen-*.whl")) and (question / "INSTRUCTOR.md").is_file()


@pytest.mark.parametrize("task", ["softmax", "scaled_dot_product_attention", "multi_head_attention"])
def test_the_job_timeout_lets_every_call_use_its_full_per_test_time(task, tmp_path, monkeypatch):
    """Hidden cases and property calls count too: 60 s for 13 calls of 5 s once killed a correct, slow submission."""
    from problemgen.code.grade import make_plan
    from problemgen.code.tasks import get_task

    monkeypatch.setenv(SECRET_ENV, GRADER_SECRET)
    out = tmp_path / "q"
    assert cli(["export", "prairielearn", "--task", task, "--secret-env", SECRET_ENV, "-o", str(out)]) == 0
    job = read_json(out / "info.json")["externalGradingOptions"]["timeout"]
    plan = make_plan(get_task(task), secret=GRADER_SECRET)
    laws_again = sum(len(p.calls) - 1 for p in plan.properties)
    assert job >= (len(plan.calls) + laws_again) * 5.0 + 20, (job, len(plan.calls))
    assert f"({job} s)" in " ".join((out / "INSTRUCTOR.md").read_text().split())


def test_a_per_test_timeout_the_job_cannot_cover_is_warned_about(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, GRADER_SECRET)
    args = ["export", "prairielearn", "--task", "multi_head_attention", "--secret-env", SECRET_ENV, "--timeout", "30",
            "-o", str(tmp_path / "q")]
    assert cli(args) == 0
    assert "warning: a slow submission may need up to" in capsys.readouterr().err
    assert read_json(tmp_path / "q" / "info.json")["externalGradingOptions"]["timeout"] == 600


def test_question_html_has_the_editor_and_the_results_panel(question):
    text = (question / "question.html").read_text()
    assert '<pl-file-editor file-name="softmax.py"' in text
    assert "<pl-external-grader-results>" in text and "def softmax" in text


def test_the_secret_is_only_under_tests(question):
    for path in question.rglob("*"):
        if path.is_file() and not path.suffix == ".whl":
            assert (GRADER_SECRET in path.read_text(errors="replace")) == (path.name == "problemgen-export.json"), path
    assert (question / "tests" / "problemgen-export.json").is_file()


@pytest.mark.slow
def test_an_honest_submission_scores_one(question, tmp_path):
    results = grade(question, tmp_path, {"softmax.py": (SOLUTIONS / "softmax.py").read_bytes()})
    assert results["gradable"] is True and results["score"] == 1.0
    assert results["tests"] and all(t["points"] == t["max_points"] for t in results["tests"])


@pytest.mark.slow
@pytest.mark.parametrize("legacy", [False, True], ids=["starter", "old starter"])
def test_the_starter_notebook_filled_with_the_solution_scores_one(question, tmp_path, legacy):
    results = grade(question, tmp_path, {"softmax.ipynb": filled_starter_notebook("softmax", legacy=legacy).encode()})
    assert results["gradable"] is True and results["score"] == 1.0, results.get("output")


@pytest.mark.slow
def test_a_buggy_submission_scores_less_and_names_the_failing_tests(question, tmp_path):
    buggy = (SOLUTIONS / "softmax.py").read_bytes().replace(b"np.sum(e, axis=axis, keepdims=True)", b"np.sum(e)")
    results = grade(question, tmp_path, {"softmax.py": buggy})
    assert results["gradable"] is True and 0 <= results["score"] < 1
    assert any(t["points"] < t["max_points"] for t in results["tests"])


def test_the_one_file_prairielearn_sends_is_not_gradable_without_the_function(question, tmp_path):
    """PrairieLearn always sends exactly softmax.py: without softmax() in it, no attempt may be used up."""
    results = grade(question, tmp_path, {"softmax.py": b"import numpy as np\n\ndef soft_max(x):\n    return x\n"})
    assert results["gradable"] is False
    assert "needs a function softmax()" in results["format_errors"][0] and "softmax.py" in results["format_errors"][0]


@pytest.mark.slow
def test_a_lone_file_that_does_not_parse_is_graded_so_the_student_sees_the_syntax_error(question, tmp_path):
    results = grade(question, tmp_path, {"softmax.py": b"def softmax(x):\n    return x +\n"})
    assert results["gradable"] is True and results["score"] == 0
    assert "syntax" in results["output"].lower()


@pytest.mark.slow
def test_a_submission_without_the_function_is_not_gradable(question, tmp_path):
    results = grade(question, tmp_path, {"softmax.py": b"def soft_max(x):\n    return x\n", "other.py": b"y = 1\n"})
    assert results["gradable"] is False and "softmax" in results["format_errors"][0]


def test_an_unexpected_failure_of_the_grader_is_not_gradable_and_says_so(tmp_path, monkeypatch):
    from problemgen.exports import prairielearn

    def broken(source, submission):
        raise RuntimeError("something no one foresaw")

    monkeypatch.setattr(prairielearn, "grade_code_submission", broken)
    assert prairielearn.run(tmp_path) == 0
    results = read_json(tmp_path / "results" / "results.json")
    jsonschema.validate(results, PL_RESULTS)
    assert results["gradable"] is False and "the autograder failed (RuntimeError" in results["format_errors"][0]


@pytest.mark.slow
def test_the_grader_installs_its_own_wheel_when_the_image_lacks_problemgen(question, tmp_path):
    root = tmp_path / "grade"
    shutil.copytree(question / "tests", root / "tests")
    (root / "student").mkdir()
    (root / "student" / "softmax.py").write_bytes((SOLUTIONS / "softmax.py").read_bytes())
    env = platform_env(PROBLEMGEN_AUTOGRADER_ROOT=str(root), PROBLEMGEN_LIB=str(tmp_path / "lib"))
    env.pop("PYTHONPATH")
    done = run_script(root / "tests" / "run.sh", env, tmp_path)
    assert done.returncode == 0, done.stderr
    # Where problemgen is installed in this interpreter (CI's venv) the image does not lack it, so the
    # script rightly skips its own wheel; the grading below is checked either way.
    installed = subprocess.run([sys.executable, "-c", "import problemgen"], env=env, cwd=tmp_path).returncode == 0
    assert installed or (tmp_path / "lib" / "problemgen" / "exports" / "autograde.py").is_file()
    results = read_json(root / "results" / "results.json")
    jsonschema.validate(results, PL_RESULTS)
    assert results["score"] == 1.0


def test_the_same_task_exports_to_the_same_bytes(question, tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, GRADER_SECRET)
    again = tmp_path / "again"
    assert cli(["export", "prairielearn", "--task", "softmax", "--secret-env", SECRET_ENV, "-o", str(again)]) == 0
    files = lambda root: {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}  # noqa: E731
    assert files(again) == files(question)


def test_a_non_empty_output_directory_is_refused_without_force(question, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, GRADER_SECRET)
    (tmp_path / "keep.txt").write_text("mine")
    args = ["export", "prairielearn", "--task", "softmax", "--secret-env", SECRET_ENV, "-o", str(tmp_path)]
    assert cli(args) == 2 and "--force" in capsys.readouterr().err
    assert cli([*args, "--force"]) == 0
    assert (tmp_path / "keep.txt").read_text() == "mine" and (tmp_path / "info.json").is_file()


def test_a_rebuild_with_another_wheel_ships_that_wheel_alone(question, tmp_path, capsys, monkeypatch):
    """run.sh installs tests/problemgen-*.whl: with the earlier export's wheel left beside the new one, pip
    refuses two versions of problemgen and no submission can be graded."""
    monkeypatch.setenv(SECRET_ENV, GRADER_SECRET)
    out = tmp_path / "softmax"
    shutil.copytree(question, out)
    (old,) = (out / "tests").glob("problemgen-*.whl")
    newer = tmp_path / "problemgen-99.0-py3-none-any.whl"
    shutil.copyfile(old, newer)
    args = ["export", "prairielearn", "--task", "softmax", "--secret-env", SECRET_ENV, "-o", str(out), "--force"]
    assert cli([*args, "--wheel", str(newer)]) == 0
    assert sorted(p.name for p in (out / "tests").glob("*.whl")) == [newer.name]
    assert f"warning: removed tests/{old.name}, left by an earlier export" in capsys.readouterr().err
