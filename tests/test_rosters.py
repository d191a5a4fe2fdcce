"""Roster CSVs, read the same way by every command (``problemgen.documents.rosters``)."""

from __future__ import annotations

import pytest

from problemgen.documents import rosters
from problemgen.errors import ProblemgenError


@pytest.mark.parametrize(
    "content, message",
    [
        ("name,email\nAda,a@x\n", "line 1: no student id column"),
        ("id\ns1\n../evil\n", "line 3: student id '../evil' is not a safe directory name"),
        ("id\ns1\nCON\n", "line 3: student id 'CON' is not a safe directory name"),
        ("id\nAda\nada\n", "line 3: student id 'ada' repeats line 2"),
        ("id,name\n,Ada\n", "line 2: empty student id"),
        ("id\n", "roster lists no students"),
        ("", "roster is empty"),
    ],
)
def test_roster_problems_name_the_line(tmp_path, content, message):
    path = tmp_path / "roster.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ProblemgenError, match=message.replace(".", r"\.")):
        rosters.read_roster(path)


def test_roster_prefers_the_id_column_skips_blank_lines_and_tolerates_a_bom(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_bytes("\ufeffstudent,ID\nAda Lovelace,a1\n\n,\nAlan Turing,a2\n".encode())
    assert rosters.read_roster(path) == ["a1", "a2"]


def test_rosters_take_a_named_id_column_gradescope_sid_and_semicolons(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("Full Name,SID,Email\nAda Lovelace,a1,a@x\n", encoding="utf-8")
    assert rosters.read_roster_entries(path) == [rosters.RosterStudent("a1", "Ada Lovelace")]
    path.write_text("Nachname;Vorname;Matrikel\nLovelace;Ada;m1\n", encoding="utf-8")
    assert rosters.read_roster(path, id_column="Matrikel") == ["m1"]
    path.write_text("First Name;Last Name;id\nAlan;Turing;t1\n", encoding="utf-8")
    assert rosters.read_roster_entries(path) == [rosters.RosterStudent("t1", "Alan Turing")]
    with pytest.raises(ProblemgenError, match="expected the column 'matrikel'"):
        rosters.read_roster(path, id_column="matrikel")


def test_every_reader_of_a_match_column_reads_the_roster_alike(tmp_path):
    """The exports that identify submitters and grade --layout each read the --match-by column their own way:
    only one named the closest column for a misspelt one, only one refused an id the roster lists twice, and
    the other said "1 student(s) of the class are not in the roster"."""
    from problemgen.classes import layouts
    from problemgen.exports.roster import match_map

    path = tmp_path / "roster.csv"
    path.write_text("id,canvas_id,e-mail\nana,4101,a@x\nbob,4102,b@x\n", encoding="utf-8")
    canvas = layouts.make_layout("canvas", path, "email")
    readers = {"export": lambda: match_map(path, "email", ["ana", "bob"]),
               "grade --layout": lambda: layouts.identities(canvas, ["ana", "bob"])}
    for read in readers.values():
        with pytest.raises(ProblemgenError, match=r"line 1: no column 'email' to match .* — did you mean 'e-mail'\?"):
            read()
    path.write_text("id,email\nana,a@x\nAna,b@x\n", encoding="utf-8")
    for read in readers.values():
        with pytest.raises(ProblemgenError, match="line 3: student id 'Ana' repeats line 2"):
            read()
    path.write_text("id,email\nana,a@x\n", encoding="utf-8")
    with pytest.raises(ProblemgenError, match="roster.csv: the roster lacks 1 student of the class: bob$"):
        match_map(path, "email", ["ana", "bob"])


def test_a_github_login_written_with_its_at_sign_matches_in_exports_as_in_the_classroom_layout(tmp_path):
    """`@ana` in the roster's github column: grade --layout classroom reads it as ana, and so must the grader
    an export ships, or a roster that grades the download gives an export that never matches ana."""
    from problemgen.exports.autograde import identify
    from problemgen.exports.roster import match_map

    roster = tmp_path / "roster.csv"
    roster.write_text("id,github\nana,@Ana-B\nbo,bo\n", encoding="utf-8")
    config = {"match": match_map(roster, "github", ["ana", "bo"])}
    assert identify(config, ["ana-b", "bo"]) == ["ana", "bo"]


def test_a_5000_student_course_with_staff_accounts_is_read_and_the_cap_is_named_beyond_it(tmp_path):
    """The cap was exactly 5,000 students: a course of that size with a few test accounts was refused."""
    path = tmp_path / "roster.csv"
    path.write_text("id,name,email\n" + "".join(f"s{i},Student {i},s{i}@uni.example\n" for i in range(5010)))
    assert len(rosters.read_roster(path)) == 5010
    path.write_text("id\n" + "".join(f"s{i}\n" for i in range(rosters.MAX_STUDENTS + 1)))
    with pytest.raises(ProblemgenError, match=f"roster lists {rosters.MAX_STUDENTS + 1} students; at most 10000"):
        rosters.read_roster(path)
