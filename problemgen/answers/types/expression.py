"""An exact value or formula, given as a SymPy-readable string in ``value`` (written by trusted code).

Read: text through the safe parser (``sqrt(2)/2``, ``√2/2``, ``2π``, ``e^2/(1+e^2)``) with the names
in ``spec["symbols"]``; a TOML number is read as that decimal. Checked by value: equivalent forms are
correct (``sqrt(2)/2`` = ``1/sqrt(2)``). A decimal is accepted within tolerance only when
``spec["allow_decimal"]`` (otherwise it is invalid, unless it is exactly the key, like ``0.5`` for ``1/2``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from problemgen.answers.base import AnswerType, PartResult, Reading, correct, neutral_example, wrong
from problemgen.answers.formatting import format_number, tolerance_text
from problemgen.answers.scalars import as_number, mathparse
from problemgen.answers.text import InvalidAnswer, clean
from problemgen.answers.types.number import EXAMPLE_EXPRESSIONS, key_expression
from problemgen.model.core import AnswerPart, numbers_close


class ExpressionType(AnswerType):
    name = "expression"
    tolerant = True

    def read(self, part: AnswerPart, raw: Any) -> Reading:
        mp = mathparse()
        symbols = tuple(part.spec.get("symbols", ()))
        if isinstance(raw, str):
            text = clean(raw).strip()
            try:
                return Reading(mp.parse_expression(text, symbols), text)
            except mp.MathParseError as exc:
                raise InvalidAnswer(str(exc)) from None
        value = as_number(raw)  # booleans, nan and lists are invalid here with the usual messages
        try:
            return Reading(mp.parse_expression(repr(value)), "")
        except mp.MathParseError as exc:
            raise InvalidAnswer(f"answer: {exc}") from None

    def same(self, part: AnswerPart, candidate: Any, reference: Any) -> bool:
        """Exact forms compare as written (both come from trusted code); a number compares with the
        key's decimal value (``spec["decimal"]``) within tolerance."""
        if isinstance(candidate, str):
            return candidate == reference
        return numbers_close(candidate, float(part.spec.get("decimal", 0.0)), part.rtol, part.atol)

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        mp = mathparse()
        answer = reading.value
        key = key_expression(str(part.value), tuple(part.spec.get("symbols", ())))
        if answer.decimal:
            return self._decimal(part, answer, key)
        if mp.equivalent(answer.expr, key.expr):
            return correct()
        return wrong(part, "not equal to the expected value", _value_matcher(part, answer))

    def grade(self, part: AnswerPart, raw: Any) -> PartResult:
        try:
            reading = self.read(part, raw)
            return replace(self.check(part, reading), read_as=_read_as(raw, reading))
        except InvalidAnswer as exc:
            return PartResult("invalid", 0.0, None, str(exc))

    @staticmethod
    def _decimal(part: AnswerPart, answer, key) -> PartResult:
        mp = mathparse()
        if key.is_number and answer.is_number and mp.equivalent(answer.expr, key.expr):
            return correct()
        if not part.spec.get("allow_decimal"):
            example = _example(part)
            such = f' such as "{example}"' if example else ""
            raise InvalidAnswer(f"give an exact expression{such}, not a decimal")
        if not answer.is_number:
            raise InvalidAnswer("mix of decimals and names: give an exact expression")
        reference = float(part.spec.get("decimal", key.value()))
        if numbers_close(answer.value(), reference, part.rtol, part.atol):
            return correct()
        return wrong(part, f"not {tolerance_text(part)} of the expected value", _value_matcher(part, answer))

    def canonical(self, part: AnswerPart, reading: Reading) -> str:
        """The expression as SymPy writes it (terms in its order: ``1/(1+e^2)`` and ``1/(exp(2) + 1)`` alike)."""
        return str(reading.value.expr)

    def describe(self, part: AnswerPart) -> str:
        decimals = (f"; decimals {tolerance_text(part)} are accepted" if part.spec.get("allow_decimal")
                    else "; decimals are not accepted")
        example = _example(part)
        return ("an exact expression (numbers, + - * / ^, parentheses, exp, log, sqrt, pi, e)"
                + (f", e.g. \"{example}\"" if example else "") + decimals)

    def examples(self, part: AnswerPart) -> tuple:
        example = _example(part)
        return (example,) if example else ()

    def key_display(self, part: AnswerPart, kit: Any) -> str:
        decimal = part.spec.get("decimal")
        approx = f" $\\approx {format_number(decimal, kit.digits)}$" if decimal is not None else ""
        return kit.code(str(part.value)) + approx

    def perturb(self, part: AnswerPart) -> AnswerPart:
        spec = dict(part.spec, decimal=float(part.spec.get("decimal", 0.0)) + 1.0)
        return replace(part, value=f"({part.value}) + 1", spec=spec)

    def mistake_answer(self, part: AnswerPart, value: Any) -> Any:
        return value


def _example(part: AnswerPart) -> str | None:
    """An exact expression the part does not accept (the number type's examples, far from every key); the
    example contains no decimal, so checking it never asks for an example again."""
    return neutral_example(tuple(EXAMPLE_EXPRESSIONS), lambda text: _accepts(part, text))


def _accepts(part: AnswerPart, text: str) -> bool:
    """Whether ``text`` would earn anything for ``part``: decided by value when the part's decimal is far from
    it (a margin of 0.1 % or 0.001 for a rounded decimal), by grading it otherwise."""
    decimal = part.spec.get("decimal")
    if decimal is not None and not numbers_close(EXAMPLE_EXPRESSIONS[text], float(decimal), max(part.rtol, 1e-3),
                                                 max(part.atol, 1e-3)):
        return False
    try:
        return TYPE.check(part, TYPE.read(part, text)).score > 0
    except InvalidAnswer:
        return False


def _read_as(raw: Any, reading: Reading) -> str:
    text = reading.text
    return text if isinstance(raw, str) and text and text != " ".join(raw.split()) else ""


def _value_matcher(part: AnswerPart, answer) -> Callable[[Any], bool] | None:
    """Compare an answer's value with a mistake's decimal (tolerance of the part, else 1e-9 relative)."""
    if not answer.is_number:
        return None
    value = answer.value()
    rtol = part.rtol if (part.rtol or part.atol) else 1e-9
    return lambda m: numbers_close(value, float(m), rtol, part.atol)


TYPE = ExpressionType()
