"""Numbers and tolerances in words, shared by sheets, feedback and documents.

Kept free of jinja2 and numpy so the grader can use it without paying for the renderer.
"""

from __future__ import annotations

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
    if not types.get(part.type).tolerant:
        return "exact"
    bounds = []
    if part.atol > 0:
        bounds.append(f"±{format_number(part.atol, 8)}")
    if part.rtol > 0:
        bounds.append(f"±{format_number(part.rtol * 100, 6)}% of the value")
    return "within " + " plus ".join(bounds) if bounds else "exact"
