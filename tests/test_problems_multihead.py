"""Multi-head generators: counts, shapes and concatenations checked against hand formulas and numpy."""

from __future__ import annotations

import numpy as np
import pytest

from problemgen.model import registry
from problemgen.model.core import ProblemgenError

SEEDS = range(15)


def _problems(kind: str):
    for d in (1, 2, 3):
        for seed in SEEDS:
            yield registry.generate(kind, seed, d)


def _mistakes(part) -> dict:
    return {m.name: m.value for m in part.mistakes}


def test_head_dim_splits_d_model_evenly_and_heads_do_not_multiply_parameters():
    for p in _problems("multihead.head_dim"):
        d_model, h = p.params["d_model"], p.params["heads"]
        assert p.part("d_k").value * h == d_model
        if p.difficulty >= 2:
            assert p.part("head_wq").value == d_model * d_model // h
        if p.difficulty == 3:
            assert p.part("all_wq").value == d_model * d_model
            assert _mistakes(p.part("all_wq"))["heads_multiply_params"] == h * d_model * d_model


def test_head_dim_reproduces_the_lecture_question():
    # The notes: d_model = 1024, h = 16 gives d_k = 64 and per-head W_Q of 1024 x 64.
    p = registry.generate("multihead.head_dim", 0, 2, d_model=1024, heads=16)
    assert p.part("d_k").value == 64 and p.part("head_wq").value == 1024 * 64
    with pytest.raises(ProblemgenError, match="does not split evenly"):
        registry.generate("multihead.head_dim", 0, 1, d_model=1000, heads=16)


@pytest.mark.parametrize("convention", ["row", "column"])
def test_projection_shapes_follow_the_convention(convention):
    for seed in SEEDS:
        for d in (1, 2, 3):
            p = registry.generate("multihead.projection_shapes", seed, d, convention=convention)
            d_model, h = p.params["d_model"], p.params["heads"]
            flip = (lambda s: s) if convention == "row" else (lambda s: s[::-1])
            assert p.part("w_q_head").value == flip([d_model, d_model // h])
            assert p.part("w_q").value == flip([d_model, d_model])
            assert p.part("w_o").value == flip([d_model, d_model])
            if d == 3:
                assert p.part("w_k_head").value == flip([p.params["d_kv"], d_model // h])
                assert p.params["d_kv"] != d_model


def test_concat_places_heads_side_by_side_per_token():
    for p in _problems("multihead.concat"):
        heads = np.array(p.params["heads"])  # (h, L, d_v)
        expected = np.hstack(list(heads))
        assert np.array_equal(p.part("concat").value, expected)
        assert p.part("shape").value == list(expected.shape)
        wrong = _mistakes(p.part("concat"))
        assert np.array_equal(wrong["concat_wrong_axis"], np.vstack(list(heads)))
        assert np.array_equal(wrong["merge_without_transpose"], heads.reshape(expected.shape))
        h, L, d_v = heads.shape
        interleaved = [[heads[r, t, j] for j in range(d_v) for r in range(h)] for t in range(L)]  # feature j·h + r
        assert np.array_equal(wrong["heads_split_wrong_axis"], np.array(interleaved))


def test_output_projection_is_concat_times_w_o_plus_bias():
    for p in _problems("multihead.output_projection"):
        heads, w_o = np.array(p.params["heads"]), np.array(p.params["W_O"])
        concat = np.hstack(list(heads))
        bias = np.array(p.params.get("b_O", np.zeros(w_o.shape[1])))
        assert np.array_equal(p.part("output").value, concat @ w_o + bias)
        assert np.array_equal(_mistakes(p.part("output"))["missing_w_o"], concat)
        if p.difficulty >= 2:
            d_v = p.params["d_v"]
            assert np.array_equal(p.part("head1").value, heads[0] @ w_o[:d_v])


def test_mha_parameter_count_by_hand():
    for p in _problems("multihead.params"):
        d, h = p.params["d_model"], p.params["heads"]
        inner = h * (p.params["head_dim"] or d // h)
        weights = 4 * d * inner
        biases = 3 * inner + d if p.params["bias"] else 0
        assert p.part("count").value == weights + biases
        wrong = _mistakes(p.part("count"))
        assert wrong["missing_w_o"] == 3 * d * inner + (3 * inner if p.params["bias"] else 0)
        if p.params["bias"]:
            assert wrong["forgot_biases"] == weights


def test_gpt2_small_attention_layer_count():
    # GPT-2 small: d_model = 768, 12 heads, biases on every projection: 4*768*768 + 4*768.
    p = registry.generate("multihead.params", 0, 2, d_model=768, heads=12)
    assert p.part("count").value == 2_362_368


def test_gqa_shrinks_only_k_and_v():
    for p in _problems("multihead.gqa"):
        d, h, g, d_k = (p.params[n] for n in ("d_model", "heads", "kv_heads", "d_k"))
        assert p.part("group").value * g == h
        assert p.part("w_k").value == [d, g * d_k]
        if p.difficulty >= 2:
            assert p.part("count").value == 2 * d * h * d_k + 2 * d * g * d_k
            assert _mistakes(p.part("count"))["kv_projection_all_heads"] == 4 * d * h * d_k
        if p.difficulty == 3:
            assert p.part("saved").value == 2 * d * (h - g) * d_k


def test_gqa_presets_match_their_published_shapes():
    names = {registry.generate("multihead.gqa", s, 3).params["name"] for s in range(40)} - {None}
    assert names <= {"Llama-3-8B", "Mistral-7B", "Qwen3-4B"} and names
    for s in range(40):
        p = registry.generate("multihead.gqa", s, 3)
        if p.params["name"] == "Qwen3-4B":
            assert p.part("w_k").value == [2560, 8 * 128]
