"""Cross-checks of the numpy reference against PyTorch, in float64, to 1e-12.

Skipped (with a visible reason) when PyTorch is not installed. Two conventions differ and are
converted explicitly: ``nn.Linear``/``nn.MultiheadAttention`` store weights as ``(out, in)``,
the transpose of our row-vector ``(in, out)`` matrices; and ``nn.MultiheadAttention``'s boolean
``attn_mask``/``key_padding_mask`` mark positions that may NOT be attended (the opposite of
ours), whereas ``F.scaled_dot_product_attention``'s boolean mask uses our polarity.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed: cross-checks skipped")
F = torch.nn.functional
nn = torch.nn

from reference import (  # noqa: E402
    TransformerConfig,
    causal_mask,
    count_parameters,
    decoder_block,
    encoder_block,
    gelu,
    layer_norm,
    lengths_to_valid,
    multi_head_attention,
    padding_mask,
    rms_norm,
    scaled_dot_product_attention,
    silu,
)

TOL = dict(rtol=0, atol=1e-12)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


def qkv(seed, B=2, h=3, L=4, S=5, d=6, dv=2):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(B, h, L, d)), rng.normal(size=(B, h, S, d)), rng.normal(size=(B, h, S, dv))


# ------------------------------------------------------------------- SDPA


@pytest.mark.parametrize("seed", range(3))
def test_sdpa_with_boolean_mask_and_a_fully_masked_row(seed):
    q, k, v = qkv(seed)
    rng = np.random.default_rng(100 + seed)
    mask = rng.random((2, 1, 4, 5)) < 0.6
    mask[0, 0, 1] = False  # one query row sees nothing: both give a zero output row
    ours, _ = scaled_dot_product_attention(q, k, v, mask)
    theirs = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=torch.from_numpy(mask)).numpy()
    np.testing.assert_allclose(ours, theirs, **TOL)
    assert np.all(ours[0, :, 1] == 0)


@pytest.mark.parametrize("seed", range(3))
def test_sdpa_with_float_mask_and_custom_scale(seed):
    q, k, v = qkv(seed)
    rng = np.random.default_rng(200 + seed)
    bias = rng.normal(size=(4, 5))
    bias[2, 3] = -np.inf
    ours, _ = scaled_dot_product_attention(q, k, v, bias, scale=0.3)
    theirs = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(bias), scale=0.3).numpy()
    np.testing.assert_allclose(ours, theirs, **TOL)


@pytest.mark.filterwarnings("ignore:Lower right causal bias")  # (6, 3) has fully masked rows
@pytest.mark.parametrize(("L", "S"), [(4, 4), (3, 6), (6, 3)])
def test_is_causal_is_top_left_and_causal_lower_right_is_bottom_right(L, S):
    q, k, v = qkv(L * 10 + S, L=L, S=S)
    ours, _ = scaled_dot_product_attention(q, k, v, causal_mask(L, S))
    theirs = F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True).numpy()
    np.testing.assert_allclose(ours, theirs, **TOL)
    from torch.nn.attention.bias import causal_lower_right

    ours_br, _ = scaled_dot_product_attention(q, k, v, causal_mask(L, S, align="bottom-right"))
    theirs_br = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=causal_lower_right(L, S)).numpy()
    np.testing.assert_allclose(ours_br, theirs_br, **TOL)


# ------------------------------------------------------- nn.MultiheadAttention


def torch_mha_params(mha: nn.MultiheadAttention) -> dict[str, np.ndarray]:
    """Our row-vector params from torch's packed (out, in) in_proj weight."""
    E = mha.embed_dim
    w, b = mha.in_proj_weight.detach().numpy(), mha.in_proj_bias.detach().numpy()
    return {
        "w_q": w[:E].T, "w_k": w[E : 2 * E].T, "w_v": w[2 * E :].T,
        "b_q": b[:E], "b_k": b[E : 2 * E], "b_v": b[2 * E :],
        "w_o": mha.out_proj.weight.detach().numpy().T, "b_o": mha.out_proj.bias.detach().numpy(),
    }  # fmt: skip


@pytest.mark.parametrize("cross", [False, True])
def test_multihead_attention_matches_nn_multiheadattention(cross):
    torch.manual_seed(0)
    E, h, B, L, S = 8, 2, 2, 4, 6 if cross else 4
    mha = nn.MultiheadAttention(E, h, batch_first=True, dtype=torch.float64).eval()
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    rng = np.random.default_rng(1)
    x = rng.normal(size=(B, L, E))
    mem = rng.normal(size=(B, S, E)) if cross else x
    allowed = causal_mask(L, S) if not cross else rng.random((L, S)) < 0.7
    allowed[:, 0] = True  # keep every row non-empty (torch MHA returns NaN for empty rows)
    key_valid = lengths_to_valid([S, S - 1], S)
    ours, our_w = multi_head_attention(x, mem, torch_mha_params(mha), h, mask=allowed & padding_mask(key_valid))
    with torch.no_grad():
        theirs, their_w = mha(
            t(x), t(mem), t(mem),
            attn_mask=torch.from_numpy(~allowed),  # torch: True = NOT allowed
            key_padding_mask=torch.from_numpy(~key_valid),
            need_weights=True, average_attn_weights=False,
        )  # fmt: skip
    np.testing.assert_allclose(ours, theirs.numpy(), **TOL)
    np.testing.assert_allclose(our_w, their_w.numpy(), **TOL)


# ---------------------------------------------------------- norms, activations


@pytest.mark.parametrize("eps", [1e-5, 1e-12, 0.3])
def test_layer_norm_matches_torch(eps):
    rng = np.random.default_rng(2)
    x, g, b = rng.normal(loc=1, scale=3, size=(3, 4, 7)), rng.normal(size=7), rng.normal(size=7)
    theirs = F.layer_norm(t(x), (7,), t(g), t(b), eps=eps).numpy()
    np.testing.assert_allclose(layer_norm(x, g, b, eps=eps), theirs, **TOL)
    ln = nn.LayerNorm(7, eps=eps, dtype=torch.float64)
    with torch.no_grad():
        np.testing.assert_allclose(layer_norm(x, eps=eps), ln(t(x)).numpy(), **TOL)


@pytest.mark.parametrize("eps", [1e-6, 1e-5, 0.2])
def test_rms_norm_matches_torch_rmsnorm(eps):
    rng = np.random.default_rng(3)
    x, g = rng.normal(scale=2, size=(2, 5, 6)), rng.normal(size=6)
    norm = nn.RMSNorm(6, eps=eps, dtype=torch.float64)
    with torch.no_grad():
        norm.weight.copy_(t(g))
        theirs = norm(t(x)).numpy()
    np.testing.assert_allclose(rms_norm(x, g, eps=eps), theirs, **TOL)


def test_activations_match_torch():
    x = np.linspace(-8, 8, 401)
    np.testing.assert_allclose(gelu(x), F.gelu(t(x)).numpy(), **TOL)
    np.testing.assert_allclose(gelu(x, approximate="tanh"), F.gelu(t(x), approximate="tanh").numpy(), **TOL)
    np.testing.assert_allclose(silu(x), F.silu(t(x)).numpy(), **TOL)


# --------------------------------------------------------------------- blocks


def linear_params(layer: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
    return layer.weight.detach().numpy().T, layer.bias.detach().numpy()


def norm_params(norm: nn.LayerNorm) -> dict[str, np.ndarray]:
    return {"gamma": norm.weight.detach().numpy(), "beta": norm.bias.detach().numpy()}


def randomise(module: nn.Module, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            centre = 1.0 if name.startswith("norm") and name.endswith("weight") else 0.0  # norm scales near 1
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) * 0.3 + centre)


def ffn_params(layer) -> dict[str, np.ndarray]:
    w_1, b_1 = linear_params(layer.linear1)
    w_2, b_2 = linear_params(layer.linear2)
    return {"w_1": w_1, "b_1": b_1, "w_2": w_2, "b_2": b_2}


@pytest.mark.parametrize(("norm_first", "activation"), [(True, "relu"), (False, "relu"), (True, "gelu"), (False, "gelu")])
def test_encoder_block_matches_transformer_encoder_layer(norm_first, activation):
    layer = nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=12, dropout=0.0, activation=activation, batch_first=True,
        norm_first=norm_first, dtype=torch.float64,
    ).eval()  # fmt: skip
    randomise(layer, 4)
    cfg = TransformerConfig(
        d_model=8, n_heads=2, d_ff=12, ffn_kind=activation, n_encoder_layers=1, n_decoder_layers=0,
        norm_first=norm_first, qkv_bias=True, out_bias=True, ffn_bias=True,
    )  # fmt: skip
    params = {
        "attn_norm": norm_params(layer.norm1), "self_attn": torch_mha_params(layer.self_attn),
        "ffn_norm": norm_params(layer.norm2), "ffn": ffn_params(layer),
    }  # fmt: skip
    x = np.random.default_rng(5).normal(size=(2, 5, 8))
    valid = lengths_to_valid([5, 3], 5)
    with torch.no_grad():
        theirs = layer(t(x), src_key_padding_mask=torch.from_numpy(~valid)).numpy()
    ours = encoder_block(x, params, cfg, mask=padding_mask(valid))
    np.testing.assert_allclose(ours[valid], theirs[valid], **TOL)  # padded rows: torch may zero them


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_block_matches_transformer_decoder_layer(norm_first):
    layer = nn.TransformerDecoderLayer(
        8, 2, dim_feedforward=12, dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64
    ).eval()
    randomise(layer, 6)
    cfg = TransformerConfig(
        d_model=8, n_heads=2, d_ff=12, n_encoder_layers=1, n_decoder_layers=1, norm_first=norm_first,
        qkv_bias=True, out_bias=True, ffn_bias=True,
    )  # fmt: skip
    params = {
        "attn_norm": norm_params(layer.norm1), "self_attn": torch_mha_params(layer.self_attn),
        "cross_norm": norm_params(layer.norm2), "cross_attn": torch_mha_params(layer.multihead_attn),
        "ffn_norm": norm_params(layer.norm3), "ffn": ffn_params(layer),
    }  # fmt: skip
    rng = np.random.default_rng(7)
    x, memory = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 6, 8))
    with torch.no_grad():
        theirs = layer(t(x), t(memory), tgt_mask=torch.from_numpy(~causal_mask(4))).numpy()
    np.testing.assert_allclose(decoder_block(x, params, cfg, memory=memory), theirs, **TOL)


def test_transformer_base_parameter_count_matches_nn_transformer():
    # nn.Transformer adds a final LayerNorm to each stack, which the 2017 post-LN description
    # does not have; with that one difference the counts agree exactly.
    with torch.device("meta"):
        model = nn.Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048, batch_first=True)
    torch_total = sum(p.numel() for p in model.parameters()) + 37000 * 512  # + shared embedding
    import dataclasses

    from reference import PRESETS

    with_final_norms = dataclasses.replace(PRESETS["transformer-base"], final_norm=True)
    assert count_parameters(with_final_norms)["total"] == torch_total
    assert count_parameters(PRESETS["transformer-base"])["total"] == torch_total - 2 * 1024
