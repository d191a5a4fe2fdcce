"""The quiz session loop, driven line by line with a scripted console and a tiny fake curriculum.

Generation and rendering are fakes (two-part arithmetic problems whose answers follow from the seed),
grading is the real ``grading.grade_text``, and the store is a real SQLite file, so these tests pin the
loop's behaviour: feedback, hints, solutions, another/skip/quit, mastery, unlocking, review, replay.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from problemgen.model.core import AnswerPart, Problem, ProblemgenError
from problemgen.misconceptions.catalogue import describe, mistake
from problemgen.practice.rules import next_seed, parse_curriculum
from problemgen.practice.progress import ProgressStore
from problemgen.practice.quiz import COMMANDS, Console, QuizSession, Services, hint_text

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)

CURRICULUM = parse_curriculum({
    "unit": [
        {"id": "sums", "title": "Sums", "kinds": ["toy.sum", "toy.pair"], "mastery": {"streak": 2},
         "hint": "Add the two numbers."},
        {"id": "products", "title": "Products", "kinds": ["toy.product"], "requires": ["sums"]},
    ],
})


def toy_problem(kind: str, seed: int, difficulty: int) -> Problem:
    """a + b (one part), or a + b and a - b (two parts); the known mistake is a * b."""
    a, b = seed % 7 + 2, seed % 5 + 3 * difficulty
    plus = AnswerPart("total", "integer", a + b, label="the sum", mistakes=(mistake("no_scaling", a * b),))
    parts = [plus]
    if kind == "toy.pair":
        parts.append(AnswerPart("difference", "integer", a - b, label="the difference"))
    if kind == "toy.product":
        parts = [AnswerPart("product", "integer", a * b, label="the product")]
    return Problem(kind, seed, difficulty, {}, kind.title(), "toy", {"a": a, "b": b}, tuple(parts),
                   {"ab": a * 100 + b, "total": a + b})


def services() -> Services:
    from problemgen.sheets.grading import grade_text

    return Services(
        generate=toy_problem,
        grade=grade_text,
        render=lambda p, block: f"[{block}] a = {p.params['a']}, b = {p.params['b']}",
        describe=lambda part: "a whole number",
        available={"toy.sum": (1, 2, 3), "toy.pair": (1, 2), "toy.product": (1,)},
    )


class Script:
    """A console whose answers may depend on the problem on screen (``callable(problem)`` lines)."""

    def __init__(self, *lines) -> None:
        self.lines = list(lines)
        self.out: list[str] = []
        self.session: QuizSession | None = None

    def read(self, prompt: str) -> str:
        self.out.append(prompt)
        if not self.lines:
            raise EOFError
        line = self.lines.pop(0)
        if callable(line):
            line = line(*self.current())
        self.out.append(line + "\n")
        return line

    def current(self) -> tuple[Problem, AnswerPart]:
        """The problem on screen and the part being asked (the first not yet answered right)."""
        store = self.session.store
        last = store.items()[-1]
        problem = self.session.services.generate(last.kind, last.seed, last.difficulty)
        done = {a.part for a in store.answers(last.id) if a.status == "correct"}
        return problem, next(p for p in problem.parts if p.key not in done)

    @property
    def text(self) -> str:
        return "".join(self.out)


def right(problem: Problem, part: AnswerPart) -> str:
    """The right answer to whatever part is being asked."""
    return str(part.value)


def slip(problem: Problem, part: AnswerPart) -> str:
    """The answer the part's first known mistake gives."""
    return str(part.mistakes[0].value)


def run(store, *lines, clock=lambda: T0, seed=11, topic=None) -> tuple[int, Script]:
    script = Script(*lines)
    session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), services(),
                          clock=clock, seed=seed, topic=topic)
    script.session = session
    return session.run(), script


@pytest.fixture
def store(tmp_path):
    with ProgressStore(tmp_path / "quiz.sqlite3") as s:
        yield s


def test_a_right_answer_is_confirmed_and_recorded(store):
    code, script = run(store, right, "quit")
    assert code == 0
    assert "✓ Correct." in script.text and "Sums: progress 1 of 2" in script.text
    first = store.items()[0]
    assert (first.kind, first.outcome, first.hints) == ("toy.sum", "correct", 0)
    assert [a.status for a in store.answers()] == ["correct"]


def test_a_wrong_answer_names_the_misconception_and_the_next_item_targets_it(store):
    code, script = run(store, slip, right, "quit")
    assert "✗ Wrong." in script.text
    assert f"Known mistake: {describe('no_scaling')}." in script.text
    assert "Try again" in script.text
    items = store.items()
    assert (items[0].outcome, items[0].mistake) == ("wrong", "no_scaling")
    assert (items[1].kind, items[1].target) == ("toy.sum", "no_scaling")  # same skill, same trap
    assert "watch for this mistake" in script.text


def test_an_unreadable_answer_is_invalid_says_what_is_expected_and_is_not_held_against_the_student(store):
    code, script = run(store, "twelve", right, "quit")
    assert "? I could not read that" in script.text and "Expected a whole number." in script.text
    assert [a.status for a in store.answers()] == ["invalid", "correct"]
    assert store.items()[0].outcome == "correct"


def test_after_a_wrong_answer_the_student_may_retry_but_the_item_stays_wrong(store):
    code, script = run(store, "0", right, "quit")
    assert script.text.count("✓ Correct.") == 1
    assert store.items()[0].outcome == "wrong"


def test_hints_are_progressive_recorded_and_a_hinted_answer_does_not_count(store):
    code, script = run(store, "hint", "hint", "hint", "hint", right, "quit")
    assert "Hint 1: Add the two numbers." in script.text
    assert "Hint 2: the sum is a whole number with 2 digits." in script.text  # no fragment: the answer's form
    assert f"Hint 3: known mistakes on this part, to avoid: {describe('no_scaling')}." in script.text
    assert "Hint 4: no more hints" in script.text
    assert "does not count toward mastery" in script.text
    assert store.items()[0].hints == 4
    assert "Sums: progress 0 of 2" in script.text


def test_a_resumed_problem_shows_its_earlier_hints_again_without_counting_them(store):
    """The page shows a reloaded problem's hints again; so does the quiz when it resumes one. The store's
    count stays, and the next hint follows on from the level reached."""
    run(store, "hint", "hint", "quit")  # toy.sum left open after two hints
    code, script = run(store, "hint", right, "quit")
    resumed = script.text.split("Resuming the problem you left:", 1)[1]
    assert resumed.index("Hint 1: Add the two numbers.") < resumed.index("Hint 2: the sum is a whole number")
    assert "Hint 3: known mistakes on this part" in resumed and resumed.count("Hint 1:") == 1
    assert store.items()[0].hints == 3


def test_each_part_of_a_problem_has_its_own_hint_levels(store):
    """toy.pair (the second problem) has two parts: the second starts again from the most general hint."""
    code, script = run(store, right, "hint", "hint", "hint", right, "hint", "quit")
    pair = script.text.split("Part 2 of 2", 1)[1]
    assert "Hint 1: Add the two numbers." in pair and "Hint 4" not in pair and "no more hints" not in pair
    assert store.items()[1].hints == 4


def the_page_answers_first(store, then: Callable[[Problem, AnswerPart], str]) -> Callable[[Problem, AnswerPart], str]:
    """A script line: the page on the same progress file answers the part on screen right, a moment
    before the quiz's student types ``then(problem, part)``."""
    def line(problem: Problem, part: AnswerPart) -> str:
        with ProgressStore(store.path) as page:
            page.record_answer(page.items()[-1].id, part.key, str(part.value), "correct", 1.0, None, T0,
                               parts=[p.key for p in problem.parts])
        return then(problem, part)
    return line


def test_a_part_the_page_answered_first_is_not_recorded_twice_and_the_quiz_moves_on(store):
    code, script = run(store, right, the_page_answers_first(store, right), "quit")  # the second item has two parts
    assert "Not recorded: part 'total' is already answered" in script.text and code == 0
    assert [a.status for a in store.answers(store.items()[1].id)] == ["correct"]
    assert len(store.items()) == 3  # on to the next problem


def test_a_hint_after_the_page_finished_the_problem_is_not_recorded_and_the_credit_stays(store):
    """The quiz only offers hints on the part it asks, but the page on the same file may finish the item first."""
    code, script = run(store, the_page_answers_first(store, lambda problem, part: "hint"), "quit")
    assert "Not recorded: this problem is closed" in script.text and "Hint 1" not in script.text
    first = store.items()[0]
    assert (first.outcome, first.hints, code) == ("correct", 0, 0)


def test_hint_two_never_shows_a_value_that_is_an_answer():
    problem = toy_problem("toy.sum", 3, 1)
    assert "total" not in hint_text(problem, problem.parts[0], "", 2)


def test_solution_shows_this_variants_worked_solution_and_ends_the_item(store):
    code, script = run(store, "solution", "quit")
    assert "Worked solution:" in script.text and "[solution] a = " in script.text
    assert store.items()[0].outcome == "revealed"


def test_another_gives_a_new_variant_of_the_same_skill_never_one_seen_before(store):
    code, script = run(store, "another", "another", "another", "quit")
    items = store.items()
    assert [i.outcome for i in items] == ["another", "another", "another", "quit"]
    assert {i.kind for i in items} == {"toy.sum"}
    assert len({(i.seed, i.difficulty) for i in items}) == 4
    assert script.text.count("Another variant of the same skill") == 3


def test_multi_part_items_ask_each_part_in_turn(store):
    # first item is toy.sum, second toy.pair (rotation): answer both of its parts
    code, script = run(store, right, right, right, "quit")
    assert "Part 1 of 2: the sum" in script.text and "Part 2 of 2: the difference" in script.text
    assert [i.outcome for i in store.items()][:2] == ["correct", "correct"]


def test_mastery_is_announced_and_unlocks_the_next_unit(store):
    code, script = run(store, right, right, right, "quit")
    assert "★ Unit mastered: Sums. First review on 2026-03-02." in script.text
    assert "Unlocked: Products [products]." in script.text
    assert "Unit: Products [products]" in script.text  # the session moved on by itself


def test_quitting_and_resuming_keeps_progress(store):
    run(store, right, "quit")
    code, script = run(store, right, right, "quit")  # the next session continues the streak
    assert "So far: progress 1 of 2" in script.text
    assert "★ Unit mastered: Sums." in script.text
    assert store.session_count() == 2


def test_end_of_input_is_a_clean_quit_and_ctrl_c_exits_130(store):
    code, script = run(store)
    assert code == 0 and store.items()[0].outcome == "quit"

    def interrupted(prompt):
        raise KeyboardInterrupt

    session = QuizSession(store, CURRICULUM, Console(interrupted, lambda s: None), services(), clock=lambda: T0)
    assert session.run() == 130


def test_ctrl_c_while_a_problem_is_drawn_keeps_every_answer_and_exits_130(store):
    """Ctrl-C can arrive between prompts (a slow machine still drawing the next problem)."""
    drawn = []

    def render(problem, block):
        drawn.append(block)
        if len(drawn) > 1:
            raise KeyboardInterrupt
        return "a problem"

    script = Script(right)
    fake = replace(services(), render=render)
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), fake, clock=lambda: T0)
    try:
        code = script.session.run()
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C while a problem was drawn escaped the quiz")
    assert code == 130
    assert [item.outcome for item in store.items()][:1] == ["correct"]
    assert "Progress saved" in script.text


def interrupted_at(prompt_start: str, script: Script) -> Callable[[str], str]:
    """The script's console, but Ctrl-C at the first prompt that starts with ``prompt_start``."""
    def read(prompt: str) -> str:
        if prompt.startswith(prompt_start):
            raise KeyboardInterrupt
        return script.read(prompt)
    return read


@pytest.mark.parametrize("where, lines", [
    ("choose> ", [slip, right] * 8),  # eight tries without success: the offers come up
    ("Press Enter", ["solution"]),
], ids=["offers", "after a solution"])
def test_ctrl_c_between_problems_exits_130_as_at_the_answer_prompt(store, where, lines):
    script = Script(*lines)
    console = Console(interrupted_at(where, script), script.out.append, interactive=True)
    script.session = QuizSession(store, CURRICULUM, console, services(), clock=lambda: T0, seed=11)
    assert script.session.run() == 130 and "Progress saved" in script.text


def test_a_mastered_unit_comes_back_for_review_when_due(store):
    run(store, right, right, right, "quit")
    code, script = run(store, right, right, "quit", clock=lambda: T0 + timedelta(days=1, hours=1))
    assert "Resuming the problem you left:" in script.text  # the first session quit at a problem
    assert "Review of a mastered unit (Leitner box 1)." in script.text
    assert "Review passed; next review on 2026-03-05." in script.text


def test_a_locked_topic_is_practised_with_a_notice(store):
    code, script = run(store, right, "quit", topic="products")
    assert "Note: unit 'products' is still locked (master sums first); practising it anyway." in script.text
    assert store.items()[0].kind == "toy.product" and store.items()[0].outcome == "correct"


def test_an_unknown_topic_is_refused_before_anything_is_stored(store):
    with pytest.raises(ProblemgenError, match="unknown topic"):
        run(store, "quit", topic="nothing")
    assert store.session_count() == 0


def test_the_same_seed_and_the_same_answers_replay_the_same_session(tmp_path):
    transcripts = []
    for name in ("one", "two"):
        with ProgressStore(tmp_path / name / "quiz.sqlite3") as s:
            text = run(s, "1", right, "another", "hint", "skip", "quit", seed=5)[1].text
            transcripts.append(text.replace(str(s.path), "<db>"))
    assert transcripts[0] == transcripts[1]
    with ProgressStore(tmp_path / "three" / "quiz.sqlite3") as s:
        assert run(s, "1", right, "another", "hint", "skip", "quit", seed=6)[1].text != transcripts[0]


def test_help_lists_every_command(store):
    code, script = run(store, "help", "quit")
    for command in COMMANDS:
        assert f"  {command} " in script.text


def test_a_missed_review_goes_back_to_box_one_and_says_so(store):
    run(store, right, right, right, "quit")
    code, script = run(store, right, slip, right, "quit", clock=lambda: T0 + timedelta(days=1, hours=1))
    assert "Review missed: back to box 1; next review on 2026-03-03." in script.text
    assert "watch for this mistake" in script.text  # and the next item practises the slip


def test_a_perfect_student_masters_the_shipped_curriculum_unit_by_unit(store):
    """Real generators, renderer and grader: typing each part's key value masters every unit in order."""
    from problemgen.model import registry
    from problemgen.sheets.answersheet import toml_value
    from problemgen.sheets.grading import key_value
    from problemgen.practice.rules import load_curriculum
    from problemgen.practice.quiz import default_services

    curriculum = load_curriculum()
    out: list[str] = []

    def perfect(prompt: str) -> str:
        last = store.items()[-1]
        if all(s.mastered for s in all_unit_states(curriculum, store)):
            raise EOFError
        problem = registry.generate(last.kind, last.seed, last.difficulty)
        done = {a.part for a in store.answers(last.id) if a.status == "correct"}
        return toml_value(key_value(next(p for p in problem.parts if p.key not in done)))

    session = QuizSession(store, curriculum, Console(perfect, out.append), default_services(),
                          clock=lambda: T0, seed=1)
    assert session.run() == 0
    text = "".join(out)
    assert "✗ Wrong" not in text and "I could not read that" not in text
    mastered = re.findall(r"★ Unit mastered: (.+)\. First review", text)
    assert mastered == [unit.title for unit in curriculum.units]


def all_unit_states(curriculum, store):
    from problemgen.practice.rules import all_states

    return all_states(curriculum, store.items()).values()


def test_practice_after_a_slip_picks_a_variant_that_can_show_the_same_slip(store):
    """Only variants listing the misconception can test it, so the targeted item skips those that don't."""
    first = next_seed(11, "toy.sum", 1, set())
    in_line = next_seed(11, "toy.sum", 1, {(first, 1)})

    def lists_slip(seed: int) -> bool:
        return seed == first or seed % 3 == 0

    assert not lists_slip(in_line)  # precondition: the next seed in line cannot show the slip

    def generate(kind, seed, difficulty):
        problem = toy_problem(kind, seed, difficulty)
        if lists_slip(seed):
            return problem
        return replace(problem, parts=tuple(replace(p, mistakes=()) for p in problem.parts))

    fake = services()
    fake.generate = generate
    script = Script(slip, right, "quit")
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), fake,
                                 clock=lambda: T0, seed=11)
    script.session.run()
    items = store.items()
    assert (items[0].outcome, items[1].kind, items[1].target) == ("wrong", "toy.sum", "no_scaling")
    assert items[1].seed != in_line and lists_slip(items[1].seed)


def test_solution_names_are_read_from_the_shipped_fragment():
    from problemgen.practice.quiz import solution_names

    assert {"S", "scaled", "A"} <= solution_names("attention.weights")


def test_progress_mistakes_lists_each_misconception_and_whether_it_was_overcome(store):
    import io

    from problemgen.practice.quiz import run_progress

    run(store, slip, right, "quit")
    out = io.StringIO()
    assert run_progress(db=str(store.path), mistakes=True, stdout=out, env={}) == 0
    assert f"{describe('no_scaling')}: once, not yet overcome" in out.getvalue()
    assert "in toy.sum" in out.getvalue()


def test_skip_leaves_the_skill_even_while_its_misconception_is_practised(store):
    code, script = run(store, slip, right, "skip", "quit")
    items = store.items()
    assert items[1].target == "no_scaling" and items[1].outcome == "skipped"
    assert items[2].kind != items[1].kind


def test_practise_again_is_a_new_variant_with_a_different_answer(store):
    """Most seeds of this fake give the same numbers: the redo must still not repeat the answer."""
    def generate(kind, seed, difficulty):
        return replace(toy_problem(kind, seed if seed % 5 == 0 else 0, difficulty), seed=seed)

    fake = services()
    fake.generate = generate
    script = Script(slip, right, "quit")
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), fake,
                                 clock=lambda: T0, seed=11)
    script.session.run()
    first, second = store.items()[:2]
    a, b = generate(first.kind, first.seed, first.difficulty), generate(second.kind, second.seed, second.difficulty)
    assert second.kind == first.kind and a.parts[0].value != b.parts[0].value


def test_quitting_mid_item_keeps_answered_parts_and_resumes_the_same_variant(store):
    code, script = run(store, "skip", right, "quit")  # toy.pair: part 1 answered, then quit
    pair = store.items()[-1]
    assert pair.kind == "toy.pair" and pair.outcome == "quit"
    code, script = run(store, right, "quit")
    assert "Resuming the problem you left:" in script.text and f"s{pair.seed}" in script.text
    assert store.items()[1].id == pair.id and store.items()[1].outcome == "correct"
    assert "Part 2 of 2" in script.text and "Part 1 of 2" not in script.text


def test_a_resumed_problem_answered_wrong_is_followed_by_the_same_skill_again(store):
    """What comes next is chosen after the resumed problem, from the history it added to: a slip on it sends
    the student back to that skill, as a slip on any other problem does."""
    run(store, "quit")  # toy.sum left open
    code, script = run(store, slip, "solution", "quit")
    resumed, after = store.items()
    assert "Resuming the problem you left:" in script.text and resumed.outcome == "wrong"
    assert (after.kind, after.target) == ("toy.sum", "no_scaling")
    assert "watch for this mistake" in script.text


def test_a_unit_mastered_by_the_resumed_problem_is_followed_by_the_unit_it_unlocked(store):
    run(store, right, right, "quit")  # toy.sum right, then part 1 of toy.pair and quit
    code, script = run(store, right, "quit")  # part 2 of toy.pair: the streak and every skill
    assert "★ Unit mastered: Sums." in script.text
    assert store.items()[-1].kind == "toy.product" and "Unit: Products [products]" in script.text


def test_quit_after_a_wrong_answer_goes_on_with_the_same_skill_and_the_help_says_so(store):
    """A wrong answer decides the problem, so it is not resumed; quit's help must not promise it is."""
    run(store, slip, "quit")
    code, script = run(store, "quit")
    wrong, again = store.items()
    assert "Resuming" not in script.text and wrong.outcome == "wrong"
    assert (again.kind, again.target) == (wrong.kind, "no_scaling") and again.seed != wrong.seed
    assert "after a wrong answer, its skill with a new variant" in COMMANDS["quit"]


def test_an_open_problem_this_problemgen_cannot_show_is_left_as_it_is_and_the_student_goes_on(store):
    """An items row edited to a difficulty its kind does not offer used to end every run with the
    generator's error, naming neither the file nor the row, and a new sessions row each time."""
    def generate(kind, seed, difficulty):
        if difficulty not in services().available[kind]:
            raise ProblemgenError(f"kind {kind!r} has no difficulty {difficulty}")
        return toy_problem(kind, seed, difficulty)

    item = store.start_item(store.start_session(11, None, T0), unit="sums", kind="toy.sum", seed=3, difficulty=99,
                            variant_id="toy.sum/d99/s3", review=False, target=None, now=T0)
    script = Script(right, right, "quit")  # the next problem is toy.pair (toy.sum was shown): two parts
    fake = replace(services(), generate=generate)
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), fake, clock=lambda: T0)
    assert script.session.run() == 0
    assert (f"Note: the problem left open in {store.path} (items row {item}: toy.sum, difficulty 99) cannot be "
            "shown by this problemgen; it is left as it is.") in script.text
    left, answered = store.items()[:2]
    assert (left.outcome, left.closed_at, answered.outcome) == (None, None, "correct")


def test_a_problem_left_undecided_with_every_part_right_is_credited_not_resumed(store):
    """Two answers to its last parts at once (before they were taken one at a time) left every part right
    and no outcome: each quiz run resumed it, asked nothing and recorded nothing."""
    problem = toy_problem("toy.pair", 3, 1)
    item = store.start_item(store.start_session(11, None, T0), unit="sums", kind=problem.kind, seed=3,
                            difficulty=1, variant_id=problem.variant_id, review=False, target=None, now=T0)
    for part in problem.parts:  # each as if the other part were still open
        store.record_answer(item, part.key, str(part.value), "correct", 1.0, None, T0,
                            parts=["total", "difference", "unseen"])
    code, script = run(store, "quit")
    assert "Resuming" not in script.text and store.items()[0].outcome == "correct"


def test_show_reprints_the_problem(store):
    code, script = run(store, "show", "quit")
    assert script.text.count("[prompt] a = ") == 2


def test_the_quiz_says_how_it_read_an_answer_that_was_not_plain(store):
    code, script = run(store, lambda problem, part: f"{part.value * 2}/2", "quit")
    assert "✓ Correct." in script.text
    assert "read as: " in script.text
    code, script = run(store, right, "quit")
    assert "read as" not in script.text  # a plain answer is not echoed back


def matrix_services() -> Services:
    """One 2 x 3 matrix part (the real matrix reader): entry (i, j) is seed + i + j."""

    def generate(kind, seed, difficulty):
        value = [[seed % 5 + i + j for j in range(3)] for i in range(2)]
        part = AnswerPart("m", "matrix", value, label="the matrix", atol=0.005)
        return Problem(kind, seed, difficulty, {}, "Matrix", "toy", {"a": 0, "b": 0}, (part,), {})

    fake = services()
    fake.generate = generate
    return fake


def test_a_matrix_can_be_typed_one_row_per_line(store):
    def row(number):
        return lambda problem, part: " ".join(str(x) for x in part.value[number])

    script = Script(row(0), row(1), "quit")
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), matrix_services(),
                                 clock=lambda: T0, seed=11)
    script.session.run()
    assert "row 2 of 2> " in script.text and "✓ Correct." in script.text
    assert "(or type it one row per line)" in script.text
    assert store.items()[0].outcome == "correct"


def run_matrix(store, *lines) -> Script:
    script = Script(*lines)
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), matrix_services(),
                                 clock=lambda: T0, seed=11)
    script.session.run()
    return script


def row(number: int) -> Callable[[Problem, AnswerPart], str]:
    return lambda problem, part: " ".join(str(x) for x in part.value[number])


def test_commands_work_at_the_row_prompt_and_the_same_row_is_asked_again(store):
    script = run_matrix(store, row(0), "hint", "show", row(1), "quit")
    assert "row 2 of 2> hint\nHint 1: " in script.text and script.text.count("row 2 of 2> ") == 3
    assert "✓ Correct." in script.text
    assert [(a.status, a.text.count(";")) for a in store.answers()] == [("correct", 1)]


@pytest.mark.parametrize("ending, outcome", [("skip", "skipped"), ("quit now", "quit"), ("solution", "revealed")])
def test_a_command_that_ends_the_problem_ends_it_from_the_row_prompt(store, ending, outcome):
    run_matrix(store, row(0), ending, "quit")
    assert store.answers() == [] and store.items()[0].outcome == outcome


def test_a_command_word_followed_by_more_words_is_that_command(store):
    code, script = run(store, "hint please", "quit now")
    assert "Hint 1: Add the two numbers." in script.text and code == 0
    assert store.answers() == [] and store.items()[0].outcome == "quit"
    script = run_matrix(store, "hint me", "quit")  # two words are also a row of two entries
    assert "row 2 of" not in script.text and "Hint 1:" in script.text


def test_a_right_answer_that_starts_with_a_command_word_is_an_answer(store):
    """"skip connection" is a right answer to what a residual connection is also called."""
    def generate(kind, seed, difficulty):
        part = AnswerPart("name", "term", ["residual connection", "skip connection"], label="its other name")
        return Problem(kind, seed, difficulty, {}, "Terms", "toy", {"a": 0, "b": 0}, (part,), {})

    fake = replace(services(), generate=generate)
    script = Script("skip connection", "skip a turn")
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), fake, clock=lambda: T0)
    script.session.run()
    assert [i.outcome for i in store.items()][:2] == ["correct", "skipped"]


def test_every_prompt_command_is_read_as_a_command_word():
    from problemgen.practice.typed_lines import COMMAND_WORDS

    assert COMMAND_WORDS == set(COMMANDS) | {"exit"}


PASTED = {  # a 2 x 3 matrix as numpy prints it, as a Python list, and in MATLAB, each over two lines
    "numpy": lambda m: [f"[[{m[0][0]:2d} {m[0][1]:2d} {m[0][2]:2d}]", f" [{m[1][0]:2d} {m[1][1]:2d} {m[1][2]:2d}]]"],
    "python": lambda m: [f"[{m[0]},", f" {m[1]}]"],
    "matlab": lambda m: [f"[{m[0][0]} {m[0][1]} {m[0][2]}", f" {m[1][0]} {m[1][1]} {m[1][2]}]"],
}


@pytest.mark.parametrize("form", PASTED)
def test_a_matrix_pasted_over_several_lines_is_read_as_one_answer(store, form):
    def line(number):
        return lambda problem, part: PASTED[form](part.value)[number]

    script = run_matrix(store, line(0), line(1), "quit")
    assert "...> " in script.text and "✓ Correct." in script.text and "check the brackets" not in script.text
    assert [a.status for a in store.answers()] == ["correct"]


def test_an_empty_line_cancels_an_answer_whose_brackets_are_open_and_a_stray_one_is_capped(store):
    script = run_matrix(store, "[[1, 2, 3],", "", "quit")
    assert "Entry cancelled." in script.text and store.answers() == []
    run_matrix(store, *(["[1"] * 32), "quit")
    assert [a.text.count("[") for a in store.answers()] == [32]  # read as it was after 32 lines


def test_a_single_number_for_a_matrix_is_graded_at_once_not_taken_as_a_row(store):
    script = Script("0", "quit")
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), matrix_services(),
                                 clock=lambda: T0, seed=11)
    script.session.run()
    assert "row 2 of" not in script.text


def test_long_prose_wraps_to_the_console_width(store):
    script = Script("help", "quit")
    session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append, width=40), services(),
                          clock=lambda: T0, seed=11)
    script.session = session
    session.run()
    long = [line for line in script.text.splitlines() if len(line) > 40]
    assert all(str(store.path) in line for line in long)  # only the unbreakable file path


def test_after_eight_tries_without_progress_the_quiz_offers_a_worked_example(store):
    script = Script(*([slip, right] * 8), "1", "quit")
    script.session = QuizSession(store, CURRICULUM, Console(script.read, script.out.append), services(),
                                 clock=lambda: T0, seed=11)
    script.session.run()
    assert "8 tries at this skill without a right answer yet" in script.text
    assert "1. see a worked example of a new variant" in script.text
    assert "Worked example:" in script.text and "[solution] a = " in script.text
    example = store.items()[8]
    assert example.outcome == "skipped" and example.kind == store.items()[7].kind


@pytest.mark.parametrize("wrong", [{"kind": "nosuch.kind"}, {"topic": "nosuch"}])
def test_a_mistyped_kind_or_topic_is_refused_before_the_progress_file_is_created(tmp_path, wrong):
    import io

    from problemgen.practice.quiz import run_quiz

    db = tmp_path / "me.sqlite3"
    with pytest.raises(ProblemgenError, match="unknown"):
        run_quiz(db=str(db), stdin=io.StringIO("quit\n"), stdout=io.StringIO(), env={}, **wrong)
    assert not db.exists()


def test_a_fixed_difficulty_is_told_apart_from_the_units_own_level(tmp_path):
    """--difficulty 3 showed a difficulty-3 problem under a status line saying '(difficulty 1)'."""
    from io import StringIO

    from problemgen.practice.quiz import run_quiz

    out = StringIO()
    run_quiz(db=str(tmp_path / "p.sqlite3"), seed=1, kind="shapes.trace", difficulty=3, stdin=StringIO("quit\n"),
             stdout=out, env={"HOME": str(tmp_path)})
    text = " ".join(out.getvalue().split())  # as one line, however wide the terminal wrapped it
    assert "(your level: difficulty 1)" in text and "Problems at difficulty 3, as --difficulty asks." in text
    assert "variant shapes.trace/d3/" in text
