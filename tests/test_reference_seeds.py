"""Every worked example in the lecture notes (../shared/seeds/) that the reference can compute.

Where a note rounds, the test checks the exact value and that it rounds to the note's figure;
where a note is wrong, the test asserts the correct value and the comment says what the note
claims. (Parameter counts and the KV-cache example live in test_reference_params.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from reference import causal_mask, multi_head_attention, scaled_dot_product_attention, softmax, split_heads
from reference.shapes import attention_shapes, dims_for, multi_head_attention_shapes


def test_two_by_two_example_weights_and_outputs():
    # Notes: A ~ [[0.5, 0.5], [0.33, 0.67]], O ~ [[2.00, 3.00], [2.34, 3.34]] (rounded).
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [1.0, 1.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    out, w = scaled_dot_product_attention(q, k, v)
    assert np.allclose(q @ k.T, [[1, 1], [0, 1]], atol=0)
    a = 1 / (1 + math.exp(1 / math.sqrt(2)))  # weight of key 1 for query 2: 0.330238...
    assert np.allclose(w, [[0.5, 0.5], [a, 1 - a]], atol=1e-15)
    assert np.allclose(out, [[2, 3], [3 - 2 * a, 4 - 2 * a]], atol=1e-15)  # 2.339523..., 3.339523...
    assert np.array_equal(np.round(w[1], 2), [0.33, 0.67])
    assert np.array_equal(np.round(out, 2), [[2.0, 3.0], [2.34, 3.34]])


def test_three_token_d_k_1_exercise():
    q, k, v = np.array([[2.0], [0.0], [1.0]]), np.array([[1.0], [3.0], [-1.0]]), np.array([[10.0], [20.0], [30.0]])
    out, w = scaled_dot_product_attention(q, k, v)
    assert np.array_equal(q @ k.T, [[2, 6, -2], [0, 0, 0], [1, 3, -1]])
    z1 = math.exp(2) + math.exp(6) + math.exp(-2)
    z3 = math.exp(1) + math.exp(3) + math.exp(-1)
    assert np.allclose(w[0], [math.exp(2) / z1, math.exp(6) / z1, math.exp(-2) / z1], atol=1e-15)
    assert np.allclose(w[1], [1 / 3, 1 / 3, 1 / 3], atol=1e-15)
    assert np.allclose(w[2], [math.exp(1) / z3, math.exp(3) / z3, math.exp(-1) / z3], atol=1e-15)
    assert out[1, 0] == pytest.approx(20.0, abs=1e-12)
    assert out[0, 0] == pytest.approx((10 * math.exp(2) + 20 * math.exp(6) + 30 * math.exp(-2)) / z1, abs=1e-12)
    assert out[2, 0] == pytest.approx((10 * math.exp(1) + 20 * math.exp(3) + 30 * math.exp(-1)) / z3, abs=1e-12)


def test_four_token_projection_toy_in_column_convention():
    # The notes write q = W_Q x with W_Q shaped [d_k, d_model]; in our row-vector convention
    # the same projection is X @ W_Q.T.
    X = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]], dtype=float)
    W_Q = np.array([[1, 0, 1, 0], [0, 1, 0, 1]], dtype=float)
    W_K = np.array([[0, 1, 1, 0], [1, 0, 0, 1]], dtype=float)
    W_V = np.array([[1, 1, 0, 0], [0, 0, 1, 1]], dtype=float)
    Q, K, V = X @ W_Q.T, X @ W_K.T, X @ W_V.T
    assert np.array_equal(Q, [[2, 0], [0, 2], [1, 1], [1, 1]])
    assert np.array_equal(K, np.ones((4, 2)))
    assert np.array_equal(V, [[1, 1], [1, 1], [2, 0], [0, 2]])
    # The notes score token 0 as [2, 2, 2, 2] without the 1/sqrt(d_k) scaling; with it the
    # scores are [sqrt 2] * 4. All keys are identical, so either way the weights are uniform.
    assert np.array_equal(Q[0] @ K.T, [2, 2, 2, 2])
    out, w = multi_head_attention(X, X, {"w_q": W_Q.T, "w_k": W_K.T, "w_v": W_V.T, "w_o": np.eye(2)}, 1)
    assert np.allclose(w[0], 0.25, atol=1e-15)
    assert np.allclose(out, [[1, 1]] * 4, atol=1e-15)  # every token averages the four values


def test_q_eat_projection_in_the_before_training_example():
    # The notes state q_eat = [0.2, 0.8, 0.9] x W_Q = [0.30, 0.61]. The product is [0.26, 0.72]:
    # 0.2*0.3 + 0.8*(-0.2) + 0.9*0.4 = 0.26 and 0.2*(-0.1) + 0.8*0.7 + 0.9*0.2 = 0.72.
    W_Q = np.array([[0.3, -0.1], [-0.2, 0.7], [0.4, 0.2]])
    q_eat = np.array([0.2, 0.8, 0.9]) @ W_Q
    assert np.allclose(q_eat, [0.26, 0.72], atol=1e-15)
    assert not np.allclose(q_eat, [0.30, 0.61], atol=0.005)
    # W_K is not given, so k_alice = [0.21, 0.44] is taken as stated. The notes' score
    # 0.30*0.21 + 0.61*0.44 = 0.3314 (~0.33) follows from the wrong q; the right one is 0.3714.
    k_alice = np.array([0.21, 0.44])
    assert float(np.array([0.30, 0.61]) @ k_alice) == pytest.approx(0.3314, abs=1e-12)
    assert float(q_eat @ k_alice) == pytest.approx(0.3714, abs=1e-12)


def test_scaling_example_numbers():
    raw = np.array([8.5, 42.0, 3.2, 42.0])
    # Notes: unscaled softmax ~ [0, 0.55, 0, 0.45]. Two equal scores must get equal weights:
    # it is [~0, 0.5, ~0, 0.5] (the other two are below 1e-14).
    unscaled = softmax(raw)
    assert unscaled[1] == unscaled[3]
    assert np.allclose(unscaled, [0, 0.5, 0, 0.5], atol=1e-14)
    # Notes: scores/8 = [1.1, 5.3, 0.4, 5.2]; exactly [1.0625, 5.25, 0.4, 5.25] (5.25 is rounded
    # up once and down once). Their softmax ~ [0.01, 0.49, 0, 0.49] is right after rounding.
    scaled = raw / math.sqrt(64)
    assert np.array_equal(scaled, [1.0625, 5.25, 0.4, 5.25])
    w = softmax(scaled)
    z = math.exp(1.0625) + 2 * math.exp(5.25) + math.exp(0.4)
    assert np.allclose(w, [math.exp(1.0625) / z, math.exp(5.25) / z, math.exp(0.4) / z, math.exp(5.25) / z], atol=1e-15)
    assert np.array_equal(np.round(w, 2), [0.01, 0.49, 0.0, 0.49])


def test_alice_eat_pizza_weights_are_illustrative_not_a_softmax_of_the_scores():
    # Notes: scores for "eat" [8.1, 1.2, 3.0, 6.5] and weights [0.70, 0.03, 0.07, 0.20]. For a
    # softmax at any scale c, log(w_i / w_j) = c (s_i - s_j) for every pair. Even allowing each
    # weight its +-0.005 rounding, the pair (Alice, pizza) needs c >= 0.76 while the pair
    # (Alice, will) needs c <= 0.49: no scale produces the notes' weights.
    s = np.array([8.1, 1.2, 3.0, 6.5])
    lowest_c_alice_pizza = math.log(0.695 / 0.205) / (s[0] - s[3])
    highest_c_alice_will = math.log(0.705 / 0.025) / (s[0] - s[1])
    assert lowest_c_alice_pizza > highest_c_alice_will
    # the actual (unscaled) softmax of the notes' scores puts ~83% on "Alice"
    assert softmax(s)[0] == pytest.approx(math.exp(8.1) / np.exp(s).sum(), abs=1e-15)
    assert round(float(softmax(s)[0]), 2) == 0.83


def test_d_model_1024_with_16_heads_shape_questions():
    dims = dims_for(1024, 16, L=128)
    assert dims["d_k"] == 64  # (a)
    trace = multi_head_attention_shapes("self", batch=False).evaluate(dims)
    assert trace["w_q_head"] == trace["w_k_head"] == trace["w_v_head"] == (1024, 64)  # (b)
    assert attention_shapes().evaluate(dims)["scores"] == (128, 128)  # (c), one head
    assert trace["scores"] == (16, 128, 128)  # all heads
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 1024))
    p = {name: rng.normal(scale=0.03, size=(1024, 1024)) for name in ("w_q", "w_k", "w_v", "w_o")}
    out, w = multi_head_attention(x, x, p, 16)
    assert w.shape == (16, 128, 128) and out.shape == (128, 1024)
    assert split_heads(x @ p["w_q"], 16).shape == (16, 128, 64)


def test_d_model_8_two_heads_three_tokens_shape_walk():
    dims = dims_for(8, 2, L=3)
    assert dims["d_k"] == 4 and dims["d_v"] == 4
    t = multi_head_attention_shapes("self", batch=False).evaluate(dims)
    assert t["x_q"] == (3, 8)  # step 1
    assert t["w_q_head"] == (8, 4)  # step 2: W_Q^(r)
    assert t["q_heads"] == (2, 3, 4)  # Q^(r) is 3 x 4 for each of the 2 heads
    assert t["scores"] == t["weights"] == (2, 3, 3)  # step 3
    assert t["head_outputs"] == (2, 3, 4)  # step 4
    assert t["concat"] == (3, 8)  # step 5: 4 + 4 = 8 features
    assert t["w_o"] == (8, 8) and t["output"] == (3, 8)  # step 6: same shape as X
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 8))
    p = {name: rng.normal(size=(8, 8)) for name in ("w_q", "w_k", "w_v", "w_o")}
    out, w = multi_head_attention(x, x, p, 2)
    assert out.shape == t["output"] and w.shape == t["weights"]
    assert (x + out).shape == (3, 8)  # residual addition is possible


def test_bert_base_head_width_and_causal_masks_of_the_notes():
    assert dims_for(768, 12, L=1)["d_k"] == 64
    assert np.array_equal(causal_mask(5).astype(int), np.tril(np.ones((5, 5), int)))
