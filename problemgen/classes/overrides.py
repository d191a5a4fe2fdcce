"""Regrade overrides: an instructor's decision on one part of one student's sheet, applied and listed.

``--overrides overrides.toml`` holds one table per decision::

    [[override]]
    student = "s001"
    part = "p3.scale"          # the part as the report names it
    score = 1.0                # the fraction of the part's points (0–1) the student gets
    reason = "1/8 written as 0.12 is what I meant to accept"

Every applied override shows in the student's report (the part's status becomes ``override``), in the
gradebook's ``overrides`` column and in the summary. None is silently dropped:

- one naming a part the sheet does not have, or a student with no graded sheet (missing, refused,
  a duplicate, a file that vanished before it was opened), is *not applied*: an override rescores one
  part of a graded sheet and cannot say what the rest of a sheet nobody graded is worth, so it never
  invents a score. It is listed as not applied, with the student's status, in the gradebook row,
  under "Needs attention" in the summary (``overrides_not_applied`` in its JSON), and ``problemgen
  grade`` warns of it on stderr. (A sheet opened but not understood is graded, every part invalid, so
  overrides do apply to it: an instructor who reads the file by hand can credit its parts.)
- one naming a student who is not on the roster is an error before anything is graded (a typo would
  otherwise go unnoticed). Ids match the roster ignoring case, as submissions do.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from problemgen.classes.entries import student_key
from problemgen.model.core import ProblemgenError
from problemgen.sheets.reports import Report
from problemgen.userfiles import read_text
from problemgen.wording import closest

MAX_OVERRIDES_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Override:
    student: str
    part: str
    score: float
    reason: str


def read_overrides(path: str | Path) -> dict[str, list[Override]]:
    """student -> overrides, from a TOML file of ``[[override]]`` tables; errors name the table."""
    path = Path(path)
    try:
        data = tomllib.loads(read_text(path, MAX_OVERRIDES_BYTES, "the overrides file"))
    except tomllib.TOMLDecodeError as exc:
        raise ProblemgenError(f"{path}: not a UTF-8 TOML file ({exc})") from None
    tables = data.get("override", [])
    if set(data) - {"override"} or not isinstance(tables, list):
        raise ProblemgenError(f"{path}: expected only [[override]] tables")
    result: dict[str, list[Override]] = {}
    for number, table in enumerate(tables, start=1):
        item = _override(path, number, table)
        result.setdefault(item.student, []).append(item)
    return result


def _override(path: Path, number: int, table) -> Override:
    where = f"{path}, override {number}"
    if not isinstance(table, dict) or set(table) != {"student", "part", "score", "reason"}:
        raise ProblemgenError(f"{where}: needs exactly student, part, score and reason")
    score = table["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        raise ProblemgenError(f"{where}: score is the fraction of the part's points, from 0 to 1 (got {score!r})")
    if not all(isinstance(table[k], str) and table[k].strip() for k in ("student", "part", "reason")):
        raise ProblemgenError(f"{where}: student, part and reason must be non-empty strings")
    return Override(table["student"].strip(), table["part"].strip(), float(score), " ".join(table["reason"].split()))


def for_roster(overrides: dict[str, list[Override]], students: list[str], where: str) -> dict[str, list[Override]]:
    """The overrides keyed by roster id (``S01`` is ``s01``'s); any naming a student not on the roster is
    one error for all of them, with the nearest roster id as a hint."""
    roster_ids = {student_key(s): s for s in students}
    result: dict[str, list[Override]] = {}
    unknown = []
    for student, items in overrides.items():
        owner = roster_ids.get(student_key(student))
        if owner is None:
            near = closest(student, students)
            unknown.append(repr(student) + (f" (did you mean {near!r}?)" if near else ""))
        else:
            result.setdefault(owner, []).extend(items)
    if unknown:
        raise ProblemgenError(f"{where}: overrides name students not on the roster: {', '.join(unknown)}; "
                              "correct them and grade again (nothing was graded)")
    return result


def apply_overrides(report: Report, overrides: tuple[Override, ...] | list[Override]
                    ) -> tuple[Report, tuple[str, ...], tuple[str, ...]]:
    """The report with each override's part rescored, one line per applied override, and one per override
    not applied (a part the sheet does not have).

    A part regraded to full marks was accepted as right, so it no longer names the misconception the
    grader saw in it (nor counts its student under it in the class summary); a partial regrade keeps it."""
    results = list(report.results)
    applied, skipped = [], []
    for item in overrides:
        index = next((i for i, r in enumerate(results) if r.name == item.part), None)
        if index is None:
            skipped.append(f"{item.part}: not applied, the sheet has no such part ({item.reason})")
            continue
        old = results[index]
        new_score, accepted = item.score * old.max_score, item.score >= 1
        results[index] = replace(old, score=new_score, status="override", passed=accepted,
                                 mistake=None if accepted else old.mistake,
                                 feedback=f"regraded by the instructor: {item.reason} (was {old.status}, {old.score:g} points)")
        applied.append(f"{item.part}: {old.score:g} -> {new_score:g} of {old.max_score:g} points ({item.reason})")
    return replace(report, results=tuple(results)), tuple(applied), tuple(skipped)


def not_applied(overrides: tuple[Override, ...] | list[Override], status: str) -> tuple[str, ...]:
    """One line per override of a student whose row has no graded sheet (``status`` says why)."""
    return tuple(f"{item.part}: not applied, no sheet was graded: {status} ({item.reason})" for item in overrides)
