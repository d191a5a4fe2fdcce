"""A hostile --db cannot hang or crash the quiz: exact schema or a clear refusal, every query time-boxed."""

from __future__ import annotations

import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from problemgen.model.core import ProblemgenError
from problemgen.practice import progress
from problemgen.practice.progress import ProgressStore

ROOT = Path(__file__).resolve().parents[1]
RECURSIVE = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r"


def _hostile_db(path, statements: list[str], version: int = progress.SCHEMA_VERSION) -> None:
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.execute(f"PRAGMA user_version = {version}")
    db.commit()
    db.close()


def test_tables_replaced_by_recursive_views_are_refused_at_once(tmp_path):
    path = tmp_path / "evil.sqlite3"
    _hostile_db(path, [f"CREATE VIEW {name} AS {RECURSIVE}" for name in ("meta", "sessions", "items", "answers")])
    started = time.monotonic()
    refused = r"not a problemgen progress store \(unexpected schema v\d+: view 'answers'"
    with pytest.raises(ProblemgenError, match=refused):
        ProgressStore(path)
    assert time.monotonic() - started < 1.0


def test_the_progress_command_says_so_in_one_line_and_exits_2(tmp_path):
    path = tmp_path / "evil.sqlite3"
    _hostile_db(path, [f"CREATE VIEW {name} AS {RECURSIVE}" for name in ("meta", "sessions", "items", "answers")])
    done = subprocess.run([sys.executable, "-m", "problemgen", "progress", "--db", str(path)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "not a problemgen progress store" in lines[0]


def test_a_trigger_or_an_extra_view_on_a_real_store_is_refused(tmp_path):
    path = tmp_path / "store.sqlite3"
    ProgressStore(path).close()
    db = sqlite3.connect(path)
    db.execute("CREATE TRIGGER t AFTER INSERT ON answers BEGIN DELETE FROM items; END")
    db.commit()
    db.close()
    with pytest.raises(ProblemgenError, match="trigger 't'"):
        ProgressStore(path)


def test_a_foreign_database_is_refused_without_being_written(tmp_path):
    path = tmp_path / "other.sqlite3"
    _hostile_db(path, ["CREATE TABLE accounts (id INTEGER)"], version=0)
    before = path.read_bytes()
    with pytest.raises(ProblemgenError, match="table 'accounts'"):
        ProgressStore(path)
    assert path.read_bytes() == before


def test_every_statement_is_interrupted_after_the_time_box(monkeypatch):
    monkeypatch.setattr(progress, "QUERY_SECONDS", 0.3)
    db = sqlite3.connect(":memory:", factory=progress._TimedConnection)
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        db.execute(f"SELECT count(*) FROM ({RECURSIVE})").fetchall()
    assert time.monotonic() - started < 3.0
    assert db.execute("SELECT 1").fetchone() == (1,)  # the next statement gets its own time box


def test_a_write_cut_off_by_its_time_box_says_so_and_leaves_the_store_usable(tmp_path, monkeypatch):
    """SQLite rolls back the statement it interrupted itself; a second ROLLBACK once replaced the real
    error with "cannot rollback - no transaction is active"."""
    path = tmp_path / "big.sqlite3"
    with ProgressStore(path) as store:
        session = store.start_session(1, None, T0)
        with store._transaction():
            store._db.executemany(
                "INSERT INTO items (session_id, unit, kind, seed, difficulty, variant_id, started_at) "
                "VALUES (?, 'attention', 'attention.scores', ?, 1, 'v', ?)",
                [(session, seed, progress.to_text(T0)) for seed in range(20000)])
    store = ProgressStore(path)
    monkeypatch.setattr(progress, "QUERY_SECONDS", -1.0)  # every statement past its first steps is cut off
    with pytest.raises(ProblemgenError, match="took longer than"):
        store.reset()
    monkeypatch.setattr(progress, "QUERY_SECONDS", 2.0)
    assert not store._db.in_transaction
    store.start_session(1, None, T0)
    store.close()


# ------------------------------------------------------------------- damaged and hand-edited files

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
QUIZ = [sys.executable, "-m", "problemgen", "quiz"]
ENV = {**os.environ, "PROBLEMGEN_NOW": "2026-03-01T09:00:00Z",
       "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _sound_store(path) -> None:
    """A store with a session, two answered items, an open one and a base seed, closed cleanly."""
    with ProgressStore(path) as store:
        store.base_seed()
        session = store.start_session(7, None, T0)
        for seed in (1, 2, 3):
            item = store.start_item(session, unit="attention", kind="attention.scores", seed=seed, difficulty=1,
                                    variant_id=f"attention.scores/d1/s{seed}", review=False, target=None, now=T0)
            if seed < 3:
                store.record_answer(item, "scores", "[[1]]", "correct", 1.0, None, T0, parts=["scores"])


def _edited(path, sql: str) -> bytes:
    db = sqlite3.connect(path)
    db.executescript(sql)
    db.commit()
    db.close()
    return path.read_bytes()


def _damage_page(path, table: str) -> bytes:
    """Overwrite the root page of ``table`` with fixed noise, as a disk error or a torn copy would."""
    db = sqlite3.connect(path)
    page, size = (db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0],
                  db.execute("PRAGMA page_size").fetchone()[0])
    db.close()
    with open(path, "r+b") as file:
        file.seek((page - 1) * size)
        file.write(random.Random(0).randbytes(size))
    return path.read_bytes()


@pytest.mark.parametrize("sql, message", [
    ("UPDATE items SET started_at = 'yesterday' WHERE id = 2", r"items row 2: started_at is 'yesterday', not a time"),
    ("UPDATE answers SET at = 12345", r"answers row 1: at is '12345', not a time"),
    ("UPDATE answers SET at = '2026-02-30T00:00:00Z' WHERE id = 2", r"answers row 2: at is '2026-02-30T00:00:00Z'"),
    ("UPDATE items SET finished_at = '9999-12-31T23:59:59Z' WHERE id = 1", r"items row 1: finished_at is '9999-12-31"),
    ("UPDATE items SET seed = 'abc' WHERE id = 3", r"items row 3: seed is 'abc', not a whole number"),
    ("UPDATE items SET hints = 1e308 WHERE id = 1", r"items row 1: hints is 1.0e\+308, not a count"),
    ("UPDATE answers SET text = x'fffe00'", r"answers row 1: text is X'FFFE00'"),
    ("UPDATE meta SET value = 'banana'", r"meta base_seed is 'banana', not a whole number"),
    ("UPDATE meta SET value = '1e3'", r"meta base_seed is '1e3'"),
    ("UPDATE meta SET value = ''", r"meta base_seed is '', not"),
    ("UPDATE meta SET value = '99999999999999999999999'", r"meta base_seed is '99999999999999999999999'"),
], ids=["word for a time", "number for a time", "30 February", "year 9999", "text seed", "huge hint count",
        "bytes for an answer", "word seed", "float seed", "empty seed", "seed beyond SQLite"])
def test_a_hand_edited_row_is_refused_naming_the_file_and_the_row_and_is_left_as_it_is(tmp_path, sql, message):
    path = tmp_path / "edited.sqlite3"
    _sound_store(path)
    before = _edited(path, sql)
    with pytest.raises(ProblemgenError, match=re.escape(str(path)) + ": " + message):
        ProgressStore(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("table", ["meta", "items", "answers", "items_by_unit"])
def test_a_damaged_page_is_refused_at_opening_before_anything_is_written(tmp_path, table):
    """Pages the start-up queries never read (the meta table's, when --seed is given; an index's) used to let
    the quiz run and append to a file SQLite's integrity check calls malformed."""
    path = tmp_path / "damaged.sqlite3"
    _sound_store(path)
    before = _damage_page(path, table)
    with pytest.raises(ProblemgenError, match=re.escape(str(path)) + ": the progress file is damaged"):
        ProgressStore(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", ["page", "row", "seed"])
def test_the_quiz_and_progress_say_what_is_wrong_in_one_line_exit_2_and_write_nothing(tmp_path, damage):
    path = tmp_path / "student.sqlite3"
    _sound_store(path)
    before = {"page": lambda: _damage_page(path, "meta"),
              "row": lambda: _edited(path, "UPDATE answers SET at = '2026-02-30T00:00:00Z'"),
              "seed": lambda: _edited(path, "UPDATE meta SET value = 'banana'")}[damage]()
    seed = ["--seed", "7"] if damage == "page" else []  # with --seed the quiz never reads the meta table
    for command in (QUIZ + ["--db", str(path), *seed], QUIZ[:-1] + ["progress", "--db", str(path)]):
        done = subprocess.run(command, input="quit\n", capture_output=True, text=True, env=ENV, timeout=60)
        lines = done.stderr.strip().splitlines()
        assert (done.returncode, len(lines)) == (2, 1), done.stderr
        assert lines[0].startswith(f"error: {path}: ") and "Traceback" not in done.stdout
        assert path.read_bytes() == before


def test_a_row_edited_while_the_store_is_open_is_refused_in_one_line_not_a_traceback(tmp_path):
    path = tmp_path / "open.sqlite3"
    _sound_store(path)
    with ProgressStore(path) as store:
        _edited(path, "UPDATE answers SET at = 'garbage' WHERE id = 1")
        with pytest.raises(ProblemgenError, match=re.escape(str(path)) + ": a row of answers cannot be read"):
            store.answers()
