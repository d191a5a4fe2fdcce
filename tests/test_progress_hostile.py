"""A hostile --db cannot hang or crash the quiz: exact schema or a clear refusal, every query time-boxed."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

import pytest

from problemgen.model.core import ProblemgenError
from problemgen.practice import progress
from problemgen.practice.progress import ProgressStore

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
