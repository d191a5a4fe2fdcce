"""Roster CSVs: who the students are, and what else a roster says about them.

A roster is the instructor's CSV (comma-, semicolon- or tab-separated, UTF-8 with or without a byte-order
mark, a header row). Every command that reads one reads it here, the same way: ``worksheet --roster``
takes the ids and printed names (:func:`read_roster_entries`); the exports that identify submitters and
``grade --layout`` take one more column, the platform's identity of each student (an e-mail, a Canvas
user id, a GitHub login: :func:`roster_column`). The id column is the one named (``--id-column``), else the
first of ``id``, ``student_id``, ``student``, ``SID``; ids are compared ignoring case, so a roster may not
list one twice.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from problemgen.documents.banks import SAFE_ID
from problemgen.errors import ProblemgenError
from problemgen.userfiles import read_text
from problemgen.wording import suggest

ROSTER_ID_COLUMNS = ("id", "student_id", "student", "sid")
"""Header names taken as the student id column (case-insensitive; ``SID`` is Gradescope's roster export)."""
ROSTER_NAME_COLUMNS = ("name", "full name", "full_name", "student name", "student_name")
ROSTER_DELIMITERS = ",;\t"
MAX_ROSTER_BYTES = 8 * 1024 * 1024
MAX_STUDENTS = 10_000
"""Caps on what a roster may hold, twice a 5,000-student course (with its platform's columns, about 1.5 KB a
row): at 5,000 exactly, such a course with a few staff or test accounts was refused. Every cost of a class
grows linearly with its roster, so the caps guard against a wrong file, not against a big class."""
_RESERVED_NAMES = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def check_student_id(student: str, where: str) -> str:
    """A student id usable as a directory name on every platform, or a clear error."""
    if not SAFE_ID.match(student) or student in (".", "..") or student.split(".")[0].lower() in _RESERVED_NAMES:
        raise ProblemgenError(
            f"{where}: student id {student!r} is not a safe directory name "
            "(letters, digits, '.', '_', '-'; at most 64; not a reserved device name)"
        )
    return student


@dataclass(frozen=True)
class RosterStudent:
    """One roster row: the id (a directory name) and the name printed on the handout ("" when none)."""

    id: str
    name: str = ""


def read_roster(path: str | Path, id_column: str | None = None) -> list[str]:
    """Student ids of a roster CSV (see :func:`read_roster_entries`)."""
    return [student.id for student in read_roster_entries(path, id_column)]


def read_roster_entries(path: str | Path, id_column: str | None = None) -> list[RosterStudent]:
    """Students of a roster CSV: comma-, semicolon- or tab-separated, with a header row.

    The id column is ``id_column`` when given, else the first of ``id``, ``student_id``, ``student``,
    ``SID`` (Gradescope); the name column is ``name``/``full name`` or ``first name`` + ``last name``.
    """
    path = Path(path)
    rows = roster_rows(path)
    column = roster_id_column(path, rows[0], id_column)
    return _roster_students(path, rows[1:], column, _name_columns([h.strip().lower() for h in rows[0]]))


def roster_id_column(path: Path, header_row: list[str], id_column: str | None = None) -> int:
    """Index of the student id column: ``id_column`` when given, else the first of ROSTER_ID_COLUMNS."""
    header = [h.strip().lower() for h in header_row]
    wanted = (id_column.strip().lower(),) if id_column else ROSTER_ID_COLUMNS
    column = next((header.index(name) for name in wanted if name in header), None)
    if column is None:
        expected = f"the column {id_column!r}" if id_column else f"one of {', '.join(ROSTER_ID_COLUMNS)} (or --id-column)"
        raise ProblemgenError(f"{path}, line 1: no student id column; expected {expected} (found {header_row})")
    return column


def roster_rows(path: Path) -> list[list[str]]:
    """The rows of a roster file (header first), read with the size cap and delimiter detection."""
    text = read_text(path, MAX_ROSTER_BYTES, "roster")
    try:
        first = text.split("\n", 1)[0]
        delimiter = max(ROSTER_DELIMITERS, key=first.count) if any(d in first for d in ROSTER_DELIMITERS) else ","
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error as exc:
        raise ProblemgenError(f"{path}: roster is not a UTF-8 CSV file ({exc})") from exc
    if not rows:
        raise ProblemgenError(f"{path}: roster is empty")
    return rows


def _name_columns(header: list[str]) -> tuple[int, ...]:
    """Columns whose cells, joined by a space, make the printed name (none: no name column)."""
    full = next((header.index(name) for name in ROSTER_NAME_COLUMNS if name in header), None)
    if full is not None:
        return (full,)
    parts = [next((header.index(n) for n in names if n in header), None)
             for names in (("first name", "first_name", "given name"), ("last name", "last_name", "surname"))]
    return tuple(i for i in parts if i is not None)


def _roster_students(path: Path, rows: list[list[str]], column: int, names: tuple[int, ...]) -> list[RosterStudent]:
    students: list[RosterStudent] = []
    seen: dict[str, int] = {}
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        student = row[column].strip() if column < len(row) else ""
        if not student:
            raise ProblemgenError(f"{path}, line {line}: empty student id")
        check_student_id(student, f"{path}, line {line}")
        folded = student.lower()
        if folded in seen:
            raise ProblemgenError(f"{path}, line {line}: student id {student!r} repeats line {seen[folded]}")
        seen[folded] = line
        name = " ".join(row[i].strip() for i in names if i < len(row) and row[i].strip())
        students.append(RosterStudent(student, _printable_name(name)))
    if not students:
        raise ProblemgenError(f"{path}: roster lists no students")
    if len(students) > MAX_STUDENTS:
        raise ProblemgenError(f"{path}: roster lists {len(students)} students; at most {MAX_STUDENTS}")
    return students


def _printable_name(name: str) -> str:
    """A roster name fit for a handout header: control characters dropped, at most 80 characters."""
    return "".join(c for c in " ".join(name.split()) if c.isprintable())[:80]


def roster_column(path: str | Path, column: str, id_column: str | None = None, *,
                  used_for: str) -> dict[str, tuple[int, str]]:
    """Roster id -> (line, the row's value in ``column``, trimmed) for every row with an id, in file order.

    ``column`` is what ``--match-by`` names: the platform's identity of each student. A roster without it is
    one error naming the columns found and the closest; ``used_for`` says what the column was wanted for
    ("to match submitters by"). What a value must look like is the caller's to say.
    """
    wanted = column.strip().lower()
    return {student: (line, cells[wanted])
            for student, (line, cells) in roster_records(path, id_column, (column, used_for)).items()}


def roster_records(path: str | Path, id_column: str | None = None,
                   required: tuple[str, str] | None = None) -> dict[str, tuple[int, dict[str, str]]]:
    """Roster id -> (line, {column (lower case): cell, trimmed}) for every row with an id, in file order; a
    short row's missing cells are empty. A roster id given twice (ignoring case) is an error.

    ``required``: (a column, what it is wanted for): a roster without that column is one error naming the
    columns found and the closest (see :func:`roster_column`).
    """
    path = Path(path)
    rows = roster_rows(path)
    header = [h.strip().lower() for h in rows[0]]
    id_index = roster_id_column(path, rows[0], id_column)
    if required and required[0].strip().lower() not in header:
        column, used_for = required
        raise ProblemgenError(f"{path}, line 1: no column {column!r} {used_for}"
                              f"{suggest(column.strip().lower(), header)} (found {', '.join(header)}; name "
                              "another with --match-by)")
    records, seen = {}, {}
    for line, row in enumerate(rows[1:], start=2):
        cells = [c.strip() for c in row] + [""] * (len(header) - len(row))
        student = cells[id_index]
        if not student:
            continue
        other = seen.setdefault(student.lower(), line)
        if other != line:
            raise ProblemgenError(f"{path}, line {line}: student id {student!r} repeats line {other}")
        records[student] = (line, dict(zip(header, cells)))
    return records
