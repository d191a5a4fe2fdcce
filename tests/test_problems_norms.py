"""Norm and residual generators: keys equal the reference, mistakes are the named slips, fragments render."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import reference
from problemgen.model.registry import generate

KINDS = ("norms.layer_norm", "norms.rms_norm", "norms.residual", "norms.pre_post_ln")
SEEDS = range(12)


def mistakes_of(problem, key: str) -> dict:
    return {m.name: m.value for m in problem.part(key).mistakes}


@pytest.mark.parametrize("difficulty", [1, 2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_layer_norm_key_matches_the_textbook_formula(seed, difficulty):
    p = generate("norms.layer_norm", seed, difficulty)
    x = np.atleast_2d(p.params["x"])
    gamma, beta = np.array(p.params["gamma"]), np.array(p.params["beta"])
    mu = x.sum(axis=1) / x.shape[1]
    var = ((x - mu[:, None]) ** 2).sum(axis=1) / x.shape[1]
    expected = gamma * (x - mu[:, None]) / np.sqrt(var[:, None]) + beta
    assert np.allclose(np.atleast_2d(p.part("output").value), expected, atol=1e-12)
    assert np.allclose(np.atleast_1d(p.part("variance").value), var, atol=1e-12)
    assert np.allclose(np.atleast_1d(p.part("mean").value), mu, atol=1e-12)
    if x.shape[0] == 1:
        assert float(Fraction(p.part("variance").exact)) == pytest.approx(var[0], abs=1e-12)
    unbiased = mistakes_of(p, "variance")["unbiased_variance"]
    assert np.allclose(np.atleast_1d(unbiased), var * x.shape[1] / (x.shape[1] - 1))


def test_layer_norm_lists_the_mistakes_that_apply_at_each_difficulty():
    assert set(mistakes_of(generate("norms.layer_norm", 0, 1), "output")) == {"unbiased_variance"}
    assert set(mistakes_of(generate("norms.layer_norm", 0, 2), "output")) == {"unbiased_variance", "affine_skipped"}
    assert set(mistakes_of(generate("norms.layer_norm", 0, 3), "output")) == {
        "unbiased_variance", "affine_skipped", "norm_wrong_axis"}


def test_layer_norm_forgotten_parameters_equal_the_plain_normalisation():
    p = generate("norms.layer_norm", 5, 2)
    plain = reference.layer_norm(np.array(p.params["x"]), eps=0.0)
    assert np.allclose(mistakes_of(p, "output")["affine_skipped"], plain)


@pytest.mark.parametrize("kind", ["norms.layer_norm", "norms.rms_norm"])
def test_an_output_without_gamma_and_beta_is_named_as_not_applying_them_not_as_a_parameter_count(kind):
    """The output left unscaled is the coding tasks' affine_skipped; forgot_norm_params is about counting
    parameters ("left out of the count"), and its hint and the class summary's title would say so."""
    for difficulty in (2, 3):
        tags = set(mistakes_of(generate(kind, 0, difficulty), "output"))
        assert "affine_skipped" in tags and "forgot_norm_params" not in tags


@pytest.mark.parametrize("difficulty", [1, 2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_rms_norm_key_and_centring_mistake(seed, difficulty):
    p = generate("norms.rms_norm", seed, difficulty)
    x = np.atleast_2d(p.params["x"])
    gamma = np.array(p.params["gamma"])
    rms = np.sqrt((x**2).mean(axis=1))
    assert np.allclose(np.atleast_2d(p.part("output").value), gamma * x / rms[:, None], atol=1e-12)
    assert np.allclose(np.atleast_1d(p.part("rms").value), rms, atol=1e-12)
    centred = mistakes_of(p, "output")["rms_subtracts_mean"]
    assert np.allclose(np.atleast_2d(centred), reference.layer_norm(x, gamma, eps=0.0))
    assert np.allclose(np.atleast_1d(mistakes_of(p, "rms")["rms_subtracts_mean"]), x.std(axis=1))


def test_rms_norm_exact_form_is_the_square_root_of_the_mean_square():
    p = generate("norms.rms_norm", 2, 1)
    ms = Fraction(p.part("rms").exact.removeprefix("sqrt(").removesuffix(")"))
    assert float(ms) ** 0.5 == pytest.approx(p.part("rms").value, abs=1e-12)


@pytest.mark.parametrize("difficulty", [1, 2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_residual_adds_the_input_to_the_sublayer(seed, difficulty):
    p = generate("norms.residual", seed, difficulty)
    x = np.array(p.params["x"])
    ffn = {k: np.array(v) for k, v in p.params["ffn"].items()}
    if difficulty == 1:
        sub = x @ ffn["w"]
    else:
        sub = np.maximum(x @ ffn["w_1"] + ffn.get("b_1", 0), 0) @ ffn["w_2"] + ffn.get("b_2", 0)
    assert np.allclose(p.part("sublayer").value, sub)
    assert np.allclose(p.part("output").value, x + sub)
    assert np.allclose(mistakes_of(p, "output")["forgot_residual"], sub)


@pytest.mark.parametrize("order", ["pre", "post"])
@pytest.mark.parametrize("seed", SEEDS)
def test_pre_post_ln_key_follows_the_asked_order(seed, order):
    p = generate("norms.pre_post_ln", seed, 3, order=order)
    x, w = np.array(p.params["x"]), np.array(p.params["w"])
    g, b = np.array(p.params["gamma"]), np.array(p.params["beta"])

    def ln(v):
        return g * (v - v.mean()) / v.std() + b

    pre, post = x + ln(x) @ w, ln(x + x @ w)
    key, other = (pre, post) if order == "pre" else (post, pre)
    assert np.allclose(p.part("output").value, key)
    assert np.allclose(mistakes_of(p, "output")["pre_post_ln_swapped"], other)


@pytest.mark.parametrize("order", ["pre", "post"])
def test_pre_post_ln_choice_marks_the_asked_wiring_and_names_the_swap(order):
    for seed in SEEDS:
        p = generate("norms.pre_post_ln", seed, 1, order=order)
        part = p.part("choice")
        by_id = {o["id"]: o["text"] for o in part.spec["options"]}
        expected = r"x + F(\mathrm{LN}(x))" if order == "pre" else r"\mathrm{LN}(x + F(x))"
        assert [by_id[i] for i in part.value] == [f"${expected}$"]
        swapped = mistakes_of(p, "choice")["pre_post_ln_swapped"]
        assert swapped != part.value and len(swapped) == 1


def test_choice_options_are_shuffled_by_the_seed():
    orders = {tuple(o["text"] for o in generate("norms.pre_post_ln", s, 1, order="pre").part("choice").spec["options"])
              for s in range(20)}
    assert len(orders) > 5


@pytest.mark.parametrize("kind", ["norms.layer_norm", "norms.rms_norm"])
def test_vector_width_overrides_stay_where_the_prompt_example_is_out_of_reach(kind):
    """The example exact forms (169/7, sqrt(300/7)) are unreachable only for d = 3 or 4, so other widths are refused."""
    from problemgen.model.core import ProblemgenError

    assert generate(kind, 0, 1, d=3).params["d"] == 3
    with pytest.raises(ProblemgenError, match="d=7"):
        generate(kind, 0, 1, d=7)


@pytest.mark.parametrize(("kind", "bound"), [("norms.layer_norm", 169 / 7), ("norms.rms_norm", (300 / 7) ** 0.5)])
def test_every_number_in_a_one_token_norm_key_stays_below_the_prompt_example(kind, bound):
    """Why the example can never be the answer: every mean, variance, RMS and output entry is smaller."""
    for difficulty in (1, 2):
        for seed in range(200):
            p = generate(kind, seed, difficulty)
            values = np.concatenate([np.ravel(part.value) for part in p.parts])
            assert np.all(np.abs(values) < bound - 0.1), p.variant_id


def test_residual_tokens_differ_so_each_row_is_its_own_exercise():
    for seed in range(60):
        x = np.array(generate("norms.residual", seed, 3).params["x"])
        assert not np.array_equal(x[0], x[1]), seed


@pytest.mark.parametrize("order", ["pre", "post"])
def test_pre_post_ln_solution_states_the_statistics_of_what_it_normalises(order):
    for seed in range(10):
        p = generate("norms.pre_post_ln", seed, 3, order=order)
        x, w = np.array(p.params["x"]), np.array(p.params["w"])
        normalised = x if order == "pre" else x + x @ w
        assert p.solution["mean"] == pytest.approx(normalised.mean())
        assert p.solution["var"] == pytest.approx(normalised.var())
