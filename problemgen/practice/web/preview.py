"""The live "read as" preview: how the shared reader understood an answer, before it is submitted.

The preview goes through the same reader as grading (``grading.grade_part`` on the typed-line value)
but reports only whether the answer could be read and what was read, never whether it is right: the
verdict is discarded here, so typing and watching the preview cannot be used to search for the key.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from problemgen.documents.rendering import matrix_latex
from problemgen.model.core import AnswerPart
from problemgen.practice.web.mathml import latex_to_mathml
from problemgen.sheets.answersheet import parse_value, toml_value
from problemgen.sheets.grading import InvalidAnswer, as_number, grade_part


def read_as(part: AnswerPart, text: str) -> dict[str, Any]:
    """``{"readable": bool, "html": …}``: the value as read (maths for arrays), or why it cannot be read."""
    if not text.strip():
        return {"readable": False, "html": ""}
    try:
        raw = parse_value(text)
    except ValueError as exc:
        return {"readable": False, "html": str(escape(str(exc)))}
    result = grade_part(part, raw)
    if result.status == "invalid":
        return {"readable": False, "html": str(escape(result.feedback))}
    if part.type == "matrix" and isinstance(raw, list):
        return {"readable": True, "html": _array_html(raw)}
    shown = raw if isinstance(raw, str) else toml_value(raw)
    return {"readable": True, "html": str(Markup("<code>{}</code>").format(shown))}


def _array_html(raw: list) -> str:
    """A read matrix or vector as MathML, each entry evaluated (``1/3`` shows as 0.3333)."""
    def value(x: Any) -> Any:
        if isinstance(x, list):
            return [value(y) for y in x]
        try:
            return as_number(x)
        except InvalidAnswer:
            return 0.0  # unreachable: an unreadable entry already made the answer invalid

    return latex_to_mathml(matrix_latex(value(raw)), display=False)
