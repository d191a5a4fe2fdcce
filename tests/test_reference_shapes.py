"""Tests for reference.shapes: symbolic traces agree with the arrays the reference produces."""

from __future__ import annotations

import numpy as np
import pytest

from reference import (
    TransformerConfig,
    encoder_block,
    feed_forward,
    init_params,
    merge_heads,
    multi_head_attention,
    split_heads,
)
from reference.shapes import attention_shapes, block_shapes, dims_for, multi_head_attention_shapes


def run_mha_stages(B, L, S, d_model, h, h_kv, d_k):
    """Shapes of the arrays the numpy reference actually builds, stage by stage."""
    rng = np.random.default_rng(0)
    x_q, x_kv = rng.normal(size=(B, L, d_model)), rng.normal(size=(B, S, d_model))
    p = {
        "w_q": rng.normal(size=(d_model, h * d_k)),
        "w_k": rng.normal(size=(d_model, h_kv * d_k)),
        "w_v": rng.normal(size=(d_model, h_kv * d_k)),
        "w_o": rng.normal(size=(h * d_k, d_model)),
    }
    q, k, v = x_q @ p["w_q"], x_kv @ p["w_k"], x_kv @ p["w_v"]
    qh, kh, vh = split_heads(q, h), split_heads(k, h_kv), split_heads(v, h_kv)
    out, weights = multi_head_attention(x_q, x_kv, p, h, n_kv_heads=h_kv)
    heads = weights @ np.repeat(vh, h // h_kv, axis=-3)
    return {
        "x_q": x_q.shape, "x_kv": x_kv.shape, "w_q": p["w_q"].shape, "w_k": p["w_k"].shape,
        "w_v": p["w_v"].shape, "w_o": p["w_o"].shape, "w_q_head": p["w_q"][:, :d_k].shape,
        "w_k_head": p["w_k"][:, :d_k].shape, "w_v_head": p["w_v"][:, :d_k].shape,
        "q": q.shape, "k": k.shape, "v": v.shape, "q_heads": qh.shape, "k_heads": kh.shape,
        "v_heads": vh.shape, "scores": weights.shape, "scaled_scores": weights.shape,
        "weights": weights.shape, "head_outputs": heads.shape, "concat": merge_heads(heads).shape,
        "output": out.shape,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "grouped", "sizes"),
    [
        ("self", False, dict(B=2, L=3, S=3, d_model=8, h=2, h_kv=2, d_k=4)),
        ("cross", False, dict(B=1, L=3, S=5, d_model=6, h=3, h_kv=3, d_k=2)),
        ("self", True, dict(B=2, L=4, S=4, d_model=8, h=4, h_kv=2, d_k=3)),
        ("cross", True, dict(B=1, L=2, S=6, d_model=4, h=4, h_kv=1, d_k=2)),
    ],
)
def test_mha_trace_matches_the_arrays_the_reference_builds(kind, grouped, sizes):
    trace = multi_head_attention_shapes(kind, grouped=grouped)
    evaluated = trace.evaluate({**sizes, "d_v": sizes["d_k"]})
    actual = run_mha_stages(**sizes)
    for stage, shape in evaluated.items():
        assert shape == actual[stage], stage


def test_self_attention_trace_uses_l_for_keys_and_h_for_kv_heads():
    t = multi_head_attention_shapes("self")
    assert t["k_heads"] == ("B", "h", "L", "d_k")
    assert t["scores"] == ("B", "h", "L", "L")
    assert "S" not in t.symbols() and "h_kv" not in t.symbols()
    cross = multi_head_attention_shapes("cross", grouped=True, batch=False)
    assert cross["scores"] == ("h", "L", "S")  # decoder length x encoder length: not square
    assert cross["v"] == ("S", "h_kv*d_v")
    with pytest.raises(ValueError, match="kind"):
        multi_head_attention_shapes("masked")


def test_block_trace_matches_encoder_block_arrays():
    cfg = TransformerConfig(d_model=8, n_heads=2, d_ff=20, n_encoder_layers=1, n_decoder_layers=0)
    params = init_params(cfg, np.random.default_rng(0))["encoder"]["layers"][0]
    x = np.random.default_rng(1).normal(size=(2, 5, 8))
    seen: dict = {}
    out = encoder_block(x, params, cfg, trace=seen)
    shapes = block_shapes().evaluate(dims_for(8, 2, L=5, B=2, d_ff=20))
    assert shapes["attn_weights"] == seen["self_attn_weights"].shape
    assert shapes["attn_out"] == seen["self_attn_out"].shape
    assert shapes["ffn_out"] == seen["ffn_out"].shape == shapes["output"] == out.shape
    hidden = x @ params["ffn"]["w_1"]
    assert shapes["ffn_hidden"] == hidden.shape
    assert feed_forward(x, params["ffn"]).shape == shapes["ffn_out"]


def test_block_orders_pre_and_post_ln():
    pre = block_shapes(norm_first=True).names()
    post = block_shapes(norm_first=False).names()
    assert pre.index("attn_norm") < pre.index("attn_out") < pre.index("attn_residual")
    assert post.index("attn_out") < post.index("attn_residual") < post.index("attn_norm")
    dec = block_shapes(cross=True, ffn_kind="swiglu")
    assert dec["cross_weights"] == ("B", "h", "L", "S") and dec["ffn_gate"] == ("B", "L", "d_ff")


def test_evaluate_reports_missing_sizes_and_unknown_stages():
    t = attention_shapes(batch=True)
    with pytest.raises(KeyError, match="d_v"):
        t.evaluate({"B": 1, "L": 2, "S": 2, "d_k": 3})
    with pytest.raises(KeyError, match="no stage"):
        t["logits"]
    with pytest.raises(ValueError, match="evenly"):
        dims_for(10, 3, L=2)
