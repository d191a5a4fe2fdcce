"""The grader names a misconception only when a wrong answer is evidence of it (answers/diagnosis.py).

A wrong diagnosis tells a student they made a mistake they did not make and counts them under it in the
class summary, so these pin the cases where an answer within tolerance of a listed mistake's value is
evidence of something else: the key rounded too coarsely, a nearer mistake, or the key itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from problemgen.answers.diagnosis import key_coarsely_written
from problemgen.model.core import AnswerPart, Mistake
from problemgen.model.registry import all_kinds, generate
from problemgen.sheets.grading import grade_part, grade_text


def named(part, answer) -> str | None:
    result = grade_part(part, answer)
    assert result.status == "wrong", result
    return result.mistake


COSINE = AnswerPart(key="pe", type="number", value=0.995, atol=0.0005,
                    mistakes=(Mistake("positions_zero_vs_one", 0.9996, "count from 0"),))


@pytest.mark.parametrize("answer", [1.0, "1.0", "1.00", "1"])
def test_the_key_rounded_to_fewer_decimals_than_asked_names_no_mistake(answer):
    """0.995 to two decimals is 1.0, within ±0.0005 of 0.9996: it shows too few decimals. The mistake itself,
    to the four decimals asked, is still named."""
    assert named(COSINE, answer) is None
    assert named(COSINE, "0.9996") == named(COSINE, 0.99955) == "positions_zero_vs_one"


def test_a_mistake_value_given_exactly_is_named_even_where_it_is_also_the_key_rounded():
    """1 GiB read as GB is 1.0 for a key of 1.0737 GB: exactly the mistake, so named; 1.1 (the key to one
    decimal) within tolerance of a mistake 1.1003 is not."""
    part = AnswerPart(key="size", type="number", value=1.073741824, rtol=0.005,
                      mistakes=(Mistake("decimal_vs_binary_units", 1.0, "GB vs GiB"), Mistake("wrong_dtype_bytes", 1.1003, "")))
    assert named(part, 1.0) == "decimal_vs_binary_units"
    assert named(part, 1.1) is None


def test_rounding_to_whole_numbers_is_no_rounding_excuse():
    """GELU's 0.8413 written as 1 is ReLU's value, not GELU to one decimal (0.8)."""
    part = AnswerPart(key="gelu", type="matrix", value=[-0.1587, 0.8413, 2.996], atol=0.005,
                      mistakes=(Mistake("relu_for_gelu", [0.0, 1.0, 3.0], "ReLU"),))
    assert named(part, [0, 1, 3]) == "relu_for_gelu"
    assert key_coarsely_written([-0.16, 0.8, 3.0], part.value, 0.0, 0.005)
    assert not key_coarsely_written([0.0, 1.0, 3.0], part.value, 0.0, 0.005)


def test_a_matrix_of_the_key_rounded_to_one_decimal_names_no_mistake_it_falls_near():
    key = [[0.512, 0.488], [0.248, 0.752]]
    near = [[0.5004, 0.4996], [0.2004, 0.7996]]  # a mistake within ±0.005 of the key to one decimal
    part = AnswerPart(key="w", type="matrix", value=key, atol=0.005, mistakes=(Mistake("no_scaling", near, "scale"),))
    assert named(part, [[0.5, 0.5], [0.2, 0.8]]) is None
    assert named(part, near) == "no_scaling"


def test_an_answer_within_tolerance_of_two_mistakes_names_the_nearer():
    part = AnswerPart(key="x", type="number", value=0.5, atol=0.0005,
                      mistakes=(Mistake("sin_cos_swapped", 0.7, "a"), Mistake("degrees_not_radians", 0.7008, "b")))
    assert named(part, 0.70045) == "degrees_not_radians"  # 0.00045 from the first, 0.00035 from the second
    assert named(part, 0.70035) == "sin_cos_swapped"


def test_an_answer_as_near_two_mistakes_names_neither():
    part = AnswerPart(key="x", type="number", value=0.5, atol=0.0005,
                      mistakes=(Mistake("sin_cos_swapped", 0.7, "a"), Mistake("degrees_not_radians", 0.7008, "b")))
    assert named(part, 0.7004) is None


def test_a_matrix_nearer_the_key_than_the_mistake_it_is_within_tolerance_of_names_nothing():
    """One entry slipped just outside the key's tolerance, towards a mistake that differs from the key a
    little everywhere: every entry is within tolerance of the mistake, but the answer is nearer the key."""
    part = AnswerPart(key="w", type="matrix", value=[[0.0, 0.0, 0.0, 0.0]], atol=0.01,
                      mistakes=(Mistake("no_scaling", [[0.009, 0.009, 0.009, 0.015]], "scale"),))
    assert named(part, [[0.0, 0.0, 0.0, 0.0105]]) is None
    assert named(part, [[0.009, 0.009, 0.009, 0.015]]) == "no_scaling"


def test_a_generated_mistake_rounded_to_the_asked_four_decimals_is_not_named_as_its_neighbour():
    """Here cos with the column's own exponent (0.99928) lies 1.4 tolerances from sin in degrees (0.99978),
    listed first: 0.9993 was named as the degrees mistake."""
    part = generate("positional.sinusoidal", 210, 2).part("pe_5")
    for mistake in part.mistakes:
        assert named(part, f"{mistake.value:.4f}") == mistake.name
        assert grade_text(part, f"{100 * mistake.value:.2f}%").mistake == mistake.name


def test_a_generated_cosine_rounded_to_two_decimals_is_not_called_counting_positions_from_one():
    part = generate("positional.sinusoidal", 54, 2).part("pe_2")
    assert named(part, round(part.value, 2)) is None


def _significant(x: float, figures: int) -> float:
    return round(x, figures - 1 - math.floor(math.log10(abs(x)))) if x else 0.0


COARSE = [*(lambda x, d=d: round(x, d) for d in (1, 2, 3)), *(lambda x, d=d: math.trunc(x * 10**d) / 10**d for d in (1, 2, 3)),
          *(lambda x, s=s: _significant(x, s) for s in (2, 3))]
"""The key rounded or cut to 1–3 decimals, or rounded to 2–3 significant figures."""


def _stated(part: AnswerPart, value: float) -> float:
    """A value to the precision the prompts ask at this tolerance (4 decimals for ±0.0005, 3 for ±0.005 and
    ±0.01, 3 significant figures for a relative tolerance)."""
    return round(value, math.ceil(math.log10(5 / part.atol))) if part.atol else _significant(value, 3)


def _as_answer(values: np.ndarray):
    return values.tolist() if values.ndim else float(values)


@pytest.mark.slow
@pytest.mark.parametrize("kind", [k.name for k in all_kinds()])
def test_no_rounding_of_the_key_names_a_mistake_and_each_mistake_to_the_asked_precision_is_itself(kind):
    """Over 60 seeds of every difficulty: the key rounded or cut to 1–3 decimals or 2–3 significant figures
    names no mistake unless it is exactly that mistake's value, and every listed mistake written to the
    precision the prompt asks is named as itself (or, within tolerance of the key, accepted; or, where it
    is also the key rounded, as 11.0 MB is 10.5 MiB's value to two figures, named as nothing)."""
    for difficulty in (1, 2, 3):
        for seed in range(60):
            for part in generate(kind, seed, difficulty).parts:
                if part.type not in ("number", "matrix") or not part.mistakes:
                    continue
                where = (kind, difficulty, seed, part.key)
                for coarse in COARSE:
                    rounded = np.vectorize(coarse)(np.asarray(part.value, dtype=float))
                    result = grade_part(part, _as_answer(rounded))
                    exactly = [m.name for m in part.mistakes if np.shape(m.value) == rounded.shape
                               and np.allclose(np.asarray(m.value, dtype=float), rounded, rtol=1e-9, atol=1e-12)]
                    assert result.mistake is None or result.mistake in exactly, (*where, rounded, result.mistake)
                for mistake in part.mistakes:
                    value = np.vectorize(lambda x: _stated(part, x))(np.asarray(mistake.value, dtype=float))
                    result = grade_part(part, _as_answer(value))
                    also_the_key = np.shape(value) == np.shape(part.value) and key_coarsely_written(
                        value.ravel().tolist(), np.ravel(part.value).tolist(), part.rtol, part.atol)
                    assert result.status == "correct" or result.mistake == mistake.name or (
                        also_the_key and result.mistake is None), (*where, mistake.name, result)
