"""Mutation check: every misconception a task can diagnose has a mutant submission, and every mutant
fails the hidden tests and is named; the reference-quality solutions score 100%."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from problemgen.code.sandbox import Limits, Sandbox
from problemgen.code.tasks import all_tasks
from problemgen.code.grade import grade_submission, make_plan

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux")

FIXTURES = Path(__file__).parent / "fixtures" / "code"
SECRETS = ("mutation-check-1", "mutation-check-2")


def _load_mutants():
    spec = importlib.util.spec_from_file_location("code_mutants", FIXTURES / "mutants.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MUTANTS = _load_mutants()
CASES = [(task, tag, patches) for task, entries in MUTANTS.MUTANTS.items() for tag, patches in entries]


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(Limits(import_timeout=5.0, case_timeout=3.0)) as box:
        yield box


@pytest.fixture(scope="module")
def plans():
    return {(name, secret): make_plan(task, secret=secret) for name, task in all_tasks().items() for secret in SECRETS}


def solution(task: str) -> str:
    return (FIXTURES / "solutions" / f"{task}.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("task", list(all_tasks()))
def test_reference_quality_solution_scores_full_marks(task, sandbox, plans, tmp_path):
    path = tmp_path / f"{task}.py"
    path.write_text(solution(task), encoding="utf-8")
    for secret in SECRETS:
        report = grade_submission(plans[task, secret], path, sandbox)
        failures = [(r.name, r.status, r.feedback) for r in report.results if not r.passed]
        assert report.score == 1.0, failures
        assert report.meta["misconceptions"] == []


@pytest.mark.parametrize("task", list(all_tasks()))
def test_every_diagnosable_misconception_has_a_mutant(task, plans):
    tags = {v.tag for secret in SECRETS for case in plans[task, secret].cases for v in case.variants}
    covered = {tag for tag, _ in MUTANTS.MUTANTS.get(task, [])}
    assert tags <= covered, f"no mutant for {sorted(tags - covered)}"


@pytest.mark.parametrize(("task", "tag", "patches"), CASES, ids=[f"{t}-{g}" for t, g, _ in CASES])
def test_mutant_fails_hidden_tests_and_is_named(task, tag, patches, sandbox, plans, tmp_path):
    path = tmp_path / f"{task}.py"
    path.write_text(MUTANTS.mutate(solution(task), patches), encoding="utf-8")
    report = grade_submission(plans[task, SECRETS[0]], path, sandbox)
    hidden = [r for r in report.results if r.group == "hidden"]
    assert any(not r.passed for r in hidden), "the mutant passed every hidden test"
    assert all(r.score == 0.0 for r in hidden if not r.passed)
    assert tag in report.meta["misconceptions"], (report.meta["misconceptions"], [r.feedback for r in hidden if not r.passed][:2])
