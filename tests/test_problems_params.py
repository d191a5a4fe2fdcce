"""Parameter-count generators: keys equal the reference counts, known model sizes, named counting slips."""

from __future__ import annotations

from dataclasses import replace

import pytest

import reference
from problemgen.model.registry import generate
from problemgen.problems.params import MODEL_PRESETS, linear_parameters
from problemgen.documents.rendering import render_problem

KINDS = ("params.matrix", "params.attention_layer", "params.ffn_layer", "params.norms", "params.embeddings", "params.model")
SEEDS = range(15)


def mistakes_of(problem, key: str) -> dict:
    return {m.name: m.value for m in problem.part(key).mistakes}


def config_of(problem) -> reference.TransformerConfig:
    """Rebuild the TransformerConfig a problem describes from its frozen params."""
    data = dict(problem.params["config"])
    for derived in ("kv_heads", "d_head", "arch", "n_stacks"):
        data.pop(derived)
    return reference.TransformerConfig(**data)


def test_linear_parameters_add_up_to_the_reference_sublayer_counts():
    for d, h, bias in [(768, 12, True), (512, 8, False), (1024, 16, True)]:
        cfg = reference.TransformerConfig(d_model=d, n_heads=h, d_ff=4 * d, qkv_bias=bias, out_bias=bias, ffn_bias=bias)
        assert 4 * linear_parameters(d, d, bias) == reference.attention_parameters(cfg)
        assert linear_parameters(d, 4 * d, bias) + linear_parameters(4 * d, d, bias) == reference.ffn_parameters(cfg)


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_matrix_counts_weights_and_biases(difficulty):
    for seed in SEEDS:
        p = generate("params.matrix", seed, difficulty)
        rows, cols, bias = p.params["rows"], p.params["cols"], p.params["bias"]
        one = rows * cols + (cols if bias else 0)
        expected = one if difficulty < 3 else p.params["n_layers"] * p.params["n_heads"] * one
        assert p.part("count").value == expected
        if bias:
            assert "forgot_biases" in mistakes_of(p, "count")


def test_matrix_one_head_of_gpt2_small_is_49152():
    """The seed's example: one W_Q of GPT-2 small is 768 x 64 = 49,152 numbers (no bias)."""
    for seed in range(200):
        p = generate("params.matrix", seed, 2, bias=False)
        if p.params["d_model"] == 768 and p.params["n_heads"] == 12:
            assert p.part("count").value == 49152
            assert mistakes_of(p, "count")["dk_equals_d_model"] == 768 * 768
            return
    pytest.fail("no seed drew d_model = 768 with 12 heads")


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_attention_layer_equals_reference_and_names_gqa(difficulty):
    for seed in SEEDS:
        p = generate("params.attention_layer", seed, difficulty)
        cfg = config_of(p)
        assert p.part("count").value == reference.attention_parameters(cfg)
        found = mistakes_of(p, "count")
        assert found["heads_multiply_params"] > p.part("count").value
        if cfg.kv_heads < cfg.n_heads:
            assert found["kv_projection_all_heads"] == reference.attention_parameters(replace(cfg, n_kv_heads=None))
        if cfg.qkv_bias or cfg.out_bias:
            assert found["forgot_biases"] < p.part("count").value


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_ffn_layer_counts_two_or_three_matrices(difficulty):
    for seed in SEEDS:
        p = generate("params.ffn_layer", seed, difficulty)
        d, d_ff, n = p.params["d_model"], p.params["d_ff"], p.params["n_layers"]
        matrices = 3 if p.params["kind"] == "swiglu" else 2
        biases = (d + d_ff) if p.params["bias"] else 0
        assert p.part("count").value == n * (matrices * d * d_ff + biases)
        if p.params["kind"] == "swiglu":
            assert mistakes_of(p, "count")["swiglu_two_matrices"] == n * 2 * d * d_ff


def test_ffn_layer_llama_2_width_gives_the_published_per_layer_count():
    p = next(generate("params.ffn_layer", s, 2) for s in range(500)
             if generate("params.ffn_layer", s, 2).params["d_ff"] == 11008)
    assert p.part("count").value == 3 * 4096 * 11008 == 135266304


@pytest.mark.parametrize("norm", ["layer", "rms"])
@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_norm_counts(norm, difficulty):
    for seed in SEEDS:
        p = generate("params.norms", seed, difficulty, norm=norm)
        d, n = p.params["d_model"], p.params["n_layers"]
        per = 2 * d if norm == "layer" else d
        n_norms = 1 if difficulty == 1 else (2 * n + 1 if difficulty == 2 else 2 * n + 3 * n + 2)
        assert p.part("count").value == n_norms * per


def test_embeddings_of_gpt2_small_are_tied_and_include_positions():
    p = generate("params.embeddings", 0, 3, preset="gpt2-small")
    assert p.part("count").value == 50257 * 768 + 1024 * 768 == 39383808
    found = mistakes_of(p, "count")
    assert found["tied_counted_twice"] == 39383808 + 50257 * 768
    assert found["forgot_position_embeddings"] == 50257 * 768


def test_embeddings_of_an_untied_model_count_the_head():
    p = generate("params.embeddings", 0, 3, preset="llama-2-7b")
    assert p.part("count").value == 2 * 32000 * 4096
    assert mistakes_of(p, "count")["untied_counted_once"] == 32000 * 4096


@pytest.mark.parametrize("difficulty", [1, 2])
def test_embeddings_custom_models_follow_the_reference(difficulty):
    for seed in SEEDS:
        p = generate("params.embeddings", seed, difficulty)
        c = reference.count_parameters(config_of(p))
        assert p.part("count").value == c["token_embeddings"] + c["position_embeddings"] + c["head"]


KNOWN_TOTALS = {
    "gpt2-small": 124_439_808,
    "gpt2-medium": 354_823_168,
    "bert-base": 109_482_240,
    "llama-2-7b": 6_738_415_616,
    "llama-3-8b": 8_030_261_248,
    "mistral-7b": 7_241_732_096,
}


@pytest.mark.parametrize("preset", sorted(KNOWN_TOTALS))
def test_model_presets_give_the_published_totals(preset):
    p = generate("params.model", 0, 3, preset=preset)
    assert p.part("total").value == KNOWN_TOTALS[preset]


def test_gpt2_small_model_mistakes_are_the_classic_slips():
    p = generate("params.model", 0, 3, preset="gpt2-small")
    found = mistakes_of(p, "total")
    assert found["tied_counted_twice"] == 124_439_808 + 50257 * 768
    assert found["forgot_position_embeddings"] == 124_439_808 - 1024 * 768
    assert found["forgot_norm_params"] == 124_439_808 - (2 * 12 + 1) * 2 * 768
    biases = 12 * (4 * 768 + 3072 + 768)
    assert found["forgot_biases"] == 124_439_808 - biases
    assert "swiglu_two_matrices" not in found and "untied_counted_once" not in found


def test_llama_model_names_the_swiglu_and_untied_slips():
    found = mistakes_of(generate("params.model", 0, 3, preset="llama-2-7b"), "total")
    assert found["swiglu_two_matrices"] == 6_738_415_616 - 32 * 4096 * 11008
    assert found["untied_counted_once"] == 6_738_415_616 - 32000 * 4096


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_model_total_and_per_layer_equal_the_reference(difficulty):
    for seed in SEEDS:
        p = generate("params.model", seed, difficulty)
        cfg = config_of(p)
        assert p.part("total").value == reference.count_parameters(cfg)["total"]
        if difficulty < 3:
            layer = (reference.attention_parameters(cfg) + reference.ffn_parameters(cfg)
                     + 2 * reference.norm_parameters(cfg))
            assert p.part("per_layer").value == layer


def test_every_preset_renders():
    for preset in MODEL_PRESETS:
        text = render_problem(generate("params.model", 0, 3, preset=preset), "tex", solution=True)
        assert str(reference.count_parameters(reference.PRESETS[preset])["total"]) in text


_PROSE_KINDS = ("params.embeddings", "params.model", "memory.kv_cache", "memory.gqa_savings", "complexity.score_matrix",
                "complexity.flops", "complexity.doubling")


@pytest.mark.parametrize("kind", _PROSE_KINDS)
def test_prose_names_real_models_by_display_name_not_preset_id(kind):
    """Students read "Llama 3 8B", never the id "llama-3-8b"; the id stays in params to rebuild the variant."""
    import reference
    from problemgen.problems.params import PRESET_NAMES
    from problemgen.documents.rendering import render_problem

    named = 0
    for difficulty in (1, 2, 3):
        for seed in range(40):
            p = generate(kind, seed, difficulty)
            text = render_problem(p, "md", solution=True)
            leaked = [preset for preset in reference.PRESETS if preset in text]
            assert not leaked, f"{p.variant_id} prints preset ids {leaked}"
            if p.params.get("preset"):
                assert p.params["model_name"] == PRESET_NAMES[p.params["preset"]]
                assert p.params["model_name"] in text
                named += 1
    assert named or kind.startswith("complexity"), "no seed drew a real model"


def test_every_preset_has_a_display_name():
    import reference
    from problemgen.problems.params import PRESET_NAMES

    assert set(PRESET_NAMES) == set(reference.PRESETS)
