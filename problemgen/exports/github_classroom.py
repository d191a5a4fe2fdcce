"""GitHub Classroom: a workflow that grades every push, for a coding task or an answer-sheet class.

The export is the grading part of the assignment's template repository: ``.github/workflows/
problemgen.yml``, ``.problemgen/`` (the configuration, the problemgen wheel, the grading script and, for
a class, the sealed keys) and ``INSTRUCTOR.md``. On every push the workflow installs problemgen from
the wheel (dependencies from PyPI on the runner), runs ``.problemgen/grade.sh`` with the secret from a
repository (or organisation) secret, and leaves a JUnit report (uploaded as an artifact) and the
Markdown report in the job summary (``$GITHUB_STEP_SUMMARY``).

Who is the student: GitHub Classroom names each copy ``<assignment>-<login>``; the roster column named
by ``--match-by`` (default ``github``) holds the logins, and the longest login that ends the repository
name is the student (:mod:`problemgen.classes.logins`, the rule ``grade --layout classroom`` follows too);
a name that ends in two logins gets a warning in the report saying which was taken.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from problemgen.classes.logins import repository_login
from problemgen.errors import ProblemgenError
from problemgen.exports import Export, Option
from problemgen.exports import common
from problemgen.exports.autograde import (
    CONFIG, failure, grade_code_submission, grade_sheet, grader_failed, load_config, write_result,
)
from problemgen.exports.bundle import Bundle, write_directory
from problemgen.exports.sealed import seal, unseal
from problemgen.exports.wheel import STUDENT_VISIBLE_LEFT_OUT, running_files
from problemgen.sheets.reports import Report, render_json, render_junit, render_markdown, render_text, well_formed

DOT = ".problemgen"
SEALED = "keys.sealed"
SEALED_SOLUTIONS = "solutions.sealed"
WORKFLOW = ".github/workflows/problemgen.yml"
_SECRET_NAME = re.compile(r"(?!GITHUB_)[A-Z_][A-Z0-9_]{0,99}")
OWNED = (f"{DOT}/problemgen-*.whl", f"{DOT}/{SEALED}", f"{DOT}/{SEALED_SOLUTIONS}")
"""Files an earlier export may have left that this one need not write: a class's sealed keys (students can
read the repository; a task's template must not carry them), a task's sealed solutions, a wheel of another
version. An earlier task's starter is added when it is still as shipped (:func:`_earlier_starter`)."""

WORKFLOW_TEXT = """# Grades every push with problemgen (exported by `problemgen export github-classroom`).
name: problemgen grading
on:
  push:
  workflow_dispatch:
permissions:
  contents: read
jobs:
  grade:
    runs-on: ubuntu-latest
    timeout-minutes: 15
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install problemgen
        run: python -P -m pip install ./.problemgen/%(wheel)s
      - name: Grade
        env:
          %(secret)s: ${{ secrets.%(secret)s }}
          PROBLEMGEN_RESULTS_DIR: ${{ runner.temp }}/problemgen
        run: ./.problemgen/grade.sh
      - name: Keep the JUnit report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: problemgen-report
          path: ${{ runner.temp }}/problemgen/
"""

GRADE_SH = """#!/usr/bin/env bash
# Run by the workflow on every push: grades this repository and always exits 0 once grading ran.
# -P: the working directory is the student's repository; it must never be on the grader's import path.
ROOT="${GITHUB_WORKSPACE:-$(cd "$(dirname "$0")/.." && pwd)}"
PY="${PROBLEMGEN_PYTHON:-python}"
exec "$PY" -P -m problemgen.exports.autograde github_classroom --root "$ROOT"
"""


# ------------------------------------------------------------------------------------------ export


def build(output: Path, task: str | None = None, class_dir: Path | None = None, roster: Path | None = None,
          match_by: str = "github", id_column: str | None = None, secret_env: str = common.SECRET_ENV,
          min_isolation: str = "process", timeout: float = 5.0, force: bool = False) -> str:
    """Write the template repository's grading files into ``output``; returns a line for the terminal."""
    if not _SECRET_NAME.fullmatch(secret_env):
        raise ProblemgenError(f"--secret-env {secret_env!r} is not a GitHub secret name (A-Z, 0-9, _; not GITHUB_…)")
    secret = common.read_secret(secret_env)
    bundle, the_task = Bundle(), None
    if common.one_of(task, class_dir) == "task":
        the_task = common.read_task(task)
        config = common.task_config(the_task, "", min_isolation, timeout, secret_env=secret_env)
        bundle.add(f"{the_task.name}.py", the_task.starter)
        bundle.add(f"{DOT}/{SEALED_SOLUTIONS}", seal(secret, _solutions()))
        what = f"task {the_task.name}"
    else:
        if roster is None:
            raise ProblemgenError("--class needs --roster roster.csv (with the column named by --match-by)")
        from problemgen.exports.roster import match_map  # deferred: only the class mode reads a roster

        klass = common.read_class(class_dir)
        match = match_map(roster, match_by, list(klass.students), id_column)
        config = {**common.class_config(klass, match_by, {}), "variants": {}, "secret_env": secret_env}
        keys = {"match": match, "variants": klass.variant_ids,
                "keys": {s: data.decode("utf-8") for s, data in klass.variant_files.items()}}
        bundle.add(f"{DOT}/{SEALED}", seal(secret, json.dumps(keys, sort_keys=True).encode("utf-8")))
        what = f"{len(klass.students)} students of {klass.title}"
    the_wheel = common.the_wheel(None, STUDENT_VISIBLE_LEFT_OUT)  # students can read this repository
    bundle.add(WORKFLOW, WORKFLOW_TEXT.replace("%(wheel)s", the_wheel.filename).replace("%(secret)s", secret_env))
    bundle.add(f"{DOT}/grade.sh", GRADE_SH, executable=True)
    bundle.add("INSTRUCTOR.md", instructor_notes(config, secret_env))
    common.add_grader_files(bundle, f"{DOT}/", config, None, the_wheel)
    starter, notes = _earlier_starter(Path(output), the_task.name if the_task else None)
    notes = [*write_directory(bundle, output, force=force, owned=(*OWNED, *starter)), *notes]
    return (f"wrote {output}: GitHub Classroom grading for {what} ({len(bundle.files)} files)\n"
            + "".join(f"warning: {line}\n" for line in notes))


def _earlier_starter(output: Path, task: str | None) -> tuple[tuple[str, ...], list[str]]:
    """The starter file an earlier task export left in ``output`` for another task than ``task``: its name
    when it is still exactly as shipped (the export removes it), or a warning line when it was edited
    since (it is left: the instructor's work)."""
    from problemgen.code.tasks import all_tasks  # deferred: export discovery imports this module

    try:
        earlier = json.loads((output / DOT / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return (), []
    name = earlier.get("task") if isinstance(earlier, dict) and earlier.get("mode") == "task" else None
    if not isinstance(name, str) or name == task or name not in all_tasks():
        return (), []
    path = output / f"{name}.py"
    if path.is_symlink() or not path.is_file():
        return (), []
    try:
        unchanged = path.read_bytes() == all_tasks()[name].starter.encode("utf-8")
    except OSError:
        unchanged = False
    if unchanged:
        return (path.name,), []
    return (), [(f"{path.name} is the starter an earlier export wrote for task {name}, edited since: left as it is "
                 "(remove it if this template no longer needs it)")]


TASKS_DIR = "problemgen/code/tasks/"


def _solutions() -> bytes:
    """The files left out of the students' wheel (the tasks' solutions and mutants), as JSON to seal.

    The code grader needs them: it checks results against the shipped solutions, and task discovery
    imports every module of ``problemgen.code.tasks``.
    """
    files = running_files()[2]
    return json.dumps({path[len(TASKS_DIR):]: data.decode("utf-8") for path, data in sorted(files.items())
                       if path.startswith(STUDENT_VISIBLE_LEFT_OUT)}, sort_keys=True).encode("utf-8")


def restore_solutions(source: Path, secret: str, into: Path) -> None:
    """Unseal the left-out files into ``into`` and let ``problemgen.code.tasks`` find them there."""
    import problemgen.code.tasks as tasks  # deferred: only code grading needs the tasks

    files = json.loads(unseal(secret, (source / SEALED_SOLUTIONS).read_bytes()))
    for name, text in files.items():
        if not (TASKS_DIR + name).startswith(STUDENT_VISIBLE_LEFT_OUT) or ".." in name or not name.endswith(".py"):
            raise ProblemgenError(f"unexpected file {name!r} among the sealed solutions")
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_text(text, encoding="utf-8")
    if str(into) not in tasks.__path__:
        tasks.__path__.append(str(into))


def instructor_notes(config: dict, secret_env: str) -> str:
    if config["mode"] == "task":
        submit = (f"Students edit `{config['task']}.py` (the starter is included) and push, or push a notebook "
                  "(`.ipynb`) instead; the file defining the task's function is graded in problemgen's sandbox, "
                  "public and hidden tests. The starter left exactly as shipped does not count beside a file "
                  "that defines the function, so a notebook is graded without deleting it.")
        secret = (f"The hidden tests are drawn from the repository secret `{secret_env}`; "
                  "export with the same value in your shell so every repository is graded on the same hidden inputs.")
    else:
        submit = ("Each student copies the `answers.toml` handed out with their own worksheet into the root "
                  "of their repository, fills it in and pushes. The student is the longest roster login (column "
                  f"`{config['match_by']}`) that ends the repository name, as GitHub Classroom names copies "
                  "`<assignment>-<login>`; when a name ends in two logins the report says which was taken.")
        secret = (f"The class's variants and the login map are in `.problemgen/{SEALED}`, sealed with the secret "
                  f"`{secret_env}`; without it the file is unreadable.")
    return f"""# GitHub Classroom grading: {config['title']}

1. Copy everything in this directory into the assignment's template repository (keep `.github/` and
   `.problemgen/`) and push it.
2. In the organisation's settings, add the secret `{secret_env}` (*Settings → Secrets and variables →
   Actions*) with the value that was in `${secret_env}` when you exported, and give the assignment
   repositories access to it.
3. Create the assignment in GitHub Classroom from the template repository.

{submit}

Every push runs `.github/workflows/problemgen.yml`: the job summary shows the Markdown report and the
`problemgen-report` artifact holds the JUnit XML (`report.xml`) and `results.json`.

{secret}

Limits to know: a workflow runs the student's copy of the repository, so a student who edits the
workflow can make it print the secret (and with it the hidden inputs or the sealed keys). GitHub keeps
the edit in the history, where you can see it; for graded work where that matters, grade on Gradescope
or PrairieLearn, where the grader is out of the students' hands. Hidden tests are reported by name
and status on GitHub (there is no "after the due date"); their output never shows hidden values.
"""


# ------------------------------------------------------------------------------------------ on GitHub


def grade(root: Path) -> Report:
    source = root / DOT
    try:
        config = load_config(source)
    except ProblemgenError as exc:
        return failure("problemgen", str(exc))
    secret = os.environ.get(config.get("secret_env", common.SECRET_ENV), "")
    if config["mode"] == "task":
        return _grade_code(config, source, root, secret)
    return _grade_sheet(config, source, root, secret)


def _grade_code(config: dict, source: Path, root: Path, secret: str) -> Report:
    with tempfile.TemporaryDirectory(prefix="problemgen-solutions-") as scratch:
        try:
            restore_solutions(source, secret, Path(scratch))
        except (OSError, ValueError, ProblemgenError) as exc:
            return failure(config["task"], f"the hidden-test secret is not available to the grader or does not "
                                           f"open its files ({exc}); nothing was run (tell your instructor)")
        return grade_code_submission(source, root, os.environ.get("GITHUB_ACTOR", ""), secret=secret)


def _grade_sheet(config: dict, source: Path, root: Path, secret: str) -> Report:
    repository = os.environ.get("GITHUB_REPOSITORY", root.name)
    try:
        keys = json.loads(unseal(secret, (source / SEALED).read_bytes()))
    except (OSError, ValueError, ProblemgenError) as exc:
        return failure(config["title"], f"the grader cannot open the class keys: {exc} (tell your instructor)")
    # The note on a name that fits two logins is not passed on: the report and the job's log are the
    # student's to read, and the note names another student's login. A wrong pick is still caught, as a
    # sheet whose variant is not the picked student's.
    login, _ = repository_login(repository.rsplit("/", 1)[-1], list(keys["match"]))
    config = {**config, "match": keys["match"], "variants": keys["variants"]}
    return grade_sheet(config, lambda student: keys["keys"][student], root, [login] if login else [],
                       f"repository {repository}")


def run(root: Path) -> int:
    """Grade the repository at ``root``: JUnit and results.json into $PROBLEMGEN_RESULTS_DIR, Markdown to the summary.

    A failure of the grader itself still leaves the three reports, saying so.
    """
    try:
        report = well_formed(grade(root))
        junit, data, markdown = _rendered(report)
    except Exception:  # noqa: BLE001 - the job must always report a result
        report = grader_failed()
        junit, data, markdown = _rendered(report)
    results = Path(os.environ.get("PROBLEMGEN_RESULTS_DIR") or root / ".problemgen-results")
    write_result(results / "report.xml", junit)
    write_result(results / "results.json", data)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(markdown)
    print(render_text(report), end="")
    return 0


def _rendered(report: Report) -> tuple[str, str, str]:
    """(JUnit XML, JSON, Markdown) of the report: rendered before anything is written."""
    return render_junit(report), render_json(report), render_markdown(report)


EXPORT = Export(
    name="github-classroom",
    summary="A GitHub Actions workflow for a GitHub Classroom template repository.",
    help="""Write the grading files of a GitHub Classroom template repository into OUTPUT.

    The workflow grades every push (a coding task with --task, or answer sheets of a class with --class
    and --roster), writes a JUnit report as an artifact and the Markdown report to the job summary. The
    secret comes from the repository secret named by --secret-env; a class's keys are sealed with it.
    INSTRUCTOR.md says how to set up the template and the secret.

    \b
    Example:
      PROBLEMGEN_GRADER_SECRET=... problemgen export github-classroom --task softmax -o softmax-template/
      PROBLEMGEN_GRADER_SECRET=... problemgen export github-classroom --class class/ --roster roster.csv --match-by github -o hw1-template/
    """,
    options=(
        common.TASK, common.CLASS,
        Option("--roster", "roster", "The roster CSV of the class set, with the --match-by column.", kind="file"),
        Option("--match-by", "match_by", "Roster column holding each student's GitHub login.", default="github"),
        common.ID_COLUMN, common.SECRET, common.MIN_ISOLATION, common.TIMEOUT, common.OUTPUT_DIR,
        common.FORCE,
    ),
    build=build,
)
