"""An exact whole number (parameter counts, bytes): no tolerance.

Read: a TOML integer; an integral float below 2^53 (it names exactly one integer: ``1.2e8``); text in
groups of three (``124,439,808``, ``124_439_808``, ``124 439 808``), with a trailing ``bytes`` when
bytes are asked; an exact integer expression (``2^20*4``, ``4×2^20``). ``3.5`` and ``124,43`` are invalid.
"""

from __future__ import annotations

import math
from fractions import Fraction
import re
from dataclasses import replace
from typing import Any

from problemgen.answers.base import AnswerType, PartResult, Reading, correct, wrong
from problemgen.answers.fastmath import exact_integer
from problemgen.answers.scalars import grouped_integer, mathparse
from problemgen.answers.text import InvalidAnswer, NonFinite, clean, kind_of
from problemgen.model.core import AnswerPart

LARGEST_FLOAT_INTEGER = 2**53
MAX_INTEGER_DIGITS = 400
_PLAIN = re.compile(r"[+-]?\d{1,400}")
_GROUPS_IN_EXPRESSION = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d.,])")
_BITS = re.compile(r"(.*?\d)\s*bits?", re.IGNORECASE)
_UNIT = re.compile(r"(.*?\d)\s*(bytes|byte|B|params|parameters)", re.IGNORECASE)


def as_integer(raw: Any, what: str = "answer") -> int:
    """An exact integer from a TOML integer, an integral float below 2^53, or text (see module doc)."""
    if isinstance(raw, bool):
        raise InvalidAnswer(f"{what} is {str(raw).lower()}, a boolean, not a whole number")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        if math.isfinite(raw) and raw.is_integer() and abs(raw) <= LARGEST_FLOAT_INTEGER:
            return int(raw)
        raise InvalidAnswer(f"{what} should be an exact whole number, not {raw!r}")
    if isinstance(raw, NonFinite):
        raise InvalidAnswer(f"{what} is {raw.text}, not a whole number")
    if not isinstance(raw, str):
        raise InvalidAnswer(f"{what} should be a whole number, not {kind_of(raw)}")
    return integer_from_text(raw, what)


def integer_from_text(raw: str, what: str = "answer") -> int:
    text = clean(raw, what).strip()
    unit = _UNIT.fullmatch(text)
    if unit:
        text = unit.group(1)
    if _PLAIN.fullmatch(text):
        return int(text)
    grouped = grouped_integer(text)
    if grouped is not None:
        if len(str(abs(grouped))) > MAX_INTEGER_DIGITS:
            raise InvalidAnswer(f"{what} has more than {MAX_INTEGER_DIGITS} digits")
        return grouped
    if re.fullmatch(r"[+-]?\d[\d,]*", text):
        raise InvalidAnswer(f"{what} {text!r}: commas must separate groups of three digits, e.g. 124,439,808")
    if re.fullmatch(r"[+-]?\d+(\.\d+)?[eE][+-]?\d{1,3}", text):
        value = float(text)
        if value.is_integer() and abs(value) <= LARGEST_FLOAT_INTEGER:
            return int(value)
    text = _GROUPS_IN_EXPRESSION.sub(lambda m: m.group(0).replace(",", ""), text)  # 62,219,904 * 2
    source = text.replace("x", "*") if re.fullmatch(r"[\d\s^*x()]+", text) else text
    exact = exact_integer(source)  # exact rational arithmetic, no SymPy; None when SymPy must decide
    if exact is not None:
        return exact
    mp = mathparse()
    try:
        expr = mp.parse_expression(source).expr
    except mp.MathParseError as exc:
        raise InvalidAnswer(f"{what} {text[:40]!r}: {exc}") from None
    if expr.is_Integer:
        return int(expr)
    if expr.is_Rational:
        raise InvalidAnswer(f"{what} should be a whole number, not {expr}")
    raise InvalidAnswer(f"{what} should be a whole number (an exact integer)")


class IntegerType(AnswerType):
    name = "integer"

    def read(self, part: AnswerPart, raw: Any) -> Reading:
        bits = _BITS.fullmatch(raw.strip()) if isinstance(raw, str) else None
        if bits:  # a count of bits where bytes are asked: converted (8 bits a byte) and graded
            count = integer_from_text(bits.group(1))
            value = count // 8 if count % 8 == 0 else Fraction(count, 8)  # exact: never equal to a whole key
            return Reading(value, f"{bits.group(1)} bits = {value} bytes")
        value = as_integer(raw)
        return Reading(value, str(value) if isinstance(raw, str) and not _PLAIN.fullmatch(raw.strip()) else "")

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        if reading.value == int(part.value):
            return correct()
        return wrong(part, "not the expected whole number", lambda m: reading.value == as_integer(m))

    def key_value(self, part: AnswerPart) -> Any:
        return int(part.value)

    def describe(self, part: AnswerPart) -> str:
        return "a whole number, exact, e.g. 124439808 or \"124,439,808\""

    def key_display(self, part: AnswerPart, kit: Any) -> str:
        return f"${kit.group_digits(part.value)}$"

    def perturb(self, part: AnswerPart) -> AnswerPart:
        return replace(part, value=part.value + 1, exact=None)


TYPE = IntegerType()
