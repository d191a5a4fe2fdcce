"""Tests for reference.exact: closed forms agree with hand results and with the float reference."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import exact, layer_norm, rms_norm, scaled_dot_product_attention, sinusoidal_encoding

PROPS = settings(max_examples=25, deadline=None)
e = sp.exp


def test_three_token_exercise_has_the_closed_forms_of_the_notes():
    r = exact.attention([[2], [0], [1]], [[1], [3], [-1]], [[10], [20], [30]])
    assert r.scores == sp.Matrix([[2, 6, -2], [0, 0, 0], [1, 3, -1]])
    assert r.scaled_scores == r.scores  # d_k = 1: dividing by sqrt(1) changes nothing
    row1 = e(2) + e(6) + e(-2)
    assert list(r.weights.row(0)) == [e(2) / row1, e(6) / row1, e(-2) / row1]
    assert list(r.weights.row(1)) == [sp.Rational(1, 3)] * 3
    row3 = e(1) + e(3) + e(-1)
    assert list(r.weights.row(2)) == [e(1) / row3, e(3) / row3, e(-1) / row3]
    assert r.output[1, 0] == 20  # (10 + 20 + 30) / 3
    assert sp.simplify(r.output[0, 0] - (10 * e(2) + 20 * e(6) + 30 * e(-2)) / row1) == 0


def test_two_by_two_example_exact_weights():
    r = exact.attention([[1, 0], [0, 1]], [[1, 0], [1, 1]], [[1, 2], [3, 4]])
    a = sp.sqrt(2) / 2  # 1/sqrt(2)
    assert r.scaled_scores == sp.Matrix([[a, a], [0, a]])
    assert list(r.weights.row(0)) == [sp.Rational(1, 2)] * 2
    assert sp.simplify(r.weights[1, 0] - 1 / (1 + e(a))) == 0
    assert list(r.output.row(0)) == [2, 3]


@PROPS
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.booleans())
def test_exact_attention_evaluates_to_the_float_reference(seed, L, S, d, use_mask):
    rng = np.random.default_rng(seed)
    q, k, v = rng.integers(-3, 4, size=(L, d)), rng.integers(-3, 4, size=(S, d)), rng.integers(-5, 6, size=(S, 2))
    mask = rng.random((L, S)) < 0.6 if use_mask else None
    r = exact.attention(q.tolist(), k.tolist(), v.tolist(), mask)
    out, w = scaled_dot_product_attention(q, k, v, mask)
    assert np.allclose(exact.to_numpy(r.weights), w, atol=1e-13)
    assert np.allclose(exact.to_numpy(r.output), out, atol=1e-12)
    if use_mask:
        assert all(r.weights[i, j] == 0 for i in range(L) for j in range(S) if not mask[i, j])


def test_additive_masks_and_custom_scale():
    r = exact.attention([[1, 1]], [[1, 0], [0, 2]], [[1], [0]], [[0.0, -np.inf]], scale=1)
    assert list(r.weights) == [1, 0] and r.output[0, 0] == 1
    biased = exact.softmax([[0, 0]], mask=[[0, 1]])
    assert biased[1] == e(1) / (1 + e(1))
    assert list(exact.softmax([[1, 2]], mask=[[False, False]])) == [0, 0]


def test_exact_norms_match_hand_results_and_the_float_versions():
    assert list(exact.layer_norm([1, 2, 3])) == [-sp.sqrt(6) / 2, 0, sp.sqrt(6) / 2]
    assert list(exact.rms_norm([3, 4])) == [3 * sp.sqrt(2) / 5, 4 * sp.sqrt(2) / 5]
    x, g, b = [2, -1, 0.5, 4], [1, 2, 0.5, 1], [0, 1, -1, 0.25]
    ln = exact.layer_norm(x, g, b, eps=Fraction(1, 100))
    assert np.allclose(exact.to_numpy(ln)[0], layer_norm(np.array(x), np.array(g), np.array(b), eps=0.01), atol=1e-14)
    rn = exact.rms_norm(x, g, eps=Fraction(1, 100))
    assert np.allclose(exact.to_numpy(rn)[0], rms_norm(np.array(x), np.array(g), eps=0.01), atol=1e-14)


def test_exact_sinusoidal_values_match_the_float_encoding():
    pe = exact.sinusoidal_encoding(4, 6)
    assert pe[1, 2] == sp.sin(sp.Integer(10000) ** sp.Rational(-1, 3))
    assert exact.sinusoidal_value(5, 3, 4) == sp.cos(sp.Rational(5, 100))
    assert np.allclose(exact.to_numpy(pe), sinusoidal_encoding(4, 6), atol=1e-15)


def test_exact_numbers_from_python_values():
    assert exact.exact(0.1) == sp.Rational(1, 10)
    assert exact.exact(np.int64(-4)) == -4
    assert exact.exact(float("-inf")) == -sp.oo
    with pytest.raises(TypeError, match="exact"):
        exact.exact("1/2")  # text is never parsed
    with pytest.raises(ValueError, match="width"):
        exact.scores([[1, 2]], [[1]])
    with pytest.raises(ValueError, match="values"):
        exact.attention([[1]], [[1], [2]], [[1]])
