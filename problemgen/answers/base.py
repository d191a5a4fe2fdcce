"""What every answer type provides, and the verdict it returns.

An answer type is one module in :mod:`problemgen.answers.types` holding one :class:`AnswerType`
subclass instance named ``TYPE``. It owns the whole life of its answers: reading a raw value (a TOML
value from a sheet, or the typed line of the quiz — one reader for both), checking it against the key,
the key as a sheet value and as shown in documents, the "expected format" text, and the perturbed and
garbage values the variant self-check grades.

The principle every reader follows: an answer is *wrong* only when it was read unambiguously and its
value is wrong; anything not read unambiguously raises :class:`InvalidAnswer`, whose message says what
was read, where it stopped, and one way to write it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from problemgen.answers.text import InvalidAnswer, NonFinite, kind_of  # noqa: F401 - re-exported
from problemgen.model.core import AnswerPart, Mistake


MAX_READ_AS = 200
"""Longest "read as" text shown (a whole matrix fits; a pasted essay does not)."""


@dataclass(frozen=True)
class PartResult:
    """The verdict on one answer part; ``score`` is the fraction of the part's points (0..1).

    ``read_as`` is how the answer was read when that is not simply what was typed (``"[[1/2, 1/2]]"``
    for ``[[.5 .5]]``), so the student can see the grader understood them; empty otherwise. ``fault`` names
    an exception a reader raised by mistake (a bug in problemgen, see :func:`grader_fault`); empty otherwise.
    """

    status: str
    score: float
    mistake: str | None = None
    feedback: str = ""
    read_as: str = ""
    fault: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "correct"


@dataclass(frozen=True)
class Reading:
    """An answer as read: the value the type compares, and its canonical text (shown as "read as")."""

    value: Any
    text: str


def correct(feedback: str = "") -> PartResult:
    return PartResult("correct", 1.0, None, feedback)


def invalid(message: str) -> PartResult:
    return PartResult("invalid", 0.0, None, message)


GRADER_FAULT = "the grader failed on this answer (a fault in problemgen, not in the answer), so it could not be checked"


def grader_fault(exc: Exception) -> PartResult:
    """The verdict on an answer whose reader raised an exception it does not mean to (a bug): invalid, no
    points, saying so, with the exception kept in ``fault`` for the instructor. One answer that trips a
    bug must cost that answer alone, never the rest of the sheet, a quiz session or a class run."""
    return PartResult("invalid", 0.0, None, GRADER_FAULT, fault=f"{type(exc).__name__}: {str(exc)[:120]}")


def wrong(part: AnswerPart, feedback: str, matches: Callable[[Any], bool] | None = None,
          score: float = 0.0) -> PartResult:
    """A wrong answer, naming the first listed mistake whose value ``matches`` the student's answer: for the
    types compared exactly (whole numbers, masks, shapes, choices, terms).

    Generation redraws a variant on which two differently named mistakes give one value, so at most
    one tag matches; its hint alone is the feedback (never one message covering two mistakes).
    """
    for mistake in part.mistakes if matches else ():
        try:
            if matches(mistake.value):
                return naming(mistake, feedback, score)
        except (InvalidAnswer, ValueError, TypeError, ArithmeticError):
            continue
    return naming(None, feedback, score)


def naming(mistake: Mistake | None, feedback: str, score: float = 0.0) -> PartResult:
    """A wrong answer naming ``mistake`` with its hint as the feedback, or naming none with ``feedback``
    (numbers and matrices choose the mistake with :func:`problemgen.answers.diagnosis.shown_mistake`)."""
    if mistake is None:
        return PartResult("wrong", score, None, feedback)
    return PartResult("wrong", score, mistake.name, mistake.hint)


def named_wrong(part: AnswerPart, tag: str | None, fallback: str) -> PartResult:
    """A wrong answer that shows the misconception ``tag`` in how it was written (a unit mix-up: the byte
    count labelled bits), with the part's hint for it when the part lists it, else ``fallback``."""
    hint = next((m.hint for m in part.mistakes if m.name == tag), "")
    return PartResult("wrong", 0.0, tag, hint or fallback)


ECHO_DEPTH = 8
"""Nesting shown by :func:`echo`; deeper lists are written ``[…]`` (a sheet may nest hundreds of levels)."""


def echo(raw: Any, limit: int = 40, *, depth: int = 0) -> str:
    """A short, safe rendering of what the student wrote, for messages."""
    if isinstance(raw, list) and depth >= ECHO_DEPTH:
        text = "[…]"
    elif isinstance(raw, NonFinite):
        text = raw.text
    elif isinstance(raw, bool):
        text = "true" if raw else "false"
    elif isinstance(raw, str):
        text = raw.strip()
    elif isinstance(raw, (int, float)):
        text = repr(raw)
    elif isinstance(raw, list):
        text = "[" + ", ".join(echo(x, limit, depth=depth + 1) for x in raw[:8]) + (", ..." if len(raw) > 8 else "") + "]"
    else:
        text = type(raw).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class AnswerType:
    """Base of every answer type: override :meth:`read` and :meth:`check` at least.

    ``grade`` is the one entry point the dispatcher calls; the other methods serve sheets, documents
    and the self-check. Methods take the part first because the rules (tolerance, representation,
    given dimensions) live on the part.
    """

    name = ""
    tolerant = False
    """Whether ``rtol``/``atol`` apply to this type's answers (numbers, matrices, decimals of expressions)."""
    reads_typed_arrays = False
    """Whether a typed line that is a TOML array goes to :meth:`read` as text (arrays of entries)."""

    # ---- reading and checking
    def read(self, part: AnswerPart, raw: Any) -> Reading:
        """Read a raw sheet value or typed text; raise InvalidAnswer when not read unambiguously."""
        raise NotImplementedError

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        raise NotImplementedError

    def same(self, part: AnswerPart, candidate: Any, reference: Any) -> bool:
        """Whether two values in the key's own form are equal under the part's rules.

        ``model.core.values_match`` calls this (generation refuses a mistake equal to the key, the
        self-check a perturbed key that still matches); exact equality unless the type says otherwise.
        """
        return candidate == reference

    def plain_reading(self, part: AnswerPart, raw: Any) -> Reading | None:
        """A shortcut for the plain values the sheets we hand out come back with: exactly what :meth:`read`
        gives for ``raw``, or None to leave it to :meth:`read`. Class grading reads thousands of sheets;
        a type offers one where its general reader is slow (a test compares the two on every input)."""
        return None

    def grade(self, part: AnswerPart, raw: Any) -> PartResult:
        """Read, then check; the result carries ``read_as`` when the reading differs from what was typed."""
        try:
            reading = self.plain_reading(part, raw) or self.read(part, raw)
            result = self.check(part, reading)
        except InvalidAnswer as exc:
            return invalid(str(exc))
        shown = reading.text
        if shown and "".join(shown.split()) != "".join(plain_text(raw).split()):
            result = replace(result, read_as=shown if len(shown) <= MAX_READ_AS else shown[: MAX_READ_AS - 1] + "…")
        return result

    def canonical(self, part: AnswerPart, reading: Reading) -> str:
        """The value read, as text that is equal for equal values however they were written (``99``, ``"99"``
        and ``99.0``; ``(B, h, S, L)`` and ``(B,h,S,L)``): what class grading compares between sheets to
        find two sharing the same wrong answers. Every type overrides it (a test checks each)."""
        raise NotImplementedError

    def key_value(self, part: AnswerPart) -> Any:
        """The TOML value a perfect student would write (key.toml, the self-check)."""
        return part.value

    def describe(self, part: AnswerPart) -> str:
        """How to write the answer, with its tolerance and a neutral example (not the answer): the example
        is one of :meth:`examples`, never the key nor accepted for it."""
        raise NotImplementedError

    def examples(self, part: AnswerPart) -> tuple:
        """The example answers :meth:`describe` shows for ``part``, as a student would write them (empty when
        it shows none). None of them is the key or is accepted for it (a test grades each, for every kind)."""
        return ()

    def key_display(self, part: AnswerPart, kit: Any) -> str:
        """The expected answer in a document; ``kit`` holds the renderer's helpers (see rendering)."""
        return kit.code(str(part.value))

    # ---- the self-check
    def perturb(self, part: AnswerPart) -> AnswerPart:
        """The same part with its value clearly wrong (a plausible wrong answer)."""
        raise NotImplementedError

    def garbage(self, part: AnswerPart) -> Any:
        """An unreadable answer in the key's own form (must grade invalid)."""
        return garbage_like(self.key_value(part))

    def mistake_answer(self, part: AnswerPart, value: Any) -> Any:
        """How a student would write a listed mistake's value."""
        return self.key_value(replace(part, value=value, exact=None))


def neutral_example(candidates: tuple, is_key: Callable[[Any], bool]) -> Any:
    """The first of ``candidates`` that ``is_key`` does not accept (None if every one is).

    An example that differs from the usual one would tell a student reading the code that the usual one is
    their key, so the first candidate of each type is chosen outside the values problems produce (a
    negative number where no key is below -2.5, a count no model has); the others are only a safety net.
    """
    return next((c for c in candidates if not is_key(c)), None)


GARBAGE = "@@"


def garbage_like(raw: Any) -> Any:
    """Unreadable content in the answer's own form: ``"@@"``, or a nested list of ``"@@"`` for arrays.

    A bare ``"@@"`` for a matrix is a wrong *shape*, so arrays are filled entry by entry to exercise
    the entry reader instead.
    """
    if isinstance(raw, list):
        return [garbage_like(x) for x in raw]
    return GARBAGE


def number_text(value: Any) -> str:
    """A real number as twelve significant digits: equal for 99 and 99.0, and for 0.1 + 0.2 and 0.3 (the
    float noise of a computed value), different for values a student wrote differently (0.333, 1/3)."""
    return f"{float(value) + 0.0:.12g}"


def plain_text(raw: Any) -> str:
    """What was typed, in the form a reading's text is compared with (to decide whether to say "read as")."""
    if isinstance(raw, str):
        return " ".join(raw.split())
    return echo(raw, 10**6)
