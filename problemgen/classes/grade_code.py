"""The library behind ``problemgen grade-code``: one submission file or a class directory, in the sandbox.

It lives with the class pipeline because a directory of submissions is graded as a class; one file is
the same plan run once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from problemgen.errors import ProblemgenError
from problemgen.sheets.reports import FORMATS, Report, render
from problemgen.code.sandbox import Limits, Sandbox, rank
from problemgen.code.sandbox.runner import IsolationError
from problemgen.code.tasks import get_task
from problemgen.classes.code_class import grade_class
from problemgen.classes.runner import ClassRun
from problemgen.classes.layouts import Layout
from problemgen.classes.summary import render_summary
from problemgen.code.grade import grade_submission, make_plan
from problemgen.outputs import check_output_apart, check_output_file
from problemgen.safewrite import write_file

EXIT_OK, EXIT_BELOW, EXIT_ISOLATION = 0, 1, 3


@dataclass(frozen=True)
class GradeRequest:
    submission: Path
    task: str
    public_only: bool = False
    fmt: str = "text"
    output: Path | None = None
    jobs: int = 1
    min_isolation: str = "process"
    fail_under: float | None = None
    limits: Limits = Limits()
    secret: str | None = None
    progress: Callable[[int, int], None] | None = None  # a class run's (done, total), as it goes
    layout: Layout | None = None  # a platform's download (see classes.layouts); None: entries named by student


@dataclass(frozen=True)
class Graded:
    """What a ``grade-code`` run gives back: the text for stdout, the exit code and, for a class directory,
    the run (whose summary's warnings the command repeats on stderr, as ``grade`` does)."""

    text: str
    exit_code: int
    run: ClassRun | None = None


def grade_code(request: GradeRequest) -> Graded:
    """Grade one file or a class directory.

    Raises ProblemgenError for bad input and IsolationError (exit code 3) when the sandbox is
    weaker than ``min_isolation``; in that case no student code has run.
    """
    if request.fmt not in FORMATS:
        raise ProblemgenError(f"unknown format {request.fmt!r}; expected one of {', '.join(FORMATS)}")
    task = get_task(request.task)
    if not request.submission.exists():
        raise ProblemgenError(f"{request.submission}: no such file or directory")
    if request.submission.is_dir() and request.output is None:
        raise ProblemgenError("grading a class directory needs -o OUT_DIR for the gradebook and reports")
    if request.layout is not None and not request.submission.is_dir():
        raise ProblemgenError(f"--layout {request.layout.name} reads a directory of submissions; {request.submission} is a file")
    if request.output is not None:  # a report over the submission, or grades among the submissions
        role = "submissions directory" if request.submission.is_dir() else "submission"
        check_output_apart(request.output, {role: request.submission})
        if not request.submission.is_dir():  # one report: checked before the sandbox runs, not after
            check_output_file(request.output)
    plan, run = make_plan(task, public_only=request.public_only, secret=request.secret), None
    with Sandbox(request.limits, jobs=request.jobs, min_level=request.min_isolation) as sandbox:
        _require_isolation(sandbox, request.min_isolation)
        if request.submission.is_dir():
            run = grade_class(plan, request.submission, sandbox, request.output, request.fmt, request.progress,
                              request.layout)
            text = render_summary(run.summary, "json" if request.fmt == "json" else "text")
            score = min(run.scores, default=0.0)
        else:
            report = grade_submission(plan, request.submission, sandbox)
            text, score = render(report, request.fmt), report.score
            if request.output is not None:
                _write_report(request.output, text)
                text = ""
    below = request.fail_under is not None and score < request.fail_under
    return Graded(text, EXIT_BELOW if below else EXIT_OK, run)


def _write_report(path: Path, text: str) -> None:
    """Checked writable before grading; the disk may still fill up or the folder go: then the earlier
    report stays whole (:func:`problemgen.safewrite.write_file`)."""
    write_file(path, text, durable=True)


def grade_file(submission: str | Path, task: str, *, public_only: bool = False, secret: str | None = None,
               limits: Limits = Limits(), min_isolation: str = "process") -> Report:
    """Grade one submission (a ``.py`` file or a package directory) for ``task`` and return its report.

    The library form of ``problemgen grade-code FILE --task TASK``; raises ``IsolationError`` (before any
    student code runs) when the sandbox is weaker than ``min_isolation``.
    """
    plan = make_plan(get_task(task), public_only=public_only, secret=secret)
    if not Path(submission).exists():
        raise ProblemgenError(f"{submission}: no such file or directory")
    with Sandbox(limits, min_level=min_isolation) as sandbox:
        _require_isolation(sandbox, min_isolation)
        return grade_submission(plan, Path(submission), sandbox)


def _require_isolation(sandbox: Sandbox, minimum: str) -> None:
    """Fail closed before any student code runs (the probe imports a one-line module of ours)."""
    level = sandbox.probe().isolation
    if rank(level) < rank(minimum):
        raise IsolationError(f"sandbox isolation is {level!r}, below the required {minimum!r}; nothing was run")
