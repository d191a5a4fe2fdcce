"""Grading answers: one part at a time (``grade_part``), a typed line (``grade_text``), a whole sheet.

An answer part carries its own rules (type, tolerance, known mistakes), so grading is a pure function
of (part, raw value). The result is ``correct``, ``wrong`` or ``invalid``: *invalid* means the answer
could not be read as the asked type (a format problem the student can fix), never that it was wrong.

Rules, per answer type (these are the ones printed on the sheets; tests pin each one):

- **blank** (``""``, a missing key, or ``[]``): ``wrong``, score 0, feedback "no answer".
- **number**: a TOML number, or text holding a number or a numeric expression (``"1/4"``); correct
  within ``atol + rtol·|key|``; when the part has an ``exact`` form an equivalent exact expression is
  correct too. Booleans, ``nan`` and ``inf`` are invalid.
- **integer**: exact. ``124439808``, ``"124,439,808"`` (groups of three), ``"124_439_808"``, and exact
  integer expressions (``"2^20*4"``) are accepted; a float is accepted only when it is integral and below
  2^53 (so it denotes exactly one integer: ``1.2e8`` is 120000000); ``3.5`` is invalid.
- **matrix**: the shape must match exactly; no broadcasting. Answers that differ only by size-1 axes
  (a vector for a 1xN key) are invalid, with the bracket fix; other shapes are wrong. With the right
  shape, **partial credit = the fraction of entries within tolerance**; entries may be exact
  expressions in quotes. Feedback names the wrong entries 1-based as (row, column).
- **shape**: dimensions in order, as ``"(B, h, L, d_k)"`` or an array. Names match by name and are
  case-sensitive; a composite dimension is a product of names compared as a product (``h*d_k`` =
  ``d_k*h``). A number is accepted for a name wherever the problem gave that name's value
  (``spec["dims"]``), alone or in a product: for ``h*d_k`` with h = 8 and d_k = 64 given, ``512``,
  ``8*64`` and ``8*d_k`` are all right. A different name is wrong even when its value is equal
  (``d_v`` for ``d_k``, ``h*d_v`` for ``h*d_k``, both 64). All or nothing.
- **expression**: exact expressions are compared by value (``sqrt(2)/2`` = ``1/sqrt(2)``); an answer
  containing a decimal is accepted within tolerance only when ``spec["allow_decimal"]`` (otherwise it
  is invalid, unless it is exactly the key, like ``0.5`` for ``1/2``).
- **mask**: only the representation asked for: ``bool`` takes true/false (or "T"/"F"), ``01`` takes
  0/1, ``additive`` takes 0 and -inf (``-inf``, ``"-inf"``, ``"-∞"`` or ``"−∞"`` as printed on the
  sheet). All or nothing; feedback names the wrong entries.
- **choice**: option ids, case-insensitive. Single: exactly one id, all or nothing. Multiple:
  **score = max(0, right picks − wrong picks) / number of correct options**.
- **term**: compared ignoring case, spaces, hyphens and underscores against the accepted spellings.

A wrong answer equal (under the part's own tolerance) to a listed Mistake's value names the
misconception (``mistake`` = its tag) and gives its hint as feedback.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from problemgen.sheets.answersheet import BadValue, NonFinite, check_ascii, key_value, parse_value, read_sheet, toml_value
from problemgen.model.core import AnswerPart, ProblemgenError, _flatten, numbers_close
from problemgen.model.variantfile import WorksheetVariant
from problemgen.answers.formatting import tolerance_text
from problemgen.sheets.reports import CheckResult, Report

__all__ = ["PartResult", "grade_part", "grade_text", "key_value", "grade_sheet"]

MAX_ENTRIES = 100_000
MAX_NESTING = 8
LARGEST_FLOAT_INTEGER = 2**53
MAX_INTEGER_DIGITS = 400
MAX_LISTED_ENTRIES = 6


@dataclass(frozen=True)
class PartResult:
    """The verdict on one answer part; ``score`` is the fraction of the part's points (0..1)."""

    status: str
    score: float
    mistake: str | None = None
    feedback: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "correct"


class InvalidAnswer(Exception):
    """The answer cannot be read as the asked type; the message tells the student what to write."""


def _correct(feedback: str = "") -> PartResult:
    return PartResult("correct", 1.0, None, feedback)


def _wrong(part: AnswerPart, feedback: str, matches: Callable[[Any], bool] | None = None,
           score: float = 0.0) -> PartResult:
    """A wrong answer, naming the first listed mistake whose value ``matches`` the student's answer.

    When several listed mistakes give the same value for this variant, the tag is the first one (the
    generator lists the likeliest first) and the feedback carries every matching hint.
    """
    hits = []
    for mistake in part.mistakes if matches else ():
        try:
            if matches(mistake.value):
                hits.append(mistake)
        except (InvalidAnswer, ValueError, TypeError, ArithmeticError):
            continue
    if hits:
        return PartResult("wrong", score, hits[0].name, " Or: ".join(dict.fromkeys(m.hint for m in hits)))
    return PartResult("wrong", score, None, feedback)


def _echo(raw: Any, limit: int = 40) -> str:
    """A short, safe rendering of what the student wrote, for messages."""
    try:
        text = raw.text if isinstance(raw, NonFinite) else toml_value(raw)
    except TypeError:
        text = type(raw).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_blank(raw: Any) -> bool:
    return raw is None or raw == [] or (isinstance(raw, str) and not raw.strip())


# ------------------------------------------------------------------------------------------ entry points


def grade_part(part: AnswerPart, raw: Any) -> PartResult:
    """Grade the raw TOML value ``raw`` (str, int, float, bool, list, NonFinite, BadValue) for ``part``."""
    if isinstance(raw, BadValue):
        return PartResult("invalid", 0.0, None, raw.message)
    if _is_blank(raw):
        return PartResult("wrong", 0.0, None, "no answer")
    try:
        return _CHECKERS[part.type](part, raw)
    except InvalidAnswer as exc:
        return PartResult("invalid", 0.0, None, str(exc))


def grade_text(part: AnswerPart, text: str) -> PartResult:
    """Grade one typed line (the quiz) with the same rules: TOML syntax when it is TOML, else text."""
    try:
        raw = parse_value(text)
    except ValueError as exc:
        return PartResult("invalid", 0.0, None, str(exc))
    return grade_part(part, raw)


# ------------------------------------------------------------------------------------------ numbers


def _text(raw: str, what: str = "answer") -> str:
    try:
        check_ascii(raw, what)
    except ValueError as exc:
        raise InvalidAnswer(str(exc)) from None
    return raw.strip()


def _mathparse():
    """SymPy is imported only when an answer needs it (numbers as TOML values never do)."""
    from problemgen.answers import mathparse  # lazy: mathparse imports sympy (start-up cost)

    return mathparse


def as_number(raw: Any, what: str = "answer") -> float:
    """A finite real from a TOML number or a numeric text; raises InvalidAnswer otherwise."""
    if type(raw) is float and math.isfinite(raw):
        return raw  # the common case, first
    if isinstance(raw, bool):
        raise InvalidAnswer(f"{what} is {str(raw).lower()}, a boolean, not a number")
    if isinstance(raw, NonFinite):
        raise InvalidAnswer(f"{what} is {raw.text}, not a finite number")
    if isinstance(raw, int):
        if abs(raw) > 10**300:
            raise InvalidAnswer(f"{what} is too large a number")
        return float(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise InvalidAnswer(f"{what} is not a finite number")
        return raw
    if isinstance(raw, str):
        mp = _mathparse()
        try:
            return mp.number_value(_text(raw, what))
        except mp.MathParseError as exc:
            raise InvalidAnswer(f"{what}: {exc}") from None
    raise InvalidAnswer(f"{what} should be a number, not {_kind(raw)}")


def _kind(raw: Any) -> str:
    if isinstance(raw, list):
        return "a list"
    if isinstance(raw, dict):
        return "a table"
    if isinstance(raw, str):
        return "text"
    return type(raw).__name__


def _check_number(part: AnswerPart, raw: Any) -> PartResult:
    value = as_number(raw)
    if numbers_close(value, part.value, part.rtol, part.atol):
        return _correct()
    if part.exact and isinstance(raw, str) and _exactly_equal(raw, part.exact):
        return _correct()
    return _wrong(part, f"not {tolerance_text(part)} of the expected value",
                  lambda m: numbers_close(value, m, part.rtol, part.atol))


def _exactly_equal(raw: str, exact: str) -> bool:
    mp = _mathparse()
    try:
        answer = mp.parse_expression(raw)
    except mp.MathParseError:
        return False
    return mp.equivalent(answer.expr, _key_expression(exact, ()).expr)


# ------------------------------------------------------------------------------------------ integers

_GROUPED_COMMAS = re.compile(r"[+-]?\d{1,3}(,\d{3})+")
_GROUPED_UNDERSCORES = re.compile(r"[+-]?\d+(_\d+)*")


def as_integer(raw: Any, what: str = "answer") -> int:
    """An exact integer from a TOML integer, an integral float below 2^53, or text (see module rules)."""
    if isinstance(raw, bool):
        raise InvalidAnswer(f"{what} is {str(raw).lower()}, a boolean, not a whole number")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and not isinstance(raw, bool):
        if math.isfinite(raw) and raw.is_integer() and abs(raw) <= LARGEST_FLOAT_INTEGER:
            return int(raw)
        raise InvalidAnswer(f"{what} should be an exact whole number, not {raw!r}")
    if isinstance(raw, NonFinite):
        raise InvalidAnswer(f"{what} is {raw.text}, not a whole number")
    if not isinstance(raw, str):
        raise InvalidAnswer(f"{what} should be a whole number, not {_kind(raw)}")
    text = _text(raw, what)
    if _GROUPED_COMMAS.fullmatch(text) or _GROUPED_UNDERSCORES.fullmatch(text):
        digits = text.replace(",", "").replace("_", "")
        if len(digits) > MAX_INTEGER_DIGITS:
            raise InvalidAnswer(f"{what} has more than {MAX_INTEGER_DIGITS} digits")
        return int(digits)
    if "," in text and re.fullmatch(r"[+-]?[\d,]+", text):
        raise InvalidAnswer(f"{what}: commas must separate groups of three digits, e.g. 124,439,808")
    mp = _mathparse()
    try:
        expr = mp.parse_expression(text).expr
    except mp.MathParseError as exc:
        raise InvalidAnswer(f"{what}: {exc}") from None
    if expr.is_Integer:
        return int(expr)
    if expr.is_Rational:
        raise InvalidAnswer(f"{what} should be a whole number, not {expr}")
    raise InvalidAnswer(f"{what} should be a whole number (an exact integer)")


def _check_integer(part: AnswerPart, raw: Any) -> PartResult:
    value = as_integer(raw)
    if value == int(part.value):
        return _correct()
    return _wrong(part, "not the expected whole number", lambda m: value == as_integer(m))


# ------------------------------------------------------------------------------------------ arrays


def structure(raw: Any, depth: int = 0) -> tuple[tuple[int, ...], list[Any]]:
    """(shape, flat entries) of nested lists; ragged or too-deep nesting is InvalidAnswer."""
    if not isinstance(raw, list):
        return (), [raw]
    if depth >= MAX_NESTING:
        raise InvalidAnswer(f"arrays nested more than {MAX_NESTING} deep")
    if not raw:
        return (0,), []
    if not any(isinstance(item, list) for item in raw):  # a vector, or one row of a matrix
        if len(raw) > MAX_ENTRIES:
            raise InvalidAnswer(f"more than {MAX_ENTRIES} entries")
        return (len(raw),), list(raw)
    shapes, flat = set(), []
    for item in raw:
        shape, entries = structure(item, depth + 1)
        shapes.add(shape)
        flat.extend(entries)
        if len(flat) > MAX_ENTRIES:
            raise InvalidAnswer(f"more than {MAX_ENTRIES} entries")
    if len(shapes) != 1:
        raise InvalidAnswer("rows of different lengths: every row needs the same number of entries")
    return (len(raw), *shapes.pop()), flat


def _shape_text(shape: tuple[int, ...]) -> str:
    if not shape:
        return "a single value"
    if len(shape) == 1:
        return f"a vector of {shape[0]}"
    return "x".join(map(str, shape))


def _check_shape_of(answer: tuple[int, ...], key: tuple[int, ...], noun: str) -> str | None:
    """None when the shapes agree; otherwise raise InvalidAnswer (bracket slip) or return the message."""
    if answer == key:
        return None
    squeeze = lambda s: tuple(n for n in s if n != 1)  # noqa: E731 - tiny local helper
    if squeeze(answer) == squeeze(key):
        if len(key) == 2 and key[0] == 1:
            fix = f"write one row inside double brackets, e.g. [[a, b, ...]] ({key[1]} entries)"
        elif len(key) == 2 and key[1] == 1:
            fix = "write each entry as its own row, e.g. [[a], [b], ...]"
        else:
            fix = "check the brackets"
        raise InvalidAnswer(f"the {noun} should be {_shape_text(key)} but your answer is {_shape_text(answer)}: {fix}")
    return f"shape error: the {noun} is {_shape_text(key)} but your answer is {_shape_text(answer)}"


def _index_text(flat_index: int, shape: tuple[int, ...]) -> str:
    """1-based (row, column) of a flat entry index (a plain number for vectors)."""
    index = []
    for size in reversed(shape):
        index.append(flat_index % size + 1)
        flat_index //= size
    index.reverse()
    return str(index[0]) if len(index) == 1 else "(" + ", ".join(map(str, index)) + ")"


def _entries_text(indices: list[int], shape: tuple[int, ...]) -> str:
    listed = ", ".join(_index_text(i, shape) for i in indices[:MAX_LISTED_ENTRIES])
    more = len(indices) - MAX_LISTED_ENTRIES
    return listed + (f" and {more} more" if more > 0 else "")


def _entry_label(i: int, shape: tuple[int, ...]) -> str:
    return f"entry {_index_text(i, shape)}"


def _convert_entries(flat: list[Any], shape: tuple[int, ...], convert: Callable[[Any, str], Any]) -> list[Any]:
    """Convert every entry; the first unreadable one is reported by its (row, column)."""
    values = []
    for i, x in enumerate(flat):
        try:
            values.append(convert(x, "entry"))
        except InvalidAnswer:
            convert(x, _entry_label(i, shape))  # raise again, naming the entry (labels are built only here)
            raise
    return values


def _matrix_values(raw: Any, key_shape: tuple[int, ...]) -> tuple[tuple[int, ...], list[float] | None, str | None]:
    """(shape, floats, shape message): floats is None when the shape is wrong (message says why)."""
    if isinstance(raw, str) and raw.strip().startswith("["):
        raise InvalidAnswer("write the matrix as an array without quotes, e.g. [[0.5, 0.5], [0.25, 0.75]]")
    shape, flat = structure(raw)
    message = _check_shape_of(shape, key_shape, "matrix")
    if message:
        return shape, None, message
    return shape, _convert_entries(flat, shape, as_number), None


def _same_matrix(values: list[float], shape: tuple[int, ...], other: Any, part: AnswerPart) -> bool:
    other_shape, other_flat = _flatten(other)
    return other_shape == shape and all(
        numbers_close(v, o, part.rtol, part.atol) for v, o in zip(values, other_flat))


def _check_matrix(part: AnswerPart, raw: Any) -> PartResult:
    key_shape, key_flat = _flatten(part.value)
    shape, values, shape_message = _matrix_values(raw, key_shape)
    if values is None:
        answer_flat = _shape_only_values(raw)
        return _wrong(part, shape_message,
                      (lambda m: _same_matrix(answer_flat, shape, m, part)) if answer_flat is not None else None)
    wrong = [i for i, (v, k) in enumerate(zip(values, key_flat)) if not numbers_close(v, k, part.rtol, part.atol)]
    if not wrong:
        return _correct()
    score = 1 - len(wrong) / len(key_flat)
    feedback = (f"{len(wrong)} of {len(key_flat)} entries are not {tolerance_text(part)}: "
                f"{_entries_text(wrong, shape)}")
    return _wrong(part, feedback, lambda m: _same_matrix(values, shape, m, part), score=score)


def _shape_only_values(raw: Any) -> list[float] | None:
    """Entries of a wrong-shaped answer as floats (to recognise e.g. a transposed matrix), or None."""
    try:
        _, flat = structure(raw)
        return [as_number(x) for x in flat]
    except InvalidAnswer:
        return None


# ------------------------------------------------------------------------------------------ masks

_BOOL_WORDS = {"t": True, "true": True, "f": False, "false": False}
_BLOCKED = {"-inf", "-infinity", "-\u221e", "\u2212\u221e", "\u2212inf"}


def as_mask_entry(x: Any, representation: str, what: str) -> bool:
    """True (may attend) / False (blocked) from an entry in the asked representation."""
    if representation == "bool":
        if isinstance(x, bool):
            return x
        if isinstance(x, str) and x.strip().lower() in _BOOL_WORDS:
            return _BOOL_WORDS[x.strip().lower()]
        raise InvalidAnswer(f"{what} is {_echo(x)}: this problem asks for a boolean mask, "
                            f"true (may attend) or false (blocked)")
    if representation == "01":
        if not isinstance(x, bool) and isinstance(x, (int, float)) and x in (0, 1):
            return bool(x)
        if isinstance(x, str) and x.strip() in ("0", "1"):
            return x.strip() == "1"
        raise InvalidAnswer(f"{what} is {_echo(x)}: this problem asks for a 0/1 mask, 1 (may attend) or 0 (blocked)")
    if isinstance(x, NonFinite) and x.negative_infinity:
        return False
    if not isinstance(x, bool) and isinstance(x, (int, float)) and x == 0:
        return True
    if isinstance(x, str) and x.strip().lower() in _BLOCKED:
        return False
    if isinstance(x, str) and x.strip() in ("0", "0.0", "-0"):
        return True
    raise InvalidAnswer(f"{what} is {_echo(x)}: this problem asks for an additive mask, "
                        f"0 (may attend) or -inf (blocked)")


def _lenient_mask(value: Any) -> list[bool]:
    """A mistake's mask value (stored as bools, as the key is) as a flat list of bools."""
    _, flat = _flatten(value)
    return [bool(x) if isinstance(x, (bool, int)) else False for x in flat]


def _check_mask(part: AnswerPart, raw: Any) -> PartResult:
    representation = part.spec.get("representation", "bool")
    key_shape, key_flat = _flatten(part.value)
    if isinstance(raw, str) and raw.strip().startswith("["):
        raise InvalidAnswer("write the mask as an array without quotes, e.g. [[true, false], [true, true]]")
    shape, flat = structure(raw)
    message = _check_shape_of(shape, key_shape, "mask")
    if message:
        return _wrong(part, message)
    values = _convert_entries(flat, shape, lambda x, what: as_mask_entry(x, representation, what))
    wrong = [i for i, (v, k) in enumerate(zip(values, key_flat)) if v != bool(k)]
    if not wrong:
        return _correct()
    feedback = f"{len(wrong)} of {len(key_flat)} entries are wrong: {_entries_text(wrong, shape)}"
    return _wrong(part, feedback, lambda m: _flatten(m)[0] == shape and _lenient_mask(m) == values)


# ------------------------------------------------------------------------------------------ shapes

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _dims(raw: Any) -> list[Any]:
    """The dimensions of a shape answer: a list of ints and names/expressions (strings)."""
    if isinstance(raw, bool) or isinstance(raw, NonFinite):
        raise InvalidAnswer("a shape lists its dimensions, e.g. \"(B, L, d)\"")
    if isinstance(raw, int):
        return [raw]
    if isinstance(raw, str):
        text = _text(raw)
        if text[:1] in "([" and text[-1:] in ")]":
            text = text[1:-1]
        parts = [p.strip() for p in text.split(",")]
        if parts and parts[-1] == "" and len(parts) > 1:
            parts.pop()  # "(5,)"
        raw = parts
    if not isinstance(raw, list):
        raise InvalidAnswer(f"a shape should be text like \"(B, L, d)\" or an array, not {_kind(raw)}")
    if len(raw) > 16:
        raise InvalidAnswer("a shape with more than 16 dimensions")
    dims = []
    for i, d in enumerate(raw, start=1):
        if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            dims.append(d)
        elif isinstance(d, str) and d.strip():
            text = _text(d, f"dimension {i}")
            dims.append(int(text) if text.isdigit() and len(text) < 20 else text)
        else:
            raise InvalidAnswer(f"dimension {i} is {_echo(d)}: write a name such as d_k or a whole number")
    return dims


def _dim_expression(dim: Any):
    """A composite dimension such as ``h*d_k`` as a SymPy expression (every name in it is a symbol)."""
    mp = _mathparse()
    names = set(_IDENTIFIER.findall(str(dim))) - {"exp", "log", "ln", "sqrt", "pi", "e"}
    try:
        return mp.parse_expression(str(dim), names).expr
    except mp.MathParseError as exc:
        raise InvalidAnswer(f"dimension {str(dim)!r}: {exc}") from None


def _dim_value(dim: Any, numbers: dict[str, int]) -> int | None:
    if isinstance(dim, int):
        return dim
    return numbers.get(dim)


def _same_dim(answer: Any, key: Any, numbers: dict[str, int]) -> bool:
    """One rule for names, numbers and products of names (composite dimensions such as ``h*d_k``).

    Every name in the answer must be one of the key's names: names match by name, and products as
    products (``d_k*h`` = ``h*d_k``). A number may stand for any of the key's names whose value the
    problem gave (``spec["dims"]``), alone or inside a product (``512``, ``8*64``, ``2*d_k``). A different
    name is wrong even when its value is equal (``d_v`` for ``d_k``, ``h*d_v`` for ``h*d_k``): the
    question is which dimension it is, not what it happens to measure in this variant.
    """
    if answer == key:
        return True
    simple = lambda d: isinstance(d, int) or _IDENTIFIER.fullmatch(d)  # noqa: E731
    if simple(answer) and simple(key):  # the common case, decided without parsing
        if isinstance(answer, str):
            return False  # a different name (or a name where the key is a number)
        return _dim_value(key, numbers) == answer
    mp = _mathparse()
    a, k = _dim_expression(answer), _dim_expression(key)
    if not a.free_symbols <= k.free_symbols:  # a name that is not the key's: wrong whatever its value
        return False
    given = {s: numbers[s.name] for s in k.free_symbols - a.free_symbols if s.name in numbers}
    return mp.equivalent(a, k.subs(given))


def _same_shape(answer: list[Any], key: list[Any], numbers: dict[str, int]) -> bool:
    return len(answer) == len(key) and all(_same_dim(a, k, numbers) for a, k in zip(answer, key))


def _check_shape(part: AnswerPart, raw: Any) -> PartResult:
    numbers = {str(k): int(v) for k, v in part.spec.get("dims", {}).items()}
    answer, key = _dims(raw), list(part.value)
    matches = lambda m: _same_shape(answer, _dims(m), numbers)  # noqa: E731
    if len(answer) != len(key):
        return _wrong(part, f"the shape has {len(key)} dimensions; your answer has {len(answer)}", matches)
    wrong = [i for i, (a, k) in enumerate(zip(answer, key)) if not _same_dim(a, k, numbers)]
    if not wrong:
        return _correct()
    if sorted(map(str, answer)) == sorted(map(str, key)):
        feedback = "the right dimensions in the wrong order"
    else:
        feedback = "wrong dimension(s) at position " + ", ".join(str(i + 1) for i in wrong)
        if any(isinstance(answer[i], str) and isinstance(key[i], str) and answer[i].lower() == key[i].lower()
               for i in wrong):
            feedback += " (names are case-sensitive)"
        elif any(_same_size(answer[i], key[i], numbers) for i in wrong):
            feedback += " (a different dimension of the same size is still wrong: name the one that axis holds)"
    return _wrong(part, feedback, matches)


def _same_size(answer: Any, key: Any, numbers: dict[str, int]) -> bool:
    """Whether two dimensions have the same size in this variant (every name in them has a given value)."""
    def size(dim: Any):
        expr = _dim_expression(dim)
        return expr.subs({s: numbers[s.name] for s in expr.free_symbols if s.name in numbers})

    a, k = size(answer), size(key)
    return not a.free_symbols and not k.free_symbols and a == k


# ------------------------------------------------------------------------------------------ expressions


def _key_expression(text: str, symbols: tuple[str, ...]):
    mp = _mathparse()
    try:
        return mp.parse_expression(text, symbols, trusted=True)
    except mp.MathParseError as exc:
        raise ProblemgenError(f"variant key expression {text!r} cannot be parsed: {exc}") from None


def _check_expression(part: AnswerPart, raw: Any) -> PartResult:
    mp = _mathparse()
    symbols = tuple(part.spec.get("symbols", ()))
    key = _key_expression(str(part.value), symbols)
    if isinstance(raw, str):
        try:
            answer = mp.parse_expression(_text(raw), symbols)
        except mp.MathParseError as exc:
            raise InvalidAnswer(str(exc)) from None
    else:
        value = as_number(raw)  # booleans, nan and lists are invalid here with the usual messages
        try:
            answer = mp.parse_expression(repr(value))
        except mp.MathParseError as exc:
            raise InvalidAnswer(f"answer: {exc}") from None
    if answer.decimal:
        return _check_decimal_expression(part, answer, key)
    if mp.equivalent(answer.expr, key.expr):
        return _correct()
    return _wrong(part, "not equal to the expected value", _value_matcher(part, answer))


def _check_decimal_expression(part: AnswerPart, answer, key) -> PartResult:
    mp = _mathparse()
    if key.is_number and answer.is_number and mp.equivalent(answer.expr, key.expr):
        return _correct()
    if not part.spec.get("allow_decimal"):
        raise InvalidAnswer("give an exact expression such as \"exp(2)/(1+exp(2))\", not a decimal")
    if not answer.is_number:
        raise InvalidAnswer("mix of decimals and names: give an exact expression")
    reference = float(part.spec.get("decimal", key.value()))
    value = answer.value()
    if numbers_close(value, reference, part.rtol, part.atol):
        return _correct()
    return _wrong(part, f"not {tolerance_text(part)} of the expected value",
                  _value_matcher(part, answer))


def _value_matcher(part: AnswerPart, answer) -> Callable[[Any], bool] | None:
    """Compare an answer's value with a mistake's decimal (tolerance of the part, else 1e-9 relative)."""
    if not answer.is_number:
        return None
    value = answer.value()
    rtol = part.rtol if (part.rtol or part.atol) else 1e-9
    return lambda m: numbers_close(value, float(m), rtol, part.atol)


# ------------------------------------------------------------------------------------------ choices and terms


def _choice_ids(raw: Any, options: list[str]) -> list[str]:
    if isinstance(raw, str):
        items = [x for x in re.split(r"[,\s]+", _text(raw)) if x]
    elif isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        items = [_text(x) for x in raw]
    else:
        raise InvalidAnswer("give option ids as text, e.g. \"b\" or [\"a\", \"c\"]")
    chosen = []
    for item in items:
        item = item.strip().strip("()").lower()
        if item not in options:
            raise InvalidAnswer(f"there is no option {item[:20]!r}; the options are {', '.join(options)}")
        if item not in chosen:
            chosen.append(item)
    return sorted(chosen)


def _check_choice(part: AnswerPart, raw: Any) -> PartResult:
    options = {str(o["id"]).lower(): o for o in part.spec.get("options", ())}
    chosen = _choice_ids(raw, sorted(options))
    correct = sorted(str(v).lower() for v in part.value)
    multiple = bool(part.spec.get("multiple"))
    if not multiple and len(chosen) != 1:
        raise InvalidAnswer("choose exactly one option")
    matches = lambda m: sorted(str(v).lower() for v in (m if isinstance(m, list) else [m])) == chosen  # noqa: E731
    if chosen == correct:
        return _correct()
    wrong_picks = [c for c in chosen if c not in correct]
    reasons = [f"{c}: {options[c]['why']}" for c in wrong_picks if options[c].get("why")]
    if not multiple:
        return _wrong(part, "; ".join(reasons) or "not the right option", matches)
    right = len([c for c in chosen if c in correct])
    score = max(0.0, (right - len(wrong_picks)) / len(correct))
    summary = f"{right} of {len(correct)} correct options chosen, {len(wrong_picks)} wrong"
    return _wrong(part, "; ".join([summary, *reasons]), matches, score=score)


def _normal_term(text: Any) -> str:
    return re.sub(r"[\s\-_]+", "", str(text)).lower()


def _check_term(part: AnswerPart, raw: Any) -> PartResult:
    if not isinstance(raw, str):
        raise InvalidAnswer(f"write a word or short phrase in quotes, not {_kind(raw)}")
    if len(raw) > 200:
        raise InvalidAnswer("answer longer than 200 characters")
    answer = _normal_term(_text(raw))
    if not any(ch.isalnum() for ch in answer):
        raise InvalidAnswer("write a word or short phrase")
    accepted = part.value if isinstance(part.value, list) else [part.value]
    if answer in {_normal_term(v) for v in accepted}:
        return _correct()
    return _wrong(part, "not the expected term",
                  lambda m: answer in {_normal_term(v) for v in (m if isinstance(m, list) else [m])})


_CHECKERS: dict[str, Callable[[AnswerPart, Any], PartResult]] = {
    "number": _check_number,
    "integer": _check_integer,
    "matrix": _check_matrix,
    "shape": _check_shape,
    "expression": _check_expression,
    "choice": _check_choice,
    "mask": _check_mask,
    "term": _check_term,
}


# ------------------------------------------------------------------------------------------ sheets


def part_points(sheet_problem) -> list[float]:
    """Split a problem's points over its parts in proportion to their weights."""
    parts = sheet_problem.problem.parts
    total = sum(p.weight for p in parts) or 1.0
    return [sheet_problem.points * p.weight / total for p in parts]


def grade_sheet(variant, path: str | Path, *, student: str | None = None) -> Report:
    """Grade the answer sheet at ``path`` against a ``WorksheetVariant``.

    A file that cannot be read at all scores every part invalid and says why in ``meta["error"]``;
    a missing file raises ``ProblemgenError``. Warnings (unknown keys, another variant's sheet, a BOM)
    go to ``meta["warnings"]``.
    """
    answers = read_sheet(path)
    return grade_answers(variant, answers, student=student, source=Path(path).name)


def grade_file(answers: str | Path, variant_path: str | Path) -> Report:
    """Single mode of ``problemgen grade``: load the frozen variant, grade one sheet."""
    return grade_sheet(WorksheetVariant.load(variant_path), answers)


def grade_answers(variant, answers, *, student: str | None = None, source: str = "") -> Report:
    """Grade already-read :class:`SheetAnswers` (split out so tests and class mode can reuse it)."""
    warnings = list(answers.warnings)
    sheet_variant = answers.meta.get("variant")
    if answers.error is None and sheet_variant not in (None, "", variant.variant_id):
        warnings.append(f"the sheet is for variant {str(sheet_variant)[:80]!r}, graded against {variant.variant_id!r}")
    results = []
    for sheet_problem in variant.problems:
        table = answers.tables.get(sheet_problem.id, {})
        known = {p.key for p in sheet_problem.problem.parts}
        for extra in sorted(set(table) - known):
            warnings.append(f"[{sheet_problem.id}] has no part {str(extra)[:40]!r} (ignored)")
        for part, points in zip(sheet_problem.problem.parts, part_points(sheet_problem)):
            if answers.error is not None:
                verdict = PartResult("invalid", 0.0, None, "the answer sheet could not be read")
            elif not isinstance(table, dict):
                verdict = PartResult("invalid", 0.0, None, f"[{sheet_problem.id}] is not a table")
            else:
                verdict = grade_part(part, table.get(part.key))
            results.append(CheckResult(
                name=f"{sheet_problem.id}.{part.key}", status=verdict.status, passed=verdict.passed,
                score=points * verdict.score, max_score=points, mistake=verdict.mistake,
                feedback=verdict.feedback, group=sheet_problem.id))
    for name in sorted(set(answers.tables) - {p.id for p in variant.problems}):
        warnings.append(f"table [{str(name)[:40]}] is not a problem of this worksheet (ignored)")
    meta = {"variant": variant.variant_id, "student": student or variant.student, "sheet": source,
            "warnings": warnings}
    if answers.error is not None:
        meta["error"] = answers.error
    return Report(title=f"{variant.title} ({variant.variant_id})", results=tuple(results), meta=meta)
