"""Objective generators: −ln p of the target, the chain-rule product and its NLL, with the named slips."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy

from problemgen.model.registry import generate

KINDS = ("objective.cross_entropy", "objective.factorisation")
SEEDS = range(15)


def mistakes_of(problem, key: str) -> dict:
    return {m.name: m.value for m in problem.part(key).mistakes}


def test_cross_entropy_from_probabilities():
    for seed in SEEDS:
        p = generate("objective.cross_entropy", seed, 1)
        prob = Fraction(p.params["probs_text"][p.params["target"]])
        assert sum(Fraction(t) for t in p.params["probs_text"]) == 1
        assert p.part("loss").value == pytest.approx(-math.log(prob), abs=1e-12)
        found = mistakes_of(p, "loss")
        assert found["log_base_wrong"] == pytest.approx(-math.log2(prob))
        assert found["missing_minus_sign"] == pytest.approx(math.log(prob))


@pytest.mark.parametrize("difficulty", [2, 3])
def test_cross_entropy_from_logits_is_logsumexp_minus_target(difficulty):
    for seed in SEEDS:
        p = generate("objective.cross_entropy", seed, difficulty)
        z, t = np.array(p.params["logits"]), np.array(p.params["targets"])
        losses = np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(t)), t]
        assert p.part("loss").value == pytest.approx(losses.mean(), abs=1e-12)
        assert float(sympy.sympify(p.part("loss").exact)) == pytest.approx(losses.mean(), abs=1e-12)
        assert mistakes_of(p, "loss")["logits_not_normalised"] == pytest.approx(-z[np.arange(len(t)), t].mean())


def test_cross_entropy_probability_part_is_the_softmax_entry():
    for seed in SEEDS:
        p = generate("objective.cross_entropy", seed, 2)
        z = np.array(p.params["logits"][0])
        t = p.params["targets"][0]
        assert p.part("prob").value == pytest.approx(math.exp(z[t]) / np.exp(z).sum(), abs=1e-12)


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_factorisation_product_and_nll(difficulty):
    for seed in SEEDS:
        p = generate("objective.factorisation", seed, difficulty)
        cond = [Fraction(c) for c in p.params["cond_text"]]
        joint = math.prod(cond, start=Fraction(1))
        if difficulty == 1:
            assert Fraction(p.part("joint").exact) == joint
        else:
            n = len(cond) if difficulty == 3 else 1
            assert p.part("nll").value == pytest.approx(-math.log(joint) / n, abs=1e-12)
            assert mistakes_of(p, "nll")["missing_minus_sign"] == pytest.approx(math.log(joint) / n)
        if difficulty == 3:
            assert p.part("perplexity").value == pytest.approx(joint ** (-1 / len(cond)), rel=1e-12)
        factor = p.part("factor")
        texts = {o["id"]: o["text"] for o in factor.spec["options"]}
        assert [texts[i] for i in factor.value] == [r"$P(x_t \mid x_1, \ldots, x_{t-1})$"]
        assert texts[mistakes_of(p, "factor")["causal_off_by_one"][0]] == r"$P(x_t \mid x_1, \ldots, x_t)$"
