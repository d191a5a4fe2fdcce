"""Attention generators: keys agree with an independent hand computation, mistakes are the named bugs.

The checks recompute each answer from the params the student sees with plain numpy written here
(not the reference), so a wrong reference call or a wrong param would be caught.
"""

from __future__ import annotations

import numpy as np
import pytest

from problemgen.model import registry
from problemgen.model.core import ProblemgenError
from problemgen.answers.mathparse import parse_expression
from problemgen.problems._common import exact_string
from problemgen.documents.rendering import format_number, render_block

SEEDS = range(12)
KINDS = [spec.name for spec in registry.all_kinds("attention")]


def _softmax_rows(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _mistakes(part) -> dict:
    return {m.name: np.asarray(m.value, dtype=float) for m in part.mistakes}


def _problems(kind: str):
    for d in (1, 2, 3):
        for seed in SEEDS:
            yield registry.generate(kind, seed, d)


def test_attention_topic_has_the_seven_kinds():
    assert set(KINDS) == {
        "attention.scores", "attention.scaled_scores", "attention.weights", "attention.output",
        "attention.one_query", "attention.projection", "attention.asymmetry",
    }


def test_scores_are_query_rows_times_key_columns():
    for p in _problems("attention.scores"):
        q, k = np.array(p.params["Q"]), np.array(p.params["K"])
        assert np.array_equal(p.part("scores").value, q @ k.T)
        assert np.array_equal(_mistakes(p.part("scores"))["transpose_scores"], k @ q.T)


def test_scaled_scores_divide_by_root_dk_and_name_both_wrong_scales():
    for p in _problems("attention.scaled_scores"):
        q, k, d_k = np.array(p.params["Q"]), np.array(p.params["K"]), p.params["d_k"]
        assert d_k > 1, "d_k = 1 would hide the scaling"
        np.testing.assert_allclose(p.part("scaled").value, q @ k.T / np.sqrt(d_k))
        wrong = _mistakes(p.part("scaled"))
        np.testing.assert_allclose(wrong["no_scaling"], q @ k.T)
        np.testing.assert_allclose(wrong["scale_by_dk"], q @ k.T / d_k)
        assert p.part("scale").exact == f"1/sqrt({d_k})"


def test_weights_are_row_softmax_of_scaled_scores_and_unsaturated():
    for p in _problems("attention.weights"):
        q, k, d_k = np.array(p.params["Q"]), np.array(p.params["K"]), p.params["d_k"]
        scaled = q @ k.T / np.sqrt(d_k)
        part = p.part("weights")
        np.testing.assert_allclose(part.value, _softmax_rows(scaled))
        wrong = _mistakes(part)
        np.testing.assert_allclose(wrong["no_scaling"], _softmax_rows(q @ k.T))
        np.testing.assert_allclose(wrong["scale_by_dk"], _softmax_rows(q @ k.T / d_k))
        np.testing.assert_allclose(wrong["softmax_wrong_axis"], _softmax_rows(scaled, axis=0))
        np.testing.assert_allclose(wrong["no_softmax"], scaled)
        limit = 0.97 if p.difficulty <= 2 else 0.99
        assert np.max(part.value) <= limit


def test_output_mixes_value_rows_with_the_weights():
    for p in _problems("attention.output"):
        q, k, v = (np.array(p.params[n]) for n in ("Q", "K", "V"))
        w = _softmax_rows(q @ k.T / np.sqrt(p.params["d_k"]))
        np.testing.assert_allclose(p.part("output").value, w @ v)
        wrong = _mistakes(p.part("output"))
        np.testing.assert_allclose(wrong["no_scaling"], _softmax_rows(q @ k.T) @ v)
        if "weights_times_wrong" in wrong:
            np.testing.assert_allclose(wrong["weights_times_wrong"], w @ k)


def test_one_query_exact_weight_evaluates_to_the_decimal_key():
    for p in _problems("attention.one_query"):
        q, k = np.array(p.params["q"]), np.array(p.params["K"])
        w = _softmax_rows(k @ q / np.sqrt(p.params["d_k"]))
        top = p.part("top")
        assert p.params["top"] == int(np.argmax(w)) + 1
        assert top.value == pytest.approx(w[p.params["top"] - 1])
        assert float(parse_expression(top.exact).expr.evalf(30)) == pytest.approx(top.value, abs=1e-12)


def test_exact_form_of_the_lecture_example_reads_like_the_notes():
    # The notes' example: q = 2, keys 1, 3, -1 and d_k = 1 give scores 2, 6, -2.
    from reference import exact as rx

    text = exact_string(rx.softmax([[2, 6, -2]])[0, 0])
    assert text == "exp(2)/(exp(-2) + exp(2) + exp(6))"


def test_exact_strings_spell_eulers_number_as_exp_1():
    import sympy

    text = exact_string(sympy.exp(1) / (1 + sympy.exp(1)))
    assert "exp(1)" in text and "E" not in text


@pytest.mark.parametrize("convention", ["row", "column"])
def test_projection_follows_the_stated_convention(convention):
    for seed in SEEDS:
        for d in (1, 2, 3):
            p = registry.generate("attention.projection", seed, d, convention=convention)
            x = np.array(p.params["X"])
            for letter in "QKV":
                w = np.array(p.params[f"W_{letter}"])
                expected = x @ w if convention == "row" else x @ w.T
                assert np.array_equal(p.part(letter).value, expected)
                if p.params["d_model"] == p.params["d_k"]:
                    other = x @ w.T if convention == "row" else x @ w
                    assert np.array_equal(_mistakes(p.part(letter))["projection_transposed"], other)


def test_projection_reproduces_the_lecture_toy_in_the_column_convention():
    # The notes' 4-token toy writes W as d_k x d_model and Q = X W^T: the column convention here.
    x = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]])
    w_q = np.array([[1, 0, 1, 0], [0, 1, 0, 1]])
    import reference

    assert np.array_equal(reference.project(x, w_q.T), [[2, 0], [0, 2], [1, 1], [1, 1]])


def test_asymmetry_scores_differ_and_each_names_the_swap():
    for p in _problems("attention.asymmetry"):
        i, j = p.params["i"] - 1, p.params["j"] - 1
        if "X" in p.params:
            x = np.array(p.params["X"])
            q, k = x @ np.array(p.params["W_Q"]), x @ np.array(p.params["W_K"])
        else:
            q, k = np.array(p.params["Q"]), np.array(p.params["K"])
        assert p.part("s_ij").value == q[i] @ k[j] != p.part("s_ji").value == q[j] @ k[i]
        assert p.part("s_ji").mistakes[0].value == p.part("s_ij").value
        if p.difficulty == 3:
            when = p.part("when")
            correct = [o for o in when.spec["options"] if o["id"] in when.value]
            assert len(correct) == 1 and "symmetric" in correct[0]["text"]


def test_difficulty_one_keeps_numbers_hand_sized():
    for kind in KINDS:
        for seed in SEEDS:
            p = registry.generate(kind, seed, 1)
            for name in ("Q", "K", "q", "X"):
                if name in p.params:
                    a = np.array(p.params[name])
                    assert np.abs(a).max() <= 2 and a.shape[0] <= 4 and a.shape[-1] <= 4


def test_overrides_are_applied_and_bad_ones_are_clear_errors():
    p = registry.generate("attention.weights", 0, 1, L=2)
    assert len(p.params["Q"]) == 2
    with pytest.raises(ProblemgenError, match="L=40"):
        registry.generate("attention.weights", 0, 1, L=40)
    with pytest.raises(ProblemgenError, match="convention"):
        registry.generate("attention.projection", 0, 1, convention="diagonal")


def test_worked_solution_shows_this_variants_numbers():
    for seed in SEEDS:
        p = registry.generate("attention.weights", seed, 2)
        text = render_block(p, "solution", "md")
        assert format_number(p.solution["A"][0][0]) in text
        assert format_number(p.solution["scaled"][-1][-1]) in text


def test_different_seeds_give_different_variants():
    for kind in KINDS:
        params = {str(registry.generate(kind, seed, 1).params) for seed in range(20)}
        assert len(params) >= 15, kind


def test_projection_at_difficulty_one_draws_both_square_and_rectangular_matrices():
    sizes = {(p.params["d_model"], p.params["d_k"])
             for p in (registry.generate("attention.projection", seed, 1) for seed in range(40))}
    assert any(m == k for m, k in sizes) and any(m != k for m, k in sizes), sizes


def test_worked_dot_products_put_negative_factors_in_brackets():
    for p in _problems("attention.scores"):
        text = render_block(p, "solution", "md")
        assert "+ -" not in text and "\\cdot -" not in text


def test_exact_first_row_shares_one_denominator():
    for p in _problems("attention.weights"):
        text = render_block(p, "solution", "md")
        assert text.count("Z = ") == 1
        assert text.count("}{Z}") == len(p.params["K"])
