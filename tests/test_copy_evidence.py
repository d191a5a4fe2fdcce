"""Copy detection compares what two sheets say, not how they wrote it: ``canonical_answer`` per answer type."""

from __future__ import annotations

import pytest

from problemgen.answers import types
from problemgen.answers.base import AnswerType
from problemgen.model.core import AnswerPart
from problemgen.sheets.grading import canonical_answer

NUMBER = AnswerPart("x", "number", 0.25, atol=0.005)
IN_MB = AnswerPart("size", "number", 48.0, rtol=0.005, spec={"unit": "MB"})
COUNT = AnswerPart("total", "integer", 124439808, spec={"unit": "bytes"})
SHAPE = AnswerPart("scores", "shape", ["B", "h", "L", "S"])
MATRIX = AnswerPart("w", "matrix", [[0.25, 0.75]], atol=0.005)
MASK = AnswerPart("mask", "mask", [[True, False], [True, True]], spec={"representation": "bool"})
CHOICE = AnswerPart("choice", "choice", ["c"], spec={"options": [{"id": i, "text": i, "why": ""} for i in "abcd"]})
TERM = AnswerPart("term1", "term", ["layer norm"])
EXPRESSION = AnswerPart("w", "expression", "exp(2)/(1+exp(2))")

ONE_ANSWER = [
    (NUMBER, [99, "99", 99.0, " 99 ", "9.9e1", "198/2"]),
    (NUMBER, [0.3, 0.1 + 0.2, "0.3", ".3"]),  # the float noise of a computed value is no difference
    (IN_MB, ["192 MiB", 201.326592, "201.326592 MB"]),  # converted into the unit the part asks
    (COUNT, [12582912, "12582912", "12,582,912", 12582912.0, "12 MiB", "12582912 bytes"]),
    (SHAPE, ["(B, h, S, L)", "(B,h,S,L)", "B x h x S x L", ["B", "h", "S", "L"], "[B, h, S, L]"]),
    (MATRIX, [[[0.5, 0.5]], "[[.5, 1/2]]", [["1/2", 0.5]], "[[0.5 0.5]]"]),
    (MASK, [[[False, True], [True, False]], "[[F, T], [T, F]]", [[0, 1], [1, 0]], '[["false", "true"], [1, 0]]']),
    (CHOICE, ["b", "(b)", "B", "option b", ["b"]]),
    (TERM, ["Feed-Forward", "feed forward", "feedforward"]),
    (EXPRESSION, ["1/(1+exp(2))", "1/(exp(2) + 1)"]),
]


@pytest.mark.parametrize("part,answers", ONE_ANSWER, ids=lambda x: getattr(x, "type", ""))
def test_one_value_written_in_different_ways_is_one_answer(part, answers):
    assert len({canonical_answer(part, raw) for raw in answers}) == 1, [canonical_answer(part, a) for a in answers]


@pytest.mark.parametrize("part,a,b", [
    (NUMBER, 99, 98), (NUMBER, 0.333, "1/3"), (COUNT, 12582912, "12 MB"), (SHAPE, "(B, h, S, L)", "(B, h, L, S)"),
    (MATRIX, [[0.5, 0.5]], [[0.5, 0.6]]), (MASK, [[True, False], [True, True]], [[True, True], [True, True]]),
    (CHOICE, "b", "d"), (TERM, "dropout", "layer norm"), (EXPRESSION, "1/(1+exp(2))", "1/(1+exp(3))"),
], ids=lambda x: getattr(x, "type", ""))
def test_different_values_stay_different_answers(part, a, b):
    assert canonical_answer(part, a) != canonical_answer(part, b)


def test_an_answer_the_type_cannot_read_is_compared_by_its_text_without_spacing():
    assert canonical_answer(NUMBER, "see  attached") == canonical_answer(NUMBER, "see attached") == "seeattached"
    assert canonical_answer(NUMBER, [1, "x"]) == canonical_answer(NUMBER, [1, "x"])


@pytest.mark.parametrize("name", types.names())
def test_every_answer_type_says_what_its_answers_are(name):
    assert type(types.get(name)).canonical is not AnswerType.canonical
