"""Reading one number the ways people write it, deciding the common forms without SymPy.

``0.25``, ``.5``, ``-3``, ``1e-3``, ``1/4``, ``2.5×10^3``, ``2.5e3`` and ``−0.5`` are read by regular
expressions; a real expression (``exp(2)/(1+exp(2))``, ``sqrt(2)/2``, ``2π``) is evaluated in floats
by :mod:`problemgen.answers.fastmath` when its error bound is small, and only what that cannot decide
goes to the safe parser in :mod:`problemgen.answers.mathparse`, which is imported (with SymPy) the
first time it is needed. ``0,5`` is refused: a decimal comma and a thousands separator cannot be told apart.
"""

from __future__ import annotations

import math
import re
from typing import Any

from problemgen.answers.fastmath import MAX_LOG10, float_value
from problemgen.answers.text import InvalidAnswer, NonFinite, clean, kind_of

MAX_DIGITS = 60
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,3})?")
_FRACTION = re.compile(r"([+-]?\d{1,30})\s*/\s*(\d{1,30})")
_POWER_OF_TEN = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))\s*(?:\*|x|X)\s*10\s*(?:\^|\*\*)\s*\(?([+-]?\d{1,3})\)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:([,_ ']|\u2009)\d{3})(?:\1\d{3})*")


def mathparse():
    """The safe expression parser (imports SymPy): only for answers that are real expressions."""
    from problemgen.answers import mathparse as module  # lazy: SymPy costs start-up time; plain numbers never need it

    return module


def warm_up() -> None:
    """Import the expression parser and SymPy ahead of need (about 0.7 s), e.g. from a background
    thread while the quiz shows its first problem, so the first typed expression is graded at once."""
    mathparse()


def fast_number(text: str) -> float | None:
    """The value of a plain decimal, fraction or power-of-ten form, or None (no SymPy, no errors)."""
    if len(text) > MAX_DIGITS:
        return None
    if _DECIMAL.fullmatch(text):
        return float(text)
    match = _FRACTION.fullmatch(text)
    if match and int(match.group(2)) != 0:
        return int(match.group(1)) / int(match.group(2))
    match = _POWER_OF_TEN.fullmatch(text)
    if match and int(match.group(2)) <= MAX_LOG10:  # 10.0 ** 400 raises: the full reader words it
        return float(match.group(1)) * 10.0 ** int(match.group(2))
    return None


def grouped_integer(text: str) -> int | None:
    """``124,439,808``, ``124_439_808``, ``124 439 808``: an integer written in groups of three, or None."""
    if _GROUPED.fullmatch(text):
        return int(re.sub(r"[^\d+-]", "", text))
    return None


def number_from_text(text: str, what: str = "answer") -> float:
    """A finite real from text (see the module doc); raises InvalidAnswer with what to write."""
    text = clean(text, what).strip()
    fast = fast_number(text)
    if fast is not None:
        return fast
    if _DECIMAL_COMMA.fullmatch(text):
        raise InvalidAnswer(f"{what} {text!r} has a comma: write the decimal point as '.', e.g. "
                            f"{text.replace(',', '.')} (or leave thousands without separators)")
    value = float_value(text)
    if value is not None:
        return value
    mp = mathparse()
    try:
        return mp.parse_expression(text).value()
    except mp.MathParseError as exc:
        raise InvalidAnswer(f"{what} {_short(text)!r}: {exc}") from None


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
        raise InvalidAnswer(f"{what} is not a finite number")
    if isinstance(raw, str):
        return number_from_text(raw, what)
    raise InvalidAnswer(f"{what} should be a number, not {kind_of(raw)}")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
