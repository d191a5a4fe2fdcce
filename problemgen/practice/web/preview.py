"""The live "read as" preview: how the shared reader understood an answer, before it is submitted.

The preview calls only the answer type's ``read`` (``problemgen.answers.types``), the first half of
grading, and never its ``check``: it says whether the answer could be read and what was read, never
whether it is right, so watching the preview cannot be used to search for the key.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from problemgen.answers import types
from problemgen.answers.base import echo
from problemgen.answers.text import InvalidAnswer
from problemgen.documents.rendering import matrix_latex
from problemgen.model.core import AnswerPart
from problemgen.practice.web.mathml import latex_to_mathml
from problemgen.sheets.answersheet import parse_value


def read_as(part: AnswerPart, text: str) -> dict[str, Any]:
    """``{"readable": bool, "html": …}``: the value as read (maths for arrays), or why it cannot be read."""
    if not text.strip():
        return {"readable": False, "html": ""}
    try:
        raw = parse_value(text)
        reading = types.get(part.type).read(part, raw)
    except (ValueError, InvalidAnswer) as exc:
        return {"readable": False, "html": str(escape(str(exc)))}
    if part.type == "matrix":
        return _matrix(reading.value)
    shown = reading.text or echo(raw, 200)
    return {"readable": True, "html": str(Markup("<code>{}</code>").format(shown))}


def _matrix(value: tuple) -> dict[str, Any]:
    """A read matrix or vector as MathML with each entry evaluated (``1/3`` shows as 0.3333); a wrong
    shape is readable but said in words (grading will call it wrong, not unreadable)."""
    shape, flat, shape_message = value
    if shape_message:
        return {"readable": True, "html": str(escape(shape_message))}
    if len(shape) == 1:
        rows = [flat]
    elif len(shape) == 2:
        rows = [flat[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
    else:
        return {"readable": True, "html": str(escape(f"an array of shape {shape}"))}
    return {"readable": True, "html": latex_to_mathml(matrix_latex(rows), display=False)}
