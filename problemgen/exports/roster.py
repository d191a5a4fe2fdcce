"""Who is submitting: map a platform's user (an e-mail, a student id, a GitHub login) to a roster id.

A platform knows its users by its own fields; the class set knows students by the roster's id column.
The roster CSV that made the class set is read once more at export time, with one more column — the
one named by ``--match-by`` (``email`` by default) — and the export carries only the resulting map
(normalised value -> student id). Values are compared case-folded and trimmed (e-mail addresses and
logins are case-insensitive in practice); two students with the same value are refused, since the
platform could not tell them apart.
"""

from __future__ import annotations

from pathlib import Path

from problemgen.documents.worksheet import roster_id_column, roster_rows
from problemgen.errors import ProblemgenError


def normalise(value: object) -> str:
    return str(value).strip().casefold()


def match_map(path: str | Path, match_by: str, students: list[str], id_column: str | None = None) -> dict[str, str]:
    """{normalised ``match_by`` value: student id} for every roster row whose id is a class student.

    The id column is found as ``problemgen worksheet`` finds it (``id_column``, else ``id``,
    ``student_id``…). Raises when the match column is missing, a class student has no row or an empty
    value, or a value belongs to two students.
    """
    path = Path(path)
    rows = roster_rows(path)
    header = [h.strip().lower() for h in rows[0]]
    id_index = roster_id_column(path, rows[0], id_column)
    column = match_by.strip().lower()
    if column not in header:
        raise ProblemgenError(f"{path}, line 1: no column {match_by!r} to match submitters by (found {', '.join(header)})")
    value_index, class_students = header.index(column), set(students)
    mapping: dict[str, str] = {}
    for line, row in enumerate(rows[1:], start=2):
        student = row[id_index].strip() if id_index < len(row) else ""
        if student not in class_students:
            continue
        value = normalise(row[value_index]) if value_index < len(row) else ""
        if not value:
            raise ProblemgenError(f"{path}, line {line}: student {student!r} has no {match_by!r}")
        if value in mapping and mapping[value] != student:
            raise ProblemgenError(f"{path}, line {line}: {match_by} {value!r} also belongs to {mapping[value]!r}")
        mapping[value] = student
    missing = sorted(class_students - set(mapping.values()))
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        raise ProblemgenError(f"{path}: {len(missing)} student(s) of the class are not in the roster: {shown}")
    return dict(sorted(mapping.items()))
