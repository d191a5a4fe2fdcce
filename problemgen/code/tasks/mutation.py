"""The mutation contract of the coding tasks: each task is held to its own diagnoses.

For every task, its reference-quality solution (``code/tasks/solutions/<task>.py``) must score full
marks with no misconception named; every mutant (:mod:`problemgen.code.tasks.mutants`: the solution
with one catalogued bug patched in) must fail a hidden test and be named by its tag; and every
misconception the task's cases can diagnose must have a mutant. ``problemgen check`` and the test
suite run the same contract; failures come back as data.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from problemgen.code.base import Task
from problemgen.code.grade import Plan, grade_submission, make_plan
from problemgen.code.sandbox import Limits, Sandbox
from problemgen.code.tasks import all_tasks
from problemgen.misconceptions.catalogue import CATALOGUE
from problemgen.wording import counted

SECRETS = ("mutation-check-1", "mutation-check-2")
"""Fixed secrets: the contract must hold for more than one draw of the hidden cases, reproducibly."""
LIMITS = Limits(import_timeout=5.0, case_timeout=3.0)


@dataclass(frozen=True)
class MutationFailure:
    task: str
    check: str  # "solution", "coverage" or the mutant's tag
    detail: str

    def __str__(self) -> str:
        return f"task {self.task} [{self.check}] {self.detail}"


def solution_source(task: str) -> str:
    """The reference-quality solution shipped with the package."""
    return resources.files("problemgen.code.tasks").joinpath("solutions", f"{task}.py").read_text(encoding="utf-8")


def _mutants() -> dict:
    # imported late: task discovery imports this module, and wheels students can read leave mutants out
    from problemgen.code.tasks.mutants import MUTANTS

    return MUTANTS


def mutant_source(task: str, patches: list[tuple[str, str]]) -> str:
    # imported late: see _mutants
    from problemgen.code.tasks.mutants import mutate

    return mutate(solution_source(task), patches)


def plans(task: Task) -> dict[str, Plan]:
    return {secret: make_plan(task, secret=secret) for secret in SECRETS}


def uncovered_tags(task: Task, task_plans: dict[str, Plan]) -> list[str]:
    """Misconceptions the task's cases can diagnose but no mutant exercises (or unknown mutant tags)."""
    diagnosable = {v.tag for plan in task_plans.values() for case in plan.cases for v in case.variants}
    covered = {tag for tag, _ in _mutants().get(task.name, [])}
    return sorted(diagnosable - covered) + sorted(f"{tag} (not in the catalogue)" for tag in covered - set(CATALOGUE))


def solution_problems(task: Task, task_plans: dict[str, Plan], sandbox: Sandbox, directory: Path) -> list[str]:
    """Why the reference-quality solution does not score full marks with nothing named (empty: it does)."""
    path = directory / f"{task.name}.py"
    path.write_text(solution_source(task.name), encoding="utf-8")
    problems = []
    for secret, plan in task_plans.items():
        report = grade_submission(plan, path, sandbox)
        failed = [f"{r.name}: {r.status} {r.feedback}" for r in report.results if not r.passed]
        if report.score != 1.0 or report.meta["misconceptions"]:
            problems.append(f"secret {secret}: score {report.score:.3f}, named {report.meta['misconceptions']}; {failed[:2]}")
    return problems


def mutant_problem(task: Task, tag: str, patches, plan: Plan, sandbox: Sandbox, directory: Path) -> str:
    """Why a mutant is not rejected and named (empty: it is)."""
    path = directory / f"{task.name}.py"
    try:
        path.write_text(mutant_source(task.name, patches), encoding="utf-8")
    except ValueError as exc:
        return f"the mutant no longer applies to the solution: {exc}"
    report = grade_submission(plan, path, sandbox)
    hidden = [r for r in report.results if r.group == "hidden"]
    if all(r.passed for r in hidden):
        return "the mutant passed every hidden test"
    if any(r.score != 0.0 for r in hidden if not r.passed):
        return "a failed hidden test still scored points"
    if tag not in report.meta["misconceptions"]:
        feedback = [r.feedback for r in hidden if not r.passed][:2]
        return f"not named: the report named {report.meta['misconceptions']}; {feedback}"
    return ""


def check_task(task: Task, sandbox: Sandbox) -> list[MutationFailure]:
    """The whole contract for one task."""
    task_plans = plans(task)
    failures = [MutationFailure(task.name, "coverage", f"no mutant for {tag}") for tag in uncovered_tags(task, task_plans)]
    with tempfile.TemporaryDirectory(prefix="problemgen-mutation-") as tmp:
        directory = Path(tmp)
        failures += [MutationFailure(task.name, "solution", p) for p in solution_problems(task, task_plans, sandbox, directory)]
        for tag, patches in _mutants().get(task.name, []):
            problem = mutant_problem(task, tag, patches, task_plans[SECRETS[0]], sandbox, directory)
            if problem:
                failures.append(MutationFailure(task.name, tag, problem))
    return failures


def summary(results: dict[str, list[MutationFailure]]) -> str:
    mutants = sum(len(_mutants().get(name, [])) for name in results)
    bad = sum(1 for failures in results.values() if failures)
    return (f"code: {counted(len(results), 'task')}, {counted(mutants, 'mutant')}, {counted(bad, 'task')} failing "
            "the mutation contract")


def check_tasks(names: list[str] | None = None) -> dict[str, list[MutationFailure]]:
    """Task name -> its contract failures, for the named tasks (default: all), in one sandbox."""
    tasks = all_tasks()
    chosen = [tasks[n] for n in names] if names else list(tasks.values())
    with Sandbox(LIMITS) as sandbox:
        return {task.name: check_task(task, sandbox) for task in chosen}
