"""An exact whole number (parameter counts, bytes, FLOPs): no tolerance.

Read: a TOML integer; an integral float below 2^53 (it names exactly one integer: ``1.2e8``); text in
groups of three (``124,439,808``, ``124_439_808``, ``124 439 808``); an exact integer expression (``2^20*4``,
``4×2^20``). ``3.5`` and ``124,43`` are invalid.

A unit may follow the number only when it is the quantity the part asks (:func:`asked_unit`): ``bytes``,
``byte`` or ``B`` for bytes, ``params`` or ``parameters`` for a parameter count, ``FLOPs`` for FLOPs (words
in any case). Where bytes are asked, ``bit``/``bits`` and memory units (``KiB``, ``MB``, ``GiB`` …) are
converted exactly and graded (``12 MiB`` is 12582912 bytes); the byte count labelled bits names
``bits_not_bytes``, and an amount in the other unit of a MB/MiB pair names ``decimal_vs_binary_units``. A
unit of another quantity (bits for a parameter count, ``params`` for bytes, any unit for a plain count) is
invalid, naming what the part asks; so is ``b``, which may mean bits or bytes.
"""

from __future__ import annotations

import math
from fractions import Fraction
import re
from dataclasses import replace
from typing import Any

from problemgen.answers.base import AnswerType, PartResult, Reading, correct, named_wrong, neutral_example, wrong
from problemgen.answers.fastmath import exact_integer
from problemgen.answers.scalars import grouped_integer, mathparse
from problemgen.answers.text import InvalidAnswer, NonFinite, clean, kind_of
from problemgen.answers.types.number import OTHER_UNIT, UNIT_BYTES
from problemgen.model.core import AnswerPart

LARGEST_FLOAT_INTEGER = 2**53
MAX_INTEGER_DIGITS = 400
_PLAIN = re.compile(r"[+-]?\d{1,400}")
_GROUPS_IN_EXPRESSION = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d.,])")
_UNIT_SUFFIX = re.compile(r"(.*?[\d)])\s*([A-Za-z]+)")
_DECIMAL = re.compile(r"[+-]?(?:\d{1,30}\.\d{0,30}|\.\d{1,30})")
_UNIT_WORDS = {"byte": "bytes", "bytes": "bytes", "bit": "bits", "bits": "bits", "param": "parameters",
               "params": "parameters", "parameter": "parameters", "parameters": "parameters", "flop": "FLOPs",
               "flops": "FLOPs"}
"""Units written as words, in any case; the abbreviations (``B``, ``MiB``) are :data:`UNIT_BYTES`' keys, as written."""
_ASKED = {"bytes": "a number of bytes, e.g. {n} or {n} bytes",
          "parameters": "a number of parameters, e.g. {n} or {n} params",
          "FLOPs": "a number of FLOPs, e.g. {n} or {n} FLOPs",
          None: "a plain whole number without a unit, e.g. {n}"}
"""What each quantity asks, with the part's example (:meth:`IntegerType.examples`) for ``{n}``."""
EXAMPLE_INTEGERS = (123456789, 987654321)
"""Format examples for a whole-number part: no count, size or FLOP total of the problems (GPT-2 small's
124,439,808 was one, and the key of its own problem)."""
_LABEL_UNIT = re.compile(r"\b(bytes|parameters?|flops)\b", re.IGNORECASE)
_LABEL_WEIGHT_ENTRIES = re.compile(r"\bentries of .*\bW_|\bW_\w+ entries\b")
"""The labels that count a weight matrix's entries (parameters) without the word: multihead.head_dim's."""


def asked_unit(part: AnswerPart) -> str | None:
    """The quantity a whole-number part asks: ``spec["unit"]`` (``bytes``, ``parameters`` or ``FLOPs``), None
    for a plain count. Generators set it; a variant file written before parts carried it is read by its
    label's word ("the KV-cache size in bytes", "the number of parameters", "the FLOPs of the score product")."""
    if "unit" in part.spec:
        return part.spec["unit"]
    word = _LABEL_UNIT.search(part.label)
    if word is None:
        return "parameters" if _LABEL_WEIGHT_ENTRIES.search(part.label) else None
    return {"bytes": "bytes", "flops": "FLOPs"}.get(word.group(1).lower(), "parameters")


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
    if _PLAIN.fullmatch(text):
        return int(text)
    grouped = grouped_integer(text)
    if grouped is not None:
        if len(str(abs(grouped))) > MAX_INTEGER_DIGITS:
            raise InvalidAnswer(f"{what} has more than {MAX_INTEGER_DIGITS} digits")
        return grouped
    if re.fullmatch(r"[+-]?\d[\d,]*", text):
        raise InvalidAnswer(f"{what} {text!r}: commas must separate groups of three digits, e.g. {EXAMPLE_INTEGERS[0]:,}")
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
        """Reading.value is (the value, the number as written, its unit) for :meth:`check`."""
        if isinstance(raw, str):
            suffix = _UNIT_SUFFIX.fullmatch(clean(raw).strip())
            if suffix:
                return _with_unit(part, suffix.group(1).strip(), suffix.group(2))
        value = as_integer(raw)
        shown = str(value) if isinstance(raw, str) and not _PLAIN.fullmatch(raw.strip()) else ""
        return Reading((value, value, None), shown)

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        value, written, unit = reading.value
        key = int(part.value)
        if value == key:
            return correct()
        if unit == "bits" and written == key:
            return named_wrong(part, "bits_not_bytes", f"{key} is the number of bytes, not of bits")
        other = OTHER_UNIT.get(unit) if unit not in ("bytes", "bits") else None
        if other and written * Fraction(UNIT_BYTES[other]) == key:
            return named_wrong(part, "decimal_vs_binary_units", f"that is the size in {other}, not in {unit}")
        return wrong(part, "not the expected whole number", lambda m: value == as_integer(m))

    def canonical(self, part: AnswerPart, reading: Reading) -> str:
        """The whole number (a unit converted: ``12 MiB`` is 12582912 where bytes are asked)."""
        return str(reading.value[0])

    def key_value(self, part: AnswerPart) -> Any:
        return int(part.value)

    def describe(self, part: AnswerPart) -> str:
        plain, grouped = self.examples(part)
        return f"a whole number, exact, e.g. {plain} or \"{grouped}\""

    def examples(self, part: AnswerPart) -> tuple:
        """The example count, plain and in groups of three; never the key (a unit only labels the number)."""
        number = _example(part)
        return number, f"{number:,}"

    def key_display(self, part: AnswerPart, kit: Any) -> str:
        return f"${kit.group_digits(part.value)}$"

    def perturb(self, part: AnswerPart) -> AnswerPart:
        return replace(part, value=part.value + 1, exact=None)


def _example(part: AnswerPart) -> int:
    return neutral_example(EXAMPLE_INTEGERS, lambda n: n == part.value)


def _asked(part: AnswerPart, asked: str | None) -> str:
    return _ASKED[asked].format(n=_example(part))


def _with_unit(part: AnswerPart, number: str, written_unit: str) -> Reading:
    """A number followed by a unit: read as bytes, parameters or FLOPs when that is what the part asks (bits
    and memory units converted exactly to bytes); InvalidAnswer naming what the part asks otherwise."""
    asked = asked_unit(part)
    unit = _UNIT_WORDS.get(written_unit.lower(), written_unit if written_unit in UNIT_BYTES else None)
    shown = number if len(number) <= 40 else number[:39] + "…"
    if unit is None:
        unsure = f" ({written_unit[:20]!r} may mean bits or bytes: write B or bytes, or bits)" \
            if written_unit.endswith("b") else ""
        raise InvalidAnswer(f"read {shown} and {written_unit[:20]!r}, which is not a unit{unsure}: "
                            f"this part asks for {_asked(part, asked)}")
    if ("bytes" if unit in UNIT_BYTES else unit) != asked:
        raise InvalidAnswer(f"read {shown} {written_unit}, but this part asks for {_asked(part, asked)}")
    factor = Fraction(UNIT_BYTES.get(unit, 1))
    if factor == 1:  # bytes, B, parameters, FLOPs: the number is the answer
        value = integer_from_text(number)
        return Reading((value, value, None), str(value))
    written = Fraction(number) if _DECIMAL.fullmatch(number) else Fraction(integer_from_text(number))
    value = written * factor
    value = value.numerator if value.denominator == 1 else value  # exact: a fraction never equals a whole key
    return Reading((value, written, unit), f"{number} {written_unit} = {value} bytes")


TYPE = IntegerType()
