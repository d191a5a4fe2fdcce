"""The misconception catalogue and its buggy variants: each does exactly the one wrong thing it names.

Independent numpy formulas (not the reference) pin every buggy variant, so a variant that silently
became correct (and could no longer be told apart from the key) or wrong in a second way fails here.
"""

from __future__ import annotations

import numpy as np
import pytest

from problemgen.misconceptions import attention as A
from problemgen.misconceptions import catalogue as mc
from problemgen.misconceptions import masks as M
from problemgen.misconceptions import norms as N


@pytest.fixture
def qkv():
    rng = np.random.default_rng(7)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    return q, k, v


def plain_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_every_catalogue_entry_has_a_tag_a_title_and_a_hint():
    assert len(mc.CATALOGUE) >= 20
    for tag, entry in mc.CATALOGUE.items():
        assert tag == entry.tag and tag.isidentifier()
        assert entry.title and entry.hint.endswith((".", "!", ")")), tag


def test_mistake_takes_its_hint_from_the_catalogue_unless_given_one():
    made = mc.mistake("no_scaling", 1.5)
    assert made.name == "no_scaling" and made.value == 1.5 and "√d_k" in made.hint
    assert mc.mistake("no_scaling", 1.5, "custom").hint == "custom"
    with pytest.raises(KeyError):
        mc.mistake("not_a_tag", 0)


def test_no_scaling_and_scale_by_dk_change_only_the_scale(qkv):
    q, k, v = qkv
    out, w = A.attention_no_scaling(q, k, v)
    assert np.allclose(w, plain_softmax(q @ k.T)) and np.allclose(out, w @ v)
    _, w = A.attention_scale_by_dk(q, k, v)
    assert np.allclose(w, plain_softmax(q @ k.T / 4))


def test_softmax_over_the_wrong_axis_makes_columns_sum_to_one(qkv):
    q, k, v = qkv
    _, w = A.attention_softmax_wrong_axis(q, k, v)
    assert np.allclose(w, plain_softmax(q @ k.T / 2, axis=0))
    assert np.allclose(w.sum(axis=0), 1) and not np.allclose(w.sum(axis=1), 1)


def test_mask_after_softmax_leaves_rows_that_do_not_sum_to_one(qkv):
    q, k, v = qkv
    mask = np.tril(np.ones((3, 5), dtype=bool))
    _, w = A.attention_mask_after_softmax(q, k, v, mask)
    assert np.allclose(w, plain_softmax(q @ k.T / 2) * mask)
    assert not np.allclose(w.sum(axis=1), 1)


def test_zero_instead_of_minus_infinity_is_the_same_as_no_mask(qkv):
    q, k, v = qkv
    _, w = A.attention_mask_zero_not_inf(q, k, v, np.tril(np.ones((3, 5), dtype=bool)))
    assert np.allclose(w, plain_softmax(q @ k.T / 2))


def test_inverted_mask_attends_exactly_where_the_mask_forbids(qkv):
    q, k, v = qkv
    mask = np.tril(np.ones((3, 5), dtype=bool))
    _, w = A.attention_inverted_mask(q, k, v, mask)
    assert np.all(w[mask] == 0) and np.allclose(w.sum(axis=1), 1)


@pytest.mark.parametrize("shift,expected", [(-1, [[0, 0, 0], [1, 0, 0], [1, 1, 0]]), (1, [[1, 1, 0], [1, 1, 1], [1, 1, 1]])])
def test_causal_off_by_one_shifts_the_diagonal(shift, expected):
    assert (M.causal_off_by_one(3, shift=shift) == np.array(expected, dtype=bool)).all()


def test_norm_variants_use_the_wrong_statistic():
    x = np.array([[1.0, 2.0, 4.0], [0.0, 3.0, 3.0]])
    unbiased = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + 1e-5)
    assert np.allclose(N.layer_norm_unbiased(x), unbiased)
    across_tokens = (x - x.mean(0, keepdims=True)) / np.sqrt(x.var(0, keepdims=True) + 1e-5)
    assert np.allclose(N.layer_norm_wrong_axis(x), across_tokens)
    centred = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-6)
    assert np.allclose(N.rms_norm_subtracts_mean(x), centred)


def test_describe_falls_back_to_the_tag_for_unknown_names():
    assert mc.describe("mask_after_softmax").startswith("mask applied after the softmax")
    assert mc.describe("something_else") == "something_else"


# --------------------------------------------------------------------------- the catalogue as one package


def test_core_imports_the_catalogue_data_without_numpy_or_a_cycle():
    import subprocess
    import sys

    code = ("import sys, problemgen.model.core as core; "
            "print('numpy' in sys.modules, 'problemgen.misconceptions.catalogue' in sys.modules, "
            "core.Mistake.from_dict({'name': 'no_scaling', 'value': 1}).hint.startswith('Attention computed'))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "True"]


def test_sheets_and_tasks_read_the_same_entry():
    from problemgen.misconceptions.entries import CATALOGUE, title_and_hint

    assert mc.CATALOGUE is CATALOGUE
    assert title_and_hint("w_o_transposed") == (CATALOGUE["w_o_transposed"].title, CATALOGUE["w_o_transposed"].hint)
    assert mc.mistake("w_o_transposed", 0).hint.endswith(CATALOGUE["w_o_transposed"].hint)


# --------------------------------------------------------------------------- the newer buggy computations


def test_softmax_in_base_two_and_scores_times_sqrt_dk(qkv):
    q, k, v = qkv
    x = np.array([[1.0, 2.0, 4.0]])
    assert np.allclose(A.softmax_base(x), 2.0**x / (2.0**x).sum())
    _, w = A.attention_scale_multiplied(q, k, v)
    assert np.allclose(w, plain_softmax(q @ k.T * 2))


def test_rms_without_eps_and_layer_norm_with_both_slips():
    x = np.array([[0.001, -0.002, 0.0015], [1.0, 2.0, 4.0]])
    assert np.allclose(N.rms_norm_no_eps(x), x / np.sqrt((x**2).mean(-1, keepdims=True)))
    both = (x - x.mean(-1, keepdims=True)) / (x.std(-1, ddof=1, keepdims=True) + 1e-5)
    assert np.allclose(N.layer_norm_unbiased_eps_outside(x), both)


def test_sinusoidal_frequency_from_the_column_and_float32():
    from problemgen.misconceptions import positional as PE

    P, d = 6, 8
    doubled = np.array([[np.sin(p / 10000 ** (2 * j / d)) if j % 2 == 0 else np.cos(p / 10000 ** (2 * j / d))
                         for j in range(d)] for p in range(P)])  # fmt: skip
    assert np.allclose(PE.sinusoidal(P, d, exponent="column_doubled"), doubled)
    single = PE.sinusoidal(512, 64, dtype=np.float32)
    import reference

    exact = reference.sinusoidal_encoding(512, 64)
    assert not np.allclose(single, exact, rtol=1e-5, atol=1e-6) and np.allclose(single, exact, atol=1e-3)


def test_a_cache_step_mask_built_for_the_new_tokens_only_hides_the_cache():
    mask = M.cache_mask_new_tokens_only(2, 3)
    assert mask.tolist() == [[False, False, False, True, False], [False, False, False, True, True]]
    assert M.causal_upper_triangle(3).tolist() == np.triu(np.ones((3, 3), dtype=bool)).tolist()


def test_gqa_tiling_and_heads_split_on_the_wrong_axis():
    from problemgen.misconceptions import multihead as MH

    kv = np.arange(2.0).reshape(1, 2, 1, 1)  # (B, h_kv=2, S=1, d=1)
    assert MH.repeat_kv(kv, 2).ravel().tolist() == [0, 0, 1, 1]
    assert MH.repeat_kv(kv, 2, tile=True).ravel().tolist() == [0, 1, 0, 1]
    x = np.arange(6.0).reshape(1, 1, 6)  # (B, L, h*d) with h=2, d=3
    assert MH.split_heads(x, 2, how="wrong_axis")[0, :, 0].tolist() == [[0, 2, 4], [1, 3, 5]]
    assert np.array_equal(MH.merge_heads(MH.split_heads(x, 2, how="wrong_axis"), how="wrong_axis"), x)


CODE_NAMES = ("n_heads", "n_kv_heads", "n_layers", "n_positions")
"""Parameter names of the coding tasks' functions, which no worksheet prompt uses (it writes h, h_kv, "layers")."""


def test_the_hints_a_worksheet_variant_lists_use_no_name_its_prompt_never_shows():
    """"W_K and W_V given all n_heads heads … n_kv_heads·d_k columns" answered a sheet that says h = 8 query
    heads and h_kv = 4 key/value heads; "each of the n_layers layers" one that says 12 layers."""
    from problemgen.documents.rendering import render_block
    from problemgen.model.registry import all_kinds, generate

    for spec in all_kinds():
        for difficulty in spec.difficulties:
            for seed in range(6):
                problem = generate(spec.name, seed, difficulty)
                prompt = render_block(problem, "prompt", "text")
                for part in problem.parts:
                    for m in part.mistakes:
                        unknown = [n for n in CODE_NAMES if n in m.hint and n not in prompt]
                        assert not unknown, (spec.name, difficulty, seed, part.key, m.name, unknown)


@pytest.mark.parametrize("kind, key", [("memory.kv_cache", "size"), ("memory.gqa_savings", "saved"),
                                       ("complexity.score_matrix", "bytes")])
def test_the_unit_mix_up_hint_names_the_units_the_problem_asks(kind, key):
    """It spoke of GB and GiB only, on problems asked in MB or MiB."""
    from problemgen.model.registry import generate

    units = set()
    for difficulty in (1, 2, 3):
        for seed in range(20):
            part = generate(kind, seed, difficulty).part(key)
            for m in part.mistakes:
                if m.name == "decimal_vs_binary_units":
                    units.add(part.spec["unit"])
                    assert part.spec["unit"] in m.hint, (difficulty, seed, part.spec["unit"], m.hint)
    assert units
