"""One row per entry of a class run, in one status vocabulary for answer sheets and code alike.

=========================================  ========================================================
status                                     meaning
=========================================  ========================================================
``graded``                                 graded; counted in every statistic
``missing``                                a roster student without a submission (scores 0)
``unreadable``                             the submission could not be read at all (scores 0; the
                                           report says why)
``variant-mismatch: belongs to <id>``      the sheet is another student's variant (graded against
                                           the student's own, kept out of the item statistics)
``duplicate-submission``                   more than one submission for one student (not graded)
``refused: <reason>``                      an entry that is never opened (see ``classes.entries``)
=========================================  ========================================================

A :class:`Record` is the compact trace of a row that class statistics need (a few hundred bytes), so a
run keeps records, never reports: reports are written to disk as they are produced.
"""

from __future__ import annotations

import sys
from array import array
from dataclasses import dataclass, field
from typing import Sequence

from problemgen.sheets.reports import Report

GRADED, MISSING, UNREADABLE, DUPLICATE = "graded", "missing", "unreadable", "duplicate-submission"
MISMATCH, REFUSED = "variant-mismatch", "refused"
STATUSES = (GRADED, MISSING, UNREADABLE, MISMATCH, DUPLICATE, REFUSED)
"""Status heads in gradebook order; a row's status is a head, or a head with ``: detail``."""


def status_head(status: str) -> str:
    """``variant-mismatch: belongs to s2`` -> ``variant-mismatch``."""
    return status.split(":", 1)[0]


@dataclass(frozen=True)
class ClassRow:
    """A graded (or not) entry: the report when there is one, plus what the statistics need besides it.

    ``structures`` maps a problem id to the label of its structural variant; ``wrong_answers`` holds one
    item per non-blank wrong answer, equal for equal (part, value read) and nothing else: copy detection
    only compares them (answer sheets keep a fingerprint, see ``sheet_class``); ``overrides`` lists the
    regrade overrides applied and ``unapplied_overrides`` those that could not be (see ``overrides``).
    """

    student: str
    status: str
    report: Report | None = None
    message: str = ""
    structures: dict = field(default_factory=dict)
    wrong_answers: tuple = ()
    overrides: tuple[str, ...] = ()
    unapplied_overrides: tuple[str, ...] = ()


@dataclass(slots=True)
class Record:
    """The compact trace of a row kept for the gradebook and the summary (never the report itself):
    points per problem as an array of doubles (a third of a tuple of floats) beside a group-name tuple that
    all records of a class share."""

    student: str
    status: str
    message: str = ""
    variant: str = ""
    points: float = 0.0
    max_points: float = 0.0
    group_names: tuple[str, ...] = ()
    group_points: Sequence[float] = ()
    wrong_answers: tuple = ()
    overrides: tuple[str, ...] = ()
    misconceptions: tuple[str, ...] = ()
    flags: list[str] = field(default_factory=list)
    faults: tuple[str, ...] = ()  # parts a grader bug made invalid (see answers.base.grader_fault)
    unapplied_overrides: tuple[str, ...] = ()
    meta_problems: tuple[str, ...] = ()  # [meta] entries given twice or unreadable: whose sheet is unchecked

    @property
    def score(self) -> float:
        return self.points / self.max_points if self.max_points > 0 else 0.0

    @property
    def fault_note(self) -> str:
        """``grader fault on p2.weights, …`` for a sheet a grader bug touched (the flag and the summary's
        attention list say it alike); empty otherwise."""
        return f"grader fault on {', '.join(self.faults)}" if self.faults else ""

    @property
    def attention_note(self) -> str:
        """Why a graded row still needs a look (a grader fault, a ``[meta]`` that cannot say whose sheet it
        is), as the gradebook's flags and the summary's attention list say it; empty otherwise."""
        return "; ".join(filter(None, (self.fault_note, *self.meta_problems)))

    @property
    def counted(self) -> bool:
        """Whether the row enters the score and item statistics (graded, not another student's sheet)."""
        return self.status == GRADED

    @property
    def groups(self) -> dict[str, float]:
        return dict(zip(self.group_names, self.group_points))


def record_of(row: ClassRow, shared: dict | None = None) -> Record:
    """The compact trace of ``row``; ``shared`` dedupes the group-name tuples across a class."""
    report = row.report
    record = Record(row.student, row.status, row.message, wrong_answers=row.wrong_answers, overrides=row.overrides,
                    unapplied_overrides=row.unapplied_overrides)
    if report is None:
        return record
    groups = report.groups()
    names = tuple(sys.intern(g) for g, _ in groups)
    record.group_names = names if shared is None else shared.setdefault(names, names)
    record.group_points = array("d", [sum(r.score for r in results) for _, results in groups])
    record.variant = str(report.meta.get("variant", ""))
    record.points, record.max_points = report.points, report.max_points
    tags = [*report.meta.get("misconceptions", ()), *(r.mistake for r in report.results if r.mistake)]
    record.misconceptions = tuple(sorted({sys.intern(str(t)) for t in tags}))
    if report.meta.get("faults"):
        record.faults = tuple(map(str, report.meta["faults"]))
        record.flags.append(f"{record.fault_note}: regrade after a fix")
    if report.meta.get("meta_problems"):
        record.meta_problems = tuple(map(str, report.meta["meta_problems"]))
        record.flags.extend(record.meta_problems)
    return record
