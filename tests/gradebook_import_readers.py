"""Small models of the two gradebook importers the grade exports feed, written from how each reads a file.

They read the exported *file* back (never the data that wrote it) and either return what the platform
would import or raise where the platform would refuse the file.

Canvas (Grades > Import): the upload is read as UTF-8, byte-order mark and all; the field separator is
``;`` only when the first three physical lines split into more, and equally many, fields by ``;`` than
by ``,``; lines of nothing but separators and spaces are skipped; a field that is only digits, ``.``
and ``,`` (and a trailing ``%``) has its last ``.`` or ``,`` read as the decimal point and the others
dropped. The header row's first cell must contain ``Student`` and its second ``ID``; the identity
columns end at a cell containing ``Section`` (after ``SIS User ID`` and ``SIS Login ID`` when present);
the other headers are assignments, except those containing the name of a total (``Current Score``…),
which are dropped; ``Title (digits)`` names the assignment of that id, anything else a new assignment. A
row whose first cell contains ``Points Possible`` gives the points possible; a row of blanks and
``Muted`` is skipped; any other row is a student, found by the ``ID`` cell.

Moodle (Grades > Import > CSV file): the byte-order mark is trimmed, line ends made ``\\n``, the text
trimmed, and rows read with the chosen separator and ``"`` (PHP's reader also treats ``\\"`` inside
quotes as an escape, so a file holding one is refused here). Every row must have the header's number of
fields. For each data row of more than one field: the values are trimmed; the *Map from* value must be
non-empty (and not ``0``, which PHP calls empty) and name a user, else the whole import stops; a grade
of ``""`` or ``-`` is "no grade", any other must be a number, at most 100 unless the site allows more.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

CANVAS_TOTALS = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
                           "Override Score|Override Grade|Override Status")


class Refused(Exception):
    """The platform would refuse the file (or stop the import) here."""


@dataclass
class CanvasImport:
    assignments: list[tuple[str, str | None]]  # (title, id or None for a new assignment)
    points_possible: dict[int, str] = field(default_factory=dict)  # column -> points
    students: list[dict] = field(default_factory=list)  # {"id", "name", "sis_user_id", "sis_login_id", "section", "grades": {column: grade}}

    def grades_by_id(self, assignment_id: str) -> dict[str, str]:
        column = next(i for i, (_, aid) in enumerate(self.assignments) if aid == assignment_id)
        return {s["id"]: s["grades"][column] for s in self.students}


def _canvas_number(value: str) -> str:
    if re.fullmatch(r"-?[0-9.,]+%?", value):
        parts = re.split(r"[,.]", value)
        last = parts.pop()
        return "".join(parts) + "." + last if parts else last
    return value


def _canvas_separator(text: str) -> str:
    counts = {}
    for separator in (";", ","):
        counts[separator] = 0
        try:
            sizes = {len(next(csv.reader([line], delimiter=separator, strict=True), [])) for line in
                     text.splitlines(keepends=True)[:3]}
        except csv.Error:
            continue
        if len(sizes) == 1:
            counts[separator] = sizes.pop()
    return ";" if counts[";"] > counts[","] else ","


def read_canvas(data: bytes) -> CanvasImport:
    text = data.decode("utf-8")
    separator = _canvas_separator(text)
    rows = [[_canvas_number(c) for c in row] for row in csv.reader(io.StringIO(text), delimiter=separator, strict=True)
            if not re.fullmatch(r"[;, ]*", separator.join(row))]
    header = rows[0]
    if not (len(header) > 3 and "Student" in header[0] and "ID" in header[1]):
        raise Refused("invalid header row")
    width, sis = 3, {}
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        width, sis = 4, {"sis_login_id": 2}
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        width, sis = 5, {"sis_user_id": 2, "sis_login_id": 3}
    if "Section" not in header[width - 1]:
        raise Refused("invalid header row")
    columns = [i for i in range(width, len(header)) if not CANVAS_TOTALS.search(header[i])]
    titles = [re.fullmatch(r"(.*)\s\((\d+)\)", header[i]) for i in columns]
    result = CanvasImport([(m[1], m[2]) if m else (header[i], None) for m, i in zip(titles, columns)])
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            result.points_possible = {n: row[i] for n, i in enumerate(columns)}
        elif all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c, re.IGNORECASE) for c in row):
            continue
        else:
            result.students.append({"name": row[0], "id": row[1], "section": row[width - 1],
                                    **{k: row[i] for k, i in sis.items()},
                                    "grades": {n: row[i].strip() for n, i in enumerate(columns)}})
    return result


def read_moodle(data: bytes, map_from: str, grade_column: str, users: dict[str, str], separator: str = ",",
                unlimited_grades: bool = False) -> dict[str, float | None]:
    """{user: grade or None} as Moodle would import it, ``users`` mapping the *Map from* values to users."""
    text = data.decode("utf-8").removeprefix("\ufeff")
    text = re.sub(r"\r\n?", "\n", text).strip()
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=separator) if row]
    if re.search(r'\\"', text):
        raise Refused("a backslash before a quote, which PHP's reader takes for an escape")
    header = [h.strip() for h in rows[0]]
    if any(len(row) != len(header) for row in rows):
        raise Refused("csvweirdcolumns")
    who, grade_at = header.index(map_from), header.index(grade_column)
    grades: dict[str, float | None] = {}
    for row in rows[1:]:
        if len(row) <= 1:
            continue
        values = [v.strip() for v in row]
        if values[who] in ("", "0") or values[who] not in users:
            raise Refused(f"user mapping error: no user {values[who]!r}")
        grades[users[values[who]]] = _moodle_grade(values[grade_at], unlimited_grades)
    return grades


def _moodle_grade(value: str, unlimited: bool) -> float | None:
    if value in ("", "-"):
        return None
    try:
        grade = float(value)
    except ValueError:
        raise Refused(f"badgrade {value!r}") from None
    if grade > 100 and not unlimited:
        raise Refused("gradevaluetoobig")
    return grade
