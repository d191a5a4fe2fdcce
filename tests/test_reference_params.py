"""Tests for reference.params: parameter counts, presets, KV-cache bytes, attention costs.

Published totals are what the open-source implementations report for these architectures
(Hugging Face transformers counts, shared tensors counted once). They were also re-derived by
instantiating the same hyperparameters in transformers 5.x on the meta device.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from reference import (
    PRESETS,
    TransformerConfig,
    attention_flops,
    attention_memory,
    attention_parameters,
    count_parameters,
    count_tree,
    ffn_parameters,
    init_params,
    kv_cache_bytes,
    matmul_flops,
)

PUBLISHED_TOTALS = {
    "gpt2-small": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "bert-base": 109_482_240,  # BertModel including the pooler
    "bert-large": 335_141_888,
    "llama-2-7b": 6_738_415_616,
    "llama-3-8b": 8_030_261_248,
    "mistral-7b": 7_241_732_096,  # v0.1
    "qwen3-4b": 4_022_468_096,
    "t5-small": 60_506_624,
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_TOTALS))
def test_preset_total_matches_published_count(name):
    assert count_parameters(PRESETS[name])["total"] == PUBLISHED_TOTALS[name]


def test_required_presets_exist():
    assert set(PUBLISHED_TOTALS) | {"transformer-base"} <= set(PRESETS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_breakdown_components_sum_to_total(name):
    counts = count_parameters(PRESETS[name])
    assert counts["total"] == sum(v for k, v in counts.items() if k != "total")
    assert all(v >= 0 for v in counts.values())


def test_transformer_base_counts_what_its_architecture_gives():
    # 2017 base model as described: shared 37000 x 512 embedding, 6 + 6 post-LN layers with
    # biases, sinusoidal positions. The paper's table says 65M; the architecture gives 63.08M.
    counts = count_parameters(PRESETS["transformer-base"])
    assert counts["total"] == 63_082_496
    assert counts["token_embeddings"] == 37_000 * 512
    assert counts["position_embeddings"] == 0 and counts["head"] == 0
    # torch.nn.Transformer also puts a final LayerNorm after each stack: 2 x 1024 more
    with_final_norms = dataclasses.replace(PRESETS["transformer-base"], final_norm=True)
    assert count_parameters(with_final_norms)["total"] == 63_084_544


def test_gpt2_small_numbers_from_the_lecture_notes():
    cfg = PRESETS["gpt2-small"]
    counts = count_parameters(cfg)
    per_head_w_q = cfg.d_model * cfg.d_head
    assert per_head_w_q == 768 * 64 == 49_152
    assert counts["token_embeddings"] == 50_257 * 768 == 38_597_376  # the notes' "~38 million"
    all_w_q = cfg.n_decoder_layers * cfg.n_heads * per_head_w_q
    assert all_w_q == 12 * 12 * 49_152 == 7_077_888  # "~7 million numbers (just for W_Q)"
    assert 3 * all_w_q == 21_233_664  # W_Q, W_K, W_V together: "~21 million"
    assert counts["head"] == 0  # tied to the token embedding
    assert attention_parameters(cfg) == 4 * 768 * 768 + 4 * 768


def test_llama_and_gpt3_per_head_matrix_sizes_from_the_notes():
    llama = PRESETS["llama-2-7b"]
    assert llama.d_model * llama.d_head == 4096 * 128 == 524_288
    gpt3 = TransformerConfig(d_model=12288, n_heads=96, n_decoder_layers=96)
    assert gpt3.d_model * gpt3.d_head == 12_288 * 128 == 1_572_864
    assert ffn_parameters(llama) == 3 * 4096 * 11008  # SwiGLU: gate, up, down
    assert count_parameters(llama)["head"] == 32000 * 4096  # untied


def test_qwen3_head_dim_is_chosen_not_derived():
    cfg = PRESETS["qwen3-4b"]
    assert cfg.d_model // cfg.n_heads == 80 and cfg.d_head == 128
    assert cfg.n_heads * cfg.d_head == 4096  # q_proj output width, then w_o maps 4096 -> 2560
    counts = count_parameters(cfg)
    qk_norms = 36 * 2 * 128
    assert counts["norms"] == 36 * 2 * 2560 + 2560 + qk_norms


def test_seed_parameter_exercise_config_lands_near_3_2_billion():
    # The notes' exercise (d_model 2560, 32 heads, 36 layers, d_ff 6912, vocab 151936, read as
    # SwiGLU, full MHA, tied embeddings) gives 3.24B; the real Qwen3-4B (GQA, head_dim 128,
    # d_ff 9728, q/k norms) is 4.02B, so the exercise's config is not Qwen3-4B's.
    exercise = TransformerConfig(
        d_model=2560, n_heads=32, d_ff=6912, vocab_size=151936, n_decoder_layers=36,
        ffn_kind="swiglu", norm="rms", position="rope", tie_embeddings=True,
    )  # fmt: skip
    assert count_parameters(exercise)["total"] == 3_243_891_200


def test_qwen3_kv_cache_example_is_576_mebibytes():
    # 2 x 36 layers x 8 KV heads x 128 x 4096 positions x 2 bytes. The notes call it
    # "about 576 MB"; it is exactly 576 MiB = 603,979,776 bytes (about 604 MB).
    size = kv_cache_bytes(PRESETS["qwen3-4b"], 4096)
    assert size == 2 * 36 * 8 * 128 * 4096 * 2 == 603_979_776
    assert size == 576 * 2**20


def test_kv_cache_scales_with_kv_heads_batch_and_precision():
    llama2, llama3 = PRESETS["llama-2-7b"], PRESETS["llama-3-8b"]
    assert kv_cache_bytes(llama2, 4096) == 2 * 2**30  # full MHA: 32 KV heads
    assert kv_cache_bytes(llama3, 4096) == kv_cache_bytes(llama2, 4096) // 4  # GQA: 8 KV heads
    assert kv_cache_bytes(llama3, 100, batch=3, bytes_per_value=4) == 6 * kv_cache_bytes(llama3, 100)
    with pytest.raises(ValueError, match="no decoder"):
        kv_cache_bytes(PRESETS["bert-base"], 128)


def test_attention_costs_for_the_d1024_h16_exercise():
    cfg = TransformerConfig(d_model=1024, n_heads=16)
    assert cfg.d_head == 64
    mem = attention_memory(cfg, 128, batch=1, bytes_per_value=4)
    assert mem["score_entries"] == 16 * 128 * 128  # one 128 x 128 matrix per head
    assert mem["score_bytes"] == 16 * 128 * 128 * 4
    f = attention_flops(cfg, 128)
    assert f["qk"] == 16 * matmul_flops(128, 64, 128) == 2 * 16 * 128 * 128 * 64
    assert f["av"] == f["qk"]
    assert f["q_proj"] == f["k_proj"] == f["v_proj"] == f["o_proj"] == 2 * 128 * 1024 * 1024
    assert f["total"] == f["projections"] + f["qk"] + f["av"]


def test_attention_costs_are_quadratic_in_length_and_gqa_shrinks_kv_projections():
    cfg = PRESETS["llama-3-8b"]
    short, long = attention_flops(cfg, 512), attention_flops(cfg, 1024)
    assert long["qk"] == 4 * short["qk"] and long["q_proj"] == 2 * short["q_proj"]
    assert short["k_proj"] * 4 == short["q_proj"]  # 8 of 32 heads have K/V
    cross = attention_flops(cfg, 10, 300, batch=2)
    assert cross["qk"] == 2 * 32 * matmul_flops(10, 128, 300)
    assert attention_memory(cfg, 10, 300)["score_entries"] == 32 * 10 * 300


def shrink(cfg: TransformerConfig) -> TransformerConfig:
    """Same architecture flags, toy sizes (keeps GQA ratio direction and a free head_dim)."""
    return dataclasses.replace(
        cfg,
        d_model=16,
        n_heads=4,
        n_kv_heads=None if cfg.n_kv_heads is None else 2,
        head_dim=None if cfg.head_dim is None else 6,
        d_ff=24,
        vocab_size=37,
        max_positions=9,
        n_encoder_layers=min(cfg.n_encoder_layers, 2),
        n_decoder_layers=min(cfg.n_decoder_layers, 3),
    )


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_parameter_tree_size_equals_formula_count(name):
    # init_params builds every tensor explicitly; its element count is an independent check
    # of count_parameters' closed-form arithmetic.
    cfg = shrink(PRESETS[name])
    tree = init_params(cfg, np.random.default_rng(0))
    assert count_tree(tree) == count_parameters(cfg)["total"]


def test_config_validation_messages():
    with pytest.raises(ValueError, match="divisible"):
        TransformerConfig(d_model=10, n_heads=3)
    with pytest.raises(ValueError, match="multiple"):
        TransformerConfig(d_model=12, n_heads=6, n_kv_heads=4)
    with pytest.raises(ValueError, match="ffn_kind"):
        TransformerConfig(ffn_kind="tanh")
    with pytest.raises(ValueError, match="position"):
        TransformerConfig(position="alibi")
    with pytest.raises(ValueError, match="norm"):
        TransformerConfig(norm="batch")
    with pytest.raises(ValueError, match="even"):
        TransformerConfig(d_model=12, n_heads=4, position="rope")
    with pytest.raises(ValueError, match="layer"):
        TransformerConfig(n_decoder_layers=0)
    assert PRESETS["t5-small"].arch == "encoder-decoder"
    assert PRESETS["bert-base"].arch == "encoder-only"
    assert PRESETS["gpt2-small"].arch == "decoder-only"
