"""Mask generators: masks built here with plain numpy agree with the keys; the bugs are the named ones."""

from __future__ import annotations

import numpy as np
import pytest

from problemgen.model import registry
from problemgen.documents.rendering import render_block

SEEDS = range(15)


def _problems(kind: str):
    for d in (1, 2, 3):
        for seed in SEEDS:
            yield registry.generate(kind, seed, d)


def _mistakes(part) -> dict[str, list]:
    found: dict[str, list] = {}
    for m in part.mistakes:
        found.setdefault(m.name, []).append(np.asarray(m.value))
    return found


def _softmax_masked(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    e = np.where(allowed, np.exp(scores), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _valid(n_real: int, L: int, side: str) -> np.ndarray:
    real = np.arange(L) < n_real
    return real if side == "right" else real[::-1]


@pytest.mark.parametrize("representation", ["bool", "01", "additive"])
def test_causal_mask_is_lower_triangular_with_off_by_one_both_ways(representation):
    for seed in SEEDS:
        p = registry.generate("masks.causal", seed, 2, representation=representation)
        L = p.params["L"]
        part = p.part("mask")
        assert part.spec["representation"] == representation
        expected = [[j <= i for j in range(L)] for i in range(L)]
        assert part.value == expected
        shifted = {tuple(map(tuple, m.tolist())) for m in _mistakes(part)["causal_off_by_one"]}
        assert shifted == {tuple(tuple(j < i for j in range(L)) for i in range(L)),
                           tuple(tuple(j <= i + 1 for j in range(L)) for i in range(L))}
        assert p.part("allowed").value == L * (L + 1) // 2


def test_padding_hides_key_columns_not_query_rows():
    for p in _problems("masks.padding"):
        S, side, b = p.params["S"], p.params["side"], p.params["b"] - 1
        valid = np.array([_valid(n, S, side) for n in p.params["lengths"]])
        assert np.array_equal(p.part("valid").value, valid)
        mask = np.array(p.part("mask").value)
        assert np.array_equal(mask, np.broadcast_to(valid[b][None, :], (S, S)))
        rows = _mistakes(p.part("mask"))["padding_rows_not_columns"][0]
        assert np.array_equal(rows, np.broadcast_to(valid[b][:, None], (S, S)))
        assert (side == "left") == (p.difficulty == 3)


def test_combined_mask_is_causal_and_padding_with_empty_rows_counted():
    for p in _problems("masks.combined"):
        L, side = p.params["L"], p.params["side"]
        valid = _valid(L - p.params["n_pad"], L, side)
        expected = np.tril(np.ones((L, L), dtype=bool)) & valid[None, :]
        assert np.array_equal(p.part("mask").value, expected)
        assert [t == "PAD" for t in p.params["tokens"]] == list(~valid)
        if p.difficulty >= 2:
            assert p.part("empty_rows").value == int((~expected.any(axis=1)).sum())


def test_masked_weights_normalise_over_allowed_keys_only():
    for p in _problems("masks.masked_weights"):
        scores, mask = np.array(p.params["scores"]), np.array(p.params["mask"])
        expected = _softmax_masked(scores, mask)
        part = p.part("weights")
        np.testing.assert_allclose(part.value, expected, atol=1e-12)
        np.testing.assert_allclose(np.sum(part.value, axis=1), 1.0)
        wrong = _mistakes(part)
        plain = _softmax_masked(scores, np.ones_like(mask))
        np.testing.assert_allclose(wrong["mask_after_softmax"][0], plain * mask)
        np.testing.assert_allclose(wrong["mask_zero_not_inf"][0], plain)
        np.testing.assert_allclose(wrong["inverted_mask"][0], _softmax_masked(scores, ~mask))
        if "output" in {q.key for q in p.parts}:
            np.testing.assert_allclose(p.part("output").value, expected @ np.array(p.params["V"]))


def test_kv_alignment_anchors_the_diagonal_bottom_right():
    for p in _problems("masks.kv_alignment"):
        L, S, r = p.params["L"], p.params["S"], p.params["r"]
        assert L < S <= 6
        expected = np.array([[j <= i + S - L for j in range(S)] for i in range(L)])
        assert np.array_equal(p.part("mask").value, expected)
        assert expected[-1].all(), "the newest query sees every key"
        top_left = np.array([[j <= i for j in range(S)] for i in range(L)])
        assert np.array_equal(_mistakes(p.part("mask"))["causal_wrong_alignment"][0], top_left)
        assert p.part("visible").value == S - L + r


def test_after_softmax_buggy_rows_lose_weight_and_correct_rows_sum_to_one():
    for p in _problems("masks.after_softmax"):
        scores, mask = np.array(p.params["scores"]), np.array(p.params["mask"])
        plain = _softmax_masked(scores, np.ones_like(mask))
        buggy = plain * mask
        if p.difficulty <= 2:
            np.testing.assert_allclose(p.part("buggy").value, buggy)
            rows = p.part("rows")
            chosen = {o["text"] for o in rows.spec["options"] if o["id"] in rows.value}
            assert chosen == {f"row {i + 1}" for i in range(len(mask)) if not mask[i].all()}
        else:
            diagnosis = p.part("diagnosis")
            (answer,) = [o["text"] for o in diagnosis.spec["options"] if o["id"] in diagnosis.value]
            assert "after the softmax" in answer
            np.testing.assert_allclose(p.params["shown"], buggy)
        if p.difficulty >= 2:
            correct = p.part("correct")
            np.testing.assert_allclose(correct.value, _softmax_masked(scores, mask))
            np.testing.assert_allclose(_mistakes(correct)["mask_after_softmax"][0], buggy)


@pytest.mark.parametrize("representation,blocked", [("bool", "F"), ("01", "0"), ("additive", r"-\infty")])
def test_mask_prompts_state_the_representation_and_render_it(representation, blocked):
    p = registry.generate("masks.causal", 3, 1, representation=representation)
    solution = render_block(p, "solution", "md")
    assert blocked in solution
    prompt = render_block(p, "prompt", "md")
    assert {"bool": "boolean", "01": "0/1", "additive": "additive"}[representation] in prompt


def test_prose_reads_naturally_for_a_single_pad_token_and_a_single_new_query():
    for seed in range(40):
        for d in (1, 2, 3):
            combined = registry.generate("masks.combined", seed, d)
            prompt = render_block(combined, "prompt", "md")
            assert "The 1 PAD" not in prompt
            assert ("The PAD token" in prompt) == (combined.params["n_pad"] == 1)
            kv = registry.generate("masks.kv_alignment", seed, d)
            text = render_block(kv, "prompt", "md") + render_block(kv, "solution", "md")
            assert "last 1 " not in text and "the 1 query" not in text
            assert f"${kv.params['cached']} + i$" in text


def test_boolean_masks_are_not_added_to_scores_in_the_worked_solution():
    for seed in range(20):
        for d in (1, 2, 3):
            p = registry.generate("masks.masked_weights", seed, d)
            solution = render_block(p, "solution", "md")
            assert ("S + M" in solution) == (p.params["representation"] == "additive")


def test_after_softmax_row_question_is_not_always_every_row():
    answers = {len(registry.generate("masks.after_softmax", seed, 2).part("rows").value) for seed in range(30)}
    assert answers == {3, 4}, "difficulty 2 should mix causal-only masks (last row whole) and padded ones"
