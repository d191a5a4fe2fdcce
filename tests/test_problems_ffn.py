"""Feed-forward generators: ReLU FFN, GELU values and SwiGLU keys equal the reference; named slips differ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from problemgen.model.core import values_match
from problemgen.model.registry import generate

KINDS = ("ffn.relu_ffn", "ffn.gelu", "ffn.swiglu")
SEEDS = range(12)


def mistakes_of(problem, key: str) -> dict:
    return {m.name: m.value for m in problem.part(key).mistakes}


def arrays(d: dict) -> dict:
    return {k: np.array(v, dtype=float) for k, v in d.items()}


@pytest.mark.parametrize("difficulty", [1, 2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_relu_ffn_matches_a_hand_written_forward_pass(seed, difficulty):
    p = generate("ffn.relu_ffn", seed, difficulty)
    x, w = np.array(p.params["x"], dtype=float), arrays(p.params["ffn"])
    pre = x @ w["w_1"] + w.get("b_1", 0.0)
    hidden = np.maximum(pre, 0.0)
    assert np.allclose(p.part("hidden").value, hidden)
    assert np.allclose(p.part("output").value, hidden @ w["w_2"] + w.get("b_2", 0.0))
    assert np.allclose(mistakes_of(p, "output")["activation_skipped"], pre @ w["w_2"] + w.get("b_2", 0.0))
    if difficulty >= 2:
        no_bias = np.maximum(x @ w["w_1"], 0.0) @ w["w_2"]
        assert np.allclose(mistakes_of(p, "output")["forgot_biases"], no_bias)


def gelu_exact(x: float) -> float:
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


def gelu_tanh(x: float) -> float:
    return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("form", ["exact", "tanh"])
@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_gelu_values_follow_the_stated_form(difficulty, form):
    for seed in SEEDS:
        p = generate("ffn.gelu", seed, difficulty, form=form)
        fn, other = (gelu_exact, gelu_tanh) if form == "exact" else (gelu_tanh, gelu_exact)
        assert p.part("gelu").value == pytest.approx([fn(v) for v in p.params["x"]], abs=1e-12)
        assert mistakes_of(p, "gelu")["relu_for_gelu"] == [max(v, 0.0) for v in p.params["x"]]
        if difficulty == 3:
            confused = mistakes_of(p, "gelu")["gelu_form_confused"]
            assert confused == pytest.approx([other(v) for v in p.params["x"]], abs=1e-12)


def test_gelu_known_values():
    """GELU(1) = Φ(1) ≈ 0.841345 (erf form) and ≈ 0.841192 (tanh form)."""
    for seed in range(60):
        p = generate("ffn.gelu", seed, 1)
        if 1.0 in p.params["x"]:
            assert p.part("gelu").value[p.params["x"].index(1.0)] == pytest.approx(0.8413447, abs=1e-7)
            break
    else:
        pytest.fail("no seed drew x = 1")


def test_gelu_form_confusion_is_only_listed_where_the_tolerance_can_see_it():
    for seed in SEEDS:
        coarse = generate("ffn.gelu", seed, 2, form="exact")
        assert "gelu_form_confused" not in mistakes_of(coarse, "gelu")
        fine = generate("ffn.gelu", seed, 3, form="exact")
        part = fine.part("gelu")
        assert not values_match(part, mistakes_of(fine, "gelu")["gelu_form_confused"])


def silu(z):
    return z / (1.0 + np.exp(-z))


@pytest.mark.parametrize("difficulty", [1, 2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_swiglu_gates_only_the_gate_branch(seed, difficulty):
    p = generate("ffn.swiglu", seed, difficulty)
    x, w = np.array(p.params["x"], dtype=float), arrays(p.params["ffn"])
    gate, up = x @ w["w_gate"], x @ w["w_up"]
    hidden = silu(gate) * up
    assert np.allclose(p.part("hidden").value, hidden)
    assert np.allclose(p.part("output").value, hidden @ w["w_down"])
    assert np.allclose(mistakes_of(p, "hidden")["swiglu_gate_swapped"], silu(up) * gate)
    assert np.allclose(mistakes_of(p, "output")["activation_skipped"], (gate * up) @ w["w_down"])


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_swiglu_weights_have_no_zero_column_that_would_silence_a_hidden_unit(difficulty):
    for seed in range(40):
        ffn = generate("ffn.swiglu", seed, difficulty).params["ffn"]
        for name in ("w_gate", "w_up"):
            assert not np.any(np.all(np.array(ffn[name]) == 0, axis=0)), (seed, name)
