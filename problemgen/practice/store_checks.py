"""What the progress store checks before it trusts a file, and how it says what is wrong with one.

A progress file is the student's own: it may be damaged (a disk error, a copy cut short, a sync tool that
wrote half of it), hand-edited in the ``sqlite3`` shell, read-only, or in a directory we cannot write.
Each of those used to surface as a Python traceback at whatever query first met it, and a damaged file
whose broken pages the start-up queries did not touch was written into. So the store, on opening a file
and before it writes anything:

1. runs SQLite's ``PRAGMA quick_check`` (every page and record well formed; it leaves out only the
   index-versus-table cross-check of the full ``integrity_check``, at about two thirds of its cost:
   some 50 ms for a 13 MB file of 20,000 problems, under 1 ms for a usual one);
2. checks that every value it will read has the type and form its columns mean (:func:`check_rows`),
   one SQL scan per table, so the quiz and ``progress`` can then read rows without guarding each one.

A file that fails is refused with one line naming it and what is wrong, and is left exactly as it was:
nothing is repaired, dropped or written. A value of the right type that this problemgen cannot use (a
kind it does not have, a difficulty its kind does not offer) is not damage, since another problemgen
version may have written it: such rows are left out of practice instead (``problemgen.practice.rules``
ignores kinds that are not installed, and ``rules.regenerate`` lets the front ends leave a problem they
cannot make again as it is).
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import stat
from pathlib import Path

from problemgen.errors import WriteFailed
from problemgen.model.core import ProblemgenError
from problemgen.userfiles import kind_of

TIME_EXAMPLE = "2026-03-01T09:00:00Z"
FIRST_YEAR, LAST_YEAR = 1970, 8999
"""Stored times lie in these years: far enough from datetime's year 9999 that a review due a few
intervals later is still a date."""
MAX_SEED = 2**63 - 1
"""The largest seed SQLite's INTEGER holds (``--seed`` and the stored base seed)."""


class StoreRefused(ProblemgenError):
    """The progress file cannot be used as it is (damaged, edited, read-only, busy); it was not changed."""


class StoreNotWritten(StoreRefused, WriteFailed):
    """The disk did not take a write (full, a quota or a file-size limit): the transaction was rolled back, so
    the last step (an answer, a hint) is lost and everything before it kept. Exit 4, as any output."""


def _time_ok(column: str) -> str:
    """SQL: ``column`` is text in our one time format, a real date in the years allowed. A modifier makes
    SQLite's strftime normalise what it read, so 2026-02-30 or 24:00 come back as another text (and what
    it cannot read as NULL)."""
    return (f"(typeof({column}) = 'text' AND strftime('%Y-%m-%dT%H:%M:%SZ', {column}, '+0 seconds') IS {column}"
            f" AND {column} >= '{FIRST_YEAR:04d}' AND {column} < '{LAST_YEAR + 1:04d}')")


def _or_null(check: str, column: str) -> str:
    return f"({column} IS NULL OR {check})"


_TEXT = "typeof({0}) = 'text'"
_COUNT = "(typeof({0}) = 'integer' AND {0} >= 0)"
_TIME = f"a time like {TIME_EXAMPLE} in the years {FIRST_YEAR}–{LAST_YEAR}"

ROW_CHECKS: dict[str, tuple[tuple[str, str, str], ...]] = {
    # table: (column, SQL that is true when the value is readable, what it should be)
    "items": (
        ("unit", _TEXT.format("unit"), "a unit name"),
        ("kind", _TEXT.format("kind"), "a problem kind"),
        ("seed", _COUNT.format("seed"), "a whole number from 0"),
        ("difficulty", "typeof(difficulty) = 'integer'", "a whole number"),
        ("review", "(typeof(review) = 'integer' AND review IN (0, 1))", "0 or 1"),
        ("target", _or_null(_TEXT.format("target"), "target"), "a mistake name or NULL"),
        ("hints", _COUNT.format("hints"), "a count from 0"),
        ("mistake", _or_null(_TEXT.format("mistake"), "mistake"), "a mistake name or NULL"),
        ("started_at", _time_ok("started_at"), _TIME),
        ("finished_at", _or_null(_time_ok("finished_at"), "finished_at"), f"{_TIME}, or NULL"),
        ("closed_at", _or_null(_time_ok("closed_at"), "closed_at"), f"{_TIME}, or NULL"),
    ),
    "answers": (
        ("item_id", "typeof(item_id) = 'integer'", "a problem's row id"),
        ("part", _TEXT.format("part"), "a part name"),
        ("text", _TEXT.format("text"), "the answer as text"),
        ("score", "typeof(score) IN ('real', 'integer')", "a number"),
        ("mistake", _or_null(_TEXT.format("mistake"), "mistake"), "a mistake name or NULL"),
        ("at", _time_ok("at"), _TIME),
    ),
    "hints": (
        ("level", _COUNT.format("level"), "a count from 0"),
    ),
}
"""Every column the store reads back (``sessions`` is only counted, and the outcome and status columns
are held by CHECK constraints)."""


def check_intact(db: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check``; StoreRefused naming the first problem SQLite finds."""
    rows = db.execute("PRAGMA quick_check").fetchall()
    if rows != [("ok",)]:
        first = " ".join(str(rows[0][0]).split()) if rows else "no answer"
        raise damaged(path, first[:160])


def check_rows(db: sqlite3.Connection, path: Path, version: int) -> None:
    """Every value the store reads has the type and form its column means; StoreRefused naming the first
    row that does not. ``version`` is the file's schema version (v1 has no ``closed_at``)."""
    for table, checks in ROW_CHECKS.items():
        if table == "hints" and version < 3:
            continue
        present = [c for c in checks if version >= 2 or c[0] != "closed_at"]
        cases = " ".join(f"WHEN NOT {sql} THEN '{column}'" for column, sql, _ in present)
        row = db.execute(f"SELECT rowid, bad FROM (SELECT rowid, CASE {cases} END AS bad FROM {table})"
                         " WHERE bad IS NOT NULL ORDER BY rowid LIMIT 1").fetchone()
        if row is not None:
            row_id, column = row
            shown = db.execute(f"SELECT substr(quote({column}), 1, 40) FROM {table} WHERE rowid = ?",
                               (row_id,)).fetchone()[0]
            wanted = next(what for name, _, what in present if name == column)
            raise edited(path, f"{table} row {row_id}: {column} is {shown}, not {wanted}")
    check_base_seed(db, path)


def check_base_seed(db: sqlite3.Connection, path: Path) -> int | None:
    """The stored base seed (None when there is none yet); StoreRefused when it is not a seed."""
    row = db.execute("SELECT value FROM meta WHERE key = 'base_seed'").fetchone()
    if row is None:
        return None
    value = row[0]
    if not (isinstance(value, str) and re.fullmatch(r"[0-9]{1,19}", value) and int(value) <= MAX_SEED):
        shown = repr(value)[:40]
        raise edited(path, f"meta base_seed is {shown}, not a whole number from 0 to {MAX_SEED}")
    return int(value)


def writable(path: Path) -> bool:
    """True when the progress file (if it exists) and the directory it is or will be in can be written:
    SQLite writes its journal files (``-wal``, ``-shm``) beside the file, even to read it in WAL mode."""
    try:
        check_writable(path)
    except StoreRefused:
        return False
    return True


def check_regular(path: Path) -> None:
    """StoreRefused when what is at the progress file's name (a link followed) is not a regular file, or is
    a loop of links: SQLite opened a FIFO, a device or a folder by that name and said "disk I/O error", or
    that the disk was full (exit 4, as if an answer had been lost), about a file it never had. A missing
    file is no error (it is created), and one the checks that follow cannot reach is theirs to word.

    Looked at before SQLite opens the file by its name, so something put there in between meets SQLite's
    own error instead; SQLite opens for reading and writing, which waits on no FIFO."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreRefused(f"{path}: cannot open the progress store ({exc.strerror})") from None
        return
    if not stat.S_ISREG(mode):
        raise StoreRefused(f"{path}: the progress store is {kind_of(mode)}, not a regular file "
                           "(name another file with --db)")


def check_writable(path: Path) -> None:
    """StoreRefused saying which of the file and its directory cannot be written (read-only file or file
    system, ``chattr +i``, no permission), before SQLite fails with "attempt to write a readonly database"
    in the middle of a quiz, or with "unable to open database file"."""
    if path.exists() and not os.access(path, os.W_OK):
        raise StoreRefused(f"{path}: the progress file is read-only; `problemgen progress` can show it, but "
                           "nothing can be saved to it (make it writable, or name another file with --db)")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # a new store's directories are made from the nearest one that exists
    if not os.access(folder, os.W_OK | os.X_OK):
        why = ("and SQLite keeps its journal files beside the progress file" if path.exists()
               else "so the progress file cannot be created there")
        raise StoreRefused(f"{path}: the directory {folder} is not writable, {why} "
                           "(make it writable, or name a file elsewhere with --db)")


def unread_journal(path: Path) -> StoreRefused | None:
    """For a file read where nothing can be written beside it: StoreRefused when its ``-wal`` journal holds
    answers not yet copied into the file (SQLite can only read them with a ``-shm`` file it may write)."""
    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        return StoreRefused(f"{path}: its latest answers are still in {wal.name}, which SQLite cannot read "
                            f"while the directory {path.parent} is not writable (make it writable to read them)")
    return None


def damaged(path: Path, detail: str) -> StoreRefused:
    return StoreRefused(f"{path}: the progress file is damaged ({detail}); it was left as it is "
                        "(move it aside to start afresh, or try the sqlite3 shell's .recover on a copy)")


def edited(path: Path, detail: str) -> StoreRefused:
    return StoreRefused(f"{path}: {detail}; the file was edited or damaged and was left as it is "
                        "(correct or delete that row in the sqlite3 shell)")


_NOT_WRITTEN = {"SQLITE_FULL", *(f"SQLITE_IOERR_{what}" for what in
                                 ("WRITE", "FSYNC", "DIR_FSYNC", "TRUNCATE", "SHMSIZE", "SHMMAP"))}
"""SQLite's codes for a write the disk refused (the journal, the database, the shared-memory index)."""


def not_written(path: Path, text: str, opening: bool) -> StoreNotWritten:
    """A write the disk refused. SQLite says "database or disk is full" when the disk is, but only "disk I/O
    error" when a file-size limit stops the journal (it does not tell the system's reason), so both are
    worded as what they most likely are, with what was kept; neither means the file is damaged."""
    why = ("no room to save progress (the disk or a quota is full)" if "full" in text else
           f"the disk did not take a write ({text}: it may be full, or a quota or a file-size limit was reached)")
    kept = ("nothing was changed" if opening else
            "your last answer or step was not saved; everything saved before it is kept")
    return StoreNotWritten(f"{path}: {why}; {kept}. Free some space and run again")


def explain(path: Path, exc: sqlite3.Error, *, query_seconds: float, busy_seconds: float,
            opening: bool = False) -> ProblemgenError:
    """One line for an error SQLite raised on the file at ``path``: what is wrong, in the student's terms
    (``query_seconds`` and ``busy_seconds`` are the store's time box and busy wait, for the message)."""
    text, name = str(exc), getattr(exc, "sqlite_errorname", "")
    if "interrupted" in text:
        return StoreRefused(f"{path}: a query took longer than {query_seconds:g} s; not a usable progress store")
    if "locked" in text or name.startswith("SQLITE_BUSY"):
        return StoreRefused(f"{path}: the progress store stayed busy for {busy_seconds:g} s "
                            "(another problemgen is writing it); try again")
    if name in _NOT_WRITTEN or (not name and "disk is full" in text):
        return not_written(path, text, opening)
    if name.startswith("SQLITE_IOERR"):  # a read the disk failed: the file may be fine, never call it foreign
        return StoreRefused(f"{path}: the disk failed to read the progress store ({text}); it was not changed")
    if name.startswith("SQLITE_READONLY") or "readonly" in text:  # made read-only after it was opened
        try:
            check_writable(path)
        except StoreRefused as refused:
            return refused
        return StoreRefused(f"{path}: the progress file cannot be written ({text})")
    if name.startswith("SQLITE_CORRUPT") or "malformed" in text:
        return damaged(path, text)
    if opening or name == "SQLITE_NOTADB":
        return StoreRefused(f"{path}: not a problemgen progress store ({text})")
    return StoreRefused(f"{path}: the progress store failed ({text})")
