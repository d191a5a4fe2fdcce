"""Grades back to a course platform: which roster students get which grade from a class run, and why not.

``problemgen grade`` / ``grade-code`` write ``gradebook.csv``; a platform's gradebook import wants one
number per student under the platform's own id for the student. This module reads the gradebook and the
roster (its id column and one column of platform ids, as ``--layout`` reads it) and decides, once for every
platform export (``canvas_grades``, ``moodle_grades``), what each row becomes:

==========================================  ==========================================================
gradebook status                            exported
==========================================  ==========================================================
``graded``                                  the points, scaled to the points possible
``graded`` with a grader fault flag         nothing: the gradebook says "regrade after a fix"
``missing`` (no submission)                 nothing, or 0 with ``missing_zero``
``unreadable``, ``variant-mismatch``,       nothing, with the reason: no grade may stand for a sheet
``duplicate-submission``, ``refused``       nobody read, or read as another student's
a row that is no roster student             nothing (an entry that belongs to nobody)
a student without a platform id             nothing, with the reason
==========================================  ==========================================================

"Nothing" means the student is left out of the file, not given an empty cell: both Canvas and Moodle
read an empty cell as "remove this grade", which would erase a grade an instructor entered by hand on
the platform, while a student the file does not list keeps whatever the platform holds. Every student
left out is named with the reason in the export's message; flags on exported grades (a possible copy,
a ``[meta]`` line that could not be checked) are named there too. Overrides are already in the points.

Every text a file takes from the roster goes through the gradebook's formula neutralising
(:func:`classes.runner._cell`) after its control characters are dropped, so a name cannot become a
spreadsheet formula or a second row.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from problemgen.classes.rows import GRADED, MISSING, STATUSES, status_head
from problemgen.classes.runner import _cell
from problemgen.documents.rosters import read_roster_entries, roster_records
from problemgen.errors import ProblemgenError
from problemgen.exports import Option
from problemgen.outputs import check_output_apart
from problemgen.safewrite import write_file
from problemgen.userfiles import read_capped

MAX_GRADEBOOK_BYTES = 64 * 1024 * 1024
GRADEBOOK_COLUMNS = ("student", "status", "points", "max_points", "flags")
FAULT_FLAG = "grader fault on "
"""How the gradebook's flags column starts a grader fault (``classes.rows.Record.fault_note``)."""
UTF8_BOM = "\ufeff"

GRADEBOOK = Option("--gradebook", "gradebook", "The gradebook.csv of a `grade` or `grade-code` class run.", kind="file",
                   required=True)
POINTS_POSSIBLE = Option("--points-possible", "points_possible", "The grade's maximum on the platform: the assignment's "
                         "points possible (Canvas), the grade item's maximum grade (Moodle); above 0 and at most "
                         "1,000,000,000; default the class's maximum points.")
LEFT_OUT_HELP = """
    Students with no grade are left out of the file, so {platform} keeps what it has for them (an empty
    cell would erase a grade entered there by hand): no submission (--missing-zero writes 0 instead), and
    every unreadable, refused, duplicate or other student's sheet, each named on stderr with the reason.
"""
"""The paragraph of each grade export's help that says who gets no grade (``.format(platform=…)``)."""
MISSING_ZERO = Option("--missing-zero", "missing_zero", "Write 0 for a student with no submission (default: no grade).",
                      kind="flag", default=False)


@dataclass(frozen=True)
class GradebookRow:
    """One row of ``gradebook.csv``: what the export needs of it."""

    student: str
    status: str
    points: float
    max_points: float
    flags: str = ""
    message: str = ""


@dataclass(frozen=True)
class Student:
    """A roster student as an export writes them: roster id, name, platform id and other roster cells."""

    id: str
    name: str
    platform_id: str
    cells: dict[str, str] = field(default_factory=dict)  # roster column (lower case) -> cell, stripped


@dataclass
class Grades:
    """What an export writes (student, grade text) and what it says: who got no grade and why, and notes."""

    points_possible: float
    written: list[tuple[Student, str]] = field(default_factory=list)
    no_submission: list[str] = field(default_factory=list)
    withheld: list[str] = field(default_factory=list)  # "student: reason"
    notes: list[str] = field(default_factory=list)  # exported, but worth a look


# --------------------------------------------------------------------------------------------- reading


def read_gradebook(path: str | Path) -> list[GradebookRow]:
    """The rows of a class run's ``gradebook.csv``; one clear error for a file that is not one."""
    path = Path(path)
    try:
        reader = csv.DictReader(io.StringIO(read_capped(path, MAX_GRADEBOOK_BYTES, "gradebook").decode("utf-8-sig")))
        rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ProblemgenError(f"{path}: not a gradebook.csv of a class run ({exc})") from None
    lacking = [c for c in GRADEBOOK_COLUMNS if c not in (reader.fieldnames or ())]
    if lacking:
        raise ProblemgenError(f"{path}: not a gradebook.csv of `problemgen grade` or `grade-code` "
                              f"(no column {', '.join(lacking)})")
    return [_row(path, line, row) for line, row in enumerate(rows, start=2)]


def _row(path: Path, line: int, row: dict) -> GradebookRow:
    where = f"{path}, line {line}"
    status = row["status"] or ""
    if status_head(status) not in STATUSES:
        raise ProblemgenError(f"{where}: unknown status {status!r}")
    points = _number_cell(where, "points", row["points"], blank_is_zero=False)
    max_points = _number_cell(where, "max_points", row["max_points"], blank_is_zero=True)
    if 0 < max_points < points:  # a class run never writes one (an override scores at most the part's points)
        raise ProblemgenError(f"{where}: points {row['points']!r} above max_points {row['max_points']!r}, which a "
                              "class run never writes; grade the class again")
    return GradebookRow(_uncell(row["student"] or ""), status, points, max_points, row["flags"] or "",
                        row.get("message") or "")


def _number_cell(where: str, column: str, text: str | None, blank_is_zero: bool) -> float:
    """A points cell: a finite number from 0. A blank ``max_points`` is 0 (the gradebook writes no maximum
    for a missing row); a blank ``points`` is an edit, as every row gets its points, and would be a 0."""
    try:
        value = float(text) if text or not blank_is_zero else 0.0
    except (TypeError, ValueError):  # TypeError: a row cut short (None)
        value = math.nan
    if not math.isfinite(value) or value < 0:
        shown = "cell missing (the row is cut short)" if text is None else f"{text!r} is not a number of points"
        raise ProblemgenError(f"{where}: {column} {shown}")
    return value


def _uncell(text: str) -> str:
    """A gradebook cell as it was before :func:`_cell` guarded it (a roster id never starts with ``'``)."""
    return text[1:] if text[:1] == "'" and _cell(text[1:]) == text else text


def read_students(roster: str | Path, column: str, id_column: str | None,
                  platform_id: Callable[[str], str]) -> tuple[dict[str, Student], dict[str, str]]:
    """({roster id folded: Student}, {roster id folded: why no platform id}) from the roster CSV.

    ``column`` holds the platform's id for the student; ``platform_id(value)`` returns the id to write or
    raises ValueError saying why the value cannot be one. Two students with one platform id are an error:
    each would be given the other's grade. Ids are compared ignoring case, as Moodle finds a user by email
    or username (``Ana@Uni.example`` and ``ana@uni.example`` are one user there).
    """
    roster = Path(roster)
    names = {s.id.lower(): s.name for s in read_roster_entries(roster, id_column)}  # validates the ids
    wanted = column.strip().lower()
    found, lacking, owner = {}, {}, {}
    for student, (line, cells) in roster_records(roster, id_column, (column, "with the platform's ids")).items():
        key, value = student.lower(), cells[wanted]
        if key not in names:
            continue
        try:
            found[key] = Student(student, names[key], platform_id(value), cells)
        except ValueError as exc:
            lacking[key] = str(exc)
            continue
        same = found[key].platform_id.casefold()  # as the platform compares ids: 04101 is 4101, case ignored
        other, spelt = owner.setdefault(same, (student, value))
        if other != student:
            also = f"{other}'s" + ("" if spelt == value else f" ({spelt!r}: to the platform both are {same!r})")
            raise ProblemgenError(f"{roster}, line {line}: {column} {value!r} is also {also}; each "
                                  "would be given the other's grade")
    return found, lacking


MOST_POINTS_POSSIBLE = 1_000_000_000
"""The largest ``--points-possible`` taken: beyond it a grade is no longer a number the platforms store (and a
mistyped exponent, ``1e30``, would write 31-digit grades)."""


def points_possible(given: str | None, rows: list[GradebookRow]) -> float:
    """``--points-possible`` as a number, else the maximum points the graded rows share."""
    if given is not None:
        try:
            value = float(given)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0 or value > MOST_POINTS_POSSIBLE:
            raise ProblemgenError(f"--points-possible {given[:40]!r}: expected a number of points above 0 and at "
                                  f"most {MOST_POINTS_POSSIBLE:,}")
        return value
    maxima = sorted({r.max_points for r in rows if r.max_points > 0})
    if len(maxima) != 1:
        said = "no graded row gives one" if not maxima else f"rows give {', '.join(map(number, maxima))}"
        raise ProblemgenError(f"give --points-possible (the assignment's points on the platform): {said}")
    return maxima[0]


# --------------------------------------------------------------------------------------------- deciding


def grades_for(gradebook: str | Path, roster: str | Path, column: str, id_column: str | None,
               platform_id: Callable[[str], str], given_points: str | None, missing_zero: bool) -> Grades:
    """The grades an export writes, read from the gradebook and the roster's ``column`` of platform ids."""
    rows = read_gradebook(gradebook)
    students, lacking = read_students(roster, column, id_column, platform_id)
    return decide(rows, students, lacking, points_possible(given_points, rows), missing_zero)


def decide(rows: list[GradebookRow], students: dict[str, Student], lacking: dict[str, str], possible: float,
           missing_zero: bool = False) -> Grades:
    """Every gradebook row as a grade to write or a reason for none (see the module docstring)."""
    grades, seen = Grades(possible), set()
    for row in rows:
        key = row.student.lower()
        if key in seen:
            raise ProblemgenError(f"the gradebook lists {row.student} twice; grade the class again")
        seen.add(key)
        if status_head(row.status) == MISSING and not missing_zero and key in students:
            grades.no_submission.append(row.student)
            continue
        reason = _no_grade(row, key in students, lacking.get(key))
        if reason:
            grades.withheld.append(f"{row.student}: {reason}")
            continue
        fraction = row.points / row.max_points if status_head(row.status) == GRADED else 0.0
        grades.written.append((students[key], number(fraction * possible)))
        if row.flags:
            grades.notes.append(f"{row.student}: {row.flags}")
    absent = [s.id for key, s in students.items() if key not in seen]
    if not seen & (students.keys() | lacking.keys()):
        raise ProblemgenError("no student of the roster is in the gradebook: is it another class's gradebook, "
                              "or another class's roster?")
    if absent:
        shown = ", ".join(absent[:10]) + (f" and {len(absent) - 10} more" if len(absent) > 10 else "")
        grades.withheld.append(f"{count(len(absent), 'roster student')} not in the gradebook: {shown}")
    return grades


def _no_grade(row: GradebookRow, on_roster: bool, lacking: str | None) -> str:
    """Why ``row`` gets no grade ("" when it gets one)."""
    head, status = status_head(row.status), row.status
    if row.message and row.message not in status:
        status += f" ({row.message})"
    if not on_roster and lacking is None:
        return f"no roster student; {status}"
    if head not in (GRADED, MISSING):
        return status
    if lacking is not None:
        return lacking
    if head == GRADED and FAULT_FLAG in row.flags:
        return row.flags
    if head == GRADED and row.max_points <= 0:
        return "graded, but the gradebook gives no maximum points"
    return ""


# --------------------------------------------------------------------------------------------- writing


def number(x: float) -> str:
    """Points as both platforms read them: at most two decimals, a point, no exponent (``7.5``, ``10``)."""
    text = f"{round(float(x), 2) + 0.0:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def cell(text: str) -> str:
    """A roster text for one CSV cell: control characters (a line break) dropped, formulas neutralised."""
    return _cell("".join(c for c in " ".join(text.split()) if c.isprintable()))


def write_csv(output: str | Path, rows: list[list[str]], inputs: dict[str, Path]) -> None:
    """The rows as a UTF-8 CSV file with a byte-order mark, written only where it overwrites no input.

    The mark: both platforms read past it (Canvas finds its header by substring, and its own gradebook
    export writes one when the user asks; Moodle strips it), and Excel needs it to show non-ASCII names
    right when an instructor opens the file to check it before importing.
    """
    output = Path(output)
    check_output_apart(output, inputs)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    if output.is_dir():
        raise ProblemgenError(f"cannot write {output}: it is a directory")
    write_file(output, UTF8_BOM + buffer.getvalue(), durable=True)  # a full disk keeps an earlier file whole


def count(n: int, noun: str) -> str:
    """``1 grade``, ``3 grades``."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def summary(grades: Grades, head: str, platform: str) -> str:
    """The export's message: what was written, who got no grade and why, what to look at."""
    lines = [head]
    if grades.no_submission:
        lines.append(f"no submission, no grade written (--missing-zero writes 0): {', '.join(grades.no_submission)}")
    if grades.withheld:
        lines.append(f"no grade written; {platform} keeps what it has for these students:")
        lines += [f"  {line}" for line in grades.withheld]
    if grades.notes:
        lines.append("written, but flagged in the gradebook (look before importing):")
        lines += [f"  {line}" for line in grades.notes]
    return "\n".join(_printable(line) for line in lines) + "\n"


def _printable(text: str) -> str:
    """A line for the terminal: a control character from a file name shown as an escape, never obeyed."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
