"""Canvas: a class run's grades as the CSV file Canvas's Gradebook imports (Grades > Import).

The file has the columns of Canvas's own gradebook export: ``Student``, ``ID`` (the Canvas user id),
``SIS User ID``, ``SIS Login ID``, ``Section``, then one assignment column headed ``<name> (<assignment
id>)``, and a second row ``Points Possible``. Canvas's importer reads the header this way: the first cell
names the student, the second the id, the identity columns end with ``Section``, and an assignment header
whose title ends in `` (<digits>)`` is that assignment; any other header is taken as a *new* assignment,
and one containing ``Current Score``, ``Final Grade`` or another total's name is dropped as a total. So the
assignment id is required and such names are refused. A student row is found by its Canvas user id
(the SIS columns and name only when no id matches); a student the file does not list keeps their grade.

Which rows get a grade, and why the others get none, is :mod:`exports.grades_back`'s decision; the grade
is the points scaled to the assignment's points possible, since Canvas imports points.
"""

from __future__ import annotations

import re
from pathlib import Path

from problemgen.classes.layouts import canvas_user_id
from problemgen.errors import ProblemgenError
from problemgen.exports import Export, Option, common
from problemgen.exports import grades_back as back

IDENTITY_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
TOTALS = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points", "Final Grade",
          "Override Score", "Override Grade", "Override Status")
"""Canvas drops an assignment column whose header contains one of these (they name its total columns)."""
MAX_TITLE = 255


def assignment_header(name: str, assignment_id: str) -> str:
    """``<name> (<id>)``, the header Canvas matches to the assignment by its id; one error for a bad pair."""
    name, assignment_id = (name or "").strip(), (assignment_id or "").strip()
    if not (assignment_id.isascii() and assignment_id.isdigit()):
        raise ProblemgenError(f"--assignment-id {assignment_id!r}: expected the digits at the end of the assignment's "
                              "address (…/assignments/12345)")
    if not name or not name.isprintable() or len(name) > MAX_TITLE:
        raise ProblemgenError(f"--assignment {name!r}: expected the assignment's name on one line, at most "
                              f"{MAX_TITLE} characters")
    total = next((t for t in TOTALS if re.search(re.escape(t), name, re.IGNORECASE)), None)
    if total:
        raise ProblemgenError(f"--assignment {name!r}: Canvas takes a column whose name contains {total!r} for a "
                              "total and ignores it; rename the assignment")
    return back.cell(f"{name} ({assignment_id})")


def rows(grades: back.Grades, header: str) -> list[list[str]]:
    """The file's rows: header, points possible, one row per student with a grade."""
    table = [[*IDENTITY_COLUMNS, header], ["    Points Possible", "", "", "", "", back.number(grades.points_possible)]]
    for student, grade in grades.written:
        extra = [back.cell(_roster_cell(student, column)) for column in IDENTITY_COLUMNS[2:]]
        table.append([back.cell(student.name or student.id), student.platform_id, *extra, grade])
    return table


def _roster_cell(student: back.Student, column: str) -> str:
    """The roster's own ``SIS User ID``/``sis_user_id``… cell (a roster taken from Canvas's export), else ""."""
    for name in (column.lower(), column.lower().replace(" ", "_")):
        if student.cells.get(name):
            return student.cells[name]
    return ""


def build(gradebook: Path, roster: Path, assignment: str, assignment_id: str, output: Path,
          match_by: str = "canvas_id", id_column: str | None = None, points_possible: str | None = None,
          missing_zero: bool = False) -> str:
    """Write Canvas's gradebook import file; returns the message for the terminal."""
    header = assignment_header(assignment, assignment_id)
    grades = back.grades_for(gradebook, roster, match_by, id_column, canvas_user_id, points_possible, missing_zero)
    back.write_csv(output, rows(grades, header), {"gradebook": gradebook, "roster": roster})
    head = (f"wrote {output}: {back.count(len(grades.written), 'grade')} for Canvas assignment {assignment_id}, out of "
            f"{back.number(grades.points_possible)} points; import it in Canvas: Grades > Import, choose the file, "
            "check the changes shown, Upload")
    return back.summary(grades, head, "Canvas")


EXPORT = Export(
    name="canvas-grades",
    summary="A class run's grades as Canvas's gradebook import CSV.",
    help=f"""Write the grades of a class run (its gradebook.csv) as the CSV file Canvas's gradebook imports.

    Each student is written under their Canvas user id, from the roster column --match-by (default
    canvas_id: the ID column of Canvas's own gradebook export, as `grade --layout canvas` reads it). The
    grade is the points scaled to --points-possible (the assignment's points on Canvas; default the
    class's maximum points). Import it in Canvas: Grades > Import, choose the file, check the changes.
{back.LEFT_OUT_HELP.format(platform="Canvas")}
    \b
    Example:
      problemgen export canvas-grades --gradebook grades/gradebook.csv --roster roster.csv \\
          --assignment "Homework 3" --assignment-id 48213 -o grades/canvas-import.csv
      # grades/ is the output of a class run, such as:
      problemgen grade canvas_download/ --variants class/ -o grades/ --layout canvas --roster roster.csv
    """,
    options=(
        back.GRADEBOOK,
        Option("--roster", "roster", "The roster CSV: the id column and the column of Canvas user ids.", kind="file",
               required=True),
        Option("--assignment", "assignment", "The assignment's name on Canvas.", required=True),
        Option("--assignment-id", "assignment_id", "The assignment's id on Canvas (the digits ending its address).",
               required=True),
        Option("--match-by", "match_by", "The roster column of Canvas user ids.", default="canvas_id"),
        common.ID_COLUMN, back.POINTS_POSSIBLE, back.MISSING_ZERO, common.OUTPUT_FILE,
    ),
    build=build,
)
