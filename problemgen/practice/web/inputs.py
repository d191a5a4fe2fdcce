"""Answer inputs fitted to each answer type, and the one line of text they hand to the shared reader.

A grid (matrices, vectors, masks) is sized from the key's shape; each cell is typed on its own (a
fraction, an expression, ``-inf`` for an additive mask) and the cells are joined into the same nested
array a student would type in the terminal quiz or write on an answer sheet. So the web adds no reader
of its own: whatever the grid sends is read, checked and explained by ``grading.grade_text``.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any, Mapping

from problemgen.model.core import AnswerPart, ProblemgenError

MAX_CELLS = 400
"""A grid never has more cells than this (the largest key is far smaller); more posted cells are refused."""
MAX_CELL_CHARS = 200

_PLAIN = re.compile(r"[+-]?(\d[\d_]*\.?\d*([eE][+-]?\d+)?|inf|nan)|true|false")


@dataclass(frozen=True)
class Widget:
    """What the page draws for one part: ``grid`` (rows × cols cells), ``choice``, ``shape`` or ``text``."""

    kind: str
    rows: int = 0
    cols: int = 0
    vector: bool = False
    options: tuple[dict, ...] = ()
    multiple: bool = False


def widget_for(part: AnswerPart) -> Widget:
    if part.type in ("matrix", "mask"):
        shape = _shape(part.value)
        if len(shape) == 1:
            return Widget("grid", 1, shape[0], vector=True)
        if len(shape) == 2:
            return Widget("grid", shape[0], shape[1])
        return Widget("text")  # higher-rank keys are typed as nested lists
    if part.type == "choice":
        return Widget("choice", options=tuple(part.spec.get("options", ())),
                      multiple=bool(part.spec.get("multiple")))
    if part.type == "shape":
        return Widget("shape")
    return Widget("text")


def cell_hint(part: AnswerPart) -> str:
    """What one grid cell accepts, for the page's instructions."""
    if part.type == "mask":
        rep = part.spec.get("representation", "bool")
        return {"01": "1 (may attend) or 0 (blocked)", "additive": "0 (may attend) or -inf (blocked)"}.get(
            rep, "true (may attend) or false (blocked)")
    return "a number, a fraction such as 1/3, or an expression such as exp(1)/(1+exp(1))"


def answer_text(part: AnswerPart, payload: Mapping[str, Any]) -> str:
    """The typed-line form of a posted answer: ``text``, ``cells`` (rows of strings) or ``choice``."""
    if "cells" in payload:
        return grid_text(widget_for(part), payload["cells"])
    if "choice" in payload:
        picked = payload["choice"]
        picked = [picked] if isinstance(picked, str) else picked
        if not isinstance(picked, list) or not all(isinstance(c, str) and len(c) < 20 for c in picked):
            raise ProblemgenError("choice must be an option id or a list of them")
        return json.dumps(picked) if part.spec.get("multiple") else (picked[0] if picked else "")
    text = payload.get("text", "")
    if not isinstance(text, str):
        raise ProblemgenError("text must be a string")
    return text


def grid_text(widget: Widget, cells: Any) -> str:
    """Rows of cell strings as one nested array, ``[[1/3, 0.5], [...]]`` (a vector as ``[...]``)."""
    if widget.kind != "grid":
        raise ProblemgenError("this part is not answered with a grid")
    if (not isinstance(cells, list) or len(cells) != widget.rows
            or any(not isinstance(r, list) or len(r) != widget.cols for r in cells)):
        raise ProblemgenError(f"the grid must have {widget.rows} rows of {widget.cols} cells")
    if widget.rows * widget.cols > MAX_CELLS:
        raise ProblemgenError("too many cells")
    rows = ["[" + ", ".join(_cell(c, i, j) for j, c in enumerate(row)) + "]" for i, row in enumerate(cells)]
    return rows[0] if widget.vector else "[" + ", ".join(rows) + "]"


def empty_cells(cells: Any) -> list[tuple[int, int]]:
    """(row, column) of the cells left blank, 1-based, for a clear message before grading."""
    if not isinstance(cells, list):
        return []
    return [(i + 1, j + 1) for i, row in enumerate(cells) if isinstance(row, list)
            for j, c in enumerate(row) if isinstance(c, str) and not c.strip()]


def _cell(value: Any, i: int, j: int) -> str:
    """A TOML scalar when the cell is one (``0.25``, ``true``, ``-inf``), else a quoted string the reader
    parses as an expression (``"1/3"``)."""
    if not isinstance(value, str) or len(value) > MAX_CELL_CHARS:
        raise ProblemgenError(f"row {i + 1}, column {j + 1}: each cell must be text of at most {MAX_CELL_CHARS} characters")
    text = value.strip()
    if _PLAIN.fullmatch(text):
        try:
            tomllib.loads(f"v = {text}")
            return text
        except tomllib.TOMLDecodeError:
            pass
    return json.dumps(text)


def _shape(value: Any) -> tuple[int, ...]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)
