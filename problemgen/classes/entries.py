"""The entries of a submissions directory: every entry becomes a row, and only safe ones are ever opened.

A class directory is student-controlled input. Each entry is looked at with ``lstat`` (never followed,
never opened) and is either *accepted* — a regular file of a supported type or a real directory, under
a student name — or *refused* with a reason that the gradebook prints:

=========================  ============================================================================
reason                     entry
=========================  ============================================================================
symbolic link              a link (it could point at another student's work or outside the class)
special file (FIFO…)       FIFO, socket or device: opening a FIFO would block the class run forever
unreadable name            a name that is not UTF-8 (shown escaped, e.g. ``bad\\xff.py``)
hidden entry               dot-files and ``__pycache__``-style entries
unsupported type           any suffix the caller does not take (a code class takes ``.py`` and
                           ``.ipynb``, an answer-sheet class ``.toml``)
duplicate-submission       two entries that map to the same student (``ana.py`` and ``ana/``, ``Ana.py``
                           and ``ana.py``, or two names equal in their first 80 characters): both
                           refused, the class goes on
=========================  ============================================================================

Files an operating system adds to a folder it shows or unzips (``.DS_Store``, ``._ana.toml``, ``__MACOSX``,
``Thumbs.db``, ``desktop.ini``) are no entries: they get no row, and the class summary says how many were
left out (:func:`system_files_note`). Any other hidden entry is a row, refused.

A student folder with nothing to grade in it (an empty ``bob/`` beside ``bob.toml``) is no submission: it
is left out when the student has another entry, and is no duplicate (see :func:`scan`).

Student names are compared ignoring case (:func:`student_key`): roster ids are unique ignoring case, so
``Carol.toml`` is carol's sheet, and two entries that differ only in case would overwrite each other's
report on a file system that ignores case.

A course platform's download (``classes.layouts``) is vetted by the same :func:`examine`; only whose an
entry is, is read differently.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from problemgen.model.core import ProblemgenError
from problemgen.userfiles import SPECIAL_FILES
from problemgen.wording import counted, listed

MAX_NAME = 80
"""Student names are cut to this many characters (report file names stay short on every platform)."""


@dataclass(frozen=True)
class Entry:
    """One entry of a class directory: the student it stands for, or why it was refused."""

    name: str  # the student name (accepted) or the escaped entry name (refused)
    path: Path
    refused: str = ""
    is_dir: bool = False

    @property
    def accepted(self) -> bool:
        return not self.refused


def safe_name(name: str) -> str:
    """File-system and spreadsheet safe: letters, digits, '.', '_' and '-' only, at most 80 characters."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".-") or "student"
    return cleaned[:MAX_NAME]


def student_key(name: str) -> str:
    """The form in which two student names are the same student: ignoring (ASCII) case.

    Safe names and roster ids are ASCII, so ``lower`` folds exactly the letters that differ in case.
    """
    return name.lower()


def escaped(raw: bytes) -> str:
    """A printable rendering of any entry name: undecodable bytes and control characters as \\xNN."""
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


SYSTEM_FILES = frozenset({".DS_Store", "__MACOSX", "Thumbs.db", "ehthumbs.db", "desktop.ini", ".Spotlight-V100",
                          ".Trashes", ".fseventsd"})
"""Names macOS and Windows give the metadata they add to a folder (AppleDouble files ``._*`` besides)."""


def is_system_file(name: bytes) -> bool:
    """Whether an entry name is operating-system metadata rather than anything a student handed in."""
    return name.startswith(b"._") or os.fsdecode(name) in SYSTEM_FILES


def system_files_note(directory: str | Path) -> list[str]:
    """The summary's line about the system files :func:`scan` left out of ``directory`` (none: no line)."""
    try:
        names = sorted(escaped(raw) for raw in os.listdir(os.fsencode(directory)) if is_system_file(raw))
    except OSError:
        return []
    if not names:
        return []
    return [f"left out {counted(len(names), 'file')} the operating system added, not submissions: {listed(names)}"]


def scan(directory: str | Path, suffixes: tuple[str, ...],
         holds_submission: Callable[[Path], bool] | None = None) -> list[Entry]:
    """Every entry of ``directory``, sorted by name: accepted files with one of ``suffixes`` (the
    student name is the stem) or directories (the name), and refused entries with their reason.

    ``holds_submission(folder)`` says whether a student folder has anything in it to grade: a folder
    without (an empty ``bob/`` beside ``bob.toml``) is no second submission, and is left out when the
    student has another entry (see :func:`_refuse_duplicates`). Without it every folder counts.
    """
    directory = Path(directory)
    found = [_classify(examine(directory, raw), suffixes) for raw in listing(directory)]
    return _refuse_duplicates(found, holds_submission)


def listing(directory: Path) -> list[bytes]:
    """The raw names of a submissions directory, sorted, without the files an operating system added."""
    if not directory.is_dir():
        raise ProblemgenError(f"{directory}: not a directory")
    return sorted(raw for raw in os.listdir(os.fsencode(directory)) if not is_system_file(raw))


def examine(directory: Path, raw: bytes) -> Entry:
    """One entry looked at with ``lstat`` only: refused with the reason, or accepted as a regular file or
    a real directory whose ``name`` is still the entry's own name (whose it is, is for the caller to say)."""
    path = directory / os.fsdecode(raw)
    shown = escaped(raw)
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Entry(shown, path, "unreadable name (not UTF-8)")
    if not name.isprintable():
        return Entry(shown, path, "unreadable name (control characters)")
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return Entry(shown, path, f"cannot be examined ({exc.strerror})")
    if stat.S_ISLNK(mode):
        return Entry(shown, path, "symbolic link")
    for test, what in SPECIAL_FILES:
        if test(mode):
            return Entry(shown, path, f"special file ({what})")
    if name.startswith((".", "__")):
        return Entry(shown, path, "hidden entry")
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        return Entry(shown, path, "unsupported type")
    return Entry(name, path, is_dir=stat.S_ISDIR(mode))


def unsupported(name: str, suffixes: tuple[str, ...]) -> str:
    """Why a file of this name is no submission ('' when its suffix is one of ``suffixes``)."""
    if Path(name).suffix.lower() in suffixes:
        return ""
    return f"unsupported type (expected {' or '.join(suffixes)} or a directory)"


def _classify(entry: Entry, suffixes: tuple[str, ...]) -> Entry:
    """An examined entry under its student name: a directory's name, a file's stem (if its type is taken)."""
    if not entry.accepted:
        return entry
    if entry.is_dir:
        return Entry(safe_name(entry.name), entry.path, is_dir=True)
    reason = unsupported(entry.name, suffixes)
    if reason:
        return Entry(entry.name, entry.path, reason)
    return Entry(safe_name(Path(entry.name).stem), entry.path)


def _refuse_duplicates(entries: list[Entry], holds_submission: Callable[[Path], bool] | None) -> list[Entry]:
    """Entries mapping to one student are all refused (which one would count?); the rest go on."""
    groups: dict[str, list[Entry]] = {}
    for entry in entries:
        if entry.accepted:
            groups.setdefault(student_key(entry.name), []).append(entry)
    empty = empty_folders(groups, holds_submission) if holds_submission else set()
    result = []
    for entry in entries:
        if entry.path in empty:
            continue
        group = groups.get(student_key(entry.name), []) if entry.accepted else []
        if len(group) > 1:
            shown = escaped(os.fsencode(entry.path.name))
            entry = Entry(shown, entry.path, f"duplicate-submission: {len(group)} entries map to {group[0].name!r}"
                                             f"{_case_note(group)}")
        result.append(entry)
    return result


def empty_folders(groups: dict[str, list[Entry]], holds_submission: Callable[[Path], bool]) -> set[Path]:
    """The folders to leave out, taken out of ``groups`` too: those with nothing to grade beside another
    entry of the student; of several such folders alone, all but the first, which stands for the student
    (then missing, or graded as an empty submission)."""
    empty: set[Path] = set()
    for group in groups.values():
        if len(group) > 1:
            hollow = [e.path for e in group if e.is_dir and not _holds(holds_submission, e.path)]
            empty.update(hollow if len(hollow) < len(group) else hollow[1:])
            group[:] = [e for e in group if e.path not in empty]
    return empty


def _holds(holds_submission: Callable[[Path], bool], folder: Path) -> bool:
    """``holds_submission(folder)``; a folder that cannot be listed counts as holding one, so that
    grading it says why instead of it vanishing."""
    try:
        return holds_submission(folder)
    except OSError:
        return True


def _case_note(group: list[Entry]) -> str:
    """Why ``Ana.py`` and ``ana.py`` are one student, said only when their spellings differ."""
    return " (names are compared ignoring case)" if len({e.name for e in group}) > 1 else ""
