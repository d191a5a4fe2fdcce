"""Characters of a typed answer: the maths symbols people type, and the look-alikes that are refused.

Every answer type reads text through :func:`clean`: the Unicode symbols of written maths (the minus
sign ``−``, ``×``, ``·``, ``√``, ``π``, ``∞``) become their ASCII spelling, because each has exactly one
meaning in an answer; anything else outside printable ASCII (a fullwidth digit, a Cyrillic letter) is
refused with a message naming the character, because it could make two different answers look alike.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

MINUS_SIGNS = "\u2212\u2012\u2013\ufe63\uff0d"
"""Characters read as the minus sign (minus, figure dash, en dash, small and fullwidth hyphen-minus)."""
_SQRT_OPERAND = re.compile(r"\u221a\s*(\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|(?=\())")


@dataclass(frozen=True)
class NonFinite:
    """A TOML float that is not a finite number (``nan``, ``inf``, ``-inf``, ``1e999``), kept as written."""

    text: str

    @property
    def negative_infinity(self) -> bool:
        return float(self.text) == -math.inf


class SheetArray(list):
    """A TOML array from an answer sheet, with the text it was written as (``source``).

    The sheet reader keeps the text only for arrays written with a digit, a comma and a digit
    (``[[0,5, 0,5]]``): valid TOML reads them as integers, and only the text shows that a decimal
    comma may have doubled the entries. It compares and behaves as the plain list it is.
    """

    def __init__(self, items, source: str) -> None:
        super().__init__(items)
        self.source = source


class InvalidAnswer(Exception):
    """The answer cannot be read unambiguously as the asked type; the message says what to write."""


def describe_char(char: str) -> str:
    """``'１' (U+FF11 FULLWIDTH DIGIT ONE)``: how a rejected character is named in messages."""
    return f"{char!r} (U+{ord(char):04X} {unicodedata.name(char, 'unnamed character')})"


def check_ascii(text: str, what: str = "answer") -> None:
    """Reject non-ASCII and control characters, naming the first offender and what to type instead.

    Call :func:`clean` first where maths symbols should be read. Raises ``ValueError``.
    """
    for position, char in enumerate(text, start=1):
        if " " <= char <= "~" or char == "\t":
            continue
        raise ValueError(f"{what} has a non-ASCII character {describe_char(char)} at position {position}: "
                         f"{ascii_hint(char)}")


def ascii_hint(char: str) -> str:
    """One way to type a refused character."""
    if char in "\u2010\u2011\u2014" + MINUS_SIGNS:
        return "type the ASCII hyphen-minus '-'"
    if char in "\u00d7\u22c5\u00b7":
        return "type '*' for multiplication"
    if unicodedata.category(char) == "Nd":
        return "type the ASCII digits 0-9"
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return "remove control characters"
    return "use plain ASCII letters, digits and symbols"


def clean(text: str, what: str = "answer", *, times: str = "*") -> str:
    """The answer in ASCII maths: ``−`` → ``-``, ``×``/``·``/``⋅`` → ``times``, ``√x`` → ``sqrt(x)``,
    ``π`` → ``pi``, ``∞`` → ``inf``, thin and no-break spaces → space. Raises ``InvalidAnswer`` on
    any other non-ASCII character. Plain ASCII text is returned unchanged (the common, fast case)."""
    if text.isascii():
        return text
    for char in MINUS_SIGNS:
        text = text.replace(char, "-")
    for char in "\u00d7\u00b7\u22c5\u2219":
        text = text.replace(char, times)
    for char in "\u00a0\u2009\u202f\u2007":
        text = text.replace(char, " ")
    text = re.sub(r"(?<=[\w)])\s*(?=[\u221a\u03c0])", "*", text)  # 2√2, 2π: implied product
    text = text.replace("\u03c0", "pi").replace("\u221e", "inf")
    text = _SQRT_OPERAND.sub(lambda m: f"sqrt({m.group(1)})" if m.group(1) else "sqrt", text)
    try:
        check_ascii(text, what)
    except ValueError as exc:
        raise InvalidAnswer(str(exc)) from None
    return text


def kind_of(raw: object) -> str:
    """A value's kind in words, for messages ("a list", "text", "a boolean")."""
    if isinstance(raw, bool):
        return "a boolean"
    if isinstance(raw, list):
        return "a list"
    if isinstance(raw, dict):
        return "a table"
    if isinstance(raw, str):
        return "text"
    if isinstance(raw, (int, float, NonFinite)):  # NonFinite: nan, inf, 1e999 in a sheet
        return "a number"
    return type(raw).__name__
