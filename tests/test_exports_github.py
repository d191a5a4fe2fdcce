"""``problemgen export github-classroom``: the template files, run as the workflow runs them on a push.

Each end-to-end test copies the export into a temporary repository, adds the student's files, sets the
variables GitHub Actions sets (GITHUB_WORKSPACE, GITHUB_REPOSITORY, GITHUB_STEP_SUMMARY, the secret
from the repository secret) and runs the workflow's grading step, ``.problemgen/grade.sh``. The JUnit
report is read back with junitparser; the job summary must be Markdown with the score.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from junitparser import JUnitXml

from exports_platform import GRADER_SECRET, HOSTILE_SHEET, SOLUTIONS, cli, make_class, platform_env, run_script, student_file
from problemgen.classes.logins import repository_login
from problemgen.errors import ProblemgenError
from problemgen.exports.sealed import seal, unseal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")
SECRET_ENV = "PROBLEMGEN_TEST_GH_SECRET"



@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    return make_class(tmp_path_factory.mktemp("gh-class"))


@pytest.fixture(scope="module")
def secret_set():
    os.environ[SECRET_ENV] = GRADER_SECRET
    yield
    os.environ.pop(SECRET_ENV, None)


@pytest.fixture(scope="module")
def class_template(klass, secret_set, tmp_path_factory):
    class_dir, roster = klass
    out = tmp_path_factory.mktemp("gh") / "template"
    assert cli(["export", "github-classroom", "--class", str(class_dir), "--roster", str(roster),
                "--secret-env", SECRET_ENV, "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def task_template(secret_set, tmp_path_factory):
    out = tmp_path_factory.mktemp("gh-task") / "template"
    assert cli(["export", "github-classroom", "--task", "softmax", "--secret-env", SECRET_ENV, "-o", str(out)]) == 0
    return out


def push(template: Path, tmp: Path, files: dict[str, bytes], repository: str, secret: str | None = GRADER_SECRET):
    """Run the workflow's grading step on a repository made from the template plus ``files``."""
    repo = tmp / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(template, repo)
    for name, data in files.items():
        (repo / name).write_bytes(data)
    summary, results = tmp / "summary.md", tmp / "results"
    summary.write_text("", encoding="utf-8")
    env = platform_env(GITHUB_WORKSPACE=str(repo), GITHUB_REPOSITORY=repository, GITHUB_ACTOR="someone",
                       GITHUB_STEP_SUMMARY=str(summary), PROBLEMGEN_RESULTS_DIR=str(results))
    if secret is not None:
        env[SECRET_ENV] = secret
    done = run_script(repo / ".problemgen" / "grade.sh", env, repo)
    assert done.returncode == 0, done.stderr
    junit = JUnitXml.fromfile(str(results / "report.xml"))
    data = json.loads((results / "results.json").read_text(encoding="utf-8"))
    assert (junit.tests, junit.failures + junit.errors) == (
        sum(len(p["parts"]) for p in data["problems"]),
        sum(1 for p in data["problems"] for part in p["parts"] if not part["passed"]))
    return data, summary.read_text(encoding="utf-8"), junit


# ------------------------------------------------------------------------------------------ template


def test_the_template_has_the_workflow_the_script_and_sealed_keys(class_template):
    workflow = (class_template / ".github" / "workflows" / "problemgen.yml").read_text()
    assert "on:\n  push:" in workflow and f"${{{{ secrets.{SECRET_ENV} }}}}" in workflow
    assert "./.problemgen/grade.sh" in workflow and "upload-artifact" in workflow
    assert os.access(class_template / ".problemgen" / "grade.sh", os.X_OK)
    assert (class_template / "INSTRUCTOR.md").is_file()
    sealed = (class_template / ".problemgen" / "keys.sealed").read_bytes()
    assert b"variant" not in sealed and b"ada" not in sealed.lower()
    config = json.loads((class_template / ".problemgen" / "problemgen-export.json").read_text())
    assert config["match"] == {} and config["variants"] == {}  # the map lives only in the sealed file


def test_no_solution_is_readable_in_the_task_template(task_template):
    import zipfile

    solution = (SOLUTIONS / "softmax.py").read_text()
    body = [line for line in solution.splitlines() if "np." in line][0].strip()
    for path in task_template.rglob("*"):
        if path.suffix == ".whl":
            names = zipfile.ZipFile(path).namelist()
            assert not [n for n in names if "/solutions/" in n or n.endswith("mutants.py")]
        elif path.is_file():
            assert body not in path.read_text(errors="replace"), path
    assert (task_template / ".problemgen" / "solutions.sealed").is_file()


def test_the_workflow_is_valid_yaml_with_a_push_trigger(class_template):
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((class_template / ".github" / "workflows" / "problemgen.yml").read_text())
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads a bare `on` as true
    assert "push" in triggers
    steps = workflow["jobs"]["grade"]["steps"]
    assert any(step.get("run") == "./.problemgen/grade.sh" for step in steps)


def test_sealed_keys_open_only_with_the_secret():
    blob = seal(GRADER_SECRET, b"the keys")
    assert unseal(GRADER_SECRET, blob) == b"the keys" and seal(GRADER_SECRET, b"the keys") == blob
    with pytest.raises(ProblemgenError, match="do not open"):
        unseal("another-secret-of-some-length", blob)
    tampered = blob[:-1] + bytes([blob[-1] ^ 1])
    with pytest.raises(ProblemgenError, match="do not open"):
        unseal(GRADER_SECRET, tampered)


@pytest.mark.parametrize("repository, login", [
    ("hw1-ada-l", "ada-l"), ("hw1-l", None), ("HW1-BOBBY", "bobby"), ("hw1-x-cy", "cy"), ("template", None),
])
def test_the_student_is_the_login_that_ends_the_repository_name(repository, login):
    assert repository_login(repository, ["ada-l", "bobby", "cy", "a"])[0] == login


LOGINS_ROSTER = "id,github\ns001,x-bob\ns002,bob\ns003,@Cy\n"
NAMES = [  # (repository name, roster id it belongs to, warned): the same in a class run and on GitHub
    ("hw1-x-bob", "s001", True), ("HW1-X-Bob", "s001", True), ("hw1-x-x-bob", "s001", True),
    ("hw1-bob", "s002", False), ("x-bob", "s002", False), ("hw1-cy", "s003", False), ("hw1-CY", "s003", False),
    ("-bob", None, False), ("hw1-xbob", None, False), ("hw1-bob-", None, False),
]


@pytest.fixture(scope="module")
def logins_template(klass, secret_set, tmp_path_factory):
    """A class template whose roster has a login that ends another (x-bob, bob) and one written ``@Cy``."""
    class_dir, _ = klass
    roster = tmp_path_factory.mktemp("gh-logins") / "roster.csv"
    roster.write_text(LOGINS_ROSTER, encoding="utf-8")
    out = roster.parent / "template"
    assert cli(["export", "github-classroom", "--class", str(class_dir), "--roster", str(roster),
                "--secret-env", SECRET_ENV, "-o", str(out)]) == 0
    return out, roster


def _layout_pick(roster: Path, name: str, tmp: Path) -> tuple[str | None, list[str]]:
    """(the roster id ``grade --layout classroom`` gives the folder ``name``, the summary's lines)."""
    from problemgen.classes import layouts

    download_dir = tmp / "download"
    shutil.rmtree(download_dir, ignore_errors=True)
    (download_dir / name).mkdir(parents=True)
    layout = layouts.Layout("classroom", roster)
    download = layouts.sort_download(download_dir, "classroom", layouts.identities(layout, ["s001", "s002", "s003"]),
                                     (".toml",), lambda path: True)
    return next(iter(download.found), None), download.notes()


def _github_pick(template: Path, name: str, tmp: Path, monkeypatch) -> tuple[str | None, list[str]]:
    """(the roster id the grader shipped to GitHub grades repository ``org/name`` as, its report's warnings)."""
    from problemgen.exports import github_classroom

    repo = tmp / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(template, repo)
    (repo / "answers.toml").write_text("", encoding="utf-8")  # a blank sheet: graded (0 points) as whoever's it is
    monkeypatch.setenv("GITHUB_REPOSITORY", f"org/{name}")
    report = github_classroom.grade(repo)
    not_found = "not on the class roster" in report.meta.get("error", "")
    return (None if not_found else report.meta["student"]), list(report.meta.get("warnings", ()))


@pytest.mark.parametrize("name, student, warned", NAMES)
def test_a_class_run_and_the_github_grader_give_a_repository_to_the_same_login(
        logins_template, name, student, warned, tmp_path, monkeypatch):
    template, roster = logins_template
    layout_student, notes = _layout_pick(roster, name, tmp_path)
    github_student, warnings = _github_pick(template, name, tmp_path, monkeypatch)
    assert layout_student == github_student == student
    line = f"{name} fits the GitHub logins x-bob and bob: taken as x-bob's, the longest"
    assert [w.startswith(line) for w in notes] == ([True] if warned else [])  # the instructor's class summary
    assert not any("x-bob" in w for w in warnings)  # a student's report never names another student's login


def test_a_secret_name_github_refuses_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN_X", GRADER_SECRET)
    assert cli(["export", "github-classroom", "--task", "softmax", "--secret-env", "GITHUB_TOKEN_X",
                "-o", str(tmp_path / "t")]) == 2
    assert "not a GitHub secret name" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ on a push


@pytest.mark.slow
def test_the_key_sheet_scores_the_maximum_and_the_summary_says_so(klass, class_template, tmp_path):
    class_dir, _ = klass
    data, summary, junit = push(class_template, tmp_path, {"answers.toml": student_file(class_dir, "s001", "key.toml").read_bytes()},
                                "classroom-org/hw1-ada-l")
    assert data["score"] == 1.0 and (junit.failures, junit.errors) == (0, 0)
    assert summary.startswith("## ") and "(100%)" in summary


@pytest.mark.slow
def test_blank_foreign_and_hostile_sheets_score_zero(klass, class_template, tmp_path):
    class_dir, _ = klass
    for sheet in (student_file(class_dir, "s001", "answers.toml").read_bytes(),
                  student_file(class_dir, "s002", "key.toml").read_bytes(), HOSTILE_SHEET):
        data, summary, _ = push(class_template, tmp_path, {"answers.toml": sheet}, "classroom-org/hw1-ada-l")
        assert data["score"] == 0.0 and "(0%)" in summary


@pytest.mark.slow
def test_a_wrong_secret_or_an_unknown_repository_scores_zero_with_a_reason(klass, class_template, tmp_path):
    class_dir, _ = klass
    key = {"answers.toml": student_file(class_dir, "s001", "key.toml").read_bytes()}
    data, summary, _ = push(class_template, tmp_path, key, "classroom-org/hw1-ada-l", secret="not-the-secret-at-all")
    assert data["score"] == 0.0 and "cannot open the class keys" in summary
    data, summary, _ = push(class_template, tmp_path, key, "classroom-org/hw1-mallory")
    assert data["score"] == 0.0 and "not on the class roster" in summary


@pytest.mark.slow
def test_honest_and_buggy_code_on_a_push(task_template, tmp_path):
    honest = (SOLUTIONS / "softmax.py").read_bytes()
    data, summary, junit = push(task_template, tmp_path, {"softmax.py": honest}, "org/softmax-ada-l")
    assert data["score"] == 1.0 and junit.failures + junit.errors == 0
    buggy = honest.replace(b"np.sum(e, axis=axis, keepdims=True)", b"np.sum(e)")
    data, summary, junit = push(task_template, tmp_path, {"softmax.py": buggy}, "org/softmax-ada-l")
    assert data["score"] < 1.0 and junit.failures + junit.errors > 0
    data, summary, _ = push(task_template, tmp_path, {"softmax.py": honest}, "org/softmax-ada-l", secret=None)
    assert data["score"] == 0.0 and "secret is not available" in summary


@pytest.mark.slow
def test_a_notebook_beside_the_untouched_starter_is_graded(task_template, tmp_path):
    """The template ships softmax.py; a student who solves the task in a notebook need not delete it."""
    from exports_platform import filled_starter_notebook

    notebook = {"softmax.ipynb": filled_starter_notebook("softmax").encode()}
    data, summary, _ = push(task_template, tmp_path, notebook, "org/softmax-ada-l")
    assert data["score"] == 1.0, summary


@pytest.mark.slow
def test_the_installed_template_wheel_grades_with_the_unsealed_solutions(task_template, tmp_path):
    """As on the runner: problemgen comes only from the template's wheel, which has no solutions in it."""
    import subprocess

    lib = tmp_path / "lib"
    wheel = next((task_template / ".problemgen").glob("problemgen-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(lib),
                    str(wheel)], check=True, capture_output=True)
    assert not (lib / "problemgen" / "code" / "tasks" / "solutions").exists()
    repo = tmp_path / "repo"
    shutil.copytree(task_template, repo)
    (repo / "softmax.py").write_bytes((SOLUTIONS / "softmax.py").read_bytes())
    env = platform_env(GITHUB_WORKSPACE=str(repo), GITHUB_REPOSITORY="org/softmax-ada-l",
                       PROBLEMGEN_RESULTS_DIR=str(tmp_path / "results"))
    env.update({SECRET_ENV: GRADER_SECRET, "PYTHONPATH": str(lib)})
    done = run_script(repo / ".problemgen" / "grade.sh", env, tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "results" / "results.json").read_text())
    assert data["score"] == 1.0, data["meta"]


def test_an_unexpected_failure_of_the_grader_still_leaves_the_reports_saying_so(tmp_path, monkeypatch):
    from problemgen.exports import github_classroom

    def broken(root):
        raise RuntimeError("something no one foresaw")

    monkeypatch.setattr(github_classroom, "grade", broken)
    monkeypatch.setenv("PROBLEMGEN_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    assert github_classroom.run(tmp_path) == 0
    data = json.loads((tmp_path / "results" / "results.json").read_text())
    assert data["score"] == 0 and "the autograder failed (RuntimeError" in data["meta"]["error"]
    assert JUnitXml.fromfile(str(tmp_path / "results" / "report.xml")) is not None
    assert "the autograder failed" in (tmp_path / "summary.md").read_text()


def test_a_task_template_built_over_a_class_template_carries_no_sealed_keys(class_template, secret_set, tmp_path,
                                                                             capsys):
    """Students read the template repository: a class's sealed keys left from an earlier export must not
    reach the students of a coding task."""
    out = tmp_path / "template"
    shutil.copytree(class_template, out)
    assert cli(["export", "github-classroom", "--task", "softmax", "--secret-env", SECRET_ENV, "-o", str(out),
                "--force"]) == 0
    assert not (out / ".problemgen" / "keys.sealed").exists()
    assert "warning: removed .problemgen/keys.sealed, left by an earlier export" in capsys.readouterr().err


def test_another_task_replaces_the_earlier_starter_unless_it_was_edited(task_template, secret_set, tmp_path, capsys):
    """An untouched starter of the earlier task is the export's own file and goes; an edited one is the
    instructor's work: it stays, named in a warning."""
    args = ["--secret-env", SECRET_ENV, "--force"]
    out = tmp_path / "template"
    shutil.copytree(task_template, out)
    assert cli(["export", "github-classroom", "--task", "layer_norm", "-o", str(out), *args]) == 0
    assert not (out / "softmax.py").exists() and (out / "layer_norm.py").is_file()
    capsys.readouterr()
    (out / "layer_norm.py").write_text((out / "layer_norm.py").read_text() + "# a hint for the class\n")
    assert cli(["export", "github-classroom", "--task", "softmax", "-o", str(out), *args]) == 0
    assert (out / "layer_norm.py").read_text().endswith("# a hint for the class\n")
    assert "warning: layer_norm.py is the starter an earlier export wrote for task layer_norm, edited since" in (
        capsys.readouterr().err)


def test_a_class_template_built_over_a_task_template_carries_no_solutions_or_starter(task_template, klass, secret_set,
                                                                                      tmp_path, capsys):
    """The other way round: the task's sealed solutions (every coding task's) and its starter must not stay
    in an answer-sheet class's repository."""
    class_dir, roster = klass
    out = tmp_path / "template"
    shutil.copytree(task_template, out)
    assert cli(["export", "github-classroom", "--class", str(class_dir), "--roster", str(roster),
                "--secret-env", SECRET_ENV, "-o", str(out), "--force"]) == 0
    assert not (out / ".problemgen" / "solutions.sealed").exists() and not (out / "softmax.py").exists()
    assert (out / ".problemgen" / "keys.sealed").is_file()
    err = capsys.readouterr().err
    assert "removed .problemgen/solutions.sealed" in err and "removed softmax.py" in err
