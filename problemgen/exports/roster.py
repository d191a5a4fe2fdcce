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

from problemgen.documents.rosters import roster_column
from problemgen.errors import ProblemgenError
from problemgen.wording import counted, listed


def normalise(value: object) -> str:
    """A roster value or a platform identity as the two are compared: trimmed, without the ``@`` a roster may
    write before a GitHub login (``@ana``, as ``grade --layout classroom`` reads it too), ignoring case."""
    return str(value).strip().removeprefix("@").casefold()


def match_map(path: str | Path, match_by: str, students: list[str], id_column: str | None = None) -> dict[str, str]:
    """{normalised ``match_by`` value: student id} for every roster row whose id is a class student.

    The roster is read as every command reads one (:func:`problemgen.documents.rosters.roster_column`).
    Raises when the match column is missing, a class student has no row or an empty value, or a value
    belongs to two students.
    """
    path, class_students = Path(path), set(students)
    mapping: dict[str, str] = {}
    for student, (line, raw) in roster_column(path, match_by, id_column, used_for="to match submitters by").items():
        if student not in class_students:
            continue
        value = normalise(raw)
        if not value:
            raise ProblemgenError(f"{path}, line {line}: student {student!r} has no {match_by!r}")
        if value in mapping and mapping[value] != student:
            raise ProblemgenError(f"{path}, line {line}: {match_by} {value!r} also belongs to {mapping[value]!r}")
        mapping[value] = student
    missing = sorted(class_students - set(mapping.values()))
    if missing:
        raise ProblemgenError(f"{path}: the roster lacks {counted(len(missing), 'student')} of the class: "
                              f"{listed(missing)}")
    return dict(sorted(mapping.items()))
