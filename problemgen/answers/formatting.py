"""Numbers and tolerances in words, shared by sheets, feedback and documents.

Kept free of jinja2 and numpy so the grader can use it without paying for the renderer.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from problemgen.answers import types
from problemgen.model.core import AnswerPart


def format_number(x: Any, digits: int = 4) -> str:
    """Show integers exactly and other reals rounded to ``digits`` decimals, trailing zeros trimmed."""
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, str):  # already text, e.g. the T/F cells of a boolean mask
        return x
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def tolerance_text(part: AnswerPart) -> str:
    """How close an answer must be, in words ("within ±0.005", "exact")."""
    return _tolerance_words(types.get(part.type).tolerant, part.atol, part.rtol)


@functools.lru_cache(maxsize=1024, typed=True)
def _tolerance_words(tolerant: bool, atol: float, rtol: float) -> str:
    """The words for one tolerance, made once: a class set's key and sheets state the same few thousand
    times (``typed``: an int and an equal float keep their own entries, so the words never depend on
    which came first)."""
    if not tolerant:
        return "exact"
    bounds = []
    if atol > 0:
        bounds.append(f"±{format_number(atol, 8)}")
    if rtol > 0:
        bounds.append(f"±{format_number(rtol * 100, 6)}% of the value")
    return "within " + " plus ".join(bounds) if bounds else "exact"
