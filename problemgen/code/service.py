"""The library behind ``problemgen task ...`` and ``problemgen grade-code``: each command is one call here."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from problemgen.model.core import ProblemgenError
from problemgen.sheets.reports import FORMATS, render
from problemgen.code.sandbox import Limits, Sandbox, rank
from problemgen.code.sandbox.runner import IsolationError
from problemgen.code.tasks import all_tasks, get_task
from problemgen.classes.code_class import grade_class, progress_bar, write_outputs
from problemgen.code.grade import grade_submission, make_plan

EXIT_OK, EXIT_BELOW, EXIT_ISOLATION = 0, 1, 3


def list_tasks() -> str:
    tasks = all_tasks()
    width = max(len(name) for name in tasks)
    return "".join(f"{name:<{width}}  {task.summary}\n" for name, task in tasks.items())


def show_task(name: str) -> str:
    """The spec followed by the public examples (inputs and expected outputs)."""
    task = get_task(name)
    lines = [task.spec.rstrip(), "", "## Public examples", ""]
    for case in task.public_cases():
        lines.append(f"### {case.name}: {case.about}")
        lines.append("")
        lines.append("```")
        lines.append(f"{case.call.function}({_arguments(case.call.args, case.call.kwargs)})")
        lines.append(f"# expected: {_value(case.expected)}")
        lines.append("```")
        lines.append("")
    lines.append(f"Start from the template: problemgen task show {name} --starter {name}.py")
    return "\n".join(lines) + "\n"


def _arguments(args: tuple, kwargs: dict) -> str:
    shown = [_value(a) for a in args] + [f"{k}={_value(v)}" for k, v in kwargs.items()]
    return ", ".join(shown)


def _value(value: object) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 24:
            return "np.array(" + np.array2string(value, separator=", ", precision=6).replace("\n", " ") + ")"
        return f"<array of shape {value.shape}>"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_value(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def write_starter(name: str, path: Path) -> str:
    task = get_task(name)
    if path.exists():
        raise ProblemgenError(f"{path}: already exists; choose another file name")
    try:
        path.write_text(task.starter, encoding="utf-8")
    except OSError as exc:
        raise ProblemgenError(f"{path}: cannot write the starter ({exc.strerror})") from exc
    return f"wrote {path}\n"


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


def grade_code(request: GradeRequest) -> tuple[str, int]:
    """Grade one file or a class directory; returns (text for stdout, exit code).

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
    plan = make_plan(task, public_only=request.public_only, secret=request.secret)
    with Sandbox(request.limits, jobs=request.jobs, min_level=request.min_isolation) as sandbox:
        _require_isolation(sandbox, request.min_isolation)
        if request.submission.is_dir():
            result = grade_class(plan, request.submission, sandbox, progress_bar(sys.stderr))
            write_outputs(result, request.output, request.fmt)
            scores = [report.score for _, report in result.reports]
            text, score = result.summary, min(scores)
        else:
            report = grade_submission(plan, request.submission, sandbox)
            text, score = render(report, request.fmt), report.score
            if request.output is not None:
                request.output.write_text(text, encoding="utf-8")
                text = ""
    below = request.fail_under is not None and score < request.fail_under
    return text, EXIT_BELOW if below else EXIT_OK


def _require_isolation(sandbox: Sandbox, minimum: str) -> None:
    """Fail closed before any student code runs (the probe imports a one-line module of ours)."""
    level = sandbox.probe().isolation
    if rank(level) < rank(minimum):
        raise IsolationError(f"sandbox isolation is {level!r}, below the required {minimum!r}; nothing was run")
