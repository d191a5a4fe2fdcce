"""Numbers and tolerances in words: one wording on the sheet, in feedback and in the key."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _tolerance_words_made_afresh(part: AnswerPart) -> str:
    """The wording as it was made before it was cached: the reference for the memo."""
    from problemgen.answers import types

    if not types.get(part.type).tolerant:
        return "exact"
    bounds = [f"±{format_number(part.atol, 8)}"] if part.atol > 0 else []
    bounds += [f"±{format_number(part.rtol * 100, 6)}% of the value"] if part.rtol > 0 else []
    return "within " + " plus ".join(bounds) if bounds else "exact"


_TOLERANCES = st.one_of(st.just(0), st.just(0.0), st.just(-0.0), st.integers(-3, 2**60),
                        st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.005, 5e-3, 0.01, 1, 1.0]))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["number", "matrix", "integer", "mask"]), _TOLERANCES, _TOLERANCES),
                min_size=1, max_size=6))
def test_cached_tolerance_words_are_the_words_made_afresh_in_any_order(rows):
    """The wording is cached per (type's tolerance, atol, rtol): whatever came before, it reads as made afresh."""
    for type_, atol, rtol in rows:
        part = AnswerPart("x", type_, 1.0, atol=atol, rtol=rtol)
        assert tolerance_text(part) == _tolerance_words_made_afresh(part)
