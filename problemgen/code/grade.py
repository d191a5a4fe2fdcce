"""Grade one code submission for a task: static checks, sandboxed calls, comparison, diagnosis.

Order of events (rule 8): the hidden inputs, expected values and buggy-variant outputs are all
computed here first; then the sandbox runs the submission on the inputs alone; then, with every
child dead, the decoded results are compared and the report is built. The child's exit code and
output never decide a status.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from problemgen.sheets.reports import CheckResult, Report
from problemgen.userfiles import coding_problem, well_formed_text
from problemgen.model.core import ProblemgenError
from problemgen.model.streams import stream
from problemgen.code.sandbox import (
    CRASH, IMPORT_ERROR, RETURNED, Call, IsolationError, Limits, Outcome, RejectedSubmission, Sandbox, SandboxRun,
    collect, rank, stage,
)  # fmt: skip
from problemgen.code import compare, forms, static
from problemgen.code.notebook import collect_notebook
from problemgen.code.base import DEFAULT_ATOL, DEFAULT_RTOL, Case, Property, Task
from problemgen.code.inputs import Unusable
from problemgen.misconceptions.catalogue import title_and_hint

BANNED_API = "BANNED_API"
SECRET_ENV = "PROBLEMGEN_GRADER_SECRET"


@dataclass(frozen=True)
class Plan:
    """Everything the grader knows before any code runs: cases, properties, and the calls to make."""

    task: Task
    cases: tuple[Case, ...]
    properties: tuple[Property, ...]
    secret_kind: str  # "fixed" (reproducible) or "random" (fresh per run)
    calls: tuple[Call, ...] = field(init=False)
    # per property, the task's solution for each of its calls (None: the task has no solution to run)
    property_values: tuple[tuple[Any, ...] | None, ...] = field(init=False)
    # per property, the form of each call's result by the task's solution (None: not known)
    property_forms: tuple[tuple[tuple, ...] | None, ...] = field(init=False)

    def __post_init__(self) -> None:
        calls = [case.call for case in self.cases] + [call for prop in self.properties for call in prop.calls]
        object.__setattr__(self, "calls", tuple(calls))
        values = tuple(_solved(self.task, prop) for prop in self.properties)
        object.__setattr__(self, "property_values", values)
        object.__setattr__(self, "property_forms",
                           tuple(None if v is None else tuple(map(forms.form_of, v)) for v in values))  # fmt: skip

    def property_slices(self) -> list[tuple[Property, slice]]:
        """Each property with the positions of its calls in ``calls`` (they follow the cases)."""
        start, slices = len(self.cases), []
        for prop in self.properties:
            slices.append((prop, slice(start, start + len(prop.calls))))
            start += len(prop.calls)
        return slices


def _solved(task: Task, prop: Property) -> tuple[Any, ...] | None:
    return None if task.solve is None else tuple(task.solve(call) for call in prop.calls)


def make_plan(task: Task, *, public_only: bool = False, secret: str | None = None) -> Plan:
    """Public cases, plus hidden cases and properties drawn from the secret (if not public-only).

    The secret comes from the argument, else ``$PROBLEMGEN_GRADER_SECRET``, else is random for this
    run: students can read the grader's source, so a seed written in it would hide nothing.
    """
    secret = secret if secret is not None else os.environ.get(SECRET_ENV)
    kind = "fixed" if secret is not None else "random"
    if public_only:
        rng = stream(_seed("public", task.name))
        return Plan(task, tuple(task.public_cases()), tuple(task.make_properties(rng)), "public")
    secret = secrets.token_hex(16) if secret is None else secret
    hidden_rng = stream(_seed(secret, task.name, "cases"))
    property_rng = stream(_seed(secret, task.name, "properties"))
    cases = task.public_cases() + task.hidden_cases(hidden_rng)
    return Plan(task, tuple(cases), tuple(task.make_properties(property_rng)), kind)


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\0".join(parts).encode()).digest()[:8], "little")


# --------------------------------------------------------------------------- one submission


def grade_submission(plan: Plan, path: str | os.PathLike, sandbox: Sandbox, *, student: str | None = None) -> Report:
    """Grade the ``.py`` file or directory at ``path``; never raises for anything the student did."""
    task = plan.task
    student = student or well_formed_text(Path(path).stem)  # a name that is not UTF-8 is shown as \xNN
    title = f"{task.name}: {student}"
    notes: tuple[str, ...] = ()
    try:
        if Path(path).suffix.lower() == ".ipynb" and Path(path).is_file():
            sources, entry, notes = collect_notebook(path)
        else:
            sources, entry = collect(path, entry_names=(f"{task.name}.py",))
            _refuse_other_codings(sources)
    except RejectedSubmission as exc:
        return _uniform(plan, sandbox, title, IMPORT_ERROR, f"submission rejected: {exc}", {"student": student})
    problem = static.syntax_error(sources)
    if problem:
        return _uniform(plan, sandbox, title, IMPORT_ERROR, problem, {"student": student})
    findings = static.banned_uses(sources, task.banned)
    if findings:
        text = "not run: " + "; ".join(str(f) for f in findings[:5])
        meta = {"student": student, "banned": [str(f) for f in findings]}
        return _uniform(plan, sandbox, title, BANNED_API, text, meta)
    staged = stage(sources, entry)
    try:
        run = _run_plan(sandbox, staged, plan)
    except IsolationError:
        raise
    except ProblemgenError as exc:  # the supervisor died twice: mark this submission, keep the class going
        return _uniform(plan, sandbox, title, CRASH, f"not graded: {exc}", {"student": student})
    finally:
        staged.cleanup()
    report = build_report(plan, run, title, student)
    return with_notebook_notes(report, notes) if notes else report


def _refuse_other_codings(sources: dict[str, str]) -> None:
    """RejectedSubmission when a coding declaration would make Python run other code than the text the
    checks read (:func:`problemgen.userfiles.coding_problem`); a notebook's reader refuses its own."""
    for name, text in sorted(sources.items()):
        problem = coding_problem(text)
        if problem:
            raise RejectedSubmission(f"{name}: {problem}")


def with_notebook_notes(report: Report, notes: tuple[str, ...]) -> Report:
    """The report of a notebook submission says what was left out of the graded code (a warning line)."""
    warnings = tuple(report.meta.get("warnings", ())) + tuple(f"notebook: {note}" for note in notes)
    return replace(report, meta={**report.meta, "warnings": warnings})


def _run_plan(sandbox: Sandbox, staged, plan: Plan) -> SandboxRun:
    """Every call of the plan in one child; then, in a fresh child, the later calls of each law that
    held on outputs other than the task's solution.

    A law compares related calls, such as softmax(x) and softmax(x + 7). In one process a submission
    can keep the first input and answer the second from memory, so the law holds without being
    computed. That only earns something when the remembered output is not the right one (a right
    output makes the law true anyway) and when laws earn credit at all (a value case passed), so only
    such laws are asked again, in a fresh child given only those calls: it shares no objects with the
    first (the fork server it comes from holds just the calls it was sent), and no file, since a child
    may not write one. Right submissions, and wrong ones that earn no law credit, pay for no second
    child. The second child reads results only up to what the first left of the submission's
    ``Limits.result_bytes``, so the stated total holds for the whole submission. (What stays beyond
    reach: bytes of the plan's inputs left in memory the fork server freed, which only a submission
    reading raw memory could find, for one law's points.)
    """
    run = _run_with_one_retry(sandbox, staged, plan.calls)
    doubtful = _laws_to_confirm(plan, run.outcomes)
    if not doubtful or not _laws_earn(plan, [_case_verdict(c, o) for c, o in zip(plan.cases, run.outcomes)]):
        return run
    # a list of just those calls, not the plan's positions: the fork server holds what it is given and
    # every child inherits it, so the plan's held inputs (the law's first input among them) must go
    again = _run_with_one_retry(sandbox, staged, [plan.calls[i] for i in doubtful], run.result_bytes_read)
    return _with_outcomes(run, again, doubtful)


def _laws_to_confirm(plan: Plan, outcomes: tuple[Outcome, ...]) -> list[int]:
    """Positions of the later calls of every law that held here on outputs other than the solution's."""
    positions = []
    for (prop, where), solved in zip(plan.property_slices(), plan.property_values):
        got = outcomes[where]
        if len(got) < 2 or any(o.status != RETURNED for o in got):
            continue
        right = solved is not None and all(
            compare.same_value(o.value, v, DEFAULT_RTOL, DEFAULT_ATOL) for o, v in zip(got, solved))
        if not right and _check_property(prop, [o.value for o in got])[0] == compare.OK:
            positions += range(where.start + 1, where.stop)
    return positions


def _with_outcomes(run: SandboxRun, again: SandboxRun, positions: list[int]) -> SandboxRun:
    """``run`` with the outcomes at ``positions`` taken from ``again``, and both children accounted for."""
    outcomes = list(run.outcomes)
    for position, outcome in zip(positions, again.outcomes):
        outcomes[position] = outcome
    return SandboxRun(
        outcomes=tuple(outcomes), isolation=min(run.isolation, again.isolation, key=rank),
        confinement=run.confinement, stdout=_both(run.stdout, again.stdout), stderr=_both(run.stderr, again.stderr),
        children=run.children + again.children, wall_seconds=run.wall_seconds + again.wall_seconds,
        cpu_seconds=run.cpu_seconds + again.cpu_seconds,
        result_bytes_read=run.result_bytes_read + again.result_bytes_read,
    )  # fmt: skip


def _both(first: str, second: str) -> str:
    """The output of the two children, the second marked as the re-asked laws' (never glued to a line)."""
    return f"{first}\n[re-asked laws, a fresh child]\n{second}" if first and second else first or second


def _run_with_one_retry(sandbox: Sandbox, staged, calls, result_bytes_read: int = 0) -> SandboxRun:
    """A lost fork server is replaced and the submission run once more (a fresh child either way).

    ``result_bytes_read``: what earlier runs of the submission read of its result bytes; a lost run's
    results are dropped, so its retry starts from the same count."""
    try:
        return sandbox.run(staged, calls, result_bytes_read=result_bytes_read)
    except IsolationError:
        raise
    except ProblemgenError:
        return sandbox.run(staged, calls, result_bytes_read=result_bytes_read)


def build_report(plan: Plan, run: SandboxRun, title: str, student: str) -> Report:
    outcomes = list(run.outcomes)
    case_outcomes = outcomes[: len(plan.cases)]
    verdicts = [_case_verdict(case, outcome) for case, outcome in zip(plan.cases, case_outcomes)]
    diverging = _first_diverging_stages(plan, verdicts)
    results = [_case_result(case, verdict, diverging.get(case.input_id)) for case, verdict in zip(plan.cases, verdicts)]
    for (prop, where), shapes in zip(plan.property_slices(), plan.property_forms):
        results.append(_property_result(prop, outcomes[where], shapes))
    results = _withhold_unearned_credit(plan, verdicts, case_outcomes, results)
    return Report(title=title, results=tuple(results), meta=_meta(plan, run, student, results))


# --------------------------------------------------------------------------- credit that proves nothing


def _withhold_unearned_credit(plan: Plan, verdicts: list, outcomes: list[Outcome], results: list[CheckResult]) -> list[CheckResult]:
    """No credit at all for outputs that ignore the inputs; no property credit without a value case right.

    A constant output obeys many laws (and can match one case by luck); public answers can be
    hard-coded. So: if the results do not change across cases whose expected values differ, every
    check scores 0; if no case with expected values passes (hidden ones, when the plan has them),
    the properties score 0.
    """
    if _input_independent(plan, outcomes):
        why = "no credit: the outputs do not change with the inputs"
        return [_no_credit(r, why) for r in results]
    if not _laws_earn(plan, verdicts):
        why = "no credit for laws: no test with expected values passed, so they confirm nothing"
        return [_no_credit(r, why) if r.group == "properties" else r for r in results]
    return results


def _laws_earn(plan: Plan, verdicts: list[_CaseVerdict]) -> bool:
    """Laws earn credit only beside a value case passed (a hidden one, when the plan has them)."""
    hidden = [v for case, v in zip(plan.cases, verdicts) if not case.public] or verdicts
    return any(v.status == compare.OK for v in hidden)


def _input_independent(plan: Plan, outcomes: list[Outcome]) -> bool:
    """True if, for some function, at least two cases with different expected values got the same value back."""
    by_function: dict[str, list[tuple[Case, Outcome]]] = {}
    for case, outcome in zip(plan.cases, outcomes):
        by_function.setdefault(case.call.function, []).append((case, outcome))
    for pairs in by_function.values():
        hidden = [p for p in pairs if not p[0].public]
        pairs = hidden if len(hidden) >= 2 else pairs
        returned = [(c, o) for c, o in pairs if o.status == RETURNED]
        if len(returned) < 2:
            continue
        (first_case, first), others = returned[0], returned[1:]
        distinct = any(not compare.same_value(first_case.expected, c.expected, 0.0, 0.0) for c, _ in others)
        if distinct and all(compare.same_value(first.value, o.value, 0.0, 0.0) for _, o in others):
            return True
    return False


def _no_credit(result: CheckResult, why: str) -> CheckResult:
    if result.score == 0.0 and not result.passed:
        return result
    status = compare.WRONG if result.status == compare.OK else result.status
    feedback = f"{result.feedback} ({why})" if result.feedback else why
    return replace(result, status=status, passed=False, score=0.0, feedback=feedback)


def _meta(plan: Plan, run: SandboxRun, student: str, results: list[CheckResult]) -> dict:
    meta = {
        "task": plan.task.name,
        "student": student,
        "isolation": run.isolation,
        "confinement": run.confinement,
        "hidden_tests": plan.secret_kind,
        "misconceptions": sorted({r.mistake for r in results if r.mistake}),
    }
    if run.stdout:
        meta["stdout"] = run.stdout
    if run.stderr:
        meta["stderr"] = run.stderr
    return meta


def _uniform(plan: Plan, sandbox: Sandbox, title: str, status: str, feedback: str, meta: dict) -> Report:
    """Every check gets the same non-passing status; the submission was not run (the level is the probe's)."""
    results = [CheckResult(c.name, status, False, 0.0, c.weight, None, feedback, True, c.group) for c in plan.cases]
    results += [CheckResult(p.name, status, False, 0.0, p.weight, None, feedback, True, "properties") for p in plan.properties]
    probe = sandbox.probe()
    meta = {"task": plan.task.name, "isolation": probe.isolation, "confinement": probe.confinement,
            "hidden_tests": plan.secret_kind, "misconceptions": [], "ran": False, **meta}  # fmt: skip
    return Report(title=title, results=tuple(results), meta=meta)


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class _CaseVerdict:
    status: str
    feedback: str
    failed_stages: tuple[str, ...] = ()  # stages compared and found wrong
    mistake: str | None = None
    unknown_stages: tuple[str, ...] = ()  # stages the call covered but that could not be compared (it raised)


def _case_verdict(case: Case, outcome: Outcome) -> _CaseVerdict:
    if outcome.status != RETURNED:  # nothing came back: no stage of this call was compared
        feedback = outcome.message
        if case.stages:
            feedback = feedback.rstrip(".") + "; nothing was returned, so no stage of this call could be compared"
        return _CaseVerdict(outcome.status, feedback, (), None, case.stages)
    verdict = compare.judge(case, outcome.value)
    if verdict.status == compare.OK:
        return _CaseVerdict(compare.OK, "")
    stages = case.stages or case.parts
    failed = tuple(stage for part, stage in zip(case.parts, stages) if part in verdict.failed_parts) or stages
    feedback = verdict.feedback
    tag = verdict.variant.tag if verdict.variant else None
    if tag:
        title, hint = title_and_hint(tag)
        feedback += f". Your output equals {title}. Hint: {hint}"
    return _CaseVerdict(verdict.status, feedback, failed, tag)


def _first_diverging_stages(plan: Plan, verdicts: list[_CaseVerdict]) -> dict[str, str]:
    """input_id -> the earliest stage (in the task's stage order) that was compared and found wrong.

    A stage is claimed only when every stage before it was compared: when a call raised before an
    earlier stage could be checked, nothing is claimed for that input (the crash itself is reported).
    """
    order = plan.task.stage_order
    if not order:
        return {}
    wrong: dict[str, set[str]] = {}
    unknown: dict[str, set[str]] = {}
    for case, verdict in zip(plan.cases, verdicts):
        if case.input_id and verdict.status != compare.OK:
            wrong.setdefault(case.input_id, set()).update(verdict.failed_stages)
            unknown.setdefault(case.input_id, set()).update(verdict.unknown_stages)
    first = {}
    for key, stages in wrong.items():
        for stage in order:
            if stage in stages:
                first[key] = stage
                break
            if stage in unknown[key]:
                break
    return first


def _case_result(case: Case, verdict: _CaseVerdict, first_stage: str | None) -> CheckResult:
    passed = verdict.status == compare.OK
    feedback = "" if passed else f"{case.about}: {verdict.feedback}"
    if not passed and first_stage:
        feedback = feedback.rstrip(".") + f". First diverging stage for this input: {first_stage}"
    return CheckResult(
        name=case.name, status=verdict.status, passed=passed, score=case.weight if passed else 0.0,
        max_score=case.weight, mistake=verdict.mistake, feedback=feedback, visible=True, group=case.group,
    )  # fmt: skip


# --------------------------------------------------------------------------- properties


def _property_result(prop: Property, outcomes: list[Outcome], shapes: tuple[tuple, ...] | None) -> CheckResult:
    failed = next((o for o in outcomes if o.status != RETURNED), None)
    misshapen = next((m for i, o in enumerate(outcomes) if shapes and (m := forms.mismatch(shapes[i], o.value, f"result {i + 1}"))), "")  # fmt: skip
    if failed is not None:
        status, message = failed.status, failed.message
    elif misshapen:  # a law checked on the wrong shape can hold on garbage
        status, message = compare.BAD_OUTPUT, misshapen
    else:
        status, message = _check_property(prop, [o.value for o in outcomes])
    passed = status == compare.OK
    feedback = "" if passed else f"{prop.about}: {message}"
    return CheckResult(prop.name, status, passed, prop.weight if passed else 0.0, prop.weight, None, feedback,
                       True, "properties")  # fmt: skip


def _check_property(prop: Property, values: list[Any]) -> tuple[str, str]:
    try:
        with np.errstate(all="ignore"):
            problem = prop.check(values)
    except (Unusable, ValueError, TypeError, IndexError, FloatingPointError) as exc:
        return compare.BAD_OUTPUT, f"could not be checked: {exc}"
    return (compare.WRONG, problem) if problem else (compare.OK, "")


def grade_file(task: Task, path: str | os.PathLike, *, public_only: bool = False, secret: str | None = None,
               limits: Limits = Limits(), min_isolation: str = "process") -> Report:
    """Convenience: plan, sandbox and grade a single submission."""
    plan = make_plan(task, public_only=public_only, secret=secret)
    with Sandbox(limits, jobs=1, min_level=min_isolation) as sandbox:
        return grade_submission(plan, path, sandbox)
