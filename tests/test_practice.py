"""Practice rules: mastery, gating, deliberate practice, difficulty staircase, Leitner review, seeds,
and the shipped curriculum (every kind it names is registered)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problemgen.model.core import ProblemgenError
from problemgen.practice.rules import (
    FAILURE,
    SUCCESS,
    WHEEL_SPIN_AFTER,
    apply_offer,
    choose_next,
    grade_of,
    mistake_history,
    resumable,
    load_curriculum,
    next_seed,
    parse_curriculum,
    pick_difficulty,
    summary,
    unit_state,
)
from problemgen.practice.progress import AnswerRecord, ItemRecord

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)
DAY = timedelta(days=1)

CURRICULUM = parse_curriculum({
    "review": {"intervals_days": [1, 3, 7]},
    "unit": [
        {"id": "a", "title": "A", "kinds": ["a.one", "a.two"], "mastery": {"streak": 3}},
        {"id": "b", "title": "B", "kinds": ["b.one"], "requires": ["a"],
         "mastery": {"correct": 2, "of_last": 3}},
        {"id": "c", "title": "C", "kinds": ["c.one"], "requires": ["b"]},
    ],
})
AVAILABLE = {"a.one": (1, 2, 3), "a.two": (1, 2, 3), "b.one": (1, 2), "c.one": (1, 2, 3)}


class History:
    """Builds ItemRecords one after another, a minute apart unless told otherwise."""

    def __init__(self) -> None:
        self.items: list[ItemRecord] = []
        self.now = T0

    def add(self, outcome, kind="a.one", hints=0, mistake=None, at=None, difficulty=1):
        self.now = at or self.now + timedelta(minutes=1)
        unit = kind.split(".")[0]
        self.items.append(ItemRecord(len(self.items) + 1, unit, kind, len(self.items), difficulty, outcome,
                                     hints, False, None, mistake, self.now, self.now))
        return self

    def state(self, unit="a"):
        return unit_state(CURRICULUM.unit(unit), [i for i in self.items if i.unit == unit],
                          CURRICULUM.intervals_days)


def test_how_items_count():
    h = History().add("correct").add("correct", hints=1).add("wrong").add("revealed").add("skipped")
    h.add("another").add("quit").add(None)
    assert [grade_of(i) for i in h.items] == [SUCCESS, None, FAILURE, FAILURE, None, None, None, None]


def test_three_unaided_correct_in_a_row_masters_a_streak_unit():
    h = History().add("correct").add("correct", kind="a.two")
    assert h.state().progress == 2 and not h.state().mastered
    h.add("correct")
    state = h.state()
    assert state.mastered and state.box == 1 and state.due == h.now + DAY


def test_a_wrong_answer_restarts_the_streak_but_hints_and_skips_do_not():
    h = History().add("correct").add("correct").add("wrong").add("correct")
    assert h.state().progress == 1
    h.add("correct", hints=2).add("skipped").add("another")
    assert h.state().progress == 1 and not h.state().mastered
    h.add("correct").add("correct", kind="a.two")
    assert h.state().mastered


def test_showing_the_solution_counts_as_not_known():
    h = History().add("correct").add("correct").add("revealed").add("correct")
    assert h.state().progress == 1


def test_accuracy_window_rule_needs_k_of_the_last_n():
    h = History().add("correct", kind="b.one").add("wrong", kind="b.one")
    assert not h.state("b").mastered
    h.add("correct", kind="b.one")
    assert h.state("b").mastered  # 2 of the last 3


def test_units_unlock_in_order_when_prerequisites_are_mastered():
    h = History()
    rows = {r["id"]: r for r in summary(CURRICULUM, h.items, h.now, AVAILABLE)}
    assert [rows[u]["status"] for u in "abc"] == ["learning", "locked", "locked"]
    h.add("correct").add("correct", kind="a.two").add("correct")
    rows = {r["id"]: r for r in summary(CURRICULUM, h.items, h.now, AVAILABLE)}
    assert [rows[u]["status"] for u in "abc"] == ["mastered", "learning", "locked"]
    assert choose_next(CURRICULUM, h.items, h.now, AVAILABLE).unit.id == "b"


def test_a_locked_topic_is_practised_with_a_notice_naming_what_to_master_first():
    choice = choose_next(CURRICULUM, [], T0, AVAILABLE, topic="b")
    assert choice.unit.id == "b" and "'b' is still locked (master a first)" in choice.notice
    assert choose_next(CURRICULUM, [], T0, AVAILABLE, topic="a").notice == ""


def test_an_unknown_topic_gets_a_suggestion():
    with pytest.raises(ProblemgenError, match="did you mean 'abc'"):
        choose_next(parse_curriculum({"unit": [{"id": "abc", "title": "x", "kinds": ["a.one"]}]}),
                    [], T0, AVAILABLE, topic="abd")


def test_a_prerequisite_without_installed_kinds_does_not_gate():
    available = {k: v for k, v in AVAILABLE.items() if k != "b.one"}
    h = History().add("correct").add("correct", kind="a.two").add("correct")
    assert choose_next(CURRICULUM, h.items, h.now, available).unit.id == "c"


def test_after_a_wrong_answer_the_next_item_targets_the_same_kind_and_misconception():
    h = History().add("correct", kind="a.one").add("wrong", kind="a.two", mistake="no_scaling")
    choice = choose_next(CURRICULUM, h.items, h.now, AVAILABLE)
    assert (choice.kind, choice.target, choice.reason) == ("a.two", "no_scaling", "practice again")
    h.add("correct", kind="a.two", hints=1)  # right only with a hint: keep practising it
    assert choose_next(CURRICULUM, h.items, h.now, AVAILABLE).kind == "a.two"
    h.add("correct", kind="a.two")  # unaided: back to rotation (a.one has been seen as often)
    choice = choose_next(CURRICULUM, h.items, h.now, AVAILABLE)
    assert choice.target is None and choice.kind == "a.one"


def test_without_failures_kinds_rotate_least_seen_first():
    h = History()
    kinds = []
    for _ in range(4):
        kinds.append(choose_next(CURRICULUM, h.items, h.now, AVAILABLE).kind)
        h.add("skipped", kind=kinds[-1])
    assert kinds == ["a.one", "a.two", "a.one", "a.two"]


def test_difficulty_rises_after_two_successes_and_falls_after_a_failure():
    h = History()
    levels = []
    for outcome in ["correct", "correct", "correct", "correct", "wrong", "correct", "correct", "correct", "correct"]:
        h.add(outcome)
        levels.append(h.state().level)
    assert levels == [1, 2, 2, 3, 2, 2, 3, 3, 3]


def test_difficulty_is_clamped_to_what_the_kind_offers():
    assert pick_difficulty(3, (1, 2)) == 2
    assert pick_difficulty(1, (2, 3)) == 2
    assert pick_difficulty(2, (1, 2, 3)) == 2


def test_leitner_review_moves_up_on_recall_and_back_to_box_one_on_a_miss():
    h = History().add("correct").add("correct", kind="a.two").add("correct")
    mastered = h.now
    h.add("correct", at=mastered + timedelta(hours=2))  # practice before the due date: no change
    assert (h.state().box, h.state().due) == (1, mastered + DAY)
    h.add("correct", at=mastered + DAY)  # due: recalled
    assert (h.state().box, h.state().due) == (2, mastered + DAY + 3 * DAY)
    h.add("correct", hints=1, at=mastered + 5 * DAY)  # due again: right only with a hint = missed
    assert (h.state().box, h.state().due) == (1, mastered + 6 * DAY)
    assert h.state().mastered  # mastery, once earned, is kept


def test_due_review_is_chosen_before_learning_a_new_unit():
    h = History().add("correct").add("correct", kind="a.two").add("correct")
    later = h.now + 2 * DAY
    choice = choose_next(CURRICULUM, h.items, later, AVAILABLE)
    assert choice.unit.id == "a" and choice.review and choice.reason == "review"
    assert not choose_next(CURRICULUM, h.items, h.now + timedelta(hours=1), AVAILABLE).review


def test_summary_shows_the_review_schedule():
    h = History().add("correct").add("correct", kind="a.two").add("correct")
    rows = summary(CURRICULUM, h.items, h.now + 2 * DAY, AVAILABLE)
    assert rows[0]["status"] == "review due" and rows[0]["next_review"] == "2026-03-02T09:03:00Z"


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.sets(st.tuples(st.integers(0, 999_999), st.just(1)), max_size=30))
def test_next_seed_is_deterministic_and_never_a_seen_one(base, seen):
    seed = next_seed(base, "a.one", 1, seen)
    assert (seed, 1) not in seen
    assert seed == next_seed(base, "a.one", 1, set(seen))


def test_different_base_seeds_give_different_variants():
    assert len({next_seed(base, "a.one", 1, set()) for base in range(50)}) > 45


@pytest.mark.parametrize(
    "data, message",
    [
        ({"unit": [{"id": "x", "title": "X", "kinds": [], "colour": 1}]}, "unknown key 'colour'"),
        ({"unit": [{"id": "x", "title": "X"}]}, "missing key 'kinds'"),
        ({"unit": [{"id": "x", "title": "X", "kinds": [], "requires": ["y"]}]}, "not an earlier unit"),
        ({"unit": [{"id": "x", "title": "X", "kinds": [], "mastery": {"streak": 0}}]}, "impossible"),
        ({"unit": [{"id": "x", "title": "X", "kinds": [], "mastery": {"often": 2}}]}, "streak = N"),
        ({"unit": [{"id": "x", "title": "X", "kinds": ["a.b"], "hints": {"a.c": "?"}}]}, "not one of its kinds"),
        ({"review": {"intervals_days": [0]}, "unit": []}, "positive whole days"),
        ({}, "no \\[\\[unit\\]\\]"),
    ],
)
def test_malformed_curricula_are_refused_naming_the_unit_and_key(data, message):
    with pytest.raises(ProblemgenError, match=message):
        parse_curriculum(data, "curriculum.toml")


def test_a_toml_syntax_error_names_the_file_and_line(tmp_path):
    path = tmp_path / "curriculum.toml"
    path.write_text("[[unit]]\nid = \n", encoding="utf-8")
    with pytest.raises(ProblemgenError, match=r"curriculum.toml: .*line 2"):
        load_curriculum(path)


# ---------------------------------------------------------------------- the shipped curriculum


def test_every_kind_in_the_shipped_curriculum_is_registered():
    from problemgen.model.registry import all_kinds

    registered = {k.name for k in all_kinds()}
    named = load_curriculum().all_kinds()
    assert sorted(set(named) - registered) == []
    assert len(named) == len(set(named)), "a kind belongs to one unit only"


def test_every_registered_kind_is_in_some_unit_so_the_quiz_can_ask_it():
    from problemgen.model.registry import all_kinds

    missing = sorted({k.name for k in all_kinds()} - set(load_curriculum().all_kinds()))
    assert missing == [], f"add these kinds to a unit of question_banks/curriculum.toml: {missing}"


def test_the_shipped_curriculum_starts_with_attention_and_every_kind_has_a_first_hint():
    curriculum = load_curriculum()
    assert curriculum.units[0].id == "attention" and not curriculum.units[0].requires
    for unit in curriculum.units:
        for kind in unit.kinds:
            assert unit.hint_for(kind), f"{kind} has no level-1 hint"


OUTCOMES = st.sampled_from(["correct", "wrong", "revealed", "skipped", "another", "quit", None])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(OUTCOMES, st.integers(0, 2), st.integers(0, 60 * 24 * 5)), max_size=40))
def test_state_invariants_hold_for_any_history(events):
    """Whatever happens: counts stay in range, mastery once earned is kept, reviews stay scheduled."""
    h = History()
    was_mastered = False
    for outcome, hints, gap_minutes in events:
        h.add(outcome, hints=hints, at=h.now + timedelta(minutes=gap_minutes))
        state = h.state()
        assert 0 <= state.progress <= state.needed and 1 <= state.level <= 3
        assert state.correct <= state.answered
        assert state.mastered or not was_mastered
        if state.mastered:
            assert 1 <= state.box <= len(CURRICULUM.intervals_days) and state.due > state.mastered_at
        was_mastered = state.mastered


def test_a_unit_is_not_mastered_until_every_kind_has_been_answered_right_unaided():
    h = History()
    for _ in range(6):
        h.add("correct", kind="a.one")
    state = h.state()
    assert state.progress == 3 and not state.mastered and state.missing == ("a.two",)
    assert choose_next(CURRICULUM, h.items, h.now, AVAILABLE).kind == "a.two"  # the missing skill first
    h.add("correct", kind="a.two", hints=1)  # with a hint: the skill is seen, not mastered
    assert not h.state().mastered and h.state().skills["a.two"].status == "seen"
    h.add("correct", kind="a.two")
    assert h.state().mastered


def test_summary_lists_each_skill_as_mastered_seen_or_unseen_with_accuracy():
    h = History().add("correct", kind="a.one").add("wrong", kind="a.one")
    skills = {s["kind"]: s for s in summary(CURRICULUM, h.items, h.now, AVAILABLE)[0]["skills"]}
    assert skills["a.one"]["status"] == "mastered" and skills["a.one"]["accuracy"] == 0.5
    assert skills["a.two"] == {"kind": "a.two", "status": "unseen", "shown": 0, "answered": 0,
                               "correct": 0, "accuracy": None}
    h.add("skipped", kind="a.two")
    skills = {s["kind"]: s for s in summary(CURRICULUM, h.items, h.now, AVAILABLE)[0]["skills"]}
    assert skills["a.two"]["status"] == "seen"


def test_an_uninstalled_kind_does_not_block_mastery():
    h = History().add("correct").add("correct").add("correct")
    rows = summary(CURRICULUM, h.items, h.now, {k: v for k, v in AVAILABLE.items() if k != "a.two"})
    assert rows[0]["status"] == "mastered"


def test_wheel_spinning_offers_an_example_an_easier_level_and_the_prerequisite():
    h = History().add("correct").add("correct", kind="a.two").add("correct")  # unit a mastered
    for n in range(WHEEL_SPIN_AFTER):
        choice = choose_next(CURRICULUM, h.items, h.now, AVAILABLE, kind="b.one", difficulty=2)
        assert choice.offers == ()
        h.add("wrong" if n % 2 else "skipped", kind="b.one", difficulty=2)
    choice = choose_next(CURRICULUM, h.items, h.now, AVAILABLE, kind="b.one", difficulty=2)
    assert choice.offers == ("example", "easier", "prerequisite")
    assert apply_offer(choice, "example", CURRICULUM, h.items, h.now, AVAILABLE).example
    assert apply_offer(choice, "easier", CURRICULUM, h.items, h.now, AVAILABLE).difficulty == 1
    back = apply_offer(choice, "prerequisite", CURRICULUM, h.items, h.now, AVAILABLE)
    assert back.unit.id == "a" and back.offers == ()
    h.add("skipped", kind="b.one")  # took the worked example: no new offer until the next 8
    assert choose_next(CURRICULUM, h.items, h.now, AVAILABLE, kind="b.one").offers == ()
    h.add("correct", kind="b.one")
    assert h.state("b").skills["b.one"].stuck == 0


def test_an_offer_not_on_the_table_is_refused():
    choice = choose_next(CURRICULUM, [], T0, AVAILABLE)
    with pytest.raises(ProblemgenError, match="not on offer"):
        apply_offer(choice, "easier", CURRICULUM, [], T0, AVAILABLE)


def test_free_practice_fixes_the_kind_and_the_difficulty():
    choice = choose_next(CURRICULUM, [], T0, AVAILABLE, kind="a.two", difficulty=3)
    assert (choice.unit.id, choice.kind, choice.difficulty, choice.notice) == ("a", "a.two", 3, "")
    assert choose_next(CURRICULUM, [], T0, AVAILABLE, kind="b.one", difficulty=3).difficulty == 2
    with pytest.raises(ProblemgenError, match="unknown kind 'a.too'.*did you mean 'a.two'"):
        choose_next(CURRICULUM, [], T0, AVAILABLE, kind="a.too")


def test_mistake_history_counts_each_misconception_and_says_when_it_was_overcome():
    h = History().add("wrong", kind="a.one", mistake="no_scaling").add("wrong", kind="a.two", mistake="transposed")
    answers = [AnswerRecord(1, "x", "1", "wrong", 0.0, "no_scaling", T0),
               AnswerRecord(1, "x", "2", "wrong", 0.0, "no_scaling", T0),
               AnswerRecord(2, "x", "3", "wrong", 0.0, "transposed", T0)]
    h.add("correct", kind="a.one")
    rows = {r["mistake"]: r for r in mistake_history(h.items, answers)}
    assert rows["no_scaling"]["count"] == 2 and rows["no_scaling"]["overcome"]
    assert rows["transposed"]["kinds"] == ["a.two"] and not rows["transposed"]["overcome"]


def test_an_item_left_unfinished_is_the_one_to_resume():
    h = History().add("correct").add("quit")
    assert resumable(h.items) is h.items[-1]
    h.add("skipped")
    assert resumable(h.items) is None


def test_skip_leaves_the_skill_even_while_a_misconception_is_practised():
    h = History().add("wrong", kind="a.two", mistake="no_scaling").add("skipped", kind="a.two")
    assert choose_next(CURRICULUM, h.items, h.now, AVAILABLE).kind == "a.two"  # without leave: stays
    choice = choose_next(CURRICULUM, h.items, h.now, AVAILABLE, leave="a.two")
    assert choice.kind == "a.one" and choice.target is None
