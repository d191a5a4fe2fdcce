"""Positional generators: PE values follow the paper's formula, permuted outputs are permuted rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

import reference
from problemgen.model.registry import generate

KINDS = ("positional.sinusoidal", "positional.equivariance")
SEEDS = range(15)


def mistakes_of(problem, key: str) -> dict:
    return {m.name: m.value for m in problem.part(key).mistakes}


def pe(pos: int, j: int, d: int) -> float:
    angle = pos / 10000 ** ((j - j % 2) / d)
    return math.sin(angle) if j % 2 == 0 else math.cos(angle)


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_sinusoidal_values_follow_the_paper_formula_from_position_zero(difficulty):
    for seed in SEEDS:
        p = generate("positional.sinusoidal", seed, difficulty)
        d, pos = p.params["d_model"], p.params["ordinal"] - 1
        for j in p.params["columns"]:
            part = p.part(f"pe_{j}")
            assert part.value == pytest.approx(pe(pos, j, d), abs=1e-12)
            found = mistakes_of(p, f"pe_{j}")
            assert found["positions_zero_vs_one"] == pytest.approx(pe(pos + 1, j, d), abs=1e-12)
            assert found["sin_cos_swapped"] == pytest.approx(pe(pos, j + 1 if j % 2 == 0 else j - 1, d), abs=1e-12)
            slips = [m.value for m in part.mistakes if m.name == "pe_wrong_frequency_index"]
            doubled = pos / 10000 ** (2 * j / d)  # the formula's 2i with i read as the column j
            assert bool(slips) == (j > 0)
            if j > 0:
                fn = math.sin if j % 2 == 0 else math.cos
                assert any(v == pytest.approx(fn(doubled), abs=1e-12) for v in slips)


def test_sinusoidal_exact_form_in_the_solution_evaluates_to_the_value():
    import sympy

    for seed in SEEDS:
        p = generate("positional.sinusoidal", seed, 2)
        for row, part in zip(p.solution["rows"], p.parts):
            assert float(sympy.sympify(row["exact"])) == pytest.approx(part.value, abs=1e-12)


def test_sinusoidal_first_pair_of_position_one_is_sin1_cos1():
    for seed in range(100):
        p = generate("positional.sinusoidal", seed, 1)
        if p.params["ordinal"] == 2 and p.params["columns"] == [0, 1]:
            assert [p.part("pe_0").value, p.part("pe_1").value] == pytest.approx([0.841471, 0.540302], abs=1e-6)
            return
    pytest.fail("no seed drew the second token at features 0 and 1")


def test_sinusoidal_matches_the_reference_table():
    p = generate("positional.sinusoidal", 3, 3)
    table = reference.sinusoidal_encoding(p.params["ordinal"], p.params["d_model"])
    for j in p.params["columns"]:
        assert p.part(f"pe_{j}").value == table[-1, j]


@pytest.mark.parametrize("difficulty", [2, 3])
def test_equivariance_key_is_the_permuted_original_output(difficulty):
    for seed in SEEDS:
        p = generate("positional.equivariance", seed, difficulty)
        out, perm = np.array(p.params["O"]), np.array(p.params["perm"])
        assert np.allclose(p.part("output").value, out[perm], atol=1e-12)
        found = mistakes_of(p, "output")
        assert np.allclose(found["permutation_ignored"], out)
        assert np.allclose(found["permutation_inverted"], out[np.argsort(perm)])
        x = np.array(p.params["X"])
        w = {k: np.array(v) for k, v in p.params["w"].items()}
        direct, _ = reference.scaled_dot_product_attention(x[perm] @ w["w_q"], x[perm] @ w["w_k"], x[perm] @ w["w_v"])
        assert np.allclose(direct, out[perm], atol=1e-12)


@pytest.mark.parametrize("with_positions", [False, True])
def test_equivariance_choice_depends_on_positional_encodings(with_positions):
    for seed in SEEDS:
        part = generate("positional.equivariance", seed, 1, with_positions=with_positions).part("choice")
        texts = {o["id"]: o["text"] for o in part.spec["options"]}
        (correct,) = [texts[i] for i in part.value]
        assert ("change their values" in correct) == with_positions


def test_equivariance_projections_keep_both_output_columns_informative():
    """A singular W_V would make one output column a multiple of the other (or all zero)."""
    for seed in range(40):
        w_v = np.array(generate("positional.equivariance", seed, 3).params["w"]["w_v"])
        assert round(abs(np.linalg.det(w_v))) != 0, seed
