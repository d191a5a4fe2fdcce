"""Practice rules: the curriculum, mastery, deliberate practice, difficulty and spaced review.

Everything here is a pure function of the curriculum, the item history (``progress.ItemRecord``, oldest
first) and a clock value, so the rules can be tested without a terminal or a database, and a student's
state can always be recomputed from the stored history (nothing derived is stored, nothing drifts).

How one finished item counts (``grade_of``):

- success: every part right at the first graded try, no hint, no solution shown;
- failure: a wrong answer to any part (a later correction does not undo it), or the solution shown;
- neutral: skipped, swapped for ``another`` variant, quit, interrupted, or right after a hint.

Mastery of a unit needs both (the count rule is per unit in ``curriculum.toml``):

- every kind (skill) of the unit answered right unaided at least once, so a streak over a few kinds
  never masters a unit whose other skills the student has not even seen; and

- ``streak = N``: N successes in a row (neutral items neither count nor break the run). Variants are
  never repeated, so the N are always distinct variants;
- ``correct = K, of_last = N``: at least K successes among the unit's last N counted items.

Once mastered a unit stays mastered and enters Leitner review: box 1 is due ``intervals_days[0]`` days
after mastery. An item of the unit started when it is due is a review: a success moves it up one box
(due again after that box's interval), anything else counted (wrong, solution, or right only after a
hint) sends it back to box 1. Practice before the due date does not move it.

Difficulty is a staircase per unit: start at 1, one level up after two successes in a row, one level
down after a failure. After a failure the next items of the unit stay on the same kind (the skill that
failed), naming the misconception matched, until the student gets that kind right unaided.
While a unit is being learned, skills not yet answered right come first.

Wheel-spinning: after ``WHEEL_SPIN_AFTER`` attempts at one skill without an unaided success, the next
choice carries ``offers`` (a worked example, an easier difficulty, the prerequisite unit) for the front
end to propose; ``apply_offer`` turns the student's pick into the next choice.

Free practice: ``choose_next`` also takes a fixed ``kind`` and a fixed ``difficulty``; a locked unit
may be practised, with a ``notice`` saying so (its answers count for that unit as usual).
"""

from __future__ import annotations

import tomllib
import zlib
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable, Iterable, Mapping

from problemgen.model.core import Problem, ProblemgenError
from problemgen.practice.progress import AnswerRecord, ItemRecord
from problemgen.wording import suggest
from problemgen.resources import banks_dir

DEFAULT_INTERVALS_DAYS = (1, 3, 7, 16, 35)
WHEEL_SPIN_AFTER = 8
"""Attempts at one skill without an unaided success before the quiz offers another way in."""
OFFERS = ("example", "easier", "prerequisite")
MAX_LEVEL = 3
STEP_UP_AFTER = 2
SEED_SPACE = 1_000_000
TARGET_TRIES = 20
"""How many unseen seeds to try for a variant that lists the misconception being practised."""


# ----------------------------------------------------------------------------------- curriculum


@dataclass(frozen=True)
class MasteryRule:
    """Either a streak (``count`` in a row) or an accuracy window (``count`` of the last ``window``)."""

    count: int = 3
    window: int = 0  # 0 = streak rule

    def describe(self) -> str:
        if self.window:
            return (f"{self.count} correct of your last {self.window} answers in this unit "
                    "(unaided: no hint, no solution)")
        return (f"{self.count} correct answers in a row on different variants, without a hint or the "
                "solution (a wrong answer starts the count again)")


@dataclass(frozen=True)
class Unit:
    id: str
    title: str
    kinds: tuple[str, ...]
    requires: tuple[str, ...] = ()
    rule: MasteryRule = MasteryRule()
    hint: str = ""
    kind_hints: Mapping[str, str] = field(default_factory=dict)

    def hint_for(self, kind: str) -> str:
        """Level-1 hint: the conventions and formula of this kind (or of the unit)."""
        return self.kind_hints.get(kind) or self.hint

    def topics(self) -> set[str]:
        return {kind.split(".", 1)[0] for kind in self.kinds}


@dataclass(frozen=True)
class Curriculum:
    units: tuple[Unit, ...]
    intervals_days: tuple[int, ...] = DEFAULT_INTERVALS_DAYS

    def unit(self, unit_id: str) -> Unit:
        for unit in self.units:
            if unit.id == unit_id:
                return unit
        raise KeyError(unit_id)

    def unit_of_kind(self, kind: str) -> Unit | None:
        return next((u for u in self.units if kind in u.kinds), None)

    def resolve_topic(self, topic: str) -> Unit:
        """A unit by id, or the unit whose kinds belong to topic ``topic`` (``norms`` -> ``block``)."""
        for unit in self.units:
            if unit.id == topic:
                return unit
        for unit in self.units:
            if topic in unit.topics():
                return unit
        names = [u.id for u in self.units]
        raise ProblemgenError(f"unknown topic {topic!r}{suggest(topic, names)} (units: {', '.join(names)})")

    def all_kinds(self) -> list[str]:
        return [kind for unit in self.units for kind in unit.kinds]


_UNIT_KEYS = {"id", "title", "kinds", "requires", "mastery", "hint", "hints"}


def load_curriculum(path: str | Path | None = None) -> Curriculum:
    """Read and validate ``curriculum.toml`` (the shipped one by default)."""
    if path is None:
        path = banks_dir() / "curriculum.toml"
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ProblemgenError(f"{path}: cannot read the curriculum ({exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ProblemgenError(f"{path}: {exc}") from exc
    return parse_curriculum(data, str(path))


def parse_curriculum(data: dict, source: str = "curriculum") -> Curriculum:
    unknown = sorted(set(data) - {"review", "unit"})
    if unknown:
        raise ProblemgenError(f"{source}: unknown top-level key {unknown[0]!r}")
    intervals = tuple(data.get("review", {}).get("intervals_days", DEFAULT_INTERVALS_DAYS))
    if not intervals or any(not isinstance(d, int) or d <= 0 for d in intervals):
        raise ProblemgenError(f"{source}: review.intervals_days must be positive whole days")
    units: list[Unit] = []
    for index, raw in enumerate(data.get("unit", [])):
        units.append(_parse_unit(raw, f"{source}: unit[{index}]", {u.id for u in units}))
    if not units:
        raise ProblemgenError(f"{source}: no [[unit]] tables")
    return Curriculum(tuple(units), intervals)


def _parse_unit(raw: dict, where: str, earlier: set[str]) -> Unit:
    unknown = sorted(set(raw) - _UNIT_KEYS)
    if unknown:
        raise ProblemgenError(f"{where}: unknown key {unknown[0]!r}")
    for key in ("id", "title", "kinds"):
        if key not in raw:
            raise ProblemgenError(f"{where}: missing key {key!r}")
    where = f"{where} ({raw['id']})"
    requires = tuple(raw.get("requires", ()))
    later = [r for r in requires if r not in earlier]
    if later:
        raise ProblemgenError(f"{where}: key 'requires' names {later[0]!r}, which is not an earlier unit")
    if raw["id"] in earlier:
        raise ProblemgenError(f"{where}: duplicate unit id")
    hints = raw.get("hints", {})
    stray = sorted(set(hints) - set(raw["kinds"]))
    if stray:
        raise ProblemgenError(f"{where}: key 'hints' names {stray[0]!r}, which is not one of its kinds")
    return Unit(raw["id"], raw["title"], tuple(raw["kinds"]), requires,
                _parse_rule(raw.get("mastery", {}), where), raw.get("hint", ""), dict(hints))


def _parse_rule(raw: dict, where: str) -> MasteryRule:
    if set(raw) <= {"streak"}:
        rule = MasteryRule(count=int(raw.get("streak", 3)))
    elif set(raw) == {"correct", "of_last"}:
        rule = MasteryRule(count=int(raw["correct"]), window=int(raw["of_last"]))
    else:
        raise ProblemgenError(f"{where}: key 'mastery' must be {{ streak = N }} or {{ correct = K, of_last = N }}")
    if rule.count < 1 or (rule.window and rule.window < rule.count):
        raise ProblemgenError(f"{where}: key 'mastery' asks for an impossible count")
    return rule


# -------------------------------------------------------------------------------- unit state


SUCCESS, FAILURE = "success", "failure"
ATTEMPT_OUTCOMES = ("correct", "wrong", "revealed", "skipped")
"""Outcomes that were an attempt at the skill (``another`` and ``quit`` leave before trying)."""


def grade_of(item: ItemRecord) -> str | None:
    """success / failure / None (neutral) for mastery and difficulty; see the module docstring."""
    if item.outcome == "correct":
        return SUCCESS if item.hints == 0 else None
    if item.outcome in ("wrong", "revealed"):
        return FAILURE
    return None


def recalled(item: ItemRecord) -> bool | None:
    """For a review: True when recalled unaided, None when it does not count, else False."""
    if item.outcome in (None, "skipped", "another", "quit"):
        return None
    return grade_of(item) == SUCCESS


@dataclass(frozen=True)
class SkillState:
    """One kind of a unit as the student has met it: ``mastered`` once answered right unaided,
    ``seen`` once shown, else ``unseen``; ``stuck`` counts attempts since the last unaided success."""

    kind: str
    status: str = "unseen"
    shown: int = 0
    answered: int = 0  # counted items (success or failure)
    correct: int = 0  # unaided successes
    stuck: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.answered if self.answered else None


def skill_states(kinds: Iterable[str], items: Iterable[ItemRecord]) -> dict[str, SkillState]:
    """The state of each kind in ``kinds`` from the history (items of other kinds are ignored)."""
    counts = {k: [0, 0, 0, 0] for k in kinds}  # shown, answered, correct, stuck
    for item in items:
        if item.kind not in counts:
            continue
        row, grade = counts[item.kind], grade_of(item)
        row[0] += 1
        row[1] += grade is not None
        if grade == SUCCESS:
            row[2], row[3] = row[2] + 1, 0
        elif item.outcome in ATTEMPT_OUTCOMES:
            row[3] += 1
    return {k: SkillState(k, "mastered" if c else ("seen" if s else "unseen"), s, a, c, st)
            for k, (s, a, c, st) in counts.items()}


@dataclass(frozen=True)
class UnitState:
    """Everything the quiz and ``progress`` show about one unit, derived from its history."""

    unit: str
    answered: int = 0
    correct: int = 0
    progress: int = 0  # current streak, or successes in the window
    needed: int = 3
    mastered_at: datetime | None = None
    box: int = 0  # Leitner box once mastered (1 = shortest interval)
    due: datetime | None = None
    level: int = 1
    focus_kind: str | None = None
    focus_mistake: str | None = None
    skills: Mapping[str, SkillState] = field(default_factory=dict)

    @property
    def mastered(self) -> bool:
        return self.mastered_at is not None

    @property
    def missing(self) -> tuple[str, ...]:
        """Skills not yet answered right unaided: mastery waits for them whatever the streak."""
        return tuple(k for k, s in self.skills.items() if s.status != "mastered")

    def is_due(self, now: datetime) -> bool:
        return self.due is not None and self.due <= now


def unit_state(unit: Unit, items: Iterable[ItemRecord], intervals: tuple[int, ...],
               kinds: Iterable[str] | None = None) -> UnitState:
    """Replay the unit's history (oldest first) through the rules in the module docstring.

    ``kinds`` are the skills mastery requires (default: all of the unit's kinds; the quiz passes the
    installed ones, so a kind that is not installed cannot block mastery)."""
    items = list(items)
    required = tuple(unit.kinds if kinds is None else kinds)
    rule = unit.rule
    answered = correct = streak = run = 0
    level, box, window, solved = 1, 0, [], set()
    mastered_at = due = None
    focus_kind = focus_mistake = None
    for item in items:
        when = item.finished_at or item.started_at
        if mastered_at is not None and due is not None and item.started_at >= due:
            result = recalled(item)
            if result is not None:
                box = min(box + 1, len(intervals)) if result else 1
                due = when + timedelta(days=intervals[box - 1])
        grade = grade_of(item)
        if grade is None:
            continue
        answered += 1
        window = (window + [grade])[-rule.window:] if rule.window else []
        if grade == SUCCESS:
            correct += 1
            solved.add(item.kind)
            streak, run = streak + 1, run + 1
            if run == STEP_UP_AFTER:
                level, run = min(MAX_LEVEL, level + 1), 0
            if item.kind == focus_kind:
                focus_kind = focus_mistake = None
        else:
            streak, run, level = 0, 0, max(1, level - 1)
            focus_kind, focus_mistake = item.kind, item.mistake
        progress = window.count(SUCCESS) if rule.window else streak
        if mastered_at is None and progress >= rule.count and solved.issuperset(required):
            mastered_at, box = when, 1
            due = when + timedelta(days=intervals[0])
    progress = window.count(SUCCESS) if rule.window else streak
    return UnitState(unit.id, answered, correct, min(progress, rule.count), rule.count, mastered_at,
                     box, due, level, focus_kind, focus_mistake, skill_states(required, items))


def all_states(curriculum: Curriculum, items: list[ItemRecord],
               available: Mapping[str, tuple[int, ...]] | None = None) -> dict[str, UnitState]:
    """``unit_state`` of every unit; with ``available``, mastery requires only the installed kinds."""
    by_unit: dict[str, list[ItemRecord]] = {u.id: [] for u in curriculum.units}
    for item in items:
        by_unit.setdefault(item.unit, []).append(item)
    return {u.id: unit_state(u, by_unit[u.id], curriculum.intervals_days,
                             None if available is None else _kinds_of(u, available))
            for u in curriculum.units}


# ------------------------------------------------------------------------------- next item


@dataclass(frozen=True)
class Choice:
    """What to ask next and why (the front end prints ``reason`` and ``notice``, and proposes
    ``offers`` when the student is stuck on the skill)."""

    unit: Unit
    kind: str
    difficulty: int
    review: bool = False
    target: str | None = None
    reason: str = ""
    notice: str = ""
    offers: tuple[str, ...] = ()
    example: bool = False  # show a worked example of a new variant instead of asking it


def choose_next(curriculum: Curriculum, items: list[ItemRecord], now: datetime,
                available: Mapping[str, tuple[int, ...]], topic: str | None = None, *,
                kind: str | None = None, difficulty: int | None = None, leave: str | None = None) -> Choice:
    """Pick the unit, kind and difficulty of the next item.

    ``available`` maps each registered kind to its difficulties; kinds not in it are ignored. With a
    ``topic`` (or a ``kind``) the unit is fixed; a locked one is practised with a notice. Without one:
    stay on a unit whose last answer failed, else a due review, else the first unlocked unit not yet
    mastered, else the next review. ``difficulty`` replaces the staircase level. ``leave`` is a kind
    the student just skipped: it is not chosen again next (even to practise a misconception) when the
    unit has another kind.
    """
    states = all_states(curriculum, items, available)
    usable = [u for u in curriculum.units if _kinds_of(u, available)]
    if not usable:
        raise ProblemgenError("no unit of the curriculum has a registered problem kind")
    unlocked = [u for u in usable if unit_unlocked(u, curriculum, states, available)]
    notice = ""
    if kind is not None:
        unit = _unit_of_available_kind(curriculum, kind, available)
    elif topic is not None:
        unit = curriculum.resolve_topic(topic)
    if kind is not None or topic is not None:
        if unit not in usable:
            raise ProblemgenError(f"unit {unit.id!r} has no problem kinds installed yet")
        if unit not in unlocked:
            missing = [r for r in unit.requires if not states[r].mastered]
            notice = (f"unit {unit.id!r} is still locked (master {', '.join(missing)} first); "
                      "practising it anyway")
        reason = "practice"
    else:
        unit, reason = _pick_unit(unlocked, states, items, now, leave)
    choice = _pick_item(unit, states[unit.id], items, now, available, reason, kind, leave)
    if difficulty is not None:
        choice = replace(choice, difficulty=pick_difficulty(difficulty, available[choice.kind]))
    return replace(choice, notice=notice, offers=stuck_offers(choice, states[unit.id], available))


def _unit_of_available_kind(curriculum: Curriculum, kind: str,
                            available: Mapping[str, tuple[int, ...]]) -> Unit:
    unit = curriculum.unit_of_kind(kind)
    if unit is None or kind not in available:
        names = [k for k in curriculum.all_kinds() if k in available]
        raise ProblemgenError(f"unknown kind {kind!r}{suggest(kind, names)} (`problemgen list` shows them)")
    return unit


def stuck_offers(choice: Choice, state: UnitState, available: Mapping[str, tuple[int, ...]]) -> tuple[str, ...]:
    """The ways in to offer when the chosen skill has had ``WHEEL_SPIN_AFTER`` (then 2×, 3×, …)
    attempts without an unaided success; empty otherwise."""
    skill = state.skills.get(choice.kind)
    if skill is None or skill.stuck == 0 or skill.stuck % WHEEL_SPIN_AFTER:
        return ()
    offers = ["example"]
    if any(d < choice.difficulty for d in available[choice.kind]):
        offers.append("easier")
    if choice.unit.requires:
        offers.append("prerequisite")
    return tuple(offers)


def apply_offer(choice: Choice, offer: str, curriculum: Curriculum, items: list[ItemRecord],
                now: datetime, available: Mapping[str, tuple[int, ...]]) -> Choice:
    """The next choice after the student takes ``offer`` (one of ``choice.offers``)."""
    if offer not in choice.offers:
        raise ProblemgenError(f"{offer!r} is not on offer (offers: {', '.join(choice.offers) or 'none'})")
    if offer == "example":
        return replace(choice, example=True, offers=(), reason="worked example")
    if offer == "easier":
        lower = max(d for d in available[choice.kind] if d < choice.difficulty)
        return replace(choice, difficulty=lower, offers=(), reason="an easier variant")
    prerequisite = choice.unit.requires[-1]
    back = choose_next(curriculum, items, now, available, prerequisite)
    return replace(back, offers=(), reason=f"back to the prerequisite {prerequisite!r}")


def unit_unlocked(unit: Unit, curriculum: Curriculum, states: Mapping[str, UnitState],
                  available: Mapping[str, tuple[int, ...]]) -> bool:
    """Unlocked when every prerequisite is mastered; a prerequisite with no installed kind cannot gate."""
    return all(states[r].mastered or not _kinds_of(curriculum.unit(r), available) for r in unit.requires)


def _pick_unit(unlocked: list[Unit], states: Mapping[str, UnitState], items: list[ItemRecord],
               now: datetime, leave: str | None = None) -> tuple[Unit, str]:
    graded = [i for i in items if grade_of(i) is not None]
    if graded and grade_of(graded[-1]) == FAILURE and graded[-1].kind != leave:
        last = next((u for u in unlocked if u.id == graded[-1].unit), None)
        if last is not None and states[last.id].focus_kind:
            return last, "practice again"
    due = sorted((u for u in unlocked if states[u.id].is_due(now)), key=lambda u: states[u.id].due)
    if due:
        return due[0], "review"
    fresh = [u for u in unlocked if not states[u.id].mastered]
    if fresh:
        return fresh[0], "learn"
    soonest = min(unlocked, key=lambda u: states[u.id].due)
    return soonest, "extra practice (everything mastered)"


def _pick_item(unit: Unit, state: UnitState, items: list[ItemRecord], now: datetime,
               available: Mapping[str, tuple[int, ...]], reason: str, fixed: str | None = None,
               leave: str | None = None) -> Choice:
    kinds = [fixed] if fixed else _kinds_of(unit, available)
    if leave in kinds and len(kinds) > 1:
        kinds.remove(leave)
    target = None
    if state.focus_kind in kinds:
        kind, target = state.focus_kind, state.focus_mistake
        reason = "practice again"
    else:
        counts = {k: 0 for k in kinds}
        for item in items:
            if item.unit == unit.id and item.kind in counts:
                counts[item.kind] += 1
        missing = set(state.missing) if not state.mastered else set()
        kind = min(kinds, key=lambda k: (k not in missing, counts[k], kinds.index(k)))
    review = state.is_due(now)
    if review:
        reason = "review"
    return Choice(unit, kind, pick_difficulty(state.level, available[kind]), review, target, reason)


def pick_difficulty(level: int, offered: tuple[int, ...]) -> int:
    """The highest offered difficulty not above ``level`` (the lowest offered when all are above)."""
    below = [d for d in offered if d <= level]
    return max(below) if below else min(offered)


def _kinds_of(unit: Unit, available: Mapping[str, tuple[int, ...]]) -> list[str]:
    return [k for k in unit.kinds if k in available]


def next_seed(base_seed: int, kind: str, difficulty: int, seen: set[tuple[int, int]]) -> int:
    """The first seed of a deterministic per-(base seed, kind, difficulty) sequence not yet shown."""
    for n in range(len(seen) + 10_000):
        seed = zlib.crc32(f"{base_seed}:{kind}:{difficulty}:{n}".encode()) % SEED_SPACE
        if (seed, difficulty) not in seen:
            return seed
    raise ProblemgenError(f"no unseen seed left for {kind}")  # unreachable in practice


def draw_variant(choice: Choice, base_seed: int, seen: set[tuple[int, int]],
                 generate: Callable[[str, int, int], Problem], previous: Problem | None = None) -> Problem:
    """A never-shown variant of the chosen kind whose answers differ from ``previous`` (the last variant
    of that kind: "practise again" must never be the answer just seen); when a misconception is
    targeted, the first of the next few such variants that lists that mistake (a variant without it
    cannot test it).

    Shared by every front end (terminal quiz, web) so they draw the same variants for the same store."""
    seen = set(seen)
    fallback = problem = None
    for _ in range(TARGET_TRIES):
        seed = next_seed(base_seed, choice.kind, choice.difficulty, seen)
        seen.add((seed, choice.difficulty))
        problem = generate(choice.kind, seed, choice.difficulty)
        if previous is not None and same_answers(problem, previous):
            continue
        if not choice.target or any(m.name == choice.target for part in problem.parts for m in part.mistakes):
            return problem
        fallback = fallback or problem
    return fallback or problem


def regenerate(item: ItemRecord, generate: Callable[[str, int, int], Problem]) -> Problem | None:
    """The variant a stored item showed, made again; None when this problemgen cannot make it (its kind
    does not offer that difficulty: a file edited by hand, or written by another version). Front ends
    leave such an item as it is, as they leave items of kinds that are not installed, so the student
    can go on; its row in the file is kept."""
    try:
        return generate(item.kind, item.seed, item.difficulty)
    except ProblemgenError:
        return None


def same_answers(a: Problem, b: Problem) -> bool:
    """True when two variants have the same keys part by part (a "new" variant that would let the
    student repeat the answer just seen)."""
    return [(p.key, repr(p.value)) for p in a.parts] == [(p.key, repr(p.value)) for p in b.parts]


def resumable(items: list[ItemRecord]) -> ItemRecord | None:
    """The last of ``items`` (the history, or just its latest: ``ProgressStore.last_item``) when the student
    left it undecided (quit, or the process died): resume it. One a
    wrong answer decided is not resumed even when left by quit: it cannot count as right any more, and
    the failure it recorded already sends the student back to its skill with a new variant."""
    if items and items[-1].outcome in (None, "quit"):
        return items[-1]
    return None


# ---------------------------------------------------------------------------------- summary


def summary(curriculum: Curriculum, items: list[ItemRecord], now: datetime,
            available: Mapping[str, tuple[int, ...]]) -> list[dict]:
    """One plain dict per unit, in curriculum order: what ``problemgen progress`` shows."""
    states = all_states(curriculum, items, available)
    rows = []
    for unit in curriculum.units:
        state = states[unit.id]
        unlocked = unit_unlocked(unit, curriculum, states, available)
        if state.mastered:
            status = "review due" if state.is_due(now) else "mastered"
        elif not _kinds_of(unit, available):
            status = "not installed"
        else:
            status = "learning" if unlocked else "locked"
        rows.append({
            "id": unit.id, "title": unit.title, "status": status, "unlocked": unlocked,
            "requires": list(unit.requires), "rule": unit.rule.describe(),
            "progress": state.progress, "needed": state.needed, "answered": state.answered,
            "correct": state.correct, "difficulty": state.level, "box": state.box,
            "mastered_at": _iso(state.mastered_at), "next_review": _iso(state.due),
            "skills": [_skill_row(s) for s in state.skills.values()],
        })
    return rows


def _skill_row(skill: SkillState) -> dict:
    accuracy = skill.accuracy
    return {"kind": skill.kind, "status": skill.status, "shown": skill.shown, "answered": skill.answered,
            "correct": skill.correct, "accuracy": None if accuracy is None else round(accuracy, 3)}


def mistake_history(items: list[ItemRecord], answers: Iterable[AnswerRecord]) -> list[dict]:
    """The misconceptions the student showed: how often, on which kinds, when last, and whether they
    have been overcome since (an unaided success on one of those kinds after the last occurrence).
    Most frequent first."""
    kind_of = {i.id: i.kind for i in items}
    seen: dict[str, dict] = {}
    for answer in answers:
        if not answer.mistake or answer.item_id not in kind_of:
            continue
        row = seen.setdefault(answer.mistake, {"mistake": answer.mistake, "count": 0, "kinds": [],
                                               "last_item": 0, "last_at": None})
        row["count"] += 1
        kind = kind_of[answer.item_id]
        if kind not in row["kinds"]:
            row["kinds"].append(kind)
        row["last_item"] = max(row["last_item"], answer.item_id)
        row["last_at"] = _iso(answer.at)
    for row in seen.values():
        row["overcome"] = any(i.id > row["last_item"] and i.kind in row["kinds"] and grade_of(i) == SUCCESS
                              for i in items)
        del row["last_item"]
    return sorted(seen.values(), key=lambda r: (-r["count"], r["mistake"]))


def _iso(moment: datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def progress_phrase(state: UnitState, rule: MasteryRule) -> str:
    """A unit's way to mastery in words, the same in the terminal and on the page: the streak (or the
    window) and how many of its skills were answered right, since mastery waits for both."""
    if state.mastered:
        return f"mastered; review box {state.box}, next review on {day_text(state.due)}."
    counted = f"in your last {rule.window}" if rule.window else "in a row"
    skills = len(state.skills)
    solved = skills - len(state.missing)
    return (f"progress {state.progress} of {state.needed} correct {counted}, {solved} of {skills} skills "
            f"answered right (your level: difficulty {state.level}).")


def day_text(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d") if moment else "—"
