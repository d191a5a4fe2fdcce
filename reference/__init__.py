"""The numpy reference transformer: the oracle every problemgen answer is computed from.

It knows nothing about problems. Everything is plain numpy in float64 (sympy only in
:mod:`reference.exact` and :mod:`reference.shapes`), row-vector convention (``y = x @ w``),
boolean masks with ``True`` meaning "may attend", additive masks added to the scaled scores.

Modules: :mod:`~reference.attention` (softmax, scaled dot-product and multi-head attention),
:mod:`~reference.masks`, :mod:`~reference.layers` (norms, activations, FFN),
:mod:`~reference.positional` (sinusoidal, RoPE), :mod:`~reference.blocks` (encoder/decoder
blocks, full forward pass), :mod:`~reference.kvcache` (incremental decoding),
:mod:`~reference.params` (configs, parameter counts, KV-cache and attention costs),
:mod:`~reference.exact` (sympy arithmetic) and :mod:`~reference.shapes` (symbolic shapes).

``reference.exact`` imports sympy, so it is not loaded here: use ``from reference import exact``.
Bad arguments raise ``ValueError`` (the reference does not depend on problemgen, so callers
turn these into the project's own error type).
"""

from reference.attention import (
    grouped_attention,
    merge_heads,
    multi_head_attention,
    project,
    repeat_kv,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)
from reference.layers import FFN_KINDS, feed_forward, gelu, layer_norm, relu, rms_norm, sigmoid, silu
from reference.masks import additive_mask, causal_mask, combine_masks, lengths_to_valid, padding_mask
from reference.positional import rope, rope_angles, sinusoidal_encoding
from reference.kvcache import KVCache, cached_self_attention
from reference.params import (
    PRESETS,
    TransformerConfig,
    attention_flops,
    attention_memory,
    attention_parameters,
    count_parameters,
    ffn_parameters,
    kv_cache_bytes,
    matmul_flops,
    norm_parameters,
)
from reference import shapes
from reference.blocks import (
    apply_norm,
    attention_sublayer,
    count_tree,
    decode_step,
    decoder_block,
    encoder_block,
    forward,
    init_params,
    pool,
)

__all__ = [
    "FFN_KINDS",
    "KVCache",
    "PRESETS",
    "TransformerConfig",
    "additive_mask",
    "apply_norm",
    "attention_flops",
    "attention_memory",
    "attention_parameters",
    "attention_sublayer",
    "cached_self_attention",
    "causal_mask",
    "combine_masks",
    "count_parameters",
    "count_tree",
    "decode_step",
    "decoder_block",
    "encoder_block",
    "feed_forward",
    "ffn_parameters",
    "forward",
    "gelu",
    "grouped_attention",
    "init_params",
    "kv_cache_bytes",
    "layer_norm",
    "lengths_to_valid",
    "matmul_flops",
    "merge_heads",
    "multi_head_attention",
    "norm_parameters",
    "padding_mask",
    "pool",
    "project",
    "relu",
    "repeat_kv",
    "rms_norm",
    "rope",
    "rope_angles",
    "scaled_dot_product_attention",
    "shapes",
    "sigmoid",
    "silu",
    "sinusoidal_encoding",
    "softmax",
    "split_heads",
]
