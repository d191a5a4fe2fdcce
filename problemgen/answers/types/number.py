"""A real number, within the part's tolerance (``rtol``/``atol``); ``exact`` may hold its exact form.

Read: a TOML number, or text: ``0.25``, ``.25``, ``1/4``, ``2.5×10^3``, ``2.5e3``, ``−0.5``, ``√2/2``,
``exp(2)/(1+exp(2))``. A trailing unit equal to the asked one (``spec["unit"]``: ``201.3 MB``) is
dropped; the other unit of its pair (MB/MiB, GB/GiB, bits/bytes) is converted and graded, and names
the unit misconception when the number matches it. A percent sign is read where a fraction is asked
(``spec["fraction"]`` or a key in [0, 1]): ``25%`` is 0.25. ``0,5`` is invalid (decimal comma).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from problemgen.answers.base import (AnswerType, PartResult, Reading, correct, named_wrong, naming, neutral_example,
                                     number_text)
from problemgen.answers.diagnosis import shown_mistake
from problemgen.answers.formatting import format_number, tolerance_text
from problemgen.answers.scalars import as_number, mathparse
from problemgen.answers.text import InvalidAnswer, clean
from problemgen.model.core import AnswerPart, ProblemgenError, numbers_close

UNIT_BYTES = {"bytes": 1, "B": 1, "bits": 1 / 8, "KB": 10**3, "KiB": 2**10, "MB": 10**6, "MiB": 2**20,
              "GB": 10**9, "GiB": 2**30, "TB": 10**12, "TiB": 2**40}
OTHER_UNIT = {"MB": "MiB", "MiB": "MB", "GB": "GiB", "GiB": "GB", "KB": "KiB", "KiB": "KB", "TB": "TiB",
              "TiB": "TB", "bytes": "bits", "bits": "bytes"}
UNIT_MISTAKE = {"MB": "decimal_vs_binary_units", "MiB": "decimal_vs_binary_units", "GB": "decimal_vs_binary_units",
                "GiB": "decimal_vs_binary_units", "KB": "decimal_vs_binary_units", "KiB": "decimal_vs_binary_units",
                "TB": "decimal_vs_binary_units", "TiB": "decimal_vs_binary_units", "bits": "bits_not_bytes",
                "bytes": "bits_not_bytes"}
EXAMPLE_NUMBERS = (-4.25, -6.75, -9.5)
"""Format examples for a number part: below every key the problems produce (none is under -2.5)."""
EXAMPLE_EXPRESSIONS = {"-exp(2)/(1+exp(-2))": -math.exp(2) / (1 + math.exp(-2)),
                       "-exp(3)/(1+exp(-3))": -math.exp(3) / (1 + math.exp(-3))}
"""Exact-form examples with their values (about -6.5 and -19.1), as far from every key."""
_UNIT_SUFFIX = re.compile(r"(.*?\S)\s*([A-Za-z]{1,5})")
_PERCENT = re.compile(r"(.*?)\s*%")


class NumberType(AnswerType):
    name = "number"
    tolerant = True

    def read(self, part: AnswerPart, raw: Any) -> Reading:
        if not isinstance(raw, str):
            value = as_number(raw)
            return Reading((value, None, None), format_number(value, 12))
        text = clean(raw).strip()
        unit = None
        suffix = _UNIT_SUFFIX.fullmatch(text)
        if suffix and suffix.group(2) in UNIT_BYTES and not re.search(r"[A-Za-z]$", suffix.group(1)):
            text, unit = suffix.group(1), suffix.group(2)
            asked = part.spec.get("unit")
            if unit != asked and unit != OTHER_UNIT.get(asked):
                want = f"the answer in {asked}" if asked else "a plain number"
                raise InvalidAnswer(f"read the number {text} and the unit {unit}, but this part asks for {want}")
        percent = _PERCENT.fullmatch(text)
        if percent:
            if not self._fraction_asked(part):
                raise InvalidAnswer(f"read {text}: this part asks for a plain number, not a percentage")
            value = as_number(percent.group(1)) / 100
            return Reading((value, None, None), f"{format_number(value, 12)} ({text})")
        value = as_number(text)
        shown = text if unit is None else f"{text} {unit}"
        return Reading((value, unit, text), shown)

    @staticmethod
    def _fraction_asked(part: AnswerPart) -> bool:
        return bool(part.spec.get("fraction", 0.0 <= float(part.value) <= 1.0))

    def same(self, part: AnswerPart, candidate: Any, reference: Any) -> bool:
        """Equal within the part's tolerance (``atol + rtol·|reference|``)."""
        return numbers_close(candidate, reference, part.rtol, part.atol)

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        value, unit, text = reading.value
        asked = part.spec.get("unit")
        if unit is not None and unit != asked:
            return self._other_unit(part, value, unit, asked)
        if numbers_close(value, part.value, part.rtol, part.atol):
            return correct()
        if part.exact and text and _near(value, part.value) and self._exactly_equal(text, part.exact):
            return correct()  # an exact form equal to the key, though the float missed a zero tolerance
        return naming(shown_mistake(part, [value], ()), f"not {tolerance_text(part)} of the expected value")

    def _other_unit(self, part: AnswerPart, value: float, unit: str, asked: str) -> PartResult:
        """A number in the paired unit: converted and graded; names the unit mix-up when it is one."""
        converted = _in_unit(value, unit, asked)
        if numbers_close(converted, part.value, part.rtol, part.atol):
            return correct(f"read {format_number(value, 6)} {unit} = {format_number(converted, 6)} {asked}")
        if numbers_close(value, part.value, part.rtol, part.atol):
            return named_wrong(part, UNIT_MISTAKE.get(unit), f"{value:g} is the value in {asked}, not in {unit}")
        return naming(shown_mistake(part, [converted], ()),
                      f"{format_number(converted, 6)} {asked} is not {tolerance_text(part)} of the expected value")

    @staticmethod
    def _exactly_equal(text: str, exact: str) -> bool:
        mp = mathparse()
        try:
            answer = mp.parse_expression(text)
            key = mp.parse_expression(exact, (), trusted=True)
        except mp.MathParseError:
            return False
        return mp.equivalent(answer.expr, key.expr)

    def canonical(self, part: AnswerPart, reading: Reading) -> str:
        """The number in the unit the part asks (``192 MiB`` where MB is asked is its MB)."""
        value, unit, _ = reading.value
        asked = part.spec.get("unit")
        if unit is not None and unit != asked and asked in UNIT_BYTES:
            value = _in_unit(value, unit, asked)
        return number_text(value)

    def key_value(self, part: AnswerPart) -> Any:
        return float(part.value)

    def describe(self, part: AnswerPart) -> str:
        number, exact = self._examples(part)
        extra = f", or an exact expression such as \"{exact}\"" if exact else ""
        unit = f" (in {part.spec['unit']}; the unit may follow the number)" if part.spec.get("unit") else ""
        example = f", e.g. {format_number(number, 12)}" if number is not None else ""
        return f"a number{unit}, {tolerance_text(part)}{extra}{example}"

    def examples(self, part: AnswerPart) -> tuple:
        return tuple(x for x in self._examples(part) if x is not None)

    @staticmethod
    def _examples(part: AnswerPart) -> tuple[float | None, str | None]:
        """A plain number, and an exact expression where the part takes one, neither near the key."""
        def near(value: float) -> bool:
            return numbers_close(value, float(part.value), part.rtol, part.atol) or _near(value, part.value)

        exact = neutral_example(tuple(EXAMPLE_EXPRESSIONS), lambda text: near(EXAMPLE_EXPRESSIONS[text])) \
            if part.exact else None
        return neutral_example(EXAMPLE_NUMBERS, near), exact

    def key_display(self, part: AnswerPart, kit: Any) -> str:
        exact = f" (exactly {kit.code(part.exact)})" if part.exact else ""
        return f"${format_number(part.value, kit.digits)}$" + exact

    def perturb(self, part: AnswerPart) -> AnswerPart:
        value = part.value
        return replace(part, value=value + 1.0 + 10 * (part.atol + part.rtol * abs(float(value))), exact=None)

    def mistake_answer(self, part: AnswerPart, value: Any) -> Any:
        return float(value)


def _near(value: float, key: float) -> bool:
    """Whether an exact comparison could still say equal: a value 1e-9 away (relative) from the key
    cannot be exactly it, so a clear mismatch is decided without importing SymPy."""
    return numbers_close(value, key, 1e-9, 1e-12)


def key_expression(text: str, symbols: tuple[str, ...] = ()):
    """A key's exact form parsed (trusted functions allowed); a broken key is the generator's bug."""
    mp = mathparse()
    try:
        return mp.parse_expression(text, symbols, trusted=True)
    except mp.MathParseError as exc:
        raise ProblemgenError(f"variant key expression {text!r} cannot be parsed: {exc}") from None


TYPE = NumberType()


def _in_unit(value: float, unit: str, asked: str) -> float:
    """A size written in ``unit`` expressed in ``asked`` (both keys of UNIT_BYTES: 192 MiB in MB)."""
    return value * UNIT_BYTES[unit] / UNIT_BYTES[asked]
