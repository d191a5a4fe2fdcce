"""Tests for reference.attention: softmax, scaled dot-product attention, multi-head attention.

The property tests compare against a deliberately naive per-head loop (written independently
of the vectorised code) and check the invariants the lecture notes state: weight rows are
probability distributions, masked weights are exactly zero, causal outputs ignore the future,
self-attention without positions is permutation-equivariant.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import (
    additive_mask,
    causal_mask,
    merge_heads,
    multi_head_attention,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)

PROPS = settings(max_examples=40, deadline=None)


def naive_attention(q, k, v, allowed=None):
    """Loop-by-loop attention with the textbook formula (independent oracle)."""
    L, d_k = q.shape
    S = k.shape[0]
    out = np.zeros((L, v.shape[1]))
    weights = np.zeros((L, S))
    for i in range(L):
        logits = [sum(q[i, m] * k[j, m] for m in range(d_k)) / math.sqrt(d_k) for j in range(S)]
        keep = [allowed is None or bool(allowed[i, j]) for j in range(S)]
        if not any(keep):
            continue
        top = max(lg for lg, ok in zip(logits, keep) if ok)
        exps = [math.exp(lg - top) if ok else 0.0 for lg, ok in zip(logits, keep)]
        total = sum(exps)
        for j in range(S):
            weights[i, j] = exps[j] / total
            out[i] += weights[i, j] * v[j]
    return out, weights


def naive_mha(x_q, x_kv, p, n_heads, allowed=None):
    """Per-head loop: slice each head's W_Q^(r), W_K^(r), W_V^(r), attend, concat, W_O."""
    d_head = p["w_q"].shape[1] // n_heads
    heads = []
    for r in range(n_heads):
        cols = slice(r * d_head, (r + 1) * d_head)
        o, _ = naive_attention(x_q @ p["w_q"][:, cols], x_kv @ p["w_k"][:, cols], x_kv @ p["w_v"][:, cols], allowed)
        heads.append(o)
    return np.concatenate(heads, axis=1) @ p["w_o"]


def random_params(rng, d_model, n_heads, d_head, n_kv_heads=None, bias=False):
    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    p = {
        "w_q": rng.normal(size=(d_model, n_heads * d_head)),
        "w_k": rng.normal(size=(d_model, n_kv_heads * d_head)),
        "w_v": rng.normal(size=(d_model, n_kv_heads * d_head)),
        "w_o": rng.normal(size=(n_heads * d_head, d_model)),
    }
    if bias:
        for name in ("q", "k", "v", "o"):
            p[f"b_{name}"] = rng.normal(size=p[f"w_{name}"].shape[1])
    return p


seeds = st.integers(0, 2**32 - 1)
small = st.integers(1, 5)


# ---------------------------------------------------------------- softmax


def test_softmax_fully_masked_row_gives_zeros_not_nan():
    out = softmax(np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]]))
    assert np.array_equal(out, [[0.0, 0.0, 0.0], [0.5, 0.0, 0.5]])


def test_softmax_does_not_overflow_on_large_scores():
    out = softmax(np.array([1000.0, 999.0]))
    expected = [1 / (1 + math.exp(-1)), math.exp(-1) / (1 + math.exp(-1))]
    assert np.allclose(out, expected, rtol=0, atol=1e-15)


@PROPS
@given(seeds, small, small)
def test_softmax_is_shift_invariant_and_sums_to_one(seed, rows, cols):
    x = np.random.default_rng(seed).normal(scale=5, size=(rows, cols))
    assert np.allclose(softmax(x).sum(-1), 1.0, atol=1e-12)
    assert np.allclose(softmax(x + 123.0), softmax(x), atol=1e-12)
    assert np.allclose(softmax(x.T, axis=0), softmax(x).T, atol=1e-15)


# ------------------------------------------------- scaled dot-product attention


@PROPS
@given(seeds, small, small, small, small)
def test_sdpa_matches_naive_loop_with_random_boolean_mask(seed, L, S, d_k, d_v):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(L, d_k)), rng.normal(size=(S, d_k)), rng.normal(size=(S, d_v))
    allowed = rng.random((L, S)) < 0.6
    out, w = scaled_dot_product_attention(q, k, v, allowed)
    ref_out, ref_w = naive_attention(q, k, v, allowed)
    assert np.allclose(out, ref_out, atol=1e-12)
    assert np.allclose(w, ref_w, atol=1e-12)


@PROPS
@given(seeds, small, small, small)
def test_weight_rows_are_distributions_and_masked_weights_exactly_zero(seed, L, S, d):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(2, L, d)), rng.normal(size=(2, S, d)), rng.normal(size=(2, S, d))
    allowed = rng.random((2, L, S)) < 0.5
    out, w = scaled_dot_product_attention(q, k, v, allowed)
    assert np.all(w[~np.broadcast_to(allowed, w.shape)] == 0.0)
    assert np.all(w >= 0)
    row_has_key = allowed.any(-1)
    assert np.allclose(w.sum(-1)[row_has_key], 1.0, atol=1e-12)
    # fully masked query rows: zero weights and zero output (PyTorch SDPA convention)
    assert np.all(w.sum(-1)[~row_has_key] == 0.0)
    assert np.all(out[~row_has_key] == 0.0)


@PROPS
@given(seeds, small, small)
def test_boolean_and_additive_masks_are_equivalent(seed, L, S):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=(L, 3)), rng.normal(size=(S, 3)), rng.normal(size=(S, 2))
    allowed = rng.random((L, S)) < 0.5
    out_b, w_b = scaled_dot_product_attention(q, k, v, allowed)
    out_f, w_f = scaled_dot_product_attention(q, k, v, additive_mask(allowed))
    assert np.array_equal(w_b, w_f)
    assert np.array_equal(out_b, out_f)


def test_additive_mask_is_added_after_scaling_not_before():
    # scores [4, 0] with d_k = 4 scale to [2, 0]; a float bias of +2 on key 1 must tie them.
    q, k, v = np.array([[2.0, 0, 0, 0]]), np.array([[2.0, 0, 0, 0], [0, 0, 0, 0]]), np.eye(2)
    _, w = scaled_dot_product_attention(q, k, v, np.array([[0.0, 2.0]]))
    assert np.allclose(w, [[0.5, 0.5]], atol=1e-15)


def test_default_scale_is_inverse_sqrt_dk_and_scale_overrides_it():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(3, 9)), rng.normal(size=(4, 9)), rng.normal(size=(4, 2))
    _, w_default = scaled_dot_product_attention(q, k, v)
    assert np.allclose(w_default, softmax(q @ k.T / 3.0), atol=1e-15)
    _, w_unscaled = scaled_dot_product_attention(q, k, v, scale=1.0)
    assert np.allclose(w_unscaled, softmax(q @ k.T), atol=1e-15)


def test_mismatched_widths_are_rejected():
    with pytest.raises(ValueError, match="query width"):
        scaled_dot_product_attention(np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 1)))
    with pytest.raises(ValueError, match="keys but"):
        scaled_dot_product_attention(np.ones((2, 3)), np.ones((2, 3)), np.ones((3, 1)))


@PROPS
@given(seeds, st.integers(2, 6))
def test_causal_output_rows_do_not_depend_on_future_tokens(seed, L):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(L, 4))
    p = random_params(rng, 4, 2, 3)
    t = int(rng.integers(0, L - 1))
    changed = x.copy()
    changed[t + 1 :] = rng.normal(size=(L - t - 1, 4))
    out, _ = multi_head_attention(x, x, p, 2, mask=causal_mask(L))
    out2, _ = multi_head_attention(changed, changed, p, 2, mask=causal_mask(L))
    assert np.array_equal(out[: t + 1], out2[: t + 1])
    assert not np.allclose(out[t + 1 :], out2[t + 1 :])  # the perturbation was real


# ------------------------------------------------------------ multi-head attention


def test_split_and_merge_heads_shapes_and_layout():
    x = np.arange(2 * 3 * 8.0).reshape(2, 3, 8)  # (B, L, h*d) with h=2, d=4
    heads = split_heads(x, 2)
    assert heads.shape == (2, 2, 3, 4)
    assert np.array_equal(heads[1, 1, 2], x[1, 2, 4:8])  # head 1 owns columns 4..7
    assert np.array_equal(merge_heads(heads), x)
    with pytest.raises(ValueError, match="not divisible"):
        split_heads(x, 3)


@PROPS
@given(seeds, st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3), st.booleans())
def test_mha_matches_per_head_loop(seed, L, S, n_heads, d_head, cross):
    rng = np.random.default_rng(seed)
    d_model = 5
    x_q = rng.normal(size=(L, d_model))
    x_kv = rng.normal(size=(S, d_model)) if cross else x_q
    p = random_params(rng, d_model, n_heads, d_head)
    allowed = rng.random((x_q.shape[0], x_kv.shape[0])) < 0.7
    out, w = multi_head_attention(x_q, x_kv, p, n_heads, mask=allowed)
    assert w.shape == (n_heads, x_q.shape[0], x_kv.shape[0])
    assert np.allclose(out, naive_mha(x_q, x_kv, p, n_heads, allowed), atol=1e-10)


@PROPS
@given(seeds, st.integers(1, 4))
def test_mha_with_one_head_equals_single_head_attention(seed, L):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, L, 6))
    p = random_params(rng, 6, 1, 6, bias=True)
    out, w = multi_head_attention(x, x, p, 1, mask=causal_mask(L))
    q, k, v = x @ p["w_q"] + p["b_q"], x @ p["w_k"] + p["b_k"], x @ p["w_v"] + p["b_v"]
    single, single_w = scaled_dot_product_attention(q, k, v, causal_mask(L))
    assert np.allclose(out, single @ p["w_o"] + p["b_o"], atol=1e-12)
    assert np.allclose(w[:, 0], single_w, atol=1e-15)


@PROPS
@given(seeds, st.sampled_from([(4, 4), (4, 2), (4, 1), (6, 3), (6, 2)]))
def test_grouped_query_attention_equals_mha_with_repeated_kv_weights(seed, heads):
    n_heads, n_kv = heads
    rng = np.random.default_rng(seed)
    d_model, d_head, L = 6, 2, 4
    x = rng.normal(size=(L, d_model))
    p = random_params(rng, d_model, n_heads, d_head, n_kv_heads=n_kv)
    out, _ = multi_head_attention(x, x, p, n_heads, n_kv_heads=n_kv, mask=causal_mask(L))
    # expand K/V weights so every query head gets its own (copied) K/V head: query head r
    # uses key/value head r // (n_heads // n_kv)
    group = n_heads // n_kv
    full = dict(p)
    for name in ("w_k", "w_v"):
        blocks = [p[name][:, (r // group) * d_head : (r // group + 1) * d_head] for r in range(n_heads)]
        full[name] = np.concatenate(blocks, axis=1)
    assert np.allclose(out, naive_mha(x, x, full, n_heads, causal_mask(L)), atol=1e-10)


def test_gqa_with_as_many_kv_heads_as_query_heads_is_plain_mha():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(3, 8))
    p = random_params(rng, 8, 4, 2)
    a, wa = multi_head_attention(x, x, p, 4, n_kv_heads=4)
    b, wb = multi_head_attention(x, x, p, 4)
    assert np.array_equal(a, b) and np.array_equal(wa, wb)


def test_gqa_rejects_uneven_grouping():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 6))
    p = random_params(rng, 6, 3, 2, n_kv_heads=2)
    with pytest.raises(ValueError, match="share"):
        multi_head_attention(x, x, p, 3, n_kv_heads=2)


@PROPS
@given(seeds, st.integers(2, 6), st.integers(1, 3))
def test_self_attention_without_positions_is_permutation_equivariant(seed, L, n_heads):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(L, 6))
    p = random_params(rng, 6, n_heads, 2, bias=True)
    perm = rng.permutation(L)
    out, w = multi_head_attention(x, x, p, n_heads)
    out_p, w_p = multi_head_attention(x[perm], x[perm], p, n_heads)
    assert np.allclose(out_p, out[perm], atol=1e-12)
    assert np.allclose(w_p, w[:, perm][:, :, perm], atol=1e-14)


def test_batched_mask_applies_to_every_head():
    # a (B, L, S) mask must be broadcast over the head axis, not aligned with it
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 4))
    p = random_params(rng, 4, 2, 2)
    allowed = np.array([causal_mask(3), np.ones((3, 3), bool)])
    _, w = multi_head_attention(x, x, p, 2, mask=allowed)
    assert w.shape == (2, 2, 3, 3)
    assert np.all(w[0][:, ~causal_mask(3)] == 0)
    assert np.all(w[1] > 0)
