"""The platforms' launchers (Gradescope's run_autograder, GitHub's grade.sh, PrairieLearn's run.sh) never let
the grader import anything from the student's files.

The grader runs outside the sandbox, as root on Gradescope and in most CI containers, with the hidden-test
secret in its environment. Python's ``-m`` and ``-c`` put the working directory first on ``sys.path``, and on
GitHub Classroom that directory is the student's repository: a ``random.py`` there was imported by the
grader itself. Each test here plants modules named like what the grader imports (and the ``problemgen``
package itself) in the working directory and in the submission; each of them, if imported, leaves a mark
and ends the process. The launchers must grade on, leave no mark and write their results.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from exports_platform import GRADER_SECRET, SOLUTIONS, cli, platform_env, read_json, run_script
from problemgen.exports.bundle import unpack_zip

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")
SECRET_ENV = "PROBLEMGEN_TEST_LAUNCHER_SECRET"
SHADOWING = ("json", "random", "tempfile", "argparse", "pathlib", "numpy", "problemgen/__init__")
"""Modules the grader imports, and the grader's own package: what a student file must never replace."""


def plant(directory: Path, marks: Path) -> None:
    """Modules that, if ever imported, leave a mark named after themselves and end the process at once."""
    for name in SHADOWING:
        path = directory / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"import os\nopen(os.path.join({str(marks)!r}, {name.replace('/', '.')!r}), 'w').close()\n"
                        "os._exit(97)\n", encoding="utf-8")


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """A Gradescope zip, a GitHub Classroom template and a PrairieLearn question for the softmax task."""
    out = tmp_path_factory.mktemp("launchers")
    os.environ[SECRET_ENV] = GRADER_SECRET
    try:
        for args in (["gradescope", "-o", str(out / "softmax.zip")],
                     ["github-classroom", "-o", str(out / "template")],
                     ["prairielearn", "-o", str(out / "question")]):
            assert cli(["export", args[0], "--task", "softmax", "--secret-env", SECRET_ENV, *args[1:]]) == 0
    finally:
        os.environ.pop(SECRET_ENV, None)
    return out


@pytest.fixture
def marks(tmp_path):
    path = tmp_path / "marks"
    path.mkdir()
    return path


def test_gradescope_run_autograder_imports_nothing_from_the_submission(exports, marks, tmp_path):
    root = tmp_path / "autograder"
    unpack_zip(exports / "softmax.zip", root / "source")
    (root / "submission").mkdir()
    plant(root / "submission", marks)
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"email": "ada@uni.edu"}]}))
    done = run_script(root / "source" / "run_autograder", platform_env(PROBLEMGEN_AUTOGRADER_ROOT=str(root)),
                      root / "submission")
    assert done.returncode == 0 and not list(marks.iterdir()), (done.stderr, list(marks.iterdir()))
    assert "softmax()" in read_json(root / "results" / "results.json")["output"]


def test_github_grade_sh_imports_nothing_from_the_repository(exports, marks, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(exports / "template", repo)
    plant(repo, marks)
    env = platform_env(GITHUB_WORKSPACE=str(repo), GITHUB_REPOSITORY="org/softmax-ada-l",
                       PROBLEMGEN_RESULTS_DIR=str(tmp_path / "results"))  # no secret: nothing is run, quickly
    done = run_script(repo / ".problemgen" / "grade.sh", env, repo)
    assert done.returncode == 0 and not list(marks.iterdir()), (done.stderr, list(marks.iterdir()))
    assert "secret is not available" in read_json(tmp_path / "results" / "results.json")["meta"]["error"]


def test_prairielearn_run_sh_imports_nothing_from_the_student_files(exports, marks, tmp_path):
    root = tmp_path / "grade"
    shutil.copytree(exports / "question" / "tests", root / "tests")
    (root / "student").mkdir()
    plant(root / "student", marks)
    done = run_script(root / "tests" / "run.sh", platform_env(PROBLEMGEN_AUTOGRADER_ROOT=str(root)), root / "student")
    assert done.returncode == 0 and not list(marks.iterdir()), (done.stderr, list(marks.iterdir()))
    results = read_json(root / "results" / "results.json")
    assert results["gradable"] is False and "softmax()" in results["format_errors"][0]


@pytest.mark.slow
def test_an_innocent_random_py_beside_the_solution_does_not_break_github_grading(exports, tmp_path):
    """The case that first showed the hole: a student's own ``random.py`` in the repository root crashed grading."""
    repo = tmp_path / "repo"
    shutil.copytree(exports / "template", repo)
    (repo / "softmax.py").write_bytes((SOLUTIONS / "softmax.py").read_bytes())
    (repo / "random.py").write_text("def roll():\n    return 4\n", encoding="utf-8")
    env = platform_env(GITHUB_WORKSPACE=str(repo), GITHUB_REPOSITORY="org/softmax-ada-l",
                       PROBLEMGEN_RESULTS_DIR=str(tmp_path / "results"), **{SECRET_ENV: GRADER_SECRET})
    done = run_script(repo / ".problemgen" / "grade.sh", env, repo)
    assert done.returncode == 0, done.stderr
    assert read_json(tmp_path / "results" / "results.json")["score"] == 1.0


def test_the_github_workflow_runs_python_in_the_repository_only_with_a_safe_path(exports):
    """pip too: ``python -m pip`` in the repository root would import a student's ``random.py`` or ``json.py``."""
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((exports / "template" / ".github" / "workflows" / "problemgen.yml").read_text())
    runs = [step["run"] for step in workflow["jobs"]["grade"]["steps"] if "run" in step]
    pythons = [run for run in runs if run.split()[0] in ("python", "python3")]
    assert pythons and all(run.split()[1] == "-P" for run in pythons), pythons
