"""KV-cache generators: sizes equal the reference formula, units are honoured, slips are named."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

import reference
from problemgen.model.registry import generate
from problemgen.documents.rendering import format_number

KINDS = ("memory.kv_cache", "memory.gqa_savings")
SEEDS = range(15)
UNIT_BYTES = {"bytes": 1, "MiB": 2**20, "GiB": 2**30, "MB": 10**6, "GB": 10**9}


def mistakes_of(problem, key: str) -> dict:
    return {m.name: m.value for m in problem.part(key).mistakes}


def formula_bytes(c: dict, seq_len: int, batch: int, width: int) -> int:
    return 2 * c["n_decoder_layers"] * c["kv_heads"] * c["d_head"] * seq_len * batch * width


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_kv_cache_size_matches_the_formula_in_the_stated_unit(difficulty):
    for seed in SEEDS:
        p = generate("memory.kv_cache", seed, difficulty)
        c, q = p.params["config"], p.params
        n_bytes = formula_bytes(c, q["seq_len"], q["batch"], q["bytes_per_value"])
        assert p.part("size").value == pytest.approx(n_bytes / UNIT_BYTES[q["unit"]], rel=1e-12)
        found = mistakes_of(p, "size")
        assert found["kv_not_both_cached"] == pytest.approx(p.part("size").value / 2)
        assert found["bits_not_bytes"] == pytest.approx(p.part("size").value * 8)
        if q["unit"] != "bytes":
            assert float(Fraction(p.part("size").exact)) == pytest.approx(p.part("size").value)
            assert "decimal_vs_binary_units" in found
        if c["kv_heads"] < c["n_heads"]:
            assert found["gqa_ignored"] == pytest.approx(p.part("size").value * c["n_heads"] / c["kv_heads"])


def test_kv_cache_of_qwen3_4b_at_4096_tokens_is_576_mib():
    """The seed's example: 2 x 36 x 8 x 128 x 4096 x 2 bytes = 576 MiB (the notes call it 576 MB)."""
    for seed in range(300):
        p = generate("memory.kv_cache", seed, 3, preset="qwen3-4b", dtype="fp16")
        if p.params["seq_len"] == 4096 and p.params["batch"] == 1:
            n_bytes = p.part("size").value * p.params["unit_bytes"]
            assert round(n_bytes) == 603979776 == 576 * 2**20
            return
    pytest.fail("no seed drew 4096 tokens with batch 1")


def test_kv_cache_dtype_override_sets_the_bytes_per_value():
    for dtype, width in [("fp32", 4), ("fp16", 2), ("int8", 1)]:
        p = generate("memory.kv_cache", 1, 2, dtype=dtype)
        assert p.params["bytes_per_value"] == width


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_gqa_savings_ratio_and_bytes(difficulty):
    for seed in SEEDS:
        p = generate("memory.gqa_savings", seed, difficulty)
        c, q = p.params["config"], p.params
        mha = 2 * c["n_decoder_layers"] * c["n_heads"] * c["d_head"] * q["seq_len"] * q["batch"] * 2
        gqa = formula_bytes(c, q["seq_len"], q["batch"], 2)
        if q["preset"]:
            assert gqa == reference.kv_cache_bytes(reference.PRESETS[q["preset"]], q["seq_len"], q["batch"])
        assert p.part("ratio").value == pytest.approx(c["n_heads"] / c["kv_heads"])
        assert p.part("saved").value == pytest.approx((mha - gqa) / q["unit_bytes"])
        assert mistakes_of(p, "saved")["kv_not_both_cached"] == pytest.approx(p.part("saved").value / 2)


def test_gqa_savings_at_difficulty_one_is_multi_query():
    for seed in SEEDS:
        assert generate("memory.gqa_savings", seed, 1).params["config"]["kv_heads"] == 1


@pytest.mark.parametrize("kind", KINDS)
def test_real_models_never_cache_more_tokens_than_their_context(kind):
    for seed in range(40):
        p = generate(kind, seed, 3)
        if p.params["preset"]:
            assert p.params["seq_len"] <= reference.PRESETS[p.params["preset"]].max_positions


@pytest.mark.parametrize("kind", ["memory.kv_cache", "memory.gqa_savings", "complexity.score_matrix"])
def test_solutions_round_sizes_to_the_three_significant_figures_the_prompt_asks_for(kind):
    """"≈ 403 MB" next to the exact byte count, never a 7-figure "402.6532"."""
    from problemgen.documents.rendering import render_block

    for difficulty in (2, 3):
        for seed in range(25):
            p = generate(kind, seed, difficulty)
            text = render_block(p, "solution", "md")
            value = p.parts[-1].value
            shown = float(f"{value:.3g}")
            assert f" {format_number(shown, 10)}$ {p.params['unit']}" in text, p.variant_id
            if shown != value:
                assert "\\approx" in text and "significant figures" in text, p.variant_id
            digits = [len(m.replace(".", "").lstrip("0")) for m in re.findall(r"\d+\.\d+", text)]
            assert max(digits, default=0) <= 4 or kind == "complexity.score_matrix", p.variant_id


def test_kv_cache_solution_shows_the_exact_bytes_and_the_rounded_size():
    from problemgen.documents.rendering import render_block

    p = generate("memory.kv_cache", 1, 2)
    assert (p.params["unit"], p.solution["bytes"]) == ("MB", 402653184)
    text = render_block(p, "solution", "md")
    assert "= 402653184$ bytes" in text and "402653184 / 10^{6} \\approx 403$ MB" in text
    assert "402.6532" not in text


@pytest.mark.parametrize("exact,rounded", [(11.25, 11.3), (402.6532, 403.0), (0.0012345, 0.00123), (2.5, 2.5),
                                           (999.5, 1000.0), (1.125, 1.13), (0.0, 0.0), (4096.0, 4100.0)])
def test_worked_answers_round_to_three_figures_with_halves_up(exact, rounded):
    """A worked solution once wrote 11.25 MiB as 11.2 (Python rounds halves to even); students write 11.3."""
    from problemgen.problems.memory import three_figures

    assert three_figures(exact) == rounded
