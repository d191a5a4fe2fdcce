"""Coding tasks: students implement transformer pieces in numpy; the grader runs them in the sandbox.

Each task (see :mod:`problemgen.code.base`) has a spec, a starter file, public examples, hidden
randomized cases drawn from the grader's secret, property checks and banned shortcuts. Tasks are
registered here by name, in curriculum order.

Adding a task: write a ``Task`` in the topic's module (spec, starter, ``make_cases(rng, hidden)``
returning cases whose expected values come from ``reference`` and whose variants come from
the catalogue package ``problemgen.misconceptions``), list it in ``_load`` below, add a
reference-quality solution to ``tests/fixtures/code/solutions/`` and one mutant per variant tag to
``tests/fixtures/code/mutants.py``; the mutation tests then hold the task to its own diagnoses.
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import replace
from typing import Any, Callable

from problemgen.model.core import ProblemgenError
from problemgen.code.base import Task
from problemgen.code.sandbox import Call


def _load() -> dict[str, Task]:
    from problemgen.code.tasks import attention, block, counting, layers, multihead  # lazy: task modules need numpy and reference

    tasks = [
        attention.SOFTMAX, attention.SDPA, attention.CAUSAL, attention.PADDING, multihead.MHA, multihead.CROSS,
        layers.LAYER_NORM, layers.RMS_NORM, layers.FEED_FORWARD, layers.SINUSOIDAL, block.BLOCK,
        counting.COUNT_PARAMETERS, multihead.KV_CACHE,
    ]  # fmt: skip
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
    """Name -> task, in curriculum order."""
    global _TASKS
    if _TASKS is None:
        _TASKS = _load()
    return _TASKS


def get_task(name: str) -> Task:
    tasks = all_tasks()
    if name not in tasks:
        raise ProblemgenError(f"unknown task {name!r}; run `problemgen task list` (known: {', '.join(tasks)})")
    return tasks[name]
