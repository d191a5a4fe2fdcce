"""Two processes answering one item of one progress file at the same moment (two servers, or the page
beside the quiz): the store takes them one after the other, so the item's history stays whole.

Each trial starts two forked processes that open the store, wait at a barrier and answer at once,
through ``engine.Practice`` with the real generator and grader, as two servers would.
"""

from __future__ import annotations

import multiprocessing
import os
from datetime import datetime, timezone

import pytest

from problemgen.model.core import ProblemgenError
from problemgen.practice.progress import ProgressStore
from problemgen.practice.rules import load_curriculum
from problemgen.practice.services import default_services
from problemgen.practice.web.engine import Practice, ServerSession
from problemgen.sheets.answersheet import key_value, toml_value

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="starts the racing processes by fork")

NOW = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
CURRICULUM = load_curriculum()
SERVICES = default_services()
KIND = "attention.projection"


def practice(store: ProgressStore, session: int) -> Practice:
    return Practice(store, CURRICULUM, SERVICES, lambda: NOW, ServerSession(session))


def key_text(part) -> str:
    """The key as a student types it."""
    value = key_value(part)
    return value if isinstance(value, str) else toml_value(value)


def new_item(path: str, session: int, seed: int):
    """A new item of ``KIND`` (three parts), the latest of the store; returns its view."""
    problem = SERVICES.generate(KIND, seed, 1)
    with ProgressStore(path) as store:
        store.start_item(session, unit=CURRICULUM.unit_of_kind(KIND).id, kind=KIND, seed=seed, difficulty=1,
                         variant_id=problem.variant_id, review=False, target=None, now=NOW)
        return practice(store, session).current()


def _answer(path: str, session: int, item: int, part: str, text: str, start, results) -> None:
    """One racer: open the store, wait for the other, answer."""
    with ProgressStore(path) as store:
        loop = practice(store, session)
        start.wait()
        try:
            results.put(loop.answer(item, part, text)["status"])
        except ProblemgenError as exc:
            results.put(f"refused: {exc}")


def race(path: str, session: int, item: int, answers: list[tuple[str, str]]) -> list[str]:
    """Send each (part, text) from its own process at the same moment; what each was told."""
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(len(answers)), context.Queue()
    racers = [context.Process(target=_answer, args=(path, session, item, part, text, start, results))
              for part, text in answers]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(30)
    return sorted(results.get(timeout=5) for _ in racers)


@pytest.fixture
def started(tmp_path):
    """A progress file and the session the racers file their items under."""
    path = str(tmp_path / "progress.sqlite3")
    with ProgressStore(path) as store:
        return path, store.start_session(store.base_seed(), None, NOW)


def test_the_same_right_answer_sent_twice_at_once_is_stored_once(started):
    """Checked outside the write transaction, both processes found the part open and both stored a right
    answer (13 of 15 trials); now the second is told the part is already answered."""
    path, session = started
    for trial in range(15):
        view = new_item(path, session, trial)
        part = view.problem.parts[0]
        told = race(path, session, view.id, [(part.key, key_text(part))] * 2)
        assert told == ["correct", f"refused: part {part.key!r} is already answered"], (trial, told)
        with ProgressStore(path) as store:
            right = [a for a in store.answers(view.id) if a.status == "correct"]
        assert len(right) == 1, trial


def test_the_last_two_parts_answered_at_once_complete_the_item(started):
    """Each process saw the other part still open, so neither decided the item: every part right, the
    outcome empty, never credited, and resumed again and again (10 of 10 trials)."""
    path, session = started
    for trial in range(10):
        view = new_item(path, session, trial)
        *first, one, other = view.problem.parts
        with ProgressStore(path) as store:
            for part in first:
                assert practice(store, session).answer(view.id, part.key, key_text(part))["status"] == "correct"
        told = race(path, session, view.id, [(one.key, key_text(one)), (other.key, key_text(other))])
        assert told == ["correct", "correct"], (trial, told)
        with ProgressStore(path) as store:
            assert store.items()[-1].outcome == "correct", trial


def test_two_front_ends_drawing_the_next_problem_at_once_each_get_their_own(started):
    """The quiz and the page draw the next variant from the same seed and history: asked at once, both drew
    the same one and the second to store it stopped with "variant … was already shown". Here the other
    front end files its next problem between this one's reading of the history and its storing."""
    path, session = started
    with ProgressStore(path) as first, ProgressStore(path) as second:
        one, other, filed = practice(first, session), practice(second, session), []
        seen = first.seen

        def history_read_just_before_the_other_files(kind):
            before = seen(kind)
            if not filed:
                filed.append(other.start(resume=False))
            return before

        first.seen = history_read_just_before_the_other_files
        mine = one.start(resume=False)
        theirs = filed[0]
        assert (mine.record.kind, mine.record.seed) != (theirs.record.kind, theirs.record.seed)
        assert mine.id != theirs.id and mine.problem.seed == mine.record.seed
        assert sorted(r.id for r in first.items()) == sorted([mine.id, theirs.id])
