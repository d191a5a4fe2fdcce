"""Gradescope: an autograder zip for an answer-sheet class or a coding task, and what runs inside it.

Gradescope's autograder format: the zip's files land in ``/autograder/source/``; ``setup.sh`` runs once
when the image is built (it installs problemgen from the wheel inside the zip; the wheel's
dependencies — numpy, sympy, click, jinja2 — come from PyPI then, as Gradescope's setup step always
works); ``run_autograder`` runs once per submission with the student's files in
``/autograder/submission/`` and ``/autograder/submission_metadata.json`` describing the submitters, and
must leave ``/autograder/results/results.json``. Nothing is downloaded while grading.

The root is ``$PROBLEMGEN_AUTOGRADER_ROOT`` (default ``/autograder``), so the same zip is tried locally
in a temporary tree laid out the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

from problemgen.errors import ProblemgenError
from problemgen.exports import Export, Option
from problemgen.exports import common
from problemgen.exports.autograde import (
    grade_code_submission, grade_sheet_submission, grader_failed, load_config, write_result,
)
from problemgen.exports.bundle import Bundle, write_zip
from problemgen.sheets.reports import GRADESCOPE_VISIBILITY, Report, render_gradescope, render_text, well_formed

VENV = "problemgen-venv"
GRADESCOPE_USER_FIELDS = ("email", "sid")
"""The submitter fields a roster column is compared with. Gradescope's own user ``id`` is internal (no roster
holds it) and ``name`` is neither unique nor fixed (students edit it), so neither is ever compared."""

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
# It installs problemgen from the wheel shipped in this zip into a virtual environment; the wheel's
# dependencies (numpy, sympy, click, jinja2) are downloaded from PyPI here, at image build time.
set -euo pipefail
cd "$(dirname "$0")"
ROOT="${PROBLEMGEN_AUTOGRADER_ROOT:-/autograder}"
PY=python3
if ! command -v python3 >/dev/null || ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    apt-get update && apt-get install -y python3.11 python3.11-venv
    PY=python3.11
fi
if ! "$PY" -m venv "$ROOT/%(venv)s"; then
    apt-get update && apt-get install -y "$("$PY" -c 'import sys; print(f"python3.{sys.version_info[1]}-venv")')"
    "$PY" -m venv "$ROOT/%(venv)s"
fi
"$ROOT/%(venv)s/bin/pip" install --upgrade pip
"$ROOT/%(venv)s/bin/pip" install ./%(wheel)s
""".replace("%(venv)s", VENV)

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission; it writes $ROOT/results/results.json and always exits 0.
# -P: nothing in the working directory (the student's files, wherever it is run) is ever imported.
ROOT="${PROBLEMGEN_AUTOGRADER_ROOT:-/autograder}"
PY="${PROBLEMGEN_PYTHON:-$ROOT/%(venv)s/bin/python}"
[ -x "$PY" ] || PY=python3
mkdir -p "$ROOT/results"
rm -f "$ROOT/results/results.json"
"$PY" -P -m problemgen.exports.autograde gradescope --root "$ROOT"
if [ ! -s "$ROOT/results/results.json" ]; then
    echo '{"score": 0, "output": "the autograder could not start (problemgen or Python is missing from the autograder image); nothing was graded, tell your instructor", "visibility": "visible", "stdout_visibility": "hidden", "tests": []}' > "$ROOT/results/results.json"
fi
exit 0
""".replace("%(venv)s", VENV)


# ------------------------------------------------------------------------------------------ export


def build(output: Path, task: str | None = None, class_dir: Path | None = None, roster: Path | None = None,
          match_by: str = "email", id_column: str | None = None, secret_env: str = common.SECRET_ENV, min_isolation: str = "process",
          visibility: str = "after_due_date", timeout: float = 5.0, wheel: Path | None = None) -> str:
    """Write the autograder zip; returns a line for the terminal."""
    if common.one_of(task, class_dir) == "task":
        if roster is not None:
            raise ProblemgenError("--roster belongs to --class (answer sheets), not to --task")
        the_task = common.read_task(task)
        config = common.task_config(the_task, common.read_secret(secret_env), min_isolation, timeout,
                                    hidden_visibility=visibility)
        klass, what = None, f"task {the_task.name}"
    else:
        if roster is None:
            raise ProblemgenError("--class needs --roster roster.csv (with the column named by --match-by)")
        # deferred: only the class mode reads a roster
        from problemgen.exports.roster import match_map

        klass = common.read_class(class_dir)
        config = common.class_config(klass, match_by, match_map(roster, match_by, list(klass.students), id_column))
        what = f"{len(klass.students)} students of {klass.title}"
    the_wheel = common.the_wheel(wheel)
    bundle = Bundle()
    bundle.add("setup.sh", SETUP_SH.replace("%(wheel)s", the_wheel.filename), executable=True)
    bundle.add("run_autograder", RUN_AUTOGRADER, executable=True)
    bundle.add("INSTRUCTOR.md", instructor_notes(config, secret_env))
    common.add_grader_files(bundle, "", config, klass, the_wheel)
    write_zip(bundle, output)
    return f"wrote {output}: Gradescope autograder for {what} ({len(bundle.files)} files)\n"


def instructor_notes(config: dict, secret_env: str) -> str:
    upload = ("their filled-in `answers.toml` (the sheet handed out with their worksheet; only that file)"
              if config["mode"] == "sheets" else
              f"one or more `.py` files; the one defining `{config['task']}`'s function is graded "
              "(helpers must be in that same file)")
    if config["mode"] == "sheets":
        secret = (_matching(config["match_by"]) + "\n\nThe zip holds every student's frozen variant "
                  "(`keys/<id>/variant.json`, with the answers) and the map from the roster's "
                  f"`{config['match_by']}` column to roster id. Keep it as private as the keys.")
    else:
        secret = (f"The hidden-test secret (from `${secret_env}` when exported) is inside "
                  "`problemgen-export.json`; keep the zip private. Hidden tests are shown "
                  f"`{config['hidden_visibility']}`; their output never shows hidden inputs or expected values, and "
                  "the summary students always see counts only the visible tests' points (Gradescope itself keeps "
                  "the total score from students while tests are hidden). "
                  f"Student code runs in problemgen's sandbox, at `{config['min_isolation']}` or better, "
                  "else nothing runs and the result says so (use `seccomp+landlock` where Gradescope's kernel allows, "
                  "so student code cannot read the autograder's files).")
    return f"""# Gradescope autograder: {config['title']}

1. On Gradescope, create a *Programming Assignment*, open *Configure Autograder*, choose the
   Ubuntu base image with Python 3.11 or newer (otherwise `setup.sh` installs python3.11 with apt) and
   upload this zip as it is. Gradescope runs `setup.sh` once: it installs problemgen from the wheel in
   the zip (dependencies come from PyPI at that moment; nothing is downloaded while grading).
2. Students upload {upload}.
3. Each submission gets a score and one test per {'answer part' if config['mode'] == 'sheets' else 'check'}
   in `results.json`. A submitter not on the roster, a missing or unreadable sheet, or another
   variant's sheet scores 0 with an explanation; nothing crashes.

{secret}

Try it locally before uploading (the same steps Gradescope takes, in a temporary root):

    mkdir -p /tmp/ag/source /tmp/ag/submission && unzip -d /tmp/ag/source autograder.zip
    cp answers.toml /tmp/ag/submission/      # or the student's .py files
    echo '{{"users": [{{"email": "student@example.edu", "sid": "s001"}}]}}' > /tmp/ag/submission_metadata.json
    PROBLEMGEN_AUTOGRADER_ROOT=/tmp/ag PROBLEMGEN_PYTHON=$(which python3) /tmp/ag/source/run_autograder
    cat /tmp/ag/results/results.json
"""


def _matching(match_by: str) -> str:
    """How a submitter is found in the roster, for the instructor notes."""
    names = {"email": "e-mail address", "sid": "student ID (sid)"}
    fields = " or ".join(names[f] for f in compared_fields(match_by))
    note = ("" if compared_fields(match_by) == ("email",) else
            " Gradescope knows a student ID only when one was entered for the student (the *Student ID* "
            "column of Gradescope's course roster): fill it in with the same values.")
    return (f"Submitters are matched to the roster by Gradescope's {fields}, compared with the roster's "
            f"`{match_by}` column (case and surrounding spaces ignored); Gradescope's own user id and display "
            f"name are never used.{note}")


# ------------------------------------------------------------------------------------------ on Gradescope


def compared_fields(match_by: str) -> tuple[str, ...]:
    """Gradescope's submitter fields the roster column ``match_by`` is compared with: ``email`` with the
    e-mail, ``sid`` with the student id, any other column (``id``, ``student_number``…) with both."""
    column = match_by.strip().lower()
    return (column,) if column in GRADESCOPE_USER_FIELDS else GRADESCOPE_USER_FIELDS


def submitter_identities(metadata: dict, match_by: str) -> tuple[list[str], str]:
    """(values to look up in the roster map, a name for messages) from ``submission_metadata.json``."""
    users = metadata.get("users") if isinstance(metadata, dict) else None
    if not isinstance(users, list):
        return [], ""
    fields = compared_fields(match_by)
    values = [str(u[f]) for u in users if isinstance(u, dict) for f in fields if u.get(f) not in (None, "")]
    names = [str(u.get("email") or u.get("name") or "") for u in users if isinstance(u, dict)]
    return values, ", ".join(n for n in names if n)


def grade(root: Path) -> tuple[Report, str]:
    """The report for the submission under ``root`` and the visibility of hidden tests."""
    source, submission = root / "source", root / "submission"
    try:
        config = load_config(source)
    except ProblemgenError as exc:
        return Report("problemgen", (), {"error": str(exc)}), "hidden"
    if config["mode"] == "task":
        return grade_code_submission(source, submission), config.get("hidden_visibility", "after_due_date")
    try:
        metadata = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        metadata = {}
        print(f"submission_metadata.json unreadable: {exc}")
    values, who = submitter_identities(metadata, config["match_by"])
    return grade_sheet_submission(source, submission, values, who), "hidden"


def results_json(report: Report, hidden_visibility: str) -> str:
    data = json.loads(render_gradescope(report, hidden_visibility))
    data["stdout_visibility"] = "hidden"
    data["output_format"] = "text"
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def run(root: Path) -> int:
    """Grade the submission under ``root`` and write ``root/results/results.json``; always returns 0.

    Whatever happens, Gradescope gets a valid results.json: one that says the grader failed when it did.
    """
    try:
        report, visibility = grade(root)
        report = well_formed(report)
        text = results_json(report, visibility)
    except Exception:  # noqa: BLE001 - Gradescope must always receive a result
        report = grader_failed()
        text = results_json(report, "hidden")
    write_result(root / "results" / "results.json", text)
    print(render_text(report), end="")  # the autograder log, for instructors (stdout_visibility hidden)
    return 0


EXPORT = Export(
    name="gradescope",
    summary="A Gradescope autograder zip (answer sheets of a class, or a coding task).",
    help="""Write a Gradescope autograder zip for an answer-sheet class (--class, --roster) or a coding task (--task).

    Answer sheets: each submitter is matched to a roster id by the roster column --match-by (email, sid or
    any other column such as id, which is compared with Gradescope's email and student id, sid) and
    their answers.toml is graded against
    their own frozen variant, which stays inside the zip. Code: the uploaded .py file defining the task's
    function is graded in the sandbox; hidden tests come from the secret in --secret-env and are shown
    --visibility (default after_due_date). INSTRUCTOR.md inside the zip says how to upload it.

    \b
    Example:
      problemgen export gradescope --class class/ --roster roster.csv --match-by email -o autograder.zip
      PROBLEMGEN_GRADER_SECRET=... problemgen export gradescope --task softmax -o softmax.zip --min-isolation seccomp
    """,
    options=(
        common.CLASS,
        Option("--roster", "roster", "The roster CSV of the class set, with the --match-by column.", kind="file"),
        Option("--match-by", "match_by", "Roster column matched to Gradescope's submitter: email, sid, or any "
               "COLUMN (compared with Gradescope's email and sid).", default="email"),
        common.ID_COLUMN, common.TASK, common.SECRET, common.MIN_ISOLATION,
        Option("--visibility", "visibility", "When students see hidden tests.", kind="choice",
               choices=GRADESCOPE_VISIBILITY, default="after_due_date"),
        common.TIMEOUT, common.WHEEL, common.OUTPUT_FILE,
    ),
    build=build,
)
