"""Mutation contract: every misconception a task can diagnose has a mutant, every mutant fails the
hidden tests and is named, and the reference-quality solutions score 100%.

The solutions and mutants ship with the package (``problemgen/code/tasks/solutions``, ``mutants.py``)
so that ``problemgen check`` runs the same contract; here each promise is its own test.
"""

from __future__ import annotations

import sys

import pytest

from problemgen.code.tasks import mutation
from problemgen.code.sandbox import Sandbox
from problemgen.code.tasks import all_tasks
from problemgen.code.tasks.mutants import MUTANTS

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")

CASES = [(task, tag, patches) for task, entries in MUTANTS.items() for tag, patches in entries]


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(mutation.LIMITS) as box:
        yield box


@pytest.fixture(scope="module")
def plans():
    return {name: mutation.plans(task) for name, task in all_tasks().items()}


@pytest.mark.parametrize("task", list(all_tasks()))
def test_reference_quality_solution_scores_full_marks(task, sandbox, plans, tmp_path):
    assert mutation.solution_problems(all_tasks()[task], plans[task], sandbox, tmp_path) == []


@pytest.mark.parametrize("task", list(all_tasks()))
def test_every_diagnosable_misconception_has_a_mutant(task, plans):
    assert mutation.uncovered_tags(all_tasks()[task], plans[task]) == []


@pytest.mark.parametrize(("task", "tag", "patches"), CASES, ids=[f"{t}-{g}" for t, g, _ in CASES])
def test_mutant_fails_hidden_tests_and_is_named(task, tag, patches, sandbox, plans, tmp_path):
    plan = plans[task][mutation.SECRETS[0]]
    assert mutation.mutant_problem(all_tasks()[task], tag, patches, plan, sandbox, tmp_path) == ""


def test_a_mutant_that_survives_is_reported(sandbox, plans, tmp_path):
    """The contract can fail: a 'mutant' that changes nothing passes the hidden tests and is reported."""
    task = all_tasks()["softmax"]
    harmless = [("import numpy as np", "import numpy as np  # unchanged")]
    problem = mutation.mutant_problem(task, "softmax_overflow", harmless, plans["softmax"][mutation.SECRETS[0]], sandbox, tmp_path)
    assert problem == "the mutant passed every hidden test"
