"""Moodle: a class run's grades as a file for Moodle's gradebook import (Grades > Import > CSV file).

Moodle's CSV import reads a header row, then lets the instructor map the columns: one column identifies
the user (*Map from*, matched to the user field chosen in *Map to*: username, ID number, email address or
Moodle's internal user id), each other column is ignored or goes to a grade item. The file therefore
holds two columns: the roster column the platform knows students by (``--match-by``; by default the
first of ``email``, ``username``, ``idnumber``/``id number`` the roster has) and the grade, headed with
the assignment's name. Moodle aborts the whole import when one row names no Moodle user or has an empty
identity (``0`` counts as empty there), so such students are left out with the reason, as are values a
spreadsheet guard would alter (a leading ``=``, ``+``, ``-``, ``@``) or that hold a ``"`` (Moodle's CSV
reader treats a backslash before a quote inside quotes as an escape).

Grades are points scaled to the grade item's maximum (``--points-possible``); Moodle refuses values above
100 unless the site allows unlimited grades, which the message then says.
"""

from __future__ import annotations

from pathlib import Path

from problemgen.documents.rosters import roster_rows
from problemgen.errors import ProblemgenError
from problemgen.exports import Export, Option, common
from problemgen.exports import grades_back as back

IDENTITY_COLUMNS = ("email", "username", "idnumber", "id number", "id_number")
"""Roster columns that hold a user field Moodle can map users by, in the order one is chosen by default."""
MOODLE_GRADE_LIMIT = 100


def moodle_identity(value: str) -> str:
    """A roster cell as Moodle's import would find a user by it, or ValueError saying why it cannot."""
    if value in ("", "0"):
        raise ValueError("no Moodle identity in the roster (Moodle stops the whole import at an empty one)")
    if not value.isprintable() or '"' in value or back.cell(value) != value:
        raise ValueError(f"{value!r} is not written as it is (a formula sign, a quote or a control character "
                         "first), so Moodle would not find the user")
    return value


def identity_column(roster: Path, match_by: str | None) -> str:
    """``match_by``, else the first roster column that holds a Moodle user field."""
    if match_by:
        return match_by
    header = [h.strip().lower() for h in roster_rows(roster)[0]]
    found = next((c for c in IDENTITY_COLUMNS if c in header), None)
    if found is None:
        raise ProblemgenError(f"{roster}, line 1: no column of Moodle identities ({', '.join(IDENTITY_COLUMNS[:3])}); "
                              "name one with --match-by")
    return found


def build(gradebook: Path, roster: Path, assignment: str, output: Path, match_by: str | None = None,
          id_column: str | None = None, points_possible: str | None = None, missing_zero: bool = False) -> str:
    """Write the Moodle grade import file; returns the message for the terminal."""
    name = (assignment or "").strip()
    if not name or not name.isprintable():
        raise ProblemgenError(f"--assignment {assignment!r}: expected the grade item's name on one line")
    column = identity_column(Path(roster), match_by)
    grades = back.grades_for(gradebook, roster, column, id_column, moodle_identity, points_possible, missing_zero)
    table = [[back.cell(column), back.cell(name)], *([s.platform_id, grade] for s, grade in grades.written)]
    back.write_csv(output, table, {"gradebook": gradebook, "roster": roster})
    head = (f"wrote {output}: {back.count(len(grades.written), 'grade')} out of {back.number(grades.points_possible)} points; "
            f"import it in Moodle: Grades > Import > CSV file, then map from {column!r} to the user field it holds "
            f"and {name!r} to the grade item")
    if grades.points_possible > MOODLE_GRADE_LIMIT:
        head += (f"\nMoodle refuses grades above {MOODLE_GRADE_LIMIT} unless the site allows unlimited grades "
                 "(Site administration > Grades > General settings)")
    return back.summary(grades, head, "Moodle")


EXPORT = Export(
    name="moodle-grades",
    summary="A class run's grades as a CSV file for Moodle's grade import.",
    help=f"""Write the grades of a class run (its gradebook.csv) as a CSV file for Moodle's grade import.

    Two columns: the roster column Moodle knows students by (--match-by; default the first of email,
    username, idnumber the roster has) and the grade, headed --assignment, the points scaled to
    --points-possible (the grade item's maximum grade; default the class's maximum points). Import it in
    Moodle: Grades > Import > CSV file, map from that column to the user field it holds (email address,
    username or ID number) and the grade column to the grade item.
{back.LEFT_OUT_HELP.format(platform="Moodle")}
    \b
    Example:
      problemgen export moodle-grades --gradebook grades/gradebook.csv --roster roster.csv \\
          --assignment "Homework 3" --points-possible 100 -o grades/moodle-import.csv
      # grades/ is the output of a class run, such as:
      problemgen grade moodle_download/ --variants class/ -o grades/ --layout moodle --roster roster.csv
    """,
    options=(
        back.GRADEBOOK,
        Option("--roster", "roster", "The roster CSV: the id column and a column Moodle knows users by.", kind="file",
               required=True),
        Option("--assignment", "assignment", "The grade column's name (the grade item's name in Moodle).",
               required=True),
        Option("--match-by", "match_by", "The roster column of Moodle identities (default: email, username or "
               "idnumber, the first the roster has)."),
        common.ID_COLUMN, back.POINTS_POSSIBLE, back.MISSING_ZERO, common.OUTPUT_FILE,
    ),
    build=build,
)
