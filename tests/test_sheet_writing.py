"""Writing answer sheets: the class set's one-pass writer and the number-row path give the same text."""

from __future__ import annotations

import math
import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from problemgen.sheets.answersheet import blank_and_key_sheets, blank_sheet, key_sheet, toml_value

_NUMBER = st.one_of(st.integers(-10**30, 10**30), st.floats(), st.sampled_from([0.0, -0.0, math.inf, -math.inf]))


def _element_by_element(value) -> str:
    """toml_value's general path for a list: each element on its own."""
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


def test_strings_are_json_strings_with_delete_escaped():
    assert toml_value('a"b\\c\x7f\n√') == '"a\\"b\\\\c\\u007f\\n√"'



@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(_NUMBER, max_size=6), st.lists(st.booleans(), max_size=6),
                 st.lists(st.one_of(_NUMBER, st.booleans(), st.text(max_size=3)), max_size=6)))
def test_a_row_of_numbers_or_booleans_is_written_as_element_by_element(row):
    assert toml_value(row) == _element_by_element(row)
    assert toml_value(tuple(row)) == _element_by_element(row)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(_NUMBER, st.booleans(), st.text(max_size=3)), max_size=4), max_size=4))
def test_a_matrix_is_written_row_by_row_and_parses_back(matrix):
    """A list takes the array path at once (a key's commonest value); each row is written as on its own."""
    assert toml_value(matrix) == "[" + ", ".join(_element_by_element(row) for row in matrix) + "]"
    assert toml_value(tuple(matrix)) == toml_value(matrix)
    if not any(isinstance(x, float) and math.isnan(x) for row in matrix for x in row):
        assert tomllib.loads(f"x = {toml_value(matrix)}")["x"] == matrix


@settings(max_examples=50, deadline=None)
@given(kind=st.sampled_from(["attention.weights", "masks.causal", "params.attention_layer", "shapes.cross",
                             "concepts.choice", "norms.layer_norm", "memory.kv_cache"]),
       seed=st.integers(0, 2**32 - 1), student=st.one_of(st.none(), st.just("s001")))
def test_blank_and_key_sheets_in_one_pass_are_the_two_sheets(kind, seed, student):
    from problemgen.model.registry import generate
    from problemgen.model.variantfile import SheetProblem, WorksheetVariant

    problems = tuple(SheetProblem(f"p{n}", points, generate(kind, seed + n, 1 + n % 2))
                     for n, points in enumerate((1.0, 2.5), start=1))
    variant = WorksheetVariant("v-1", "Title", "bank", seed, problems, student)
    assert blank_and_key_sheets(variant) == (blank_sheet(variant), key_sheet(variant))
