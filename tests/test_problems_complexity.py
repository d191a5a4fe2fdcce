"""Cost generators: score-matrix sizes and FLOPs equal 2·m·n·k counts, growth is quadratic, choices are right."""

from __future__ import annotations

from fractions import Fraction

import pytest

from problemgen.model.registry import generate

KINDS = ("complexity.score_matrix", "complexity.flops", "complexity.doubling", "complexity.path_length")
SEEDS = range(15)


def mistakes_of(problem, key: str) -> dict:
    return {m.name: m.value for m in problem.part(key).mistakes}


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_score_matrix_entries_and_bytes(difficulty):
    for seed in SEEDS:
        p = generate("complexity.score_matrix", seed, difficulty)
        q = p.params
        entries = q["batch"] * q["n_heads"] * q["L"] * q["S"]
        assert p.part("entries").value == entries
        assert p.part("bytes").value == pytest.approx(entries * q["bytes_per_value"] / q["unit_bytes"], rel=1e-12)
        assert mistakes_of(p, "bytes")["bits_not_bytes"] == pytest.approx(8 * p.part("bytes").value)
        if difficulty > 1:
            assert mistakes_of(p, "entries")["heads_not_counted"] == q["L"] * q["S"]


def test_score_matrix_of_one_gpt2_layer_at_1024_tokens():
    """12 heads x 1024 x 1024 = 12,582,912 entries (the reference's own doctest figure)."""
    for seed in range(300):
        p = generate("complexity.score_matrix", seed, 2)
        q = p.params
        if (q["n_heads"], q["L"], q["batch"]) == (12, 1024, 2):
            assert p.part("entries").value == 2 * 12_582_912
            return
    pytest.fail("no seed drew 12 heads, 1024 tokens, batch 2")


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_flops_follow_the_two_m_n_k_convention(difficulty):
    for seed in SEEDS:
        p = generate("complexity.flops", seed, difficulty)
        c, q = p.params["config"], p.params
        qk = 2 * q["batch"] * c["n_heads"] * q["L"] * q["S"] * c["d_head"]
        assert p.part("qk").value == qk
        assert mistakes_of(p, "qk")["flops_no_factor_two"] == qk // 2
        if difficulty == 2:
            assert p.part("q_proj").value == 2 * q["batch"] * q["L"] * c["d_model"] * c["n_heads"] * c["d_head"]
        if difficulty == 3:
            d, hd, kvd = c["d_model"], c["n_heads"] * c["d_head"], c["kv_heads"] * c["d_head"]
            proj = 2 * q["batch"] * (q["L"] * d * hd + 2 * q["S"] * d * kvd + q["L"] * hd * d)
            assert p.part("projections").value == proj


def test_flops_of_the_seed_shape_example():
    """d_model = 1024, h = 16, L = 128: QK^T is 16 heads x 2 x 128 x 128 x 64 = 33,554,432 FLOPs."""
    for seed in range(300):
        p = generate("complexity.flops", seed, 2)
        if (p.params["config"]["d_model"], p.params["L"], p.params["batch"]) == (1024, 128, 1):
            assert p.part("qk").value == 33_554_432
            return
    pytest.fail("no seed drew the seed example")


@pytest.mark.parametrize("factor", [2, 3, 4, 8])
def test_doubling_scores_grow_quadratically_and_projections_linearly(factor):
    p = generate("complexity.doubling", 0, 2, factor=factor)
    assert p.part("scores").value == factor**2
    assert Fraction(p.part("scores").exact) == factor**2
    assert p.part("projections").value == factor
    assert mistakes_of(p, "scores")["linear_not_quadratic"] == factor


def test_doubling_total_lies_strictly_between_linear_and_quadratic():
    for seed in SEEDS:
        p = generate("complexity.doubling", seed, 3)
        k = p.params["factor"]
        d, L = p.params["config"]["d_model"], p.params["L"]
        before = 8 * L * d * d + 4 * L * L * d
        after = 8 * k * L * d * d + 4 * (k * L) ** 2 * d
        assert p.part("total").value == pytest.approx(after / before)
        assert k < p.part("total").value < k * k


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_path_length_marks_the_textbook_answer(difficulty):
    expected = {"attention_path": "$O(1)$", "rnn_path": "$O(n)$", "rnn_sequential": "$O(n)$",
                "attention_sequential": "$O(1)$", "attention_time": r"$O(n^2 \cdot d)$", "attention_memory": "$O(n^2)$"}
    for seed in SEEDS:
        problem = generate("complexity.path_length", seed, difficulty)
        part = problem.part("choice")
        texts = {o["id"]: o["text"] for o in part.spec["options"]}
        assert [texts[i] for i in part.value] == [expected[problem.params["question"]]]
        assert all(o["why"] for o in part.spec["options"])


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_doubling_solution_counts_entries_over_all_heads(difficulty):
    """The entry counts printed are h·L² (all heads), and the prose says so rather than "per head"."""
    from problemgen.documents.rendering import render_block

    for seed in SEEDS:
        p = generate("complexity.doubling", seed, difficulty)
        h, L, k = p.params["config"]["n_heads"], p.params["L"], p.params["factor"]
        text = render_block(p, "solution", "md")
        assert f"{h} \\times {L}^2 = {h * L * L}$ before" in text
        assert f"{h} \\times {k * L}^2 = {h * (k * L) ** 2}$ after" in text
        assert "$L^2$ entries per head:" not in text


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_doubling_prompt_asks_for_each_factor_only_when_there_are_several(difficulty):
    from problemgen.documents.rendering import render_block

    p = generate("complexity.doubling", 1, difficulty)
    prompt = render_block(p, "prompt", "md")
    assert ("each factor" in prompt) == (len(p.parts) > 1)
    assert ("the factor to 3" in prompt) == (len(p.parts) == 1)
