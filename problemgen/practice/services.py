"""What a practice front end needs from the rest of problemgen: the generator, grader and renderer, the
clock, and the wording of the wheel-spinning offers.

Shared by the terminal quiz and the web page, so neither front end imports the other.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Mapping

from problemgen.model.core import AnswerPart, Problem, ProblemgenError
from problemgen.practice.hints import hint_text, hints_given, solution_names
from problemgen.practice.progress import from_text, utc_now
from problemgen.problems import index

if TYPE_CHECKING:
    from problemgen.practice.rules import Unit  # for annotations only: the services need none of the rules

OFFER_TEXT = {
    "example": "see a worked example of a new variant, then try again",
    "easier": "practise this skill at an easier difficulty",
    "prerequisite": "go back to the prerequisite unit for a while",
}
NOW_ENV = "PROBLEMGEN_NOW"
"""If set (ISO time, e.g. ``2026-03-01T09:00:00Z``), the quiz and ``progress`` use it as the clock."""


@dataclass
class Services:
    """What the loop needs from the rest of problemgen (tests may pass fakes)."""

    generate: Callable[[str, int, int], Problem]
    grade: Callable[[AnswerPart, str], Any]
    render: Callable[[Problem, str], str]
    describe: Callable[[AnswerPart], str]
    available: Mapping[str, tuple[int, ...]]
    summary: Mapping[str, str] = field(default_factory=dict)
    shown: Callable[[str], frozenset[str] | None] = lambda kind: None  # solution values a kind prints
    warm_up: Callable[[], object] = lambda: None  # called once the first problem is on screen

    def hint(self, unit: Unit, problem: Problem, part: AnswerPart, level: int) -> str:
        """Hint ``level`` of ``part``: the same words in the terminal quiz and on the practice page."""
        return hint_text(problem, part, self.first_hint(unit, problem.kind), level, self.shown(problem.kind))

    def hints_given(self, unit: Unit, problem: Problem, reached: Mapping[str, int]) -> list[tuple[int, str]]:
        """The hints a resumed problem was given before (``reached``: each part's level), worded as
        :meth:`hint` gave them, so the quiz and the page show them again alike; reading them counts nothing."""
        return hints_given(problem, reached, self.first_hint(unit, problem.kind), self.shown(problem.kind))

    def first_hint(self, unit: Unit, kind: str) -> str:
        """The first, most general hint: the unit's words for the kind, else the kind's summary."""
        return unit.hint_for(kind) or self.summary.get(kind, "")


def default_services() -> Services:
    """The real generator, grader and renderer (imported here, when a session starts)."""
    # lazy: generators, grader and renderer (numpy, jinja2) load when a session starts, not on import
    from problemgen.sheets import answersheet, grading
    from problemgen.model import registry
    from problemgen.documents import rendering
    kinds = index.load()  # read from the sources: no need to import every generator (and sympy) up front
    return Services(
        generate=lambda kind, seed, difficulty: registry.generate(kind, seed, difficulty),
        grade=grading.grade_text,
        render=lambda problem, block: rendering.render_block(problem, block, "text"),
        describe=answersheet.describe_format,
        available={k["name"]: tuple(k["difficulties"]) for k in kinds},
        summary={k["name"]: k["summary"] for k in kinds},
        shown=solution_names,
        warm_up=warm_expression_reader,
    )


def warm_expression_reader() -> threading.Thread:
    """Import the expression reader (and SymPy, ~1 s) in a background thread while the student reads
    the first problem, so the first answer written as an expression is graded at once instead of
    waiting for the import; start-up itself never loads SymPy."""
    from problemgen.answers.scalars import warm_up  # cheap; what it imports (SymPy) runs in the thread

    thread = threading.Thread(target=warm_up, name="warm-expression-reader", daemon=True)
    thread.start()
    return thread


def clock_from_env(env: Mapping[str, str] | None = None) -> Callable[[], datetime]:
    """The real clock, or a fixed one from ``PROBLEMGEN_NOW`` (scripted demos and tests)."""
    env = os.environ if env is None else env
    if not env.get(NOW_ENV):
        return utc_now
    try:
        fixed = from_text(env[NOW_ENV])
    except ValueError as exc:
        raise ProblemgenError(f"{NOW_ENV} must look like 2026-03-01T09:00:00Z, not {env[NOW_ENV]!r}") from exc
    return lambda: fixed


# ----------------------------------------------------------------------------------- session
