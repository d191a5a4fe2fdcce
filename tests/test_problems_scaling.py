"""Scaling generators: the variance formula holds empirically, saturation is real, scales use the head width."""

from __future__ import annotations

import math

import numpy as np
import pytest

from problemgen.model import registry
from problemgen.answers.mathparse import parse_expression

SEEDS = range(15)


def _problems(kind: str):
    for d in (1, 2, 3):
        for seed in SEEDS:
            yield registry.generate(kind, seed, d)


def _mistakes(part) -> dict:
    return {m.name: m.value for m in part.mistakes}


def _exact_value(text: str) -> float:
    return float(parse_expression(text).expr.evalf(30))


def test_dot_variance_formula_matches_a_simulation():
    # Independent draws with the stated variances: the sample variance of q.k must agree with the key.
    sampler = np.random.default_rng(1234)
    for seed in range(4):
        p = registry.generate("scaling.dot_variance", seed, 2, d_k=32)
        var_q, var_k = p.params["var_q"], p.params["var_k"]
        q = sampler.normal(0, math.sqrt(var_q), size=(40000, 32))
        k = sampler.normal(0, math.sqrt(var_k), size=(40000, 32))
        empirical = np.var(np.sum(q * k, axis=1))
        assert empirical == pytest.approx(p.part("variance").value, rel=0.05)
        assert np.var(np.sum(q * k, axis=1) / math.sqrt(32)) == pytest.approx(p.part("scaled_variance").value, rel=0.05)


def test_dot_variance_parts_are_consistent_and_name_std_for_variance():
    for p in _problems("scaling.dot_variance"):
        var = p.params["d_k"] * p.params["var_q"] * p.params["var_k"]
        assert p.part("variance").value == var
        assert p.part("std").value == pytest.approx(math.sqrt(var))
        assert _exact_value(p.part("std").exact) == pytest.approx(math.sqrt(var))
        assert _mistakes(p.part("variance"))["std_for_variance"] == pytest.approx(math.sqrt(var))
        if p.difficulty == 3:
            assert p.part("unit_scale").value == pytest.approx(1 / math.sqrt(var))
        else:
            assert "unit_scale" not in {part.key for part in p.parts}


def test_saturation_contrasts_a_saturated_and_a_spread_softmax():
    for p in _problems("scaling.saturation"):
        s, d_k = np.array(p.params["scores"], dtype=float), p.params["d_k"]
        plain = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        scaled = np.exp((s - s.max()) / math.sqrt(d_k)) / np.exp((s - s.max()) / math.sqrt(d_k)).sum()
        assert p.part("unscaled_max").value == pytest.approx(plain.max())
        assert p.part("scaled_max").value == pytest.approx(scaled.max())
        assert plain.max() >= 0.95 and scaled.max() <= 0.9
        assert _exact_value(p.part("scaled_max").exact) == pytest.approx(scaled.max(), abs=1e-12)
        assert _mistakes(p.part("scaled_max"))["no_scaling"] == pytest.approx(plain.max())


def test_choose_scale_uses_the_per_head_width():
    for p in _problems("scaling.choose_scale"):
        params = p.params
        d_k = params.get("head_dim") or params.get("d_k") or params["d_model"] // params["heads"]
        assert p.part("scale").value == pytest.approx(1 / math.sqrt(d_k))
        assert _exact_value(p.part("scale").exact) == pytest.approx(1 / math.sqrt(d_k))
        wrong = _mistakes(p.part("scale"))
        assert wrong["scale_by_dk"] == pytest.approx(1 / d_k)
        if "d_model" in params:
            assert wrong["scale_by_d_model"] == pytest.approx(1 / math.sqrt(params["d_model"]))
        if p.difficulty == 2:
            assert p.part("d_k").value == params["d_model"] // params["heads"]
        if p.difficulty == 3:
            assert params["head_dim"] != params["d_model"] // params["heads"]
            growth = p.part("growth")
            assert growth.value == pytest.approx(math.sqrt(params["high"] / params["low"]))
            assert _exact_value(growth.exact) == pytest.approx(growth.value)


def test_choose_scale_overrides_split_d_model_evenly():
    p = registry.generate("scaling.choose_scale", 0, 2, d_model=1024, heads=16)
    assert p.part("d_k").value == 64 and p.part("scale").value == pytest.approx(0.125)
    from problemgen.model.core import ProblemgenError

    with pytest.raises(ProblemgenError, match="does not split evenly"):
        registry.generate("scaling.choose_scale", 0, 2, d_model=1000, heads=16)
