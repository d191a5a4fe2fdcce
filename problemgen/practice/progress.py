"""The quiz progress store: one SQLite file per student, written one answer at a time.

Why SQLite (stdlib ``sqlite3``): every answer is committed in its own transaction the moment it is
graded, so Ctrl-C, a closed terminal or a killed process loses at most the answer being typed, and
the file is never left half-written (WAL journal, ``synchronous=FULL``). The schema is versioned with
``PRAGMA user_version`` and upgraded by the ordered ``MIGRATIONS`` below, each in one transaction.

The store keeps the raw history only: sessions, items (one problem variant shown to the student) and
answers. Mastery, difficulty and the review schedule are *derived* from that history by the pure
functions in ``problemgen.practice.rules``, so there is a single source of truth and nothing to drift.

A file is checked when it is opened, before anything is written to it (``problemgen.practice.store_checks``):
a damaged or hand-edited one is refused with one line naming it, and any later SQLite error is reported
the same way (:func:`_guarded`), never as a traceback.

Default location (``--db`` overrides): ``$XDG_DATA_HOME/problemgen`` or ``~/.local/share/problemgen``
on Linux, ``~/Library/Application Support/problemgen`` on macOS, ``%APPDATA%/problemgen`` on Windows.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import sqlite3
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Collection, Iterator, Mapping, TypeVar

from problemgen.model.core import ProblemgenError
from problemgen.userfiles import well_formed_text  # a lone surrogate cannot be stored: its escape is
from problemgen.practice.store_checks import (
    FIRST_YEAR,
    LAST_YEAR,
    check_base_seed,
    check_intact,
    check_regular,
    check_rows,
    check_writable,
    edited,
    explain,
    unread_journal,
    writable,
)

T = TypeVar("T")
DB_FILENAME = "progress.sqlite3"
MAX_ANSWER_CHARS = 4000
"""Longer typed answers are cut before storing: the store keeps history, not arbitrary blobs."""

OUTCOMES = ("correct", "wrong", "revealed", "skipped", "another", "quit")
"""How an item ended. ``None`` (NULL) while it is open or when the process died mid-item."""

MIGRATIONS: tuple[str, ...] = (
    # v1: sessions, items (shown variants), answers (every graded line, committed one by one).
    """
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE sessions (
        id         INTEGER PRIMARY KEY,
        started_at TEXT NOT NULL,
        seed       INTEGER NOT NULL,
        topic      TEXT
    );
    CREATE TABLE items (
        id          INTEGER PRIMARY KEY,
        session_id  INTEGER NOT NULL REFERENCES sessions(id),
        unit        TEXT NOT NULL,
        kind        TEXT NOT NULL,
        seed        INTEGER NOT NULL,
        difficulty  INTEGER NOT NULL,
        variant_id  TEXT NOT NULL,
        review      INTEGER NOT NULL DEFAULT 0,
        target      TEXT,
        hints       INTEGER NOT NULL DEFAULT 0,
        outcome     TEXT CHECK (outcome IS NULL OR outcome IN
                        ('correct', 'wrong', 'revealed', 'skipped', 'another', 'quit')),
        mistake     TEXT,
        started_at  TEXT NOT NULL,
        finished_at TEXT,
        UNIQUE (kind, seed, difficulty)
    );
    CREATE INDEX items_by_unit ON items (unit, id);
    CREATE TABLE answers (
        id      INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL REFERENCES items(id),
        part    TEXT NOT NULL,
        text    TEXT NOT NULL,
        status  TEXT NOT NULL CHECK (status IN ('correct', 'wrong', 'invalid')),
        score   REAL NOT NULL,
        mistake TEXT,
        at      TEXT NOT NULL
    );
    CREATE INDEX answers_by_item ON answers (item_id, id);
    """,
    # v2: when an item stopped taking answers and hints (its solution shown, left, or every part right).
    # The outcome cannot say it: a wrong item stays open for corrections until the student leaves it.
    # Items decided before v2 count as closed.
    """
    ALTER TABLE items ADD COLUMN closed_at TEXT;
    UPDATE items SET closed_at = COALESCE(finished_at, started_at) WHERE outcome IS NOT NULL;
    """,
    # v3: hint levels per answer part (each part starts at the first, most general hint), kept so a resumed
    # problem or a reloaded page goes on from the level reached. items.hints now counts the item's hints
    # (it held the highest level, the same number while levels were per item); only hints > 0 matters.
    """
    CREATE TABLE hints (
        item_id INTEGER NOT NULL REFERENCES items(id),
        part    TEXT NOT NULL,
        level   INTEGER NOT NULL,
        PRIMARY KEY (item_id, part)
    );
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
READABLE_FROM = 2
"""The oldest schema the reads understand as it is (a read-only file cannot be upgraded)."""


def utc_now() -> datetime:
    """The default clock (tests and ``PROBLEMGEN_NOW`` inject their own)."""
    return datetime.now(timezone.utc).replace(microsecond=0)


def to_text(moment: datetime) -> str:
    """ISO-8601 UTC with a ``Z``: sortable as text, readable in the sqlite3 shell."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_STORED_TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")


def from_text(text: str) -> datetime:
    """A stored time; ValueError unless it is one of ours (``to_text``) in the years the store allows.

    Every read of the history parses every stored time, so the form ``to_text`` writes is read by its
    digits (``strptime`` took 9 us a time: 0.13 s for the items of a 20,000-answer history, read for each
    question); anything else, and a date that does not exist, goes to ``strptime`` as before, which
    accepts or refuses it with its own message."""
    match = _STORED_TIME.fullmatch(text) if isinstance(text, str) else None
    try:
        moment = datetime(*map(int, match.groups()), tzinfo=timezone.utc) if match else None
    except ValueError:
        moment = None
    if moment is None:
        moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    if not FIRST_YEAR <= moment.year <= LAST_YEAR:
        raise ValueError(f"{text!r} is not in the years {FIRST_YEAR}-{LAST_YEAR}")
    return moment


def _moment(text: str | None) -> datetime | None:
    return from_text(text) if text else None


def default_db_path(env: Mapping[str, str] | None = None, platform: str | None = None,
                    home: Path | None = None) -> Path:
    """The per-user store location for this platform (arguments exist so tests can vary them).

    The home directory is looked up only when the location needs it: a container or CI job often runs
    a uid with no ``/etc/passwd`` entry and no ``$HOME``, and there an absolute ``$XDG_DATA_HOME`` (or
    ``--db``) is all the quiz needs; without either it is one ``error:`` line saying so."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if platform.startswith("win"):
        base = Path(env["APPDATA"]) if env.get("APPDATA") else _home(env, home) / "AppData" / "Roaming"
    elif platform == "darwin":
        base = _home(env, home) / "Library" / "Application Support"
    else:
        xdg = env.get("XDG_DATA_HOME", "")
        # The XDG spec says relative paths are invalid and must be ignored.
        base = Path(xdg) if xdg and os.path.isabs(xdg) else _home(env, home) / ".local" / "share"
    return base / "problemgen" / DB_FILENAME


def _home(env: Mapping[str, str], home: Path | None) -> Path:
    """The user's home directory: an absolute ``$HOME``, else the password database's entry for this uid.

    A relative ``$HOME`` is ignored as the XDG spec ignores relative paths: it would put the progress
    file wherever the command happens to be started, and the next run elsewhere would not find it."""
    if home is not None:
        return home
    value = env.get("HOME", "")
    if value and os.path.isabs(value):
        return Path(value)
    try:
        import pwd

        entry = pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):
        entry = ""
    if entry and os.path.isabs(entry):
        return Path(entry)
    raise ProblemgenError(
        "no home directory to keep progress in: $HOME is unset or not an absolute path and this user "
        f"(uid {os.getuid()}) has no home in the password database; name a file with --db, or set "
        "XDG_DATA_HOME (or HOME) to an absolute directory")


BUSY_SECONDS = 5.0
"""How long an opener or a write waits for another process that holds the store (the quiz beside the page)."""

QUERY_SECONDS = 2.0
"""Any statement (and the reading of its rows) is interrupted after this long: our queries take
milliseconds, so a longer one means a damaged or hostile file."""


class ItemConflict(ProblemgenError):
    """An answer or a hint the item's stored history no longer takes: its part is already right, the item
    is closed, or it is gone (a reset). Another tab, the other front end or a second server changed the
    item first; the page answers 409 Conflict, the quiz goes on to the next problem."""


class VariantTaken(ProblemgenError):
    """The variant to file is already in the store: the other front end (the quiz beside the page, a second
    server) drew the same next variant from the same history and filed it first. Draw again
    (:func:`filed_afresh`)."""


DRAW_ATTEMPTS = 5
"""Draws :func:`filed_afresh` makes: each one after the first follows a variant filed meanwhile elsewhere."""


def filed_afresh(draw: Callable[[], T], file: Callable[[T], int]) -> tuple[T, int]:
    """(variant, item id) of a new variant ``draw`` makes and ``file`` stores, drawn again from the history
    as it is now while another process filed the same one first: both front ends draw the next variant from
    the same seed and history, so the quiz and the page asking at once drew the same one, and the second
    to store it stopped with "already shown"."""
    for attempt in range(DRAW_ATTEMPTS):
        variant = draw()
        try:
            return variant, file(variant)
        except VariantTaken:
            if attempt == DRAW_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


class SessionGone(ProblemgenError):
    """The session a new item was to be filed under is no longer in the store: ``problemgen progress
    --reset`` in another process deleted it. The server opens a new session; the quiz stops with this."""


def answer_outcome(status: str, already_failed: bool, completes: bool) -> str | None:
    """The item outcome a graded answer decides, or None when it decides nothing yet.

    The first wrong answer makes the item wrong (a later correction does not undo it); a correct answer
    that leaves no part unanswered makes it correct unless it already failed; invalid answers decide
    nothing. Kept beside the store because the store applies it inside the answer's write transaction."""
    if status == "wrong" and not already_failed:
        return "wrong"
    if status == "correct" and completes and not already_failed:
        return "correct"
    return None


class _TimedConnection(sqlite3.Connection):
    """A connection whose every statement is time-boxed by a progress handler."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = 0.0
        self.set_progress_handler(lambda: int(time.monotonic() > self._deadline), 10_000)

    def execute(self, *args, **kwargs):  # noqa: D102 - sqlite3.Connection.execute, time-boxed
        self._deadline = time.monotonic() + QUERY_SECONDS
        return super().execute(*args, **kwargs)

    def executescript(self, *args, **kwargs):  # noqa: D102
        self._deadline = time.monotonic() + QUERY_SECONDS
        return super().executescript(*args, **kwargs)


def _guarded(method):
    """Any error SQLite raises in ``method`` becomes one ProblemgenError that names the file and says what is
    wrong (damaged, busy, …), instead of a traceback from wherever a query first met it."""
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise self._explain(exc) from exc
    return guarded


def _statements(script: str) -> Iterator[str]:
    """The statements of a migration script, one by one. ``executescript`` would run them in one call, but
    it commits any open transaction first, and a migration must run inside the opener's lock."""
    statement = ""
    for piece in script.split(";"):
        statement += piece + ";"
        if sqlite3.complete_statement(statement):
            if statement.strip(" \n;"):
                yield statement.strip()
            statement = ""


def _schema_of(db: sqlite3.Connection) -> tuple[tuple[str, str, str], ...]:
    """(type, name, sql) of every schema object but SQLite's own, sorted."""
    rows = db.execute("SELECT type, name, COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite^_%' ESCAPE '^'")
    return tuple(sorted(tuple(str(v) for v in row) for row in rows.fetchall()))


@functools.lru_cache(maxsize=None)
def _expected_schema(version: int) -> tuple[tuple[str, str, str], ...]:
    """The schema our migrations make up to ``version``, built in memory."""
    db = sqlite3.connect(":memory:")
    try:
        for migration in MIGRATIONS[:version]:
            db.executescript(migration)
        return _schema_of(db)
    finally:
        db.close()


@dataclass(frozen=True)
class ItemRecord:
    """One shown variant as the practice rules see it (chronological by ``id``)."""

    id: int
    unit: str
    kind: str
    seed: int
    difficulty: int
    outcome: str | None
    hints: int
    review: bool
    target: str | None
    mistake: str | None
    started_at: datetime
    finished_at: datetime | None
    closed_at: datetime | None = None  # None while the item takes answers


@dataclass(frozen=True)
class AnswerRecord:
    item_id: int
    part: str
    text: str
    status: str
    score: float
    mistake: str | None
    at: datetime


class ProgressStore:
    """Open (creating and migrating as needed) a progress file; every write is its own transaction."""

    def __init__(self, path: str | os.PathLike, *, any_thread: bool = False, read_only: bool = False) -> None:
        """``any_thread``: the store may be used from threads other than the one that opened it, which the
        caller makes sure happens one at a time (the web app's lock does); SQLite refuses it otherwise.

        ``read_only``: for commands that only read (``progress``). A file that cannot be written, or whose
        directory cannot, is then opened read-only instead of refused (and is not upgraded); a writer is
        told which of the two is not writable before anything is shown or asked."""
        self.path = Path(path)
        check_regular(self.path)
        self.read_only = read_only and self.path.exists() and not writable(self.path)
        try:
            if self.read_only:
                self._db = self._connect_read_only(check_same_thread=not any_thread)
            else:
                check_writable(self.path)
                from problemgen.outputs import make_folder  # lazy: the quiz's start-up is timed

                make_folder(self.path.parent)  # not writable by others under umask 000
                # isolation_level=None: no implicit transactions; each write below says BEGIN/COMMIT itself.
                self._db = self._connect(self.path, check_same_thread=not any_thread)
        except (OSError, sqlite3.Error) as exc:
            raise ProblemgenError(f"{self.path}: cannot open the progress store ({exc})") from exc
        try:
            self._db.execute("PRAGMA trusted_schema=OFF")  # no SQL functions run from a file's views or triggers
            if self.read_only:
                self._check_read_only()
            else:
                self._set_up()
                self._use_wal()  # after the checks: a foreign or damaged file is never switched
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            self._db.close()
            raise self._explain(exc, opening=True) from exc
        except ProblemgenError:
            self._db.close()
            raise

    # -- lifecycle -------------------------------------------------------------------------------

    def _explain(self, exc: sqlite3.Error, *, opening: bool = False) -> ProblemgenError:
        """SQLite's error as one line about this file (``store_checks.explain``) with this store's limits."""
        return explain(self.path, exc, query_seconds=QUERY_SECONDS, busy_seconds=BUSY_SECONDS, opening=opening)

    @staticmethod
    def _connect(target: str | Path, **options) -> sqlite3.Connection:
        return sqlite3.connect(target, isolation_level=None, timeout=BUSY_SECONDS, factory=_TimedConnection,
                               **options)

    def _connect_read_only(self, **options) -> sqlite3.Connection:
        """A read-only connection. SQLite reads a WAL file through its ``-shm`` file, which it must be able to
        create when it is missing; where the directory forbids that, the file is opened as immutable, which
        is sound only when no ``-wal`` journal holds answers the file does not (then it is refused)."""
        uri = self.path.resolve().as_uri()
        db = self._connect(uri + "?mode=ro", uri=True, **options)
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            db.close()
            if "unable to open" not in str(exc):
                raise
        refused = unread_journal(self.path)
        if refused:
            raise refused
        return self._connect(uri + "?immutable=1", uri=True, **options)

    def _check_read_only(self) -> None:
        """The checks of :meth:`_set_up` without its writes: a file older than this schema cannot be
        upgraded here, so only an empty one (nothing recorded yet) or a current one is read."""
        version = self._check_contents()
        if version > SCHEMA_VERSION:
            self._migrate()  # says this problemgen is too old, writing nothing
        if 0 < version < READABLE_FROM:
            raise ProblemgenError(f"{self.path}: written by an older problemgen (schema v{version}); it is "
                                  "upgraded when opened for writing, and this file cannot be written")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ProgressStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _set_up(self) -> None:
        """Check the file (its schema, then that it is intact and every row readable: see
        ``problemgen.practice.store_checks``), then create or upgrade its schema, all under one write lock.

        The quiz in a terminal and the practice page may open a new store at the same moment. Checked and
        migrated in separate steps, the second saw the first's half of the work (the old version beside the
        new tables) and refused a sound store, or tried to create the tables again. Under ``BEGIN
        IMMEDIATE`` a second opener waits (the connection's busy timeout), then finds the store made.
        A foreign file is still refused before anything is written: the checks come first and only read."""
        with self._transaction():
            self._check_contents()
            self._migrate()
            self._check_schema()

    def _check_contents(self) -> int:
        """The checks every open makes, reading only: the schema, then (for a version this problemgen reads;
        a newer file is refused by ``_migrate``, whatever its rows hold) that the file is intact and every
        row readable. Returns the file's schema version."""
        self._check_schema()
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version <= SCHEMA_VERSION:
            check_intact(self._db, self.path)
            if version:
                check_rows(self._db, self.path, version)
        return version

    def _use_wal(self) -> None:
        """Switch the file to the WAL journal (a no-op once it is). SQLite answers "database is locked" at
        once, without waiting its busy timeout, when another opener holds a lock at that moment, so the
        switch is tried again until :data:`BUSY_SECONDS` have passed."""
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _migrate(self) -> None:
        """Run the migrations this file lacks, inside the caller's transaction (see :meth:`_set_up`)."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise ProblemgenError(
                f"{self.path}: progress store has schema v{version}; this problemgen reads up to "
                f"v{SCHEMA_VERSION} (upgrade problemgen)"
            )
        for number in range(version, SCHEMA_VERSION):
            for statement in _statements(MIGRATIONS[number]):
                self._db.execute(statement)
            self._db.execute(f"PRAGMA user_version = {number + 1}")

    def _check_schema(self) -> None:
        """The file holds exactly the tables and indexes our migrations make (or nothing yet): no views,
        no triggers, no other tables. A hostile file (a recursive view named ``items``) is refused here."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        found = _schema_of(self._db)
        if found == (() if version == 0 else _expected_schema(version)):
            return
        if version > SCHEMA_VERSION:
            return  # _migrate explains that this problemgen is too old
        expected = {(kind, name) for kind, name, _ in _expected_schema(version)} if version else set()
        present = {(kind, name) for kind, name, _ in found}
        odd = sorted(present - expected) + [(f"no {k}", n) for k, n in sorted(expected - present)]
        odd = odd or [(kind, name) for kind, name, _ in found]  # same names, other definitions
        shown = ", ".join(f"{kind} {name!r}" for kind, name in odd[:3])
        raise ProblemgenError(f"{self.path}: not a problemgen progress store (unexpected schema v{version}: {shown})")

    @_guarded
    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    @_guarded
    def integrity_ok(self) -> bool:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def _write(self, sql: str, args: tuple = ()) -> int:
        """Run one statement in its own committed transaction; return lastrowid."""
        with self._transaction():
            return self._db.execute(sql, args).lastrowid

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error): one durable step of history.

        SQLite itself rolls back a statement it interrupted (a query past its time), so ROLLBACK runs only
        while a transaction is open: else its own "no transaction is active" would replace the real error.
        A failed COMMIT is rolled back too, so a long-lived store (the page's) is not left inside it."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    # -- meta ------------------------------------------------------------------------------------

    @_guarded
    def base_seed(self) -> int:
        """The store's own seed for new variants (chosen at random once, then kept)."""
        stored = check_base_seed(self._db, self.path)
        if stored is not None:
            return stored
        seed = secrets.randbelow(1_000_000)
        with self._transaction():
            self._db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('base_seed', ?)", (str(seed),))
        return check_base_seed(self._db, self.path)

    # -- writes ----------------------------------------------------------------------------------

    @_guarded
    def start_session(self, seed: int, topic: str | None, now: datetime) -> int:
        return self._write(
            "INSERT INTO sessions (started_at, seed, topic) VALUES (?, ?, ?)", (to_text(now), seed, topic)
        )

    @_guarded
    def start_item(self, session_id: int, *, unit: str, kind: str, seed: int, difficulty: int,
                   variant_id: str, review: bool, target: str | None, now: datetime) -> int:
        """Store a variant just shown. SessionGone when a reset deleted the session: that foreign-key
        failure used to be reported as the variant "already shown", which only the unique key means."""
        try:
            with self._transaction():
                if self._db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                    raise SessionGone(f"session {session_id} is no longer in the progress store "
                                      "(the progress was reset); start again")
                return self._db.execute(
                    "INSERT INTO items (session_id, unit, kind, seed, difficulty, variant_id, review, target,"
                    " started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (session_id, unit, kind, seed, difficulty, variant_id, int(review), target, to_text(now)),
                ).lastrowid
        except sqlite3.IntegrityError as exc:
            raise VariantTaken(f"variant {variant_id} was already shown ({exc})") from exc

    @_guarded
    def record_answer(self, item_id: int, part: str, text: str, status: str, score: float,
                      mistake: str | None, now: datetime, *, parts: Collection[str]) -> str | None:
        """Store one graded line of an item whose answer parts are ``parts``, and the outcome it decides
        (first wrong, or the last part right: :func:`answer_outcome`); return that outcome, or None.

        Whether the part is already right and whether this answer leaves no part open are read in the
        same write transaction as the insert, so two processes answering one item at once are taken one
        after the other. Read before the transaction (as the front ends did), both stored a right answer
        to one part, or each answered one of the last two parts and neither saw the item complete, which
        then stayed open and uncredited for good."""
        with self._transaction():
            outcome, right = self._open_item(item_id)
            if part in right:
                raise ItemConflict(f"part {part!r} is already answered")
            self._db.execute(
                "INSERT INTO answers (item_id, part, text, status, score, mistake, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (item_id, part, well_formed_text(text[:MAX_ANSWER_CHARS]), status, float(score), mistake, to_text(now)),
            )
            completes = status == "correct" and right | {part} >= set(parts)
            decided = answer_outcome(status, outcome == "wrong", completes)
            if decided is not None:
                self._set_outcome(item_id, decided, now, mistake)
            if completes:
                self._close(item_id, now)
            return decided

    def _open_item(self, item_id: int) -> tuple[str | None, set[str]]:
        """The outcome and the parts answered right of an item that still takes answers and hints, as the
        open transaction sees them; ItemConflict when it is closed or gone."""
        row = self._db.execute("SELECT outcome, closed_at FROM items WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            raise ItemConflict(f"problem {item_id} is no longer in the progress store (was the progress reset?)")
        if row[1] is not None:
            raise ItemConflict("this problem is closed (finished, its solution shown, or left)")
        rows = self._db.execute("SELECT part FROM answers WHERE item_id = ? AND status = 'correct'", (item_id,))
        return row[0], {part for (part,) in rows.fetchall()}

    @_guarded
    def record_hint(self, item_id: int, part: str) -> int:
        """Count a hint on ``part`` of an item that still takes answers and return its level for that part
        (1 for the part's first hint); ItemConflict once the item is closed. A hint counted after every
        part was right took back the credit the item had earned unaided. Levels are per part: the second
        part of a problem starts again from the most general hint, and two windows asking at once get
        the next two levels, not the same one."""
        with self._transaction():
            self._open_item(item_id)
            # An item hinted before v3 has no rows, and its items.hints held the level it reached: its first
            # part asked goes on from there, as it would have before the upgrade.
            self._db.execute("INSERT OR IGNORE INTO hints (item_id, part, level) VALUES (?, ?, CASE WHEN EXISTS"
                             " (SELECT 1 FROM hints WHERE item_id = ?) THEN 0 ELSE"
                             " (SELECT hints FROM items WHERE id = ?) END)", (item_id, part, item_id, item_id))
            self._db.execute("UPDATE hints SET level = level + 1 WHERE item_id = ? AND part = ?", (item_id, part))
            self._db.execute("UPDATE items SET hints = hints + 1 WHERE id = ?", (item_id,))
            return self._db.execute("SELECT level FROM hints WHERE item_id = ? AND part = ?",
                                    (item_id, part)).fetchone()[0]

    @_guarded
    def finish_item(self, item_id: int, outcome: str, now: datetime) -> None:
        """Close an item: it takes no more answers. ``outcome`` is how it ended, unless an answer already
        decided it (a wrong answer stays wrong)."""
        with self._transaction():
            self._set_outcome(item_id, outcome, now, None)
            self._close(item_id, now)

    @_guarded
    def resume_item(self, item_id: int, parts: Collection[str], now: datetime) -> bool:
        """Open again an item the student quit (or that a dead process left open) to resume it; True when
        it is open. One whose every part is already right is decided and closed instead (False): before
        answers were taken one at a time, two answering its last parts at once left it undecided, and
        both front ends resumed it again and again without ever crediting it."""
        with self._transaction():
            self._db.execute("UPDATE items SET outcome = NULL, finished_at = NULL, closed_at = NULL"
                             " WHERE id = ? AND (outcome IS NULL OR outcome = 'quit')", (item_id,))
            try:
                _, right = self._open_item(item_id)
            except ItemConflict:
                return False
            if right >= set(parts):
                self._set_outcome(item_id, "correct", now, None)  # a wrong item stays wrong
                self._close(item_id, now)
                return False
            return True

    def _close(self, item_id: int, now: datetime) -> None:
        self._db.execute("UPDATE items SET closed_at = ? WHERE id = ? AND closed_at IS NULL", (to_text(now), item_id))

    def _set_outcome(self, item_id: int, outcome: str, now: datetime, mistake: str | None) -> None:
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}")
        self._db.execute(
            "UPDATE items SET outcome = ?, finished_at = ?, mistake = COALESCE(mistake, ?)"
            " WHERE id = ? AND outcome IS NULL",
            (outcome, to_text(now), mistake, item_id),
        )

    @_guarded
    def reset(self) -> None:
        """Forget all history (the base seed goes too, so new variants are drawn afresh)."""
        with self._transaction():
            for table in ("hints", "answers", "items", "sessions", "meta"):
                self._db.execute(f"DELETE FROM {table}")

    # -- reads -----------------------------------------------------------------------------------

    @contextmanager
    def _readable(self, table: str) -> Iterator[None]:
        """Rows are checked when the file is opened; one edited while it is open is refused here alike."""
        try:
            yield
        except (ValueError, TypeError, OverflowError) as exc:
            raise edited(self.path, f"a row of {table} cannot be read ({exc})") from exc

    _ITEMS = ("SELECT id, unit, kind, seed, difficulty, outcome, hints, review, target, mistake,"
              " started_at, finished_at, closed_at FROM items")

    @_guarded
    def items(self, unit: str | None = None) -> list[ItemRecord]:
        rows = self._db.execute(self._ITEMS + (" WHERE unit = ? ORDER BY id" if unit else " ORDER BY id"),
                                (unit,) if unit else ()).fetchall()
        return self._item_records(rows)

    @_guarded
    def last_item(self, kind: str | None = None) -> ItemRecord | None:
        """The latest item (of ``kind``), None when there is none: ``items()[-1]`` without reading the whole
        history, which the front ends did several times per answer (a 20,000-answer history is 8,000 items)."""
        rows = self._db.execute(self._ITEMS + (" WHERE kind = ?" if kind else "") + " ORDER BY id DESC LIMIT 1",
                                (kind,) if kind else ()).fetchall()
        return next(iter(self._item_records(rows)), None)

    @_guarded
    def item(self, item_id: int) -> ItemRecord:
        """The item stored under ``item_id`` (KeyError when there is none), read alone: the front ends show the
        item they just filed, which need not be the latest (the other front end may have filed one since)."""
        rows = self._db.execute(self._ITEMS + " WHERE id = ?", (item_id,)).fetchall()
        if not rows:
            raise KeyError(item_id)
        return self._item_records(rows)[0]

    def _item_records(self, rows: list[tuple]) -> list[ItemRecord]:
        with self._readable("items"):
            return [
                ItemRecord(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8], r[9],
                           from_text(r[10]), _moment(r[11]), _moment(r[12]))
                for r in rows
            ]

    @_guarded
    def answers(self, item_id: int | None = None) -> list[AnswerRecord]:
        sql = "SELECT item_id, part, text, status, score, mistake, at FROM answers"
        rows = self._db.execute(sql + (" WHERE item_id = ? ORDER BY id" if item_id else " ORDER BY id"),
                                (item_id,) if item_id else ()).fetchall()
        with self._readable("answers"):
            return [AnswerRecord(r[0], r[1], r[2], r[3], r[4], r[5], from_text(r[6])) for r in rows]

    @_guarded
    def hints_reached(self, item_id: int) -> dict[str, int]:
        """The hint level each part of an item reached (a part never hinted is absent), so a resumed
        problem can show again the hints already given. An item hinted before v3 kept no levels per
        part: it has none here (its ``items.hints`` still counts them)."""
        rows = self._db.execute("SELECT part, level FROM hints WHERE item_id = ?", (item_id,)).fetchall()
        with self._readable("hints"):
            return {str(part): int(level) for part, level in rows}

    @_guarded
    def seen(self, kind: str) -> set[tuple[int, int]]:
        """(seed, difficulty) pairs of ``kind`` already shown: never shown again."""
        rows = self._db.execute("SELECT seed, difficulty FROM items WHERE kind = ?", (kind,)).fetchall()
        return {(int(s), int(d)) for s, d in rows}

    @_guarded
    def session_count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
