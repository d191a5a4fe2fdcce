"""Coding tasks: students implement transformer pieces in numpy; the grader runs them in the sandbox.

Each task (see :mod:`problemgen.code.base`) has a spec, a starter file, public examples, hidden
randomized cases drawn from the grader's secret, property checks and banned shortcuts. Tasks are
discovered: every module of this package that defines ``TASKS`` (a tuple of tasks) and ``ORDER`` (where
its tasks come in the list) contributes them; nothing lists them by hand.

Adding a task: write a ``Task`` in the topic's module (spec, starter, ``make_cases(rng, hidden)``
returning cases whose expected values come from ``reference`` and whose variants come from
the catalogue package ``problemgen.misconceptions``) and add it to that module's ``TASKS``; add a
reference-quality solution to ``solutions/<task>.py`` and one mutant per variant tag to
:mod:`problemgen.code.tasks.mutants`; the mutation contract then holds the task to its own diagnoses.
"""

from __future__ import annotations

import copy
import importlib
import pkgutil
from dataclasses import replace
from typing import Any, Callable

from problemgen.model.core import ProblemgenError
from problemgen.code.base import Task
from problemgen.code.sandbox import Call


def _load() -> dict[str, Task]:
    """Import every module of this package and gather the ``TASKS`` of those that define them."""
    modules = [importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)]
    content = sorted((m for m in modules if hasattr(m, "TASKS")), key=lambda m: (m.ORDER, m.__name__))
    tasks = [task for module in content for task in module.TASKS]
    names = [task.name for task in tasks]
    if len(set(names)) != len(names):
        raise ProblemgenError(f"two coding tasks share a name: {sorted(n for n in names if names.count(n) > 1)}")
    return {task.name: replace(task, solve=_solver(task.name)) for task in tasks}


def _solver(name: str) -> Callable[[Call], Any]:
    """Call the shipped solution ``solutions/<name>.py`` (our code, imported on first use) on copies of the inputs."""

    def solve(call: Call) -> Any:
        module = importlib.import_module(f"problemgen.code.tasks.solutions.{name}")
        args, kwargs = copy.deepcopy((call.args, call.kwargs))
        return getattr(module, call.function)(*args, **kwargs)

    return solve


_TASKS: dict[str, Task] | None = None


def all_tasks() -> dict[str, Task]:
    """Name -> task, in teaching order (the modules' ``ORDER``, then each module's ``TASKS``)."""
    global _TASKS
    if _TASKS is None:
        _TASKS = _load()
    return _TASKS


def get_task(name: str) -> Task:
    tasks = all_tasks()
    if name not in tasks:
        raise ProblemgenError(f"unknown task {name!r}; run `problemgen task list` (known: {', '.join(tasks)})")
    return tasks[name]
