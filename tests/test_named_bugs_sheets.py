"""Every common bug that applies to a worksheet problem is named by its tag when a student's answer makes it.

Each buggy answer is computed here with plain numpy, independently of the catalogue's buggy
computations, then graded like a student's answer: the grader must call it wrong and name the tag
(and only that tag's hint, never a message covering two mistakes).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from problemgen.misconceptions.catalogue import DEFAULT_HINTS
from problemgen.model.core import to_jsonable
from problemgen.model.registry import generate
from problemgen.sheets.grading import grade_part, key_value

SEEDS = range(12)


def graded(part, value):
    """Grade ``value`` written the way a student would write the key (same representation)."""
    return grade_part(part, key_value(replace(part, value=to_jsonable(value), exact=None)))


def assert_named(part, value, tag):
    result = graded(part, value)
    assert (result.status, result.mistake) == ("wrong", tag), (part.key, result)
    assert result.feedback == DEFAULT_HINTS[tag] or " Or: " not in result.feedback


def softmax_rows(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("seed", SEEDS)
def test_sinusoidal_exponent_from_the_column_index(seed):
    p = generate("positional.sinusoidal", seed, 2)
    d, pos = p.params["d_model"], p.params["ordinal"] - 1
    for j in p.params["columns"]:
        if j == 0:
            continue
        angle = pos / 10000 ** (2 * j / d)  # "2i / d" with i the column j
        assert_named(p.part(f"pe_{j}"), math.sin(angle) if j % 2 == 0 else math.cos(angle), "pe_wrong_frequency_index")


@pytest.mark.parametrize("seed", SEEDS)
def test_rms_norm_without_eps(seed):
    p = generate("norms.epsilon", seed, 1)
    x = np.asarray(p.params["x"], dtype=float)
    assert_named(p.part("output"), x / np.sqrt(np.mean(x * x)), "rms_no_eps")


@pytest.mark.parametrize("seed", SEEDS)
def test_layer_norm_eps_outside_unbiased_and_both(seed):
    p = generate("norms.epsilon", seed, 2)
    x = np.asarray(p.params["x"], dtype=float)
    eps, n = p.params["eps"], len(x)
    centred = x - x.sum() / n
    population = math.sqrt((centred**2).sum() / n)
    sample = math.sqrt((centred**2).sum() / (n - 1))
    part = p.part("output")
    assert_named(part, centred / (population + eps), "eps_outside_sqrt")
    assert_named(part, centred / math.sqrt(sample**2 + eps), "unbiased_variance")
    assert_named(part, centred / (sample + eps), "unbiased_variance_eps_outside")


@pytest.mark.parametrize("seed", SEEDS)
def test_scores_multiplied_by_sqrt_dk(seed):
    p = generate("attention.scaled_scores", seed, 2)
    q, k, d_k = np.asarray(p.params["Q"]), np.asarray(p.params["K"]), p.params["d_k"]
    assert_named(p.part("scale"), math.sqrt(d_k), "scale_multiplied")
    assert_named(p.part("scaled"), q @ k.T * math.sqrt(d_k), "scale_multiplied")


@pytest.mark.parametrize("seed", SEEDS)
def test_softmax_in_base_two(seed):
    p = generate("attention.weights", seed, 2)
    if p.params["d_k"] == 2:  # there base 2 is within rounding of scores / d_k, and is not listed
        pytest.skip("d_k = 2")
    q, k, d_k = np.asarray(p.params["Q"]), np.asarray(p.params["K"]), p.params["d_k"]
    z = q @ k.T / math.sqrt(d_k)
    powers = 2.0 ** (z - z.max(axis=1, keepdims=True))
    assert_named(p.part("weights"), powers / powers.sum(axis=1, keepdims=True), "softmax_wrong_base")


@pytest.mark.parametrize("seed", SEEDS)
def test_causal_mask_upper_triangular(seed):
    p = generate("masks.causal", seed, 1, representation="bool")
    L = p.params["L"]
    upper = [[j >= i for j in range(L)] for i in range(L)]
    assert_named(p.part("mask"), np.array(upper), "causal_upper_triangle")


@pytest.mark.parametrize("seed", SEEDS)
def test_kv_step_masks_new_tokens_only_and_top_left(seed):
    p = generate("masks.kv_alignment", seed, 2, representation="bool")
    L, S = p.params["L"], p.params["S"]
    new_only = np.array([[j <= i for j in range(L)] for i in range(L)])  # (L, L): the cached keys forgotten
    top_left = np.array([[j <= i for j in range(S)] for i in range(L)])  # (L, S) aligned at the first key
    assert_named(p.part("mask"), new_only, "cache_mask_new_tokens_only")
    assert_named(p.part("mask"), top_left, "causal_wrong_alignment")


@pytest.mark.parametrize("seed", SEEDS)
def test_output_projection_with_w_o_transposed(seed):
    p = generate("multihead.output_projection", seed, 3)
    heads = np.asarray(p.params["heads"])  # (h, L, d_v)
    concat = np.concatenate(list(heads), axis=1)  # (L, h*d_v)
    wrong = concat @ np.asarray(p.params["W_O"]).T + np.asarray(p.params.get("b_O", 0))
    assert_named(p.part("output"), wrong, "w_o_transposed")


@pytest.mark.parametrize("seed", SEEDS)
def test_projection_with_the_transposed_weight(seed):
    p = generate("attention.projection", seed, 2, convention="row")
    x, w_q = np.asarray(p.params["X"]), np.asarray(p.params["W_Q"])
    assert_named(p.part("Q"), x @ w_q.T, "projection_transposed")


def test_biases_counted_where_the_model_has_none():
    seen = 0
    for seed in range(40):
        p = generate("params.attention_layer", seed, 1)
        c = p.params["config"]
        if c["qkv_bias"] or c["out_bias"]:
            continue
        d, h, kv, dh = c["d_model"], c["n_heads"], c["kv_heads"], c["d_head"]
        with_biases = (d * h * dh + h * dh) + 2 * (d * kv * dh + kv * dh) + (h * dh * d + d)
        assert_named(p.part("count"), with_biases, "biases_counted_when_none")
        seen += 1
    assert seen >= 3


@pytest.mark.parametrize("seed", SEEDS)
def test_gqa_w_k_with_all_heads_is_not_called_a_kv_cache_mistake(seed):
    p = generate("multihead.gqa", seed, 2)
    d, h, d_k = p.params["d_model"], p.params["heads"], p.params["d_k"]
    result = graded(p.part("w_k"), [d, h * d_k])
    assert (result.status, result.mistake) == ("wrong", "kv_projection_all_heads")
    assert "cache" not in DEFAULT_HINTS[result.mistake].lower()


def test_two_mistakes_never_share_a_value_on_a_generated_variant():
    """The registry redraws such variants, so the grader never has to merge two hints into one."""
    from problemgen.model.core import values_match
    from problemgen.model.registry import all_kinds

    for spec in all_kinds():
        for seed in range(4):
            for difficulty in spec.difficulties:
                for part in generate(spec.name, seed, difficulty).parts:
                    for i, a in enumerate(part.mistakes):
                        for b in part.mistakes[i + 1 :]:
                            if a.name != b.name:
                                assert not values_match(part, a.value, b.value), (spec.name, seed, part.key, a.name, b.name)


def test_gqa_key_value_heads_tiled_instead_of_repeated():
    seen = 0
    for seed in range(20):
        p = generate("multihead.gqa", seed, 2)
        if "reads" not in [part.key for part in p.parts]:
            continue
        r, kv = p.params["r"], p.params["kv_heads"]
        tiled = np.tile(np.arange(1, kv + 1), p.params["heads"] // kv)  # KV head of each query head, cycled
        assert_named(p.part("reads"), int(tiled[r - 1]), "gqa_repeat_wrong")
        seen += 1
    assert seen >= 5


def test_a_wrong_shaped_mask_that_cannot_be_read_is_still_a_clean_verdict():
    """Checking a wrong-shaped mask against the listed mistakes must not raise on unreadable entries."""
    p = generate("masks.kv_alignment", 0, 2, representation="additive")
    for raw in (10**400, [[10**400]], [["x", "y"]], "garbage"):
        assert grade_part(p.part("mask"), raw).status in ("wrong", "invalid")


@pytest.mark.parametrize("seed", SEEDS)
def test_heads_merged_on_the_wrong_axis_and_without_the_transpose(seed):
    p = generate("multihead.concat", seed, 2)
    heads = np.asarray(p.params["heads"])  # (h, L, d_v)
    h, L, d_v = heads.shape
    interleaved = np.stack([heads[:, t, :].T.ravel() for t in range(L)])  # token t: d_v groups of h, head-minor
    assert_named(p.part("concat"), interleaved, "heads_split_wrong_axis")
    assert_named(p.part("concat"), heads.ravel().reshape(L, h * d_v), "merge_without_transpose")
