"""Submission folders as course platforms hand them out, graded under the roster's ids.

In the ``plain`` layout (the default, :mod:`classes.entries`) an entry's name is the student's roster id.
A platform's bulk download names entries its own way instead; this module reads who each entry belongs to
out of that name — the platform's own identity of the student — and maps it to a roster id through one
column of the roster CSV (``--match-by``; the id column is found as ``problemgen worksheet`` finds it):

=========  ==============================================================  =====================  ==============
layout     entry name                                                      identity               roster column
=========  ==============================================================  =====================  ==============
canvas     ``<sortable name>[_LATE]_<user id>_<file id>_<file name>``,     Canvas user id         ``canvas_id``
           all in one folder (a folder of that name is read too)
moodle     ``<full name>_<participant id>_assignsubmission_file`` (a       full name, or the      the roster's
           folder; older versions end it in ``_``) or                      participant id where   name
           ``<full name>_<participant id>_assignsubmission_file_<file>``   the column holds
                                                                           numbers
classroom  ``<assignment prefix>-<login>``: one cloned repository each     GitHub login           ``github``
=========  ==============================================================  =====================  ==============

A GitHub login may hold ``-``, so a repository name can end in two roster logins (``hw1-x-bob``: ``x-bob``
and ``bob``); it is the longest one's, by the rule the grader shipped to GitHub follows too
(:mod:`classes.logins`), and the summary names every such entry, the logins it fits and the one taken.

Canvas drops everything but letters, digits and ``_`` from the name part, and a user name can hold
``_12_``-like runs only collapsed, so the user id is found at every place the name reads
``_<digits>_<digits>_``. Moodle writes spaces for the underscores of a full name and drops
``& < > " ` | ' : \\ /``; names are compared the same way, ignoring case and Unicode normal form (a folder
unzipped on a Mac spells ``é`` in two code points). A Moodle participant id is per assignment (the
assignment's grading worksheet lists them), a full name is stable but two students may share one.

Never a guess. Every entry is first vetted exactly as in a plain folder (:func:`entries.examine`: ``lstat``
only; links, special files, hidden and unreadable names refused) and files are opened later by the same
readers and size caps as always. An entry whose name fits no roster student, or more than one (the name
saying one student and the participant id another, two students of one full name), is a refused row saying
why, and belongs to nobody (a GitHub Classroom name that ends in two logins is the longest login's, above).
Two submissions of one student are a
``duplicate-submission``: a Canvas or Moodle download holds only the latest attempt of each student, so two
files of one student are two files of that attempt (or two downloads mixed), and the platform does not say
which one counts.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Mapping

from problemgen.classes import entries
from problemgen.classes.entries import Entry
from problemgen.classes.logins import login_index, repository_login
from problemgen.classes.rows import DUPLICATE
from problemgen.documents.rosters import read_roster, read_roster_entries, roster_column
from problemgen.errors import ProblemgenError
from problemgen.wording import counted, listed

PLAIN = "plain"
LAYOUTS = (PLAIN, "canvas", "moodle", "classroom")
DEFAULT_COLUMN = {"canvas": "canvas_id", "classroom": "github", "moodle": "name"}
"""The roster column each layout matches by when ``--match-by`` names none (Moodle: the roster's name,
from ``name``/``full name`` or ``first name`` + ``last name``, as the handouts print it)."""


@dataclass(frozen=True)
class Layout:
    """How to read a platform's download: the layout's name, the roster CSV and its two columns."""

    name: str
    roster: Path
    match_by: str | None = None
    id_column: str | None = None

    @property
    def column(self) -> str:
        return self.match_by or DEFAULT_COLUMN[self.name]


def make_layout(name: str | None, roster: Path | None, match_by: str | None = None,
                id_column: str | None = None) -> Layout | None:
    """The layout the options ask for (None: plain); a ProblemgenError for options that do not fit."""
    if name in (None, PLAIN):
        if roster is not None or match_by is not None or id_column is not None:
            raise ProblemgenError("--roster, --match-by and --id-column read a platform's download: give "
                                  "--layout canvas, moodle or classroom")
        return None
    if name not in LAYOUTS:
        raise ProblemgenError(f"--layout {name!r}: expected one of {', '.join(LAYOUTS)}")
    if roster is None:
        raise ProblemgenError(f"--layout {name} needs --roster roster.csv, with the column that maps the platform's "
                              f"students to roster ids (--match-by, default {DEFAULT_COLUMN[name]})")
    return Layout(name, Path(roster), match_by, id_column)


# --------------------------------------------------------------------------- reading names


@dataclass(frozen=True)
class Candidate:
    """One way to read an entry's name: the identity (as :func:`identities` keys it) and the name the
    student gave the file (None for a folder)."""

    key: str
    file_name: str | None
    late: bool = False


@dataclass(frozen=True)
class Reading:
    """What an entry's name says: the ways to read it, how to name its identity in a message, or why
    it is no submission at all (``reason``); ``note``: a line for the summary about how it was read."""

    candidates: tuple[Candidate, ...] = ()
    what: str = ""
    reason: str = ""
    note: str = ""


_CANVAS_IDS = re.compile(r"(?=_([0-9]+)_([0-9]+)_)")
_CANVAS_ANONYMOUS = re.compile(r"(?:late_)?anon_", re.IGNORECASE)
_CANVAS_TEXT = re.compile(r".+_[0-9]+_(?:text|link)\.html", re.IGNORECASE)
_DIGIT_RUN = re.compile(r"_[0-9]+_")


def _number(digits: str) -> str:
    """A platform's numeric id as one spelling: ``04101`` (a spreadsheet's or a typist's) is user 4101, so
    two roster rows reading 4101 and 04101 are one id that two students share, never two ids."""
    return str(int(digits))


def read_canvas(name: str, is_dir: bool | None) -> Reading:
    """``<name>[_LATE]_<user id>_<file id>_<file name>``: every place the name can be split so.

    Canvas collapses every ``_<digits>_`` of a user name, so a split whose name part still holds one is
    no reading: the user id is never taken from inside the file name a student chose. An anonymous
    download (``anon_<anonymous id>_…``) names nobody, even where the anonymous id is all digits.
    """
    if _CANVAS_ANONYMOUS.match(name):
        return Reading(reason="anonymous Canvas download (no user id in the name): download the submissions "
                              "with anonymous grading off")
    candidates = []
    for match in _CANVAS_IDS.finditer(name):  # a zero-width match at each "_<digits>_<digits>_"
        user, file_id = match.groups()
        prefix, rest = name[:match.start()], name[match.start() + len(user) + len(file_id) + 3:]
        late = prefix.lower().endswith("_late")
        user_name = prefix[:-5] if late else prefix
        if user_name and rest and not _DIGIT_RUN.search(user_name):
            candidates.append(Candidate(_number(user), None if is_dir else rest, late))
    if candidates:
        return Reading(tuple(candidates), "Canvas user id " + " or ".join(dict.fromkeys(c.key for c in candidates)))
    if _CANVAS_TEXT.fullmatch(name):
        return Reading(reason="a Canvas text or URL entry, not an uploaded file")
    return Reading(reason="not a Canvas download name (<name>_<user id>_<file id>_<file name>)")


_MOODLE = re.compile(r"(?P<name>[^_]+)_(?P<pid>[0-9]+)_assignsubmission_(?P<plugin>[a-z]+)(?P<tail>_.*)?")


def moodle_name(text: str) -> str:
    """A full name as Moodle writes it into a file name, folded for comparison: underscores as spaces,
    the characters Moodle drops dropped, white space collapsed, one Unicode form, case ignored."""
    text = unicodedata.normalize("NFC", text).replace("_", " ")
    text = "".join(c for c in text if c.isprintable() and c not in "&<>\"`|':\\/")
    return " ".join(text.split()).casefold()


def read_moodle(name: str, is_dir: bool | None) -> Reading:
    """``<full name>_<participant id>_assignsubmission_file`` (a folder) or ``…_file_<file name>``."""
    match = _MOODLE.fullmatch(name)
    if not match:
        return Reading(reason="not a Moodle download name (<full name>_<participant id>_assignsubmission_file)")
    if match["plugin"] != "file":
        return Reading(reason=f"a Moodle {match['plugin']} submission, not an uploaded file")
    file_name = (match["tail"] or "_")[1:] or None  # None: a folder (older versions end its name in "_")
    if is_dir:
        file_name = None
    elif is_dir is False and file_name is None:
        return Reading(reason="a Moodle submission name without the file's own name")
    full, pid = moodle_name(match["name"]), match["pid"]
    return Reading((Candidate(f"pid:{_number(pid)}", file_name), Candidate(f"name:{full}", file_name)),
                   f"Moodle name {match['name']!r} or participant id {pid}")


def read_classroom(name: str, is_dir: bool | None, logins: Mapping[str, str] | tuple[str, ...] = ()) -> Reading:
    """``<assignment prefix>-<login>``: the longest of the roster's ``logins`` the name ends in
    (:func:`classes.logins.repository_login`; a login may hold ``-``, so the roster is needed to split it)."""
    if is_dir is False:
        return Reading(reason="not a cloned repository (a GitHub Classroom download is one folder per student)")
    if not any(c == "-" and 0 < i < len(name) - 1 for i, c in enumerate(name)):
        return Reading(reason="not a GitHub Classroom repository name (<assignment prefix>-<login>)")
    login, note = repository_login(name, logins)
    return Reading((Candidate(login, None),) if login else (), "GitHub login ending the name", note=note)


READERS: dict[str, Callable[[str, bool | None], Reading]] = {"canvas": read_canvas, "moodle": read_moodle}


def reader(layout: str, known: Identities) -> Callable[[str, bool | None], Reading]:
    """How ``layout`` reads an entry's name; GitHub Classroom's reading needs the roster's logins."""
    if layout == "classroom":
        return partial(read_classroom, logins=login_index(known.keys))  # indexed once, not per entry
    return READERS[layout]


# --------------------------------------------------------------------------- the roster's identities


@dataclass(frozen=True)
class Identities:
    """identity key -> the roster ids it names (two for a full name two students share), and notes."""

    keys: dict[str, tuple[str, ...]]
    column: str
    warnings: tuple[str, ...] = ()
    students: frozenset[str] = frozenset()  # every roster id of the class, as ``entries.student_key`` folds it


def identities(layout: Layout, students: list[str]) -> Identities:
    """The identities of the class's ``students`` in the roster's match column.

    A value that two students share is a roster error, except a Moodle full name (whose files are then
    refused as ambiguous, and a warning says so); a student without a value can have nothing matched,
    which a warning says too.
    """
    values = _column_values(layout)
    spelling = {entries.student_key(s): s for s in students}
    keys: dict[str, list[str]] = {}
    for roster_id, (line, value) in values.items():
        student = spelling.get(entries.student_key(roster_id))
        if student is not None and value:
            key = _key(layout, value, line)
            keys.setdefault(key, []).append(student)
    warnings = _shared(layout, keys)
    matched = {s for owners in keys.values() for s in owners}
    lacking = [s for s in students if s not in matched]
    if lacking:
        warnings.append(f"{counted(len(lacking), 'student')} without a {layout.column} in {layout.roster.name}: "
                        f"no entry can be theirs ({listed(lacking)})")
    return Identities({k: tuple(v) for k, v in keys.items()}, layout.column, tuple(warnings),
                      frozenset(entries.student_key(s) for s in students))


def roster_students(layout: Layout) -> list[str]:
    """The roster ids of the roster CSV (a code class has no other roster)."""
    return read_roster(layout.roster, layout.id_column)


def _column_values(layout: Layout) -> dict[str, tuple[int, str]]:
    """roster id -> (line, value of the match column) for every row of the roster CSV (Moodle's default:
    the printed name, which may join two columns; its line is not told)."""
    if layout.name == "moodle" and layout.match_by is None:
        return {s.id: (0, s.name) for s in read_roster_entries(layout.roster, layout.id_column)}
    return roster_column(layout.roster, layout.column, layout.id_column,
                         used_for=f"to match the {layout.name} download by")


_PARTICIPANT = re.compile(r"(?:participant\s*)?([0-9]+)", re.IGNORECASE)


def canvas_user_id(value: str) -> str:
    """A roster cell as a Canvas user id, in one spelling (see :func:`_number`), or ValueError saying why it
    is none: reading a Canvas download and writing grades back to Canvas key students alike."""
    if not value:
        raise ValueError("no Canvas user id in the roster")
    if not (value.isascii() and value.isdigit()):
        raise ValueError(f"{value!r} is not a Canvas user id (digits)")
    return _number(value)


def _key(layout: Layout, value: str, line: int) -> str:
    """A roster value as the readers key identities; a ProblemgenError for one that can never match."""
    where = f"{layout.roster}, line {line}" if line else str(layout.roster)
    if layout.name == "canvas":
        try:
            return canvas_user_id(value)
        except ValueError:
            raise ProblemgenError(f"{where}: {layout.column} {value!r} is not a Canvas user id (digits)") from None
    if layout.name == "classroom":
        login = value.removeprefix("@")
        if not re.fullmatch(r"[A-Za-z0-9-]+", login):
            raise ProblemgenError(f"{where}: {layout.column} {value!r} is not a GitHub login")
        return login.casefold()
    participant = _PARTICIPANT.fullmatch(value)
    return f"pid:{_number(participant[1])}" if participant else f"name:{moodle_name(value)}"


def _shared(layout: Layout, keys: dict[str, list[str]]) -> list[str]:
    """Values two students share: a roster error, but for Moodle full names, which only warn."""
    warnings = []
    for key, owners in keys.items():
        if len(owners) < 2:
            continue
        if not key.startswith("name:"):
            raise ProblemgenError(f"{layout.roster}: {', '.join(owners)} share the {layout.column} "
                                  f"{key.removeprefix('pid:')!r}; the download could not tell them apart")
        warnings.append(f"{' and '.join(owners)} share the name {key[5:]!r}: their Moodle entries are refused as "
                        "ambiguous (match by participant id with --match-by)")
    return warnings


# --------------------------------------------------------------------------- sorting a download


@dataclass
class Download:
    """A platform's download sorted by roster student: the entry to grade, why a student's submission is
    refused, and the entries that are nobody's (refused, with the reason); students the platform marked late."""

    found: dict[str, Entry] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    strays: list[Entry] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    readings: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """The summary's lines: how names that fit more than one login were read, and late submissions."""
        late = [f"Canvas marked {counted(len(self.late), 'submission')} late: {', '.join(self.late)}"]
        return [*self.readings, *(late if self.late else [])]


def sort_download(directory: str | Path, layout: str, known: Identities, suffixes: tuple[str, ...],
                  holds_submission: Callable[[Path], bool]) -> Download:
    """Every entry of ``directory`` read as ``layout`` names them and given to one roster student or to
    nobody; see the module docstring for the rules."""
    directory, read = Path(directory), reader(layout, known)
    groups: dict[str, list[Entry]] = {}
    late: dict[str, None] = {}  # in the order met, each student once (a list's `in` made this quadratic)
    download = Download()
    for raw in entries.listing(directory):
        entry = entries.examine(directory, raw)
        reading = _reading(entry, read)
        if reading.note:
            download.readings.append(reading.note)
        student, candidate, reason = _owner(entry, reading, known, suffixes)
        if student is None:
            download.strays.append(Entry(_stray_name(entry.name, known), entry.path, reason))
        elif not entry.accepted:
            download.refused.setdefault(student, f"{entry.refused}: {entry.name}")
        else:
            groups.setdefault(student, []).append(Entry(entry.name, entry.path, is_dir=entry.is_dir))
            if candidate.late:
                late[student] = None
    download.late = list(late)
    entries.empty_folders(groups, holds_submission)
    for student, group in groups.items():
        if len(group) > 1:
            shown = ", ".join(e.name for e in group[:3]) + (" …" if len(group) > 3 else "")
            download.refused.setdefault(student, f"{DUPLICATE}: {len(group)} entries are {student}'s ({shown})")
        elif student not in download.refused:
            download.found[student] = Entry(student, group[0].path, is_dir=group[0].is_dir)
    return download


def _stray_name(name: str, known: Identities) -> str:
    """The gradebook's name for an entry that is nobody's: its own, or ``./<name>`` where that is a roster
    id (a file or folder named ``bob`` put into the download by hand), so that no row names a
    student for an entry that is not theirs. A roster id starts with a letter or digit, never ``./``."""
    return f"./{name}" if entries.student_key(name) in known.students else name


def _reading(entry: Entry, read: Callable[[str, bool | None], Reading]) -> Reading:
    """What the entry's name says (a name that could not be read says nothing)."""
    if entry.refused.startswith("unreadable name"):
        return Reading(reason=entry.refused)
    return read(entry.name, entry.is_dir if entry.accepted else None)


def _owner(entry: Entry, reading: Reading, known: Identities,
           suffixes: tuple[str, ...]) -> tuple[str | None, Candidate | None, str]:
    """(the roster student an entry is, the reading that says so, '') or (None, None, why nobody's)."""
    if reading.reason:
        return None, None, entry.refused or reading.reason
    owners: dict[str, Candidate] = {}
    for candidate in reading.candidates:
        for student in known.keys.get(candidate.key, ()):
            owners.setdefault(student, candidate)
    if len(owners) > 1:
        return None, None, f"ambiguous: the name fits {' and '.join(sorted(owners))}"
    if not owners:
        return None, None, entry.refused or f"not on the roster: no student's {known.column} matches the {reading.what}"
    (student, candidate), = owners.items()
    if candidate.file_name is not None and entries.unsupported(candidate.file_name, suffixes):
        return None, None, entry.refused or entries.unsupported(candidate.file_name, suffixes)
    return student, candidate, ""
