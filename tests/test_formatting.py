"""Numbers and tolerances in words: one wording on the sheet, in feedback and in the key."""

from __future__ import annotations

import pytest

from problemgen.model.core import AnswerPart
from problemgen.answers.formatting import format_number, tolerance_text


@pytest.mark.parametrize(
    "value,text",
    [(3, "3"), (2.0, "2"), (0.12345, "0.1235"), (-0.00001, "0"), (float("-inf"), "-inf"), (True, "True"), ("T", "T")],
)
def test_numbers_show_integers_exactly_and_trim_trailing_zeros(value, text):
    assert format_number(value) == text


def test_tolerance_names_the_absolute_and_relative_bounds_the_grader_adds_up():
    both = AnswerPart("x", "number", 1.0, atol=0.005, rtol=0.01)
    assert tolerance_text(both) == "within ±0.005 plus ±1% of the value"
    assert tolerance_text(AnswerPart("x", "matrix", [[1.0]], atol=0.0005)) == "within ±0.0005"
    assert tolerance_text(AnswerPart("x", "integer", 7)) == "exact"
    assert tolerance_text(AnswerPart("x", "number", 1.0)) == "exact"
