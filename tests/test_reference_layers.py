"""Tests for reference.layers (norms, activations, FFN) and reference.positional."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reference import feed_forward, gelu, layer_norm, relu, rms_norm, rope, silu, sinusoidal_encoding

PROPS = settings(max_examples=40, deadline=None)
seeds = st.integers(0, 2**32 - 1)


# ------------------------------------------------------------------ norms


def test_layer_norm_uses_biased_variance_with_eps_inside_the_root():
    x = np.array([1.0, 2.0, 3.0, 6.0])
    mean, var_biased = 3.0, (4 + 1 + 0 + 9) / 4  # divide by d = 4, not d - 1 = 3
    expected = (x - mean) / math.sqrt(var_biased + 1e-5)
    assert np.allclose(layer_norm(x), expected, rtol=0, atol=1e-15)


@PROPS
@given(seeds, st.integers(2, 9))
@example(seed=110551, d=2)  # a row of two nearly equal entries (3.76017, 3.76044): the division magnifies rounding
def test_layer_norm_output_has_zero_mean_unit_variance_then_affine(seed, d):
    rng = np.random.default_rng(seed)
    x = rng.normal(loc=3, scale=4, size=(3, d))
    y = layer_norm(x, eps=0.0)
    # Rounding in x - mean is about eps * |x|; dividing by the standard deviation magnifies it by |x| / std, so
    # that is the bound (a fixed one fails rows whose entries nearly agree and is loose for every other row).
    condition = np.abs(x).max(-1) / x.std(-1)  # (3,)
    bound = 16 * np.finfo(float).eps * condition  # (3,)
    assert np.all(np.abs(y.mean(-1)) <= bound)
    assert np.all(np.abs(y.var(-1) - 1) <= bound)
    gamma, beta = rng.normal(size=d), rng.normal(size=d)
    assert np.allclose(layer_norm(x, gamma, beta, eps=0.0), y * gamma + beta, atol=1e-14)


@PROPS
@given(seeds, st.integers(1, 9))
def test_rms_norm_has_unit_root_mean_square_and_keeps_the_mean(seed, d):
    rng = np.random.default_rng(seed)
    x = rng.normal(loc=2, size=(3, d))
    y = rms_norm(x, eps=0.0)
    assert np.allclose(np.sqrt((y**2).mean(-1)), 1.0, atol=1e-12)
    assert np.allclose(y * np.sqrt((x**2).mean(-1, keepdims=True)), x, atol=1e-12)
    gamma = rng.normal(size=d)
    assert np.allclose(rms_norm(x, gamma, eps=0.0), y * gamma, atol=1e-14)


def test_rms_norm_eps_sits_inside_the_root():
    x = np.array([3.0, 4.0])
    assert np.allclose(rms_norm(x, eps=0.5), x / math.sqrt(12.5 + 0.5), atol=1e-15)


# ------------------------------------------------------------- activations


def test_activation_values_at_known_points():
    x = np.array([-2.0, 0.0, 1.0, 3.0])
    assert np.array_equal(relu(x), [0.0, 0.0, 1.0, 3.0])
    phi = [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x]
    assert np.allclose(gelu(x), x * phi, atol=1e-15)
    tanh_form = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in x]
    assert np.allclose(gelu(x, approximate="tanh"), tanh_form, atol=1e-15)
    assert np.allclose(silu(x), [v / (1 + math.exp(-v)) for v in x], atol=1e-15)
    with pytest.raises(ValueError, match="approximate"):
        gelu(x, approximate="sigmoid")


def test_gelu_approximations_differ_enough_to_matter():
    x = np.linspace(-4, 4, 81)
    gap = np.max(np.abs(gelu(x) - gelu(x, approximate="tanh")))
    assert 1e-5 < gap < 1e-3


def test_silu_is_finite_for_extreme_inputs():
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        y = silu(np.array([-1000.0, 1000.0]))
    assert np.array_equal(y, [-0.0, 1000.0])


# ------------------------------------------------------------------- FFN


@PROPS
@given(seeds, st.sampled_from(["relu", "gelu", "gelu_tanh"]))
def test_two_matrix_ffn_is_act_of_affine_then_affine(seed, kind):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 3, 4))
    p = {"w_1": rng.normal(size=(4, 16)), "b_1": rng.normal(size=16), "w_2": rng.normal(size=(16, 4)), "b_2": rng.normal(size=4)}
    act = {"relu": relu, "gelu": gelu, "gelu_tanh": lambda h: gelu(h, approximate="tanh")}[kind]
    expected = act(x @ p["w_1"] + p["b_1"]) @ p["w_2"] + p["b_2"]
    assert np.allclose(feed_forward(x, p, kind), expected, atol=1e-12)


@PROPS
@given(seeds)
def test_swiglu_gates_the_up_projection_and_acts_per_position(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(5, 4))
    p = {"w_gate": rng.normal(size=(4, 6)), "w_up": rng.normal(size=(4, 6)), "w_down": rng.normal(size=(6, 4))}
    gate = x @ p["w_gate"]
    expected = (gate / (1 + np.exp(-gate)) * (x @ p["w_up"])) @ p["w_down"]
    out = feed_forward(x, p, "swiglu")
    assert np.allclose(out, expected, atol=1e-12)
    # position-wise: each row only depends on the same input row
    assert np.allclose(feed_forward(x[2:3], p, "swiglu"), out[2:3], atol=1e-15)


def test_unknown_ffn_kind_is_rejected():
    with pytest.raises(ValueError, match="kind"):
        feed_forward(np.ones((1, 2)), {}, "tanh")


# ------------------------------------------------------------- positional


def test_sinusoidal_encoding_is_interleaved_sin_cos():
    d = 6
    pe = sinusoidal_encoding(5, d)
    for pos in range(5):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-15)
            assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-15)
    odd = sinusoidal_encoding(3, 5)
    assert odd.shape == (3, 5)
    assert odd[2, 4] == pytest.approx(math.sin(2 / 10000 ** (4 / 5)), abs=1e-15)


@PROPS
@given(seeds, st.integers(0, 50), st.integers(0, 50), st.integers(1, 30), st.sampled_from(["half", "interleaved"]))
def test_rope_scores_depend_only_on_relative_position(seed, m, n, shift, style):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(1, 8)), rng.normal(size=(1, 8))
    a = rope(q, np.array([m]), style=style) @ rope(k, np.array([n]), style=style).T
    b = rope(q, np.array([m + shift]), style=style) @ rope(k, np.array([n + shift]), style=style).T
    assert np.allclose(a, b, atol=1e-12)
    assert np.allclose(np.linalg.norm(rope(q, np.array([m]), style=style)), np.linalg.norm(q))


def test_rope_pairings_differ_and_position_zero_is_identity():
    x = np.arange(1.0, 9.0).reshape(2, 4)
    assert np.allclose(rope(x, np.array([0, 0])), x)
    half, inter = rope(x, style="half"), rope(x, style="interleaved")
    # position 1, pair 0: "half" rotates features (0, 2); "interleaved" rotates (0, 1)
    c, s = math.cos(1), math.sin(1)
    assert half[1, 0] == pytest.approx(5 * c - 7 * s) and half[1, 2] == pytest.approx(5 * s + 7 * c)
    assert inter[1, 0] == pytest.approx(5 * c - 6 * s) and inter[1, 1] == pytest.approx(5 * s + 6 * c)
    with pytest.raises(ValueError, match="even"):
        rope(np.ones((2, 3)))
