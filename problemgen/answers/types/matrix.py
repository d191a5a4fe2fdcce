"""A vector or matrix of reals: the shape must match exactly, then each entry within tolerance.

Read: a TOML array of numbers (entries may be text: ``"1/2"``), or the whole matrix as text in any
notation :mod:`problemgen.answers.arrays` reads (lists, tuples, numpy's printed form, ``array(...)``,
MATLAB ``[1 -1; 2 0]``, rows on separate lines); entries may be fractions, ``.5``, ``−0.5`` or exact
expressions (``exp(2)/(1+exp(2))``). A 1xN / Nx1 / vector mix-up, or a flat list of as many entries
as a 2-D key, is invalid with the layout to write; so are decimal commas: between entries separated by
spaces or tabs (``[0,5 0,25; 0,1 0,2]``, a paste from a spreadsheet), doubling each row (``[[0,5, 0,5]]``,
typed or bare in a sheet, where TOML reads integers), or giving the key's layout when read as decimal
points (``0,5; 0,25`` for a vector of two); any other shape is wrong, once
every entry is read: text that is no matrix at all (``see attached``) is invalid. With the right shape,
partial credit is the fraction of entries within tolerance; feedback names them as (row, column).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from problemgen.answers import arrays
from problemgen.answers.base import AnswerType, PartResult, Reading, correct, naming, number_text
from problemgen.answers.diagnosis import shown_mistake
from problemgen.answers.formatting import format_number, tolerance_text
from problemgen.answers.scalars import as_number
from problemgen.answers.text import InvalidAnswer
from problemgen.model.core import AnswerPart, _flatten, misses, numbers_close


_DECIMAL_COMMA = re.compile(r"(?<!\d)-?\d++,\d++")
r"""``0,5`` or ``-1,66`` in an answer. A match starts only where a run of digits starts, and no run is read
twice: a search through 64 KiB of digits stays linear (``\d+,\d+`` retried every position of the run, 8 s)."""


def entry_text(x: Any) -> str:
    return " ".join(x.split()) if isinstance(x, str) else format_number(x, 12)


class MatrixType(AnswerType):
    name = "matrix"
    tolerant = True
    reads_typed_arrays = True

    def plain_reading(self, part: AnswerPart, raw: Any) -> Reading | None:
        return _plain_reading(part, raw)

    def read(self, part: AnswerPart, raw: Any) -> Reading:
        items = arrays.array_items(raw)
        if not isinstance(items, list):
            items = [items]  # a lone number: a vector of one (graded as a shape error unless that is the key)
        shape, flat = arrays.structure(items)
        key_shape, _ = part.layout
        message = arrays.check_shape(shape, key_shape, "matrix")
        shown = arrays.nested_text(items, entry_text) if isinstance(raw, str) else ""
        if message:
            _refuse_decimal_commas(raw, shape, key_shape)
            values = arrays.misshapen_entries(flat, shape, key_shape, "matrix", as_number)
            return Reading((shape, values, message), shown)
        return Reading((shape, arrays.convert_entries(flat, shape, as_number), None), shown)

    def same(self, part: AnswerPart, candidate: Any, reference: Any) -> bool:
        """The same shape and every entry within the part's tolerance; a ragged list matches nothing."""
        try:
            shape_c, flat_c = _flatten(candidate)  # flat_c: prod(shape_c) entries
            shape_r, flat_r = _flatten(reference)
        except ValueError:
            return False
        return shape_c == shape_r and all(numbers_close(c, r, part.rtol, part.atol) for c, r in zip(flat_c, flat_r))

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        shape, values, shape_message = reading.value
        if shape_message:
            return naming(shown_mistake(part, values, shape), shape_message)
        _, key_flat = part.layout
        bad = misses(values, key_flat, part.rtol, part.atol)
        if not bad:
            return correct()
        feedback = (f"{len(bad)} of {len(key_flat)} entries are not {tolerance_text(part)}: "
                    f"{arrays.entries_text(bad, shape)}")
        return naming(shown_mistake(part, values, shape), feedback, 1 - len(bad) / len(key_flat))

    def canonical(self, part: AnswerPart, reading: Reading) -> str:
        """Its shape and entries (``[[.5, 1/2]]`` and ``[[0.5, 0.5]]`` alike)."""
        shape, values, _ = reading.value
        return "x".join(map(str, shape)) + ":" + ",".join(map(number_text, values))

    def describe(self, part: AnswerPart) -> str:
        shape, _ = part.layout
        each = tolerance_text(part)
        if len(shape) == 1:
            return f"a vector of {shape[0]} numbers, each {each}, as {layout(shape)}"
        if len(shape) == 2 and shape[0] == 1:
            return f"a 1x{shape[1]} matrix (one row inside double brackets), each entry {each}, as {layout(shape)}"
        return f"a {'x'.join(map(str, shape))} matrix of numbers, each entry {each}, as {layout(shape)}"

    def key_display(self, part: AnswerPart, kit: Any) -> str:
        return kit.display_math(kit.matrix_latex(part.value, kit.digits))

    def perturb(self, part: AnswerPart) -> AnswerPart:
        step = lambda x: x + 1.0 + 10 * (part.atol + part.rtol * abs(float(x)))  # noqa: E731
        return replace(part, value=map_first(part.value, step))


def _plain_reading(part: AnswerPart, raw: Any) -> Reading | None:
    """What :meth:`MatrixType.read` gives for a plain array of finite numbers in the key's shape (how the
    sheets we hand out come back), read without its general machinery; None for anything else."""
    shape, _ = part.layout
    flat = arrays.plain_entries(raw, shape)
    if flat is None:
        return None
    kinds = set(map(type, flat))
    if kinds == {float} and math.isfinite(sum(flat)):  # a sum is finite only when every entry is
        return Reading((shape, list(flat), None), "")
    if not kinds <= {float, int}:
        return None
    values = []
    for x in flat:
        if type(x) is float and math.isfinite(x):
            values.append(x)
        elif type(x) is int and abs(x) <= 10**300:  # as_number's bound
            values.append(float(x))
        else:
            return None
    return Reading((shape, values, None), "")


def _refuse_decimal_commas(raw: Any, shape: tuple[int, ...], key_shape: tuple[int, ...]) -> None:
    """Raise InvalidAnswer when a wrong shape is what decimal commas make of the key's shape.

    That is: the text (typed, or the sheet line TOML read as integers, see ``SheetArray``) holds a digit,
    a comma and a digit without a space (``0,5``), and either each row has twice the key's entries, or
    reading every such comma as a decimal point gives the key's layout (``-1,66; 0,21`` for a vector of
    two, which MATLAB's rule reads as two rows of two integers). Both channels give this one message;
    any other wrong shape stays a shape error.
    """
    text = raw if isinstance(raw, str) else getattr(raw, "source", "")
    comma = _DECIMAL_COMMA.search(text)
    if comma is None:
        return
    doubled = bool(shape) and len(shape) == len(key_shape) and shape[:-1] == key_shape[:-1] \
        and shape[-1] == 2 * key_shape[-1]
    if doubled or _fits_with_decimal_points(text, key_shape):
        raise arrays.decimal_comma_error(comma.group(0), f"as two entries, which gives {arrays.shape_text(shape)} "
                                                         f"where {arrays.shape_text(key_shape)} is asked")


_COMMA_CHAIN = re.compile(r"\d,\d++,\d")
"""``1,0,1``: digits joined by two commas in a row are a list, never decimals."""


def _fits_with_decimal_points(text: str, key_shape: tuple[int, ...]) -> bool:
    """Whether ``text`` read with each ``digit,digit`` as a decimal point has the key's layout (or the
    1xN / Nx1 / flat mix-up of it). Never for a chain such as ``1,0,1``."""
    if _COMMA_CHAIN.search(text):
        return False
    try:
        items = arrays.read_array_text(_DECIMAL_COMMA.sub(lambda m: m.group(0).replace(",", "."), text))
        shape, _ = arrays.structure(items)
    except InvalidAnswer:
        return False
    return arrays.same_layout(shape, key_shape)


def map_first(value: Any, change) -> Any:
    """Copy of a nested list with only its first scalar entry changed."""
    if isinstance(value, list):
        return [map_first(value[0], change), *value[1:]] if value else value
    return change(value)


def layout(shape: tuple[int, ...]) -> str:
    """The bracket layout of a matrix with named entries, e.g. [[a11, a12], [a21, a22]]: never the answer,
    nor a hint of it (an example with numbers could be a key's, and one chosen to avoid it would say so).

    Made once per shape: every matrix part of every answer sheet of a class set asks for one of a few."""
    text = _LAYOUTS.get(shape)
    if text is None:
        text = _LAYOUTS[shape] = _layout(shape)
    return text


_LAYOUTS: dict[tuple[int, ...], str] = {}


def _layout(shape: tuple[int, ...]) -> str:
    if len(shape) == 1:
        names = [f"a{j}" for j in range(1, shape[0] + 1)]
        return "[" + ", ".join(names if len(names) <= 4 else names[:2] + ["...", names[-1]]) + "]"
    if len(shape) != 2:
        return "nested arrays, one per row"
    rows, cols = shape

    def row(i: int) -> str:
        names = [f"a{i}{j}" for j in range(1, cols + 1)]
        return "[" + ", ".join(names if cols <= 4 else names[:2] + ["...", names[-1]]) + "]"

    body = [row(i) for i in range(1, rows + 1)]
    return "[" + ", ".join(body if rows <= 3 else body[:2] + ["...", body[-1]]) + "]"


TYPE = MatrixType()
