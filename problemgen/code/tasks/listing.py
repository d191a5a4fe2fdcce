"""The library behind ``problemgen task list`` and ``problemgen task show``: the tasks as a student sees them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from problemgen.errors import ProblemgenError
from problemgen.code.tasks import all_tasks, get_task
from problemgen.safewrite import write_file


def list_tasks() -> str:
    tasks = all_tasks()
    width = max(len(name) for name in tasks)
    return "".join(f"{name:<{width}}  {task.summary}\n" for name, task in tasks.items())


def show_task(name: str) -> str:
    """The spec followed by the public examples (inputs and expected outputs)."""
    task = get_task(name)
    lines = [task.spec.rstrip(), "", public_examples(name).rstrip(), ""]
    lines.append(f"Start from the template: problemgen task show {name} --starter {name}.py")
    return "\n".join(lines) + "\n"


def public_examples(name: str) -> str:
    """The public examples of task ``name`` as Markdown: each call and the output it must return."""
    lines = ["## Public examples", ""]
    for case in get_task(name).public_cases():
        lines.append(f"### {case.name}: {case.about}")
        lines.append("")
        lines.append("```")
        lines.append(f"{case.call.function}({_arguments(case.call.args, case.call.kwargs)})")
        lines.append(f"# expected: {_value(case.expected)}")
        lines.append("```")
        lines.append("")
    return "\n".join(lines)


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
    write_file(path, task.starter)  # whole or not at all: a truncated starter would block the next try
    return f"wrote {path}\n"
