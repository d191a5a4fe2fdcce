"""The practice loop behind the web pages: the same rules, store and grader as the terminal quiz.

Nothing about an item is kept in server memory. The store holds the history (items, answers, hints);
the problem is regenerated from (kind, seed, difficulty), which is deterministic; which parts are done
and whether the item already failed are read back from the stored answers. So a reload, a restarted
server or a switch to ``problemgen quiz`` resumes exactly where the student was.

Unlike the terminal, a page shows every part of a problem at once and the student may answer them in
any order; the store decides the item as for the quiz (``progress.answer_outcome``: the first wrong
answer makes it wrong, the last remaining part answered right makes it correct), inside the answer's
write transaction, so a second tab or a second server answering at the same moment cannot undo it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from problemgen.misconceptions.catalogue import describe
from problemgen.model.core import AnswerPart, Problem, ProblemgenError
from problemgen.practice.progress import ItemConflict, ItemRecord, ProgressStore, SessionGone, filed_afresh
from problemgen.practice.services import OFFER_TEXT, Services
from problemgen.practice.rules import (
    Choice,
    Curriculum,
    all_states,
    apply_offer,
    progress_phrase,
    choose_next,
    draw_variant,
    regenerate,
    resumable,
    Unit,
    unit_unlocked,
)

@dataclass
class ItemView:
    """The item on screen: its record, problem, which parts are right, and what it cost so far."""

    record: ItemRecord
    problem: Problem
    done_parts: set[str] = field(default_factory=set)
    failed: bool = False
    reason: str = ""

    @property
    def id(self) -> int:
        return self.record.id

    @property
    def complete(self) -> bool:
        """Closed: every part right, the solution shown, or left (the store refuses its answers)."""
        return self.record.closed_at is not None

    def remaining(self) -> list[AnswerPart]:
        return [p for p in self.problem.parts if p.key not in self.done_parts]


@dataclass
class ServerSession:
    """The sessions row a running server files its items under, shared by its requests.

    ``problemgen progress --reset`` in another process deletes it, and every item filed under it then
    failed until the server was restarted; the next item opens a new one instead (``Practice._file``)."""

    id: int = 0

    def open(self, store: ProgressStore, clock: Callable[[], datetime]) -> ServerSession:
        """A new sessions row for this server (at start-up, and after a reset deleted the last one)."""
        self.id = store.start_session(store.base_seed(), None, clock())
        return self


class Practice:
    """One request's view of the student's practice, over the app's store (requests come one at a time)."""

    def __init__(self, store: ProgressStore, curriculum: Curriculum, services: Services,
                 clock: Callable[[], datetime], session: ServerSession) -> None:
        self.store, self.curriculum, self.services = store, curriculum, services
        self.clock, self.session = clock, session

    # -- reading -------------------------------------------------------------------------------

    def current(self) -> ItemView | None:
        """The item to resume, by the terminal quiz's rule (``rules.resumable``: undecided, or quit in
        the terminal, which is reopened), else None. A decided item is not resumed (in either front end),
        nor one whose every part is already right (the store credits it instead), nor one this problemgen
        cannot make again (``rules.regenerate``: it is left as it is)."""
        latest = self.store.last_item()
        record = resumable([latest] if latest else [])
        if record is None or record.kind not in self.services.available:
            return None
        problem = regenerate(record, self._generate)
        if problem is None:
            return None
        if not self.store.resume_item(record.id, [p.key for p in problem.parts], self.clock()):
            return None
        latest = self.store.last_item()  # as resuming left it; another process may have started one since
        return self.view(latest, problem if latest.id == record.id else None)

    def view(self, record: ItemRecord, problem: Problem | None = None) -> ItemView:
        """The item of ``record`` with what its stored answers say; ``problem``: its variant, when the
        caller already made it (else it is made again from the record)."""
        answers = self.store.answers(record.id)
        done = {a.part for a in answers if a.status == "correct"}
        failed = record.outcome == "wrong" or any(a.status == "wrong" for a in answers)
        if problem is None:
            problem = self._generate(record.kind, record.seed, record.difficulty)
        return ItemView(record, problem, done, failed)

    def hints_given(self, view: ItemView) -> list[tuple[int, str]]:
        """The hints already given on the item, as (level, text) the way ``hint`` gave them, for a page
        that shows the problem again (reloaded, reopened, or resumed from the terminal). Reading them
        counts nothing: the store's levels and the item's credit stay as they are."""
        return self.services.hints_given(self._unit(view), view.problem, self.store.hints_reached(view.id))

    def item(self, item_id: int) -> ItemView:
        """The item ``item_id``; only the latest item can be acted on (an old tab cannot rewrite history)."""
        latest = self.store.last_item()
        if latest is None or latest.id != item_id:
            raise ItemConflict("this problem is no longer the current one (another tab moved on, or the progress was reset)")
        return self.view(latest)

    def states(self) -> dict:
        """Every unit's state; mastery requires the installed kinds only, as in the terminal quiz."""
        return all_states(self.curriculum, self.store.items(), self.services.available)

    def _generate(self, kind: str, seed: int, difficulty: int) -> Problem:
        return _cached_generate(self.services.generate, kind, seed, difficulty)

    # -- starting --------------------------------------------------------------------------------

    def start(self, unit: str | None = None, *, resume: bool = True, leave: str | None = None) -> ItemView:
        """The open item (when ``resume``), else a new variant chosen by the practice rules."""
        open_item = self.current()
        if open_item is not None:
            if resume and (unit is None or open_item.record.unit == unit):
                return open_item
            self.store.finish_item(open_item.id, "skipped", self.clock())
            leave = open_item.record.kind
        return self._begin(self.choose(unit, leave))

    def choose(self, unit: str | None = None, leave: str | None = None) -> Choice:
        """What the rules pick next (``leave``: the kind just skipped, not picked again at once)."""
        return choose_next(self.curriculum, self.store.items(), self.clock(), self.services.available, unit,
                           leave=leave)

    def offers(self) -> list[dict[str, str]]:
        """Wheel-spinning: the other ways in the rules propose for the next pick, with their wording."""
        return [{"offer": o, "text": OFFER_TEXT[o]} for o in self.choose().offers]

    def take_offer(self, offer: str) -> ItemView:
        """Start the next item by the offer the student took (a worked example is shown revealed)."""
        choice = apply_offer(self.choose(), offer, self.curriculum, self.store.items(), self.clock(),
                             self.services.available)
        view = self._begin(choice)
        if choice.example:  # a worked example is not an answer: closed at once, never shown again
            self.store.finish_item(view.id, "skipped", self.clock())
            view = self.view(self._record(view.id), view.problem)
        return view

    def _begin(self, choice: Choice) -> ItemView:
        """Draw a never-seen variant for ``choice`` (answers unlike the last of its kind) and store it."""
        last = self.store.last_item(choice.kind)
        previous = last and regenerate(last, self._generate)
        base_seed = self.store.base_seed()
        problem, item_id = filed_afresh(
            lambda: draw_variant(choice, base_seed, set(self.store.seen(choice.kind)), self._generate, previous),
            lambda problem: self._file(choice, problem))
        view = self.view(self._record(item_id), problem)
        view.reason = choice.reason
        return view

    def _record(self, item_id: int) -> ItemRecord:
        """The stored record of an item this server just filed or answered: by its id, not the latest, which
        the other front end may have filed since."""
        return self.store.item(item_id)

    def _file(self, choice: Choice, problem: Problem) -> int:
        """Store the new item under the server's session, or under a new one when a reset deleted it."""
        def start() -> int:
            return self.store.start_item(self.session.id, unit=choice.unit.id, kind=choice.kind, seed=problem.seed,
                                         difficulty=problem.difficulty, variant_id=problem.variant_id,
                                         review=choice.review, target=choice.target, now=self.clock())
        try:
            return start()
        except SessionGone:
            self.session.open(self.store, self.clock)
            return start()

    # -- acting on the current item --------------------------------------------------------------

    def answer(self, item_id: int, part_key: str, text: str) -> dict[str, Any]:
        """Grade one answer with the shared reader, commit it, and say what it means for the unit. Whether
        the part is already right, and what the answer decides, the store settles as it commits."""
        view = self.item(item_id)
        part = find_part(view.problem, part_key)
        before = self.states()
        result = self.services.grade(part, text)
        self.store.record_answer(item_id, part.key, text, result.status, result.score, result.mistake,
                                 self.clock(), parts=[p.key for p in view.problem.parts])
        title = _title(result.mistake)
        reply = {"status": result.status, "feedback": _without_title(result.feedback, title),
                 "mistake": result.mistake, "mistake_title": title,
                 "mistake_hint": _mistake_hint(part, result.mistake),
                 "read_as": result.read_as if result.status != "invalid" else ""}
        after_view = self.view(self._record(item_id), view.problem)  # the latest may be another front end's by now
        reply["item_complete"] = after_view.complete
        reply["progress"] = self._report(view.record.unit, before) if after_view.complete else []
        reply["offers"] = self.offers() if after_view.complete else []
        return reply

    def hint(self, item_id: int) -> dict[str, Any]:
        """The next hint level (the item then no longer counts toward mastery, as in the quiz). A closed
        item takes none (the store refuses it): a second tab still showing the Hint button of a finished
        item took back the credit it had earned."""
        view = self.item(item_id)
        part = (view.remaining() or list(view.problem.parts))[0]  # the first part not yet right
        level = self.store.record_hint(item_id, part.key)  # levels are per part, as in the terminal quiz
        return {"level": level, "text": self.services.hint(self._unit(view), view.problem, part, level)}

    def _unit(self, view: ItemView) -> Unit:
        return self.curriculum.unit(view.record.unit)

    def reveal(self, item_id: int) -> ItemView:
        """Show the worked solution: the item ends and counts as not known."""
        view = self.item(item_id)
        self.store.finish_item(item_id, "revealed", self.clock())
        return view

    def leave(self, item_id: int, how: str) -> ItemView:
        """``skip`` (next item by the rules) or ``another`` (a new variant of the same skill)."""
        if how not in ("skip", "another"):
            raise ProblemgenError(f"unknown action {how!r}")
        view = self.item(item_id)
        if how == "skip":  # leaves the skill for now, as in the terminal quiz
            self.store.finish_item(item_id, "skipped", self.clock())
            return self._begin(self.choose(leave=view.record.kind))
        self.store.finish_item(item_id, "another", self.clock())
        record = view.record
        unit = self.curriculum.unit(record.unit)
        return self._begin(Choice(unit, record.kind, record.difficulty, record.review, record.target, "another"))

    # -- after an item -----------------------------------------------------------------------------

    def _report(self, unit_id: str, before: dict) -> list[str]:
        """What changed for the units: mastered, unlocked, or the progress toward mastery."""
        after = self.states()
        unit, old, new = self.curriculum.unit(unit_id), before[unit_id], after[unit_id]
        lines = []
        if new.mastered and not old.mastered:
            lines.append(f"Unit mastered: {unit.title}. First review on {new.due:%Y-%m-%d}.")
        elif not new.mastered:
            lines.append(f"{unit.title}: {progress_phrase(new, unit.rule)}")
        available = self.services.available
        for other in self.curriculum.units:
            if (unit_unlocked(other, self.curriculum, after, available)
                    and not unit_unlocked(other, self.curriculum, before, available)):
                lines.append(f"Unlocked: {other.title}.")
        return lines


@functools.lru_cache(maxsize=256)
def _cached_generate(generate: Callable, kind: str, seed: int, difficulty: int) -> Problem:
    """Regenerating a variant is deterministic; keep the recent ones (each request re-reads the item)."""
    return generate(kind, seed, difficulty)


def find_part(problem: Problem, key: str) -> AnswerPart:
    try:
        return problem.part(key)
    except KeyError:
        raise ProblemgenError(f"this problem has no part {key!r}") from None


def _title(mistake: str | None) -> str:
    return describe(mistake) if mistake else ""


def _without_title(feedback: str, title: str) -> str:
    """The grader's feedback may open with the mistake's title as a question; the page shows it once."""
    lead = f"{title[:1].upper()}{title[1:]}? " if title else ""
    return feedback[len(lead):] if lead and feedback.startswith(lead) else feedback


def _mistake_hint(part: AnswerPart, mistake: str | None) -> str:
    """The hint the variant attached to the matched mistake (the catalogue's by default)."""
    return next((m.hint for m in part.mistakes if m.name == mistake), "") if mistake else ""
