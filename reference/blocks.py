"""Transformer blocks, whole stacks and a small end-to-end forward pass.

A block wraps each sublayer (attention, feed-forward) in a residual connection and a norm:

* pre-LN  (``config.norm_first``, GPT-2 onwards): ``x + sublayer(norm(x))``
* post-LN (the 2017 paper, BERT):                 ``norm(x + sublayer(x))``

Encoder blocks use bidirectional self-attention (only padding is masked). Decoder blocks use
causal self-attention, then (in encoder-decoder models) cross-attention whose queries come from
the decoder and keys/values from the encoder output, then the feed-forward network.

Parameters are nested dicts of arrays (see :func:`init_params`); the number of numbers in the
tree equals :func:`reference.params.count_parameters` for the same config, which the tests
check. Not implemented in the forward pass: T5's relative position bias (counted only) and
the ``sqrt(d_model)`` embedding scaling of the 2017 paper.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from reference.attention import grouped_attention, merge_heads, project, split_heads
from reference.kvcache import KVCache
from reference.layers import feed_forward, layer_norm, rms_norm
from reference.masks import causal_mask, combine_masks, padding_mask
from reference.params import TransformerConfig
from reference.positional import rope, sinusoidal_encoding

__all__ = [
    "apply_norm",
    "attention_sublayer",
    "count_tree",
    "decode_step",
    "decoder_block",
    "encoder_block",
    "forward",
    "init_params",
    "pool",
]

Params = Mapping[str, Any]


# ------------------------------------------------------------------ parameters


def init_params(config: TransformerConfig, rng: np.random.Generator, *, scale: float = 0.02) -> dict[str, Any]:
    """Random parameters for ``config``: weights ``N(0, scale^2)``, norm scales near 1.

    Norm scales and shifts are perturbed away from 1 and 0 so that tests notice a norm that is
    skipped or applied in the wrong place.

    >>> from reference.params import PRESETS, count_parameters
    >>> import dataclasses
    >>> tiny = dataclasses.replace(PRESETS["gpt2-small"], d_model=8, n_heads=2, d_ff=16,
    ...                            vocab_size=11, max_positions=6, n_decoder_layers=2)
    >>> count_tree(init_params(tiny, np.random.default_rng(0))) == count_parameters(tiny)["total"]
    True
    """
    d = config.d_model

    def w(*shape: int) -> np.ndarray:
        return rng.normal(scale=scale, size=shape)  # shape

    def norm(width: int = d) -> dict[str, np.ndarray]:
        p = {"gamma": 1.0 + 0.1 * rng.normal(size=width)}  # (width,)
        if config.norm == "layer" and config.norm_bias:
            p["beta"] = 0.1 * rng.normal(size=width)  # (width,)
        return p

    def attention() -> dict[str, np.ndarray]:
        q_width, kv_width = config.n_heads * config.d_head, config.kv_heads * config.d_head
        p = {"w_q": w(d, q_width), "w_k": w(d, kv_width), "w_v": w(d, kv_width), "w_o": w(q_width, d)}
        if config.qkv_bias:
            p |= {"b_q": w(q_width), "b_k": w(kv_width), "b_v": w(kv_width)}
        if config.out_bias:
            p["b_o"] = w(d)
        if config.qk_norm:
            p["q_norm"] = norm(config.d_head)["gamma"]  # (d_head,)
            p["k_norm"] = norm(config.d_head)["gamma"]  # (d_head,)
        return p

    def ffn() -> dict[str, np.ndarray]:
        f = config.d_ff
        if config.ffn_kind == "swiglu":
            p = {"w_gate": w(d, f), "w_up": w(d, f), "w_down": w(f, d)}
            if config.ffn_bias:
                p |= {"b_gate": w(f), "b_up": w(f), "b_down": w(d)}
            return p
        p = {"w_1": w(d, f), "w_2": w(f, d)}
        if config.ffn_bias:
            p |= {"b_1": w(f), "b_2": w(d)}
        return p

    def layer(cross: bool) -> dict[str, Any]:
        p: dict[str, Any] = {"attn_norm": norm(), "self_attn": attention()}
        if cross:
            p |= {"cross_norm": norm(), "cross_attn": attention()}
        return p | {"ffn_norm": norm(), "ffn": ffn()}

    def stack(n_layers: int, cross: bool) -> dict[str, Any]:
        p: dict[str, Any] = {"layers": [layer(cross) for _ in range(n_layers)]}
        if config.position == "learned":
            p["position_embedding"] = w(config.max_positions, d)  # (P, d)
        if config.relative_attention_buckets:
            p["relative_attention_bias"] = w(config.relative_attention_buckets, config.n_heads)  # (buckets, h)
        if config.embedding_norm:
            p["embedding_norm"] = norm()
        if config.final_norm:
            p["final_norm"] = norm()
        return p

    params: dict[str, Any] = {"token_embedding": w(config.vocab_size, d)}  # (V, d)
    if config.token_types:
        params["token_type_embedding"] = w(config.token_types, d)  # (types, d)
    if config.n_encoder_layers:
        params["encoder"] = stack(config.n_encoder_layers, cross=False)
    if config.n_decoder_layers:
        params["decoder"] = stack(config.n_decoder_layers, cross=config.n_encoder_layers > 0)
    if config.lm_head and not config.tie_embeddings:
        params["lm_head"] = w(d, config.vocab_size)  # (d, V)
    if config.pooler:
        params["pooler"] = {"w": w(d, d), "b": w(d)}
    return params


def count_tree(params: Any) -> int:
    """Total number of array elements in a nested dict/list of arrays."""
    if isinstance(params, Mapping):
        return sum(count_tree(v) for v in params.values())
    if isinstance(params, list | tuple):
        return sum(count_tree(v) for v in params)
    return int(np.asarray(params).size)


# ------------------------------------------------------------------- sublayers


def apply_norm(x: np.ndarray, p: Params, config: TransformerConfig) -> np.ndarray:
    """The config's norm (LayerNorm or RMSNorm) with parameters ``p``."""
    if config.norm == "layer":
        return layer_norm(x, p["gamma"], p.get("beta"), eps=config.norm_eps)  # (..., d)
    return rms_norm(x, p["gamma"], eps=config.norm_eps)  # (..., d)


def attention_sublayer(
    x_q: np.ndarray,
    x_kv: np.ndarray,
    p: Params,
    config: TransformerConfig,
    *,
    mask: np.ndarray | None = None,
    q_positions: np.ndarray | None = None,
    kv_positions: np.ndarray | None = None,
    cache: KVCache | None = None,
    layer: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention with the config's extras: q/k norms, RoPE, GQA and a KV cache.

    Positions are only used for RoPE (default ``0..L-1``). With a ``cache``, the new keys and
    values are appended to ``layer``'s cache and the queries attend over all of them.
    Returns ``(output, weights)``.
    """
    h, h_kv = config.n_heads, config.kv_heads
    q = split_heads(project(x_q, p["w_q"], p.get("b_q")), h)  # (..., h, L, d_k)
    k = split_heads(project(x_kv, p["w_k"], p.get("b_k")), h_kv)  # (..., h_kv, S, d_k)
    v = split_heads(project(x_kv, p["w_v"], p.get("b_v")), h_kv)  # (..., h_kv, S, d_v)
    if config.qk_norm:
        q = rms_norm(q, p["q_norm"], eps=config.norm_eps)  # (..., h, L, d_k)
        k = rms_norm(k, p["k_norm"], eps=config.norm_eps)  # (..., h_kv, S, d_k)
    if config.position == "rope":
        q = rope(q, q_positions, base=config.rope_base)  # (..., h, L, d_k)
        k = rope(k, kv_positions, base=config.rope_base)  # (..., h_kv, S, d_k)
    if cache is not None:
        k, v = cache.append(layer, k, v)  # (..., h_kv, T+S, d_k), (..., h_kv, T+S, d_v)
    heads, weights = grouped_attention(q, k, v, mask)  # (..., h, L, d_v), (..., h, L, S)
    return project(merge_heads(heads), p["w_o"], p.get("b_o")), weights  # (..., L, d_model)


def _residual(x: np.ndarray, norm_p: Params, config: TransformerConfig, sublayer: Any) -> np.ndarray:
    """Pre-LN ``x + f(norm(x))`` or post-LN ``norm(x + f(x))``."""
    if config.norm_first:
        return x + sublayer(apply_norm(x, norm_p, config))  # (..., L, d)
    return apply_norm(x + sublayer(x), norm_p, config)  # (..., L, d)


def encoder_block(
    x: np.ndarray,
    params: Params,
    config: TransformerConfig,
    *,
    mask: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    trace: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Bidirectional self-attention then FFN, each with residual + norm; ``(..., L, d)`` in and out.

    ``mask`` is usually a padding mask. If ``trace`` is a dict it receives the attention
    weights (``"self_attn_weights"``) and sublayer outputs, for worked solutions.
    """
    trace = {} if trace is None else trace

    def attend(h: np.ndarray) -> np.ndarray:
        out, trace["self_attn_weights"] = attention_sublayer(
            h, h, params["self_attn"], config, mask=mask, q_positions=positions, kv_positions=positions
        )  # (..., L, d), (..., h, L, L)
        trace["self_attn_out"] = out
        return out

    def ffn(h: np.ndarray) -> np.ndarray:
        trace["ffn_out"] = feed_forward(h, params["ffn"], config.ffn_kind)  # (..., L, d)
        return trace["ffn_out"]

    x = _residual(x, params["attn_norm"], config, attend)  # (..., L, d)
    return _residual(x, params["ffn_norm"], config, ffn)  # (..., L, d)


def decoder_block(
    x: np.ndarray,
    params: Params,
    config: TransformerConfig,
    *,
    memory: np.ndarray | None = None,
    self_mask: np.ndarray | None = None,
    memory_mask: np.ndarray | None = None,
    positions: np.ndarray | None = None,
    cache: KVCache | None = None,
    layer: int = 0,
    trace: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Causal self-attention, optional cross-attention to ``memory``, then FFN.

    ``x`` is ``(..., L, d)``. The causal mask is built here: ``L`` queries against the
    ``T + L`` keys seen so far (``T`` cached), bottom-right aligned, and combined with
    ``self_mask`` (e.g. padding; it must broadcast to ``(..., L, T + L)``). Cross-attention
    runs when the block has ``cross_attn``
    parameters; ``memory`` is the encoder output ``(..., S, d)`` and ``memory_mask`` hides its
    padding. Without a cache, ``positions`` default to ``0..L-1``; with one, to the cached length
    onwards.
    """
    trace = {} if trace is None else trace
    L = x.shape[-2]
    past = 0 if cache is None else cache.length(layer)
    if positions is None:
        positions = np.arange(past, past + L)  # (L,)
    causal = causal_mask(L, past + L, align="bottom-right")  # (L, T+L)
    mask = combine_masks(causal, self_mask)  # (..., L, T+L)

    def self_attend(h: np.ndarray) -> np.ndarray:
        out, trace["self_attn_weights"] = attention_sublayer(
            h, h, params["self_attn"], config, mask=mask, q_positions=positions,
            kv_positions=positions, cache=cache, layer=layer,
        )  # fmt: skip
        trace["self_attn_out"] = out  # (..., L, d)
        return out

    def cross_attend(h: np.ndarray) -> np.ndarray:
        # no RoPE across sequences: encoder and decoder positions are unrelated
        plain = config if config.position != "rope" else _without_rope(config)
        out, trace["cross_attn_weights"] = attention_sublayer(h, memory, params["cross_attn"], plain, mask=memory_mask)
        trace["cross_attn_out"] = out  # (..., L, d)
        return out

    def ffn(h: np.ndarray) -> np.ndarray:
        trace["ffn_out"] = feed_forward(h, params["ffn"], config.ffn_kind)  # (..., L, d)
        return trace["ffn_out"]

    x = _residual(x, params["attn_norm"], config, self_attend)  # (..., L, d)
    if "cross_attn" in params:
        if memory is None:
            raise ValueError("decoder_block: this block cross-attends, so it needs the encoder output (memory)")
        x = _residual(x, params["cross_norm"], config, cross_attend)  # (..., L, d)
    return _residual(x, params["ffn_norm"], config, ffn)  # (..., L, d)


def _without_rope(config: TransformerConfig) -> TransformerConfig:
    return replace(config, position="none")


# ---------------------------------------------------------------- whole model


def _embed(
    tokens: np.ndarray,
    params: Params,
    stack: Params,
    config: TransformerConfig,
    positions: np.ndarray,
    token_types: np.ndarray | None,
) -> np.ndarray:
    """Token embedding + absolute positions + token types, then the optional embedding norm."""
    if config.position == "relative":
        raise ValueError("forward: relative position bias (T5) is counted by count_parameters but not implemented")
    x = np.asarray(params["token_embedding"])[tokens]  # (..., L, d)
    if config.position == "learned":
        x = x + np.asarray(stack["position_embedding"])[positions]  # (..., L, d)
    elif config.position == "sinusoidal":
        x = x + sinusoidal_encoding(int(np.max(positions)) + 1, config.d_model)[positions]  # (..., L, d)
    if "token_type_embedding" in params:
        types = np.zeros_like(tokens) if token_types is None else token_types  # (..., L)
        x = x + np.asarray(params["token_type_embedding"])[types]  # (..., L, d)
    if "embedding_norm" in stack:
        x = apply_norm(x, stack["embedding_norm"], config)  # (..., L, d)
    return x


def _logits(hidden: np.ndarray, params: Params, config: TransformerConfig) -> np.ndarray:
    head = params["lm_head"] if "lm_head" in params else np.asarray(params["token_embedding"]).T  # (d, V)
    return hidden @ head  # (..., L, V)


def _encode(
    tokens: np.ndarray, params: Params, config: TransformerConfig, valid: np.ndarray | None, token_types: np.ndarray | None
) -> np.ndarray:
    stack = params["encoder"]
    positions = np.arange(tokens.shape[-1])  # (L,)
    x = _embed(tokens, params, stack, config, positions, token_types)  # (..., L, d)
    mask = None if valid is None else padding_mask(valid)  # (..., 1, L)
    for layer_params in stack["layers"]:
        x = encoder_block(x, layer_params, config, mask=mask, positions=positions)  # (..., L, d)
    if "final_norm" in stack:
        x = apply_norm(x, stack["final_norm"], config)  # (..., L, d)
    return x


def _decode(
    tokens: np.ndarray,
    params: Params,
    config: TransformerConfig,
    *,
    memory: np.ndarray | None,
    valid: np.ndarray | None = None,
    memory_valid: np.ndarray | None = None,
    cache: KVCache | None = None,
) -> np.ndarray:
    stack = params["decoder"]
    past = 0 if cache is None else cache.length(0)
    positions = np.arange(past, past + tokens.shape[-1])  # (L,)
    x = _embed(tokens, params, stack, config, positions, None)  # (..., L, d)
    self_mask = None if valid is None else padding_mask(valid)  # (..., 1, L)
    memory_mask = None if memory_valid is None else padding_mask(memory_valid)  # (..., 1, S)
    for i, layer_params in enumerate(stack["layers"]):
        x = decoder_block(
            x, layer_params, config, memory=memory, self_mask=self_mask, memory_mask=memory_mask,
            positions=positions, cache=cache, layer=i,
        )  # fmt: skip
    if "final_norm" in stack:
        x = apply_norm(x, stack["final_norm"], config)  # (..., L, d)
    return x


def forward(
    tokens: np.ndarray,
    params: Params,
    config: TransformerConfig,
    *,
    encoder_tokens: np.ndarray | None = None,
    valid: np.ndarray | None = None,
    encoder_valid: np.ndarray | None = None,
    token_types: np.ndarray | None = None,
) -> np.ndarray:
    """Run the whole model on integer ``tokens`` ``(..., L)``.

    Returns vocabulary logits ``(..., L, V)`` when the config has an LM head, else the final
    hidden states ``(..., L, d)`` (encoder-only models; see :func:`pool`). An encoder-decoder
    model encodes ``encoder_tokens`` and decodes ``tokens`` (the target so far). ``valid`` /
    ``encoder_valid`` are boolean ``(..., L)`` arrays marking real (non-padding) tokens.

    >>> from reference.params import TransformerConfig
    >>> cfg = TransformerConfig(d_model=8, n_heads=2, d_ff=16, vocab_size=10, max_positions=5,
    ...                         n_decoder_layers=2, ffn_kind="gelu_tanh")
    >>> params = init_params(cfg, np.random.default_rng(0))
    >>> forward(np.array([[1, 2, 3]]), params, cfg).shape
    (1, 3, 10)
    """
    tokens = np.asarray(tokens)  # (..., L)
    if config.arch == "encoder-only":
        hidden = _encode(tokens, params, config, valid, token_types)  # (..., L, d)
    else:
        memory = None
        if config.arch == "encoder-decoder":
            if encoder_tokens is None:
                raise ValueError("forward: an encoder-decoder model needs encoder_tokens")
            memory = _encode(np.asarray(encoder_tokens), params, config, encoder_valid, None)  # (..., S, d)
        hidden = _decode(tokens, params, config, memory=memory, valid=valid, memory_valid=encoder_valid)
    return _logits(hidden, params, config) if config.lm_head else hidden


def decode_step(
    tokens: np.ndarray,
    params: Params,
    config: TransformerConfig,
    cache: KVCache,
    *,
    memory: np.ndarray | None = None,
    memory_valid: np.ndarray | None = None,
) -> np.ndarray:
    """Logits for new ``tokens`` ``(..., t)`` given the ``cache`` of everything before them.

    The cache is updated in place, so calling this once per token reproduces, row by row, the
    logits of :func:`forward` on the whole sequence. ``memory`` is the encoder output for
    encoder-decoder models (computed once, outside the loop).

    >>> from reference.params import TransformerConfig
    >>> cfg = TransformerConfig(d_model=8, n_heads=2, d_ff=16, vocab_size=10, max_positions=5,
    ...                         n_decoder_layers=2, position="rope", norm="rms", ffn_kind="swiglu")
    >>> params = init_params(cfg, np.random.default_rng(0), scale=0.5)
    >>> tokens = np.array([4, 1, 7, 2])
    >>> cache = KVCache(cfg.n_decoder_layers)
    >>> steps = np.concatenate([decode_step(tokens[t : t + 1], params, cfg, cache) for t in range(4)])
    >>> bool(np.allclose(steps, forward(tokens, params, cfg)))
    True
    """
    if config.arch == "encoder-only":
        raise ValueError("decode_step: an encoder-only model does not decode")
    hidden = _decode(np.asarray(tokens), params, config, memory=memory, memory_valid=memory_valid, cache=cache)
    return _logits(hidden, params, config)  # (..., t, V)


def pool(hidden: np.ndarray, params: Params) -> np.ndarray:
    """BERT's pooler: ``tanh`` of an affine map of the first token's final hidden state."""
    first = np.asarray(hidden)[..., 0, :]  # (..., d)
    return np.tanh(project(first, params["pooler"]["w"], params["pooler"]["b"]))  # (..., d)
