"""PrairieLearn: an externally graded question directory for a coding task, and its grader entry point.

The directory goes under a course's ``questions/``: ``info.json`` (external grading enabled, the image,
the entry point ``/grade/tests/run.sh``, no network), ``question.html`` (the task's spec, an editor
holding the starter, and the external-grader results panel) and ``tests/`` (which PrairieLearn copies
to ``/grade/tests`` and never shows students: the configuration with the hidden-test secret, the wheel
and ``run.sh``). PrairieLearn puts the student's files in ``/grade/student`` and reads
``/grade/results/results.json``: ``score`` in [0, 1], ``message``, ``output``, ``tests`` (``name``,
``description``, ``points``, ``max_points``, ``message``, ``output``); a submission that could not be
graded is ``"gradable": false`` with ``format_errors`` (no attempt used). The root is
``$PROBLEMGEN_AUTOGRADER_ROOT`` (default ``/grade``) so the directory is tried locally the same way.
"""

from __future__ import annotations

import html
import json
import math
import uuid
from pathlib import Path

from problemgen.exports import Export, Option
from problemgen.exports import common
from problemgen.exports.autograde import grade_code_submission, grader_failed, write_result
from problemgen.exports.bundle import Bundle, write_directory
from problemgen.sheets.reports import Report, render_text, well_formed

DEFAULT_IMAGE = "prairielearn/grader-python"
START_UP_SECONDS = 30
"""The grading job's own start: installing the wheel where the image lacks problemgen, Python with numpy,
the sandbox's fork server and its probe. Measured at a few seconds; the rest is room for a slow machine."""
MAX_JOB_SECONDS = 600
OWNED = ("tests/problemgen-*.whl",)
"""Files an earlier export may have left that this one need not write: a wheel of another version, which
``run.sh`` would install beside this one (pip refuses two versions, so the grader could not start)."""

RUN_SH = """#!/usr/bin/env bash
# PrairieLearn runs this in the grading container; it leaves $ROOT/results/results.json.
# -P on every Python: nothing in the working directory, which may hold the student's files, is ever imported.
ROOT="${PROBLEMGEN_AUTOGRADER_ROOT:-/grade}"
PY="${PROBLEMGEN_PYTHON:-python3}"
mkdir -p "$ROOT/results"
if ! "$PY" -P -c 'import problemgen' 2>/dev/null; then
    # No network while grading: install the shipped wheel alone (the image provides its dependencies).
    LIB="${PROBLEMGEN_LIB:-/tmp/problemgen-lib}"
    "$PY" -P -m pip install -q --upgrade --no-deps --no-index --target "$LIB" "$ROOT"/tests/problemgen-*.whl \\
        && export PYTHONPATH="$LIB${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" -P -m problemgen.exports.autograde prairielearn --root "$ROOT"
if [ ! -s "$ROOT/results/results.json" ]; then
    echo '{"gradable": false, "format_errors": ["the grader could not start: problemgen or its dependencies (numpy, sympy, click, jinja2, nbformat) are missing from the grading image; tell your instructor"]}' > "$ROOT/results/results.json"
fi
"""


# ------------------------------------------------------------------------------------------ export


def build(output: Path, task: str, secret_env: str = common.SECRET_ENV, min_isolation: str = "process",
          timeout: float = 5.0, image: str = DEFAULT_IMAGE, wheel: Path | None = None, force: bool = False) -> str:
    """Write the question directory; returns a line for the terminal."""
    the_task = common.read_task(task)
    secret = common.read_secret(secret_env)
    config = common.task_config(the_task, secret, min_isolation, timeout)
    the_wheel = common.the_wheel(wheel)
    needed = job_seconds(the_task, secret, timeout)
    bundle = Bundle()
    bundle.add_json("info.json", info(the_task, image, needed))
    bundle.add("question.html", question_html(the_task))
    bundle.add("tests/run.sh", RUN_SH, executable=True)
    bundle.add("INSTRUCTOR.md", instructor_notes(the_task, image, secret_env, timeout, needed))
    common.add_grader_files(bundle, "tests/", config, None, the_wheel)
    removed = write_directory(bundle, output, force=force, owned=OWNED)
    done = f"wrote {output}: PrairieLearn question for task {the_task.name} ({len(bundle.files)} files)\n"
    done += "".join(f"warning: {line}\n" for line in removed)
    if needed > MAX_JOB_SECONDS:
        done += (f"warning: a slow submission may need up to {needed} s, but the job timeout in info.json stops "
                 f"at {MAX_JOB_SECONDS} s; lower --timeout ({timeout:g} s per test now)\n")
    return done


def job_seconds(task, secret: str, timeout: float) -> int:
    """The longest a grading job may take without anything going wrong: every call of the plan (public
    and hidden cases, property calls) and, in a fresh child, the later calls of each law a second time
    (see ``problemgen.code.grade._run_plan``), each up to ``timeout``; each of those two children's
    import, up to the sandbox's import limit; and the job's start (:data:`START_UP_SECONDS`)."""
    # deferred: export discovery imports this module; plans pull in numpy
    from problemgen.code.grade import make_plan
    from problemgen.code.sandbox import Limits  # (same reason)

    plan = make_plan(task, secret=secret)
    again = sum(len(prop.calls) - 1 for prop in plan.properties if len(prop.calls) > 1)
    calls = len(plan.calls) + again
    return math.ceil(calls * timeout + 2 * Limits(case_timeout=timeout).import_timeout + START_UP_SECONDS)


def clamped_job_seconds(needed: int) -> int:
    """The job timeout written for PrairieLearn: what the task needs, at least 60 s, at most MAX_JOB_SECONDS."""
    return int(min(MAX_JOB_SECONDS, max(60, needed)))


def info(task, image: str, job_timeout: int) -> dict:
    """``info.json``: a v3 question graded externally; the uuid is derived from the task, so re-exports agree.

    ``job_timeout`` is :func:`job_seconds`; PrairieLearn gets at least 60 s and at most :data:`MAX_JOB_SECONDS`.
    """
    return {
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"https://problemgen/tasks/{task.name}")),
        "title": task.title,
        "topic": task.topic or "Transformers",
        "tags": ["problemgen", "code"],
        "type": "v3",
        "singleVariant": True,
        "gradingMethod": "External",
        "externalGradingOptions": {
            "enabled": True,
            "image": image,
            "entrypoint": "/grade/tests/run.sh",
            "timeout": clamped_job_seconds(job_timeout),
            "enableNetworking": False,  # PrairieLearn's default; said here so the question never depends on it
        },
    }


def question_html(task) -> str:
    """The spec (Markdown), an editor with the starter, and the grader's results after submission."""
    return f"""<pl-question-panel>
<markdown>
{html.escape(task.spec.strip(), quote=False)}
</markdown>
</pl-question-panel>

<pl-file-editor file-name="{task.name}.py" ace-mode="ace/mode/python">
{html.escape(task.starter, quote=False)}</pl-file-editor>

<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
"""


def instructor_notes(task, image: str, secret_env: str, timeout: float, needed: int) -> str:
    return f"""# PrairieLearn question: {task.title}

1. Copy this directory into your course's `questions/` (rename it as you like; `info.json` carries a
   uuid derived from the task name — give it a fresh one if the course already has this task).
2. The grading image must have Python ≥ 3.11 with numpy, sympy, click, jinja2 and nbformat (no network while
   grading); `tests/run.sh` installs the problemgen wheel from `tests/` itself. The image in
   `info.json` is `{image}`; if it lacks those packages, build one and name it with `--image`:

       FROM {DEFAULT_IMAGE}
       RUN python3 -m pip install "numpy>=1.26" "sympy>=1.12" "click>=8.1" "jinja2>=3.1" "nbformat>=5.9"

3. Students edit `{task.name}.py` in the browser and submit; the file is graded in problemgen's sandbox
   (public and hidden tests). A submission without the task's function is "not gradable" and costs no
   attempt.
4. Each test may run {timeout:g} s (`--timeout`). The job timeout in `info.json`
   ({clamped_job_seconds(needed)} s) covers every test of the task (public, hidden and property calls,
   and the re-run of some property calls in a fresh process) at that limit, plus start-up, so a slow but
   correct submission is never stopped by PrairieLearn before its result is written.

The hidden-test secret (from `${secret_env}` when exported) is in `tests/problemgen-export.json`;
PrairieLearn never serves `tests/` to students. Hidden tests are listed by name and status; their
output never shows hidden inputs or expected values.
"""


# ------------------------------------------------------------------------------------------ in the grader


def results(report: Report) -> dict:
    """PrairieLearn's results.json for a report (score as a fraction; points per test)."""
    if not report.results and report.meta.get("error"):
        return {"gradable": False, "format_errors": [str(report.meta["error"])]}
    tests = [{
        "name": r.name,
        "description": r.group,
        "points": round(r.score, 6),
        "max_points": round(r.max_score, 6),
        "message": r.feedback or r.status,
        "output": f"{r.status}" + (f" (misconception: {r.mistake})" if r.mistake else ""),
    } for r in report.results]
    return {"gradable": True, "score": round(report.score, 6), "message": report.title,
            "output": render_text(report), "tests": tests}


def run(root: Path) -> int:
    """Grade ``root/student`` against ``root/tests``; write ``root/results/results.json`` (one that says the
    grader failed when it did)."""
    try:
        text = _results_text(well_formed(grade_code_submission(root / "tests", root / "student")))
    except Exception:  # noqa: BLE001 - PrairieLearn must always receive a result
        text = _results_text(grader_failed())
    write_result(root / "results" / "results.json", text)
    return 0


def _results_text(report: Report) -> str:
    return json.dumps(results(report), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


EXPORT = Export(
    name="prairielearn",
    summary="A PrairieLearn question directory graded by problemgen (a coding task).",
    help="""Write a PrairieLearn question directory for coding task --task, graded by an external grader.

    The directory holds info.json, question.html (spec, editor with the starter, results panel) and
    tests/ (the grader entry point run.sh, the problemgen wheel and the hidden-test secret from
    --secret-env, which students never see). INSTRUCTOR.md says what the grading image needs.

    \b
    Example:
      PROBLEMGEN_GRADER_SECRET=... problemgen export prairielearn --task softmax -o course/questions/softmax/
    """,
    options=(
        Option("--task", "task", "A coding task (see `problemgen task list`).", required=True),
        common.SECRET, common.MIN_ISOLATION, common.TIMEOUT,
        Option("--image", "image", "The grading image named in info.json.", default=DEFAULT_IMAGE),
        common.WHEEL, common.OUTPUT_DIR, common.FORCE,
    ),
    build=build,
)
