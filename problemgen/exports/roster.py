"""Who is submitting: map a platform's user (an e-mail, a student id, a GitHub login) to a roster id.

A platform knows its users by its own fields; the class set knows students by the roster's id column.
The roster CSV that made the class set is read once more at export time, with one more column — the
one named by ``--match-by`` (``email`` by default) — and the export carries only the resulting map
(normalised value -> student id). Values are compared case-folded and trimmed (e-mail addresses and
logins are case-insensitive in practice); two students with the same value are refused, since the
platform could not tell them apart.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from problemgen.documents.worksheet import MAX_ROSTER_BYTES, ROSTER_ID_COLUMNS
from problemgen.errors import ProblemgenError


def normalise(value: object) -> str:
    return str(value).strip().casefold()


def read_rows(path: str | Path) -> tuple[list[str], list[list[str]]]:
    """(lower-cased header, data rows) of a UTF-8 roster CSV (``,`` or ``;`` separated)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ProblemgenError(f"{path}: cannot read roster ({exc.strerror})") from exc
    if len(raw) > MAX_ROSTER_BYTES:
        raise ProblemgenError(f"{path}: roster larger than {MAX_ROSTER_BYTES} bytes")
    try:
        text = raw.decode("utf-8-sig")
        first = text.split("\n", 1)[0]
        delimiter = ";" if first.count(";") > first.count(",") else ","
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ProblemgenError(f"{path}: roster is not a UTF-8 CSV file ({exc})") from exc
    if not rows:
        raise ProblemgenError(f"{path}: roster is empty")
    return [h.strip().lower() for h in rows[0]], rows[1:]


def match_map(path: str | Path, match_by: str, students: list[str]) -> dict[str, str]:
    """{normalised ``match_by`` value: student id} for every roster row whose id is a class student.

    Raises when the column is missing, a class student has no row or an empty value, or a value repeats.
    """
    header, rows = read_rows(path)
    column = match_by.strip().lower()
    id_column = next((header.index(n) for n in ROSTER_ID_COLUMNS if n in header), None)
    if id_column is None:
        raise ProblemgenError(f"{path}, line 1: no student id column; name one of {', '.join(ROSTER_ID_COLUMNS)}")
    if column not in header:
        raise ProblemgenError(f"{path}, line 1: no column {match_by!r} to match submitters by (found {', '.join(header)})")
    value_column, wanted = header.index(column), set(students)
    mapping: dict[str, str] = {}
    for line, row in enumerate(rows, start=2):
        student = row[id_column].strip() if id_column < len(row) else ""
        if student not in wanted:
            continue
        value = normalise(row[value_column]) if value_column < len(row) else ""
        if not value:
            raise ProblemgenError(f"{path}, line {line}: student {student!r} has no {match_by!r}")
        if value in mapping and mapping[value] != student:
            raise ProblemgenError(f"{path}, line {line}: {match_by} {value!r} also belongs to {mapping[value]!r}")
        mapping[value] = student
    missing = sorted(wanted - set(mapping.values()))
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        raise ProblemgenError(f"{path}: {len(missing)} student(s) of the class are not in the roster: {shown}")
    return dict(sorted(mapping.items()))
