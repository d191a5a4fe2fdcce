"""Model configurations, parameter counts, KV-cache sizes and attention cost counts.

:func:`count_parameters` derives a model's size from its architecture, component by component,
and the presets reproduce the totals that the widely used open-source implementations report
(a parameter shared between two places, like a tied output head, is counted once):

==================  ==============  =====================================================
preset              total           notes
==================  ==============  =====================================================
gpt2-small          124,439,808     learned positions, biases, LayerNorm, tied head
gpt2-medium         354,823,168
gpt2-large          774,030,080
gpt2-xl             1,557,611,200
bert-base           109,482,240     token types, embedding LayerNorm, pooler, no LM head
bert-large          335,141,888
llama-2-7b          6,738,415,616   RMSNorm, SwiGLU, RoPE, no biases, untied head
llama-3-8b          8,030,261,248   as Llama 2 plus GQA (8 KV heads), 128,256 vocabulary
mistral-7b          7,241,732,096   v0.1: GQA (8 KV heads), d_ff 14,336
qwen3-4b            4,022,468,096   GQA, head_dim 128 != d_model/h, q/k RMSNorm, tied head
t5-small            60,506,624      RMSNorm without bias, relative attention bias, shared
                                    and tied embeddings, 6 + 6 layers
transformer-base    63,082,496      the 2017 base model as described; the paper's table
                                    rounds its size to 65M (see the preset's comment)
==================  ==============  =====================================================

Conventions: weights are ``(d_in, d_out)``; "attention" counts the Q, K, V and output
projections (and their biases); per-head q/k RMSNorm weights (Qwen3) are counted under
"norms" together with every LayerNorm/RMSNorm; an encoder-decoder model shares one token
embedding between its two stacks.

FLOPs count a multiply-add as 2 operations and leave out the scaling, masking and softmax
(they are O(L*S), not O(L*S*d)).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from reference.layers import FFN_KINDS

__all__ = [
    "PRESETS",
    "TransformerConfig",
    "attention_flops",
    "attention_memory",
    "attention_parameters",
    "count_parameters",
    "ffn_parameters",
    "kv_cache_bytes",
    "matmul_flops",
    "norm_parameters",
]

POSITIONS = ("learned", "sinusoidal", "rope", "relative", "none")
NORMS = ("layer", "rms")


@dataclass(frozen=True)
class TransformerConfig:
    """Hyperparameters of a transformer, enough to build it and to count its parameters.

    ``n_encoder_layers`` / ``n_decoder_layers`` select the family: decoder-only (GPT, Llama)
    has only decoder layers (and no cross-attention), encoder-only (BERT) only encoder layers,
    encoder-decoder (T5, the 2017 model) both, and then every decoder layer cross-attends.
    ``n_kv_heads`` (default ``n_heads``) gives grouped-/multi-query attention; ``head_dim``
    defaults to ``d_model // n_heads`` but some models choose it freely (Qwen3).
    """

    name: str = "custom"
    d_model: int = 512
    n_heads: int = 8
    n_kv_heads: int | None = None
    head_dim: int | None = None
    d_ff: int = 2048
    ffn_kind: Literal["relu", "gelu", "gelu_tanh", "swiglu"] = "relu"
    vocab_size: int = 32000
    n_encoder_layers: int = 0
    n_decoder_layers: int = 6
    max_positions: int = 512
    position: Literal["learned", "sinusoidal", "rope", "relative", "none"] = "learned"
    norm: Literal["layer", "rms"] = "layer"
    norm_first: bool = True  # pre-LN (True) or post-LN as in the 2017 paper (False)
    norm_eps: float = 1e-5
    norm_bias: bool = True  # LayerNorm has a beta; ignored for RMSNorm, which never has one
    qkv_bias: bool = False
    out_bias: bool = False
    ffn_bias: bool = False
    qk_norm: bool = False  # per-head RMSNorm on queries and keys (Qwen3)
    lm_head: bool = True  # an output projection to vocabulary logits exists
    tie_embeddings: bool = True  # ...and it reuses the token embedding matrix
    token_types: int = 0  # BERT's segment embeddings
    embedding_norm: bool = False  # a norm right after the embeddings (BERT)
    final_norm: bool = True  # a norm after the last layer of each stack (pre-LN models)
    pooler: bool = False  # BERT's d_model x d_model + bias pooler on the first token
    relative_attention_buckets: int = 0  # T5: one (buckets x heads) bias table per stack
    rope_base: float = 10000.0
    notes: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.ffn_kind not in FFN_KINDS:
            raise ValueError(f"TransformerConfig: ffn_kind must be one of {FFN_KINDS}, got {self.ffn_kind!r}")
        if self.position not in POSITIONS:
            raise ValueError(f"TransformerConfig: position must be one of {POSITIONS}, got {self.position!r}")
        if self.norm not in NORMS:
            raise ValueError(f"TransformerConfig: norm must be one of {NORMS}, got {self.norm!r}")
        if self.head_dim is None and self.d_model % self.n_heads:
            raise ValueError(
                f"TransformerConfig: d_model={self.d_model} is not divisible by n_heads={self.n_heads}; set head_dim"
            )
        if self.n_heads % self.kv_heads:
            raise ValueError(f"TransformerConfig: n_heads={self.n_heads} is not a multiple of n_kv_heads={self.kv_heads}")
        if self.position == "rope" and self.d_head % 2:
            raise ValueError(f"TransformerConfig: RoPE rotates feature pairs, so head_dim must be even, got {self.d_head}")
        if self.n_encoder_layers + self.n_decoder_layers <= 0:
            raise ValueError("TransformerConfig: a model needs at least one layer")

    @property
    def kv_heads(self) -> int:
        """Number of key/value heads (equals ``n_heads`` unless GQA/MQA)."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def d_head(self) -> int:
        """Per-head query/key/value width."""
        return self.d_model // self.n_heads if self.head_dim is None else self.head_dim

    @property
    def arch(self) -> str:
        """``"decoder-only"``, ``"encoder-only"`` or ``"encoder-decoder"``."""
        if self.n_encoder_layers and self.n_decoder_layers:
            return "encoder-decoder"
        return "encoder-only" if self.n_encoder_layers else "decoder-only"

    @property
    def n_stacks(self) -> int:
        """How many layer stacks (1, or 2 for encoder-decoder)."""
        return int(self.n_encoder_layers > 0) + int(self.n_decoder_layers > 0)


# -------------------------------------------------------------- per-layer counts


def attention_parameters(config: TransformerConfig) -> int:
    """Parameters of one attention sublayer: Q, K, V, O projections plus enabled biases.

    >>> attention_parameters(PRESETS["gpt2-small"])  # 4 * 768 * 768 + 4 * 768
    2362368
    """
    d, h, h_kv, d_head = config.d_model, config.n_heads, config.kv_heads, config.d_head
    weights = d * h * d_head + 2 * d * h_kv * d_head + h * d_head * d
    biases = (h * d_head + 2 * h_kv * d_head) * config.qkv_bias + d * config.out_bias
    return weights + biases


def ffn_parameters(config: TransformerConfig) -> int:
    """Parameters of one feed-forward sublayer (two matrices, or three for SwiGLU).

    >>> ffn_parameters(PRESETS["llama-2-7b"])  # 3 * 4096 * 11008
    135266304
    """
    d, d_ff = config.d_model, config.d_ff
    if config.ffn_kind == "swiglu":
        return 3 * d * d_ff + (2 * d_ff + d) * config.ffn_bias
    return 2 * d * d_ff + (d_ff + d) * config.ffn_bias


def norm_parameters(config: TransformerConfig, width: int | None = None) -> int:
    """Parameters of one norm over ``width`` features (default ``d_model``).

    LayerNorm has a scale and (usually) a shift; RMSNorm only a scale.

    >>> norm_parameters(PRESETS["bert-base"]), norm_parameters(PRESETS["llama-2-7b"])
    (1536, 4096)
    """
    width = config.d_model if width is None else width
    has_shift = config.norm == "layer" and config.norm_bias
    return width * (2 if has_shift else 1)


# ---------------------------------------------------------------- model count


def count_parameters(config: TransformerConfig) -> dict[str, int]:
    """Parameter count by component; the ``"total"`` entry is the sum of the others.

    >>> counts = count_parameters(PRESETS["gpt2-small"])
    >>> counts["total"], counts["token_embeddings"], counts["head"]
    (124439808, 38597376, 0)
    """
    d = config.d_model
    n_enc, n_dec = config.n_encoder_layers, config.n_decoder_layers
    n_layers = n_enc + n_dec
    cross = n_dec if n_enc else 0  # decoder layers cross-attend only when an encoder exists
    norms_per_layer = 2 * n_layers + cross
    qk_norms = 2 * norm_parameters(config, config.d_head) if config.qk_norm else 0
    counts = {
        "token_embeddings": config.vocab_size * d,
        "position_embeddings": config.max_positions * d * config.n_stacks if config.position == "learned" else 0,
        "token_type_embeddings": config.token_types * d,
        "attention": n_layers * attention_parameters(config),
        "cross_attention": cross * attention_parameters(config),
        "relative_attention_bias": config.relative_attention_buckets * config.n_heads * config.n_stacks,
        "ffn": n_layers * ffn_parameters(config),
        "norms": norm_parameters(config) * (norms_per_layer + config.n_stacks * (config.final_norm + config.embedding_norm))
        + qk_norms * (n_layers + cross),
        "head": config.vocab_size * d if config.lm_head and not config.tie_embeddings else 0,
        "pooler": d * d + d if config.pooler else 0,
    }
    counts["total"] = sum(counts.values())
    return counts


# ------------------------------------------------------------ inference costs


def kv_cache_bytes(config: TransformerConfig, seq_len: int, batch: int = 1, bytes_per_value: int = 2) -> int:
    """Bytes of the self-attention KV cache for ``batch`` sequences of ``seq_len`` tokens.

    ``2 (K and V) x decoder layers x KV heads x head_dim x seq_len x batch x bytes``. GQA shrinks
    it through the KV-head count, not the query-head count. (An encoder-decoder model also keeps
    the cross-attention K/V of the source; that depends on the source length and is not
    included.) Default 2 bytes per value is fp16/bf16.

    The seed notes' Qwen3-4B figure at 4096 tokens is 576 MiB (not 576 MB):

    >>> kv_cache_bytes(PRESETS["qwen3-4b"], 4096), kv_cache_bytes(PRESETS["qwen3-4b"], 4096) / 2**20
    (603979776, 576.0)
    """
    if config.n_decoder_layers == 0:
        raise ValueError(f"kv_cache_bytes: {config.name} has no decoder layers, so it keeps no KV cache")
    return 2 * config.n_decoder_layers * config.kv_heads * config.d_head * seq_len * batch * bytes_per_value


def matmul_flops(m: int, k: int, n: int) -> int:
    """FLOPs of an ``(m, k) @ (k, n)`` product: ``2 m k n`` (one multiply and one add per term).

    >>> matmul_flops(128, 64, 128)
    2097152
    """
    return 2 * m * k * n


def attention_flops(config: TransformerConfig, L: int, S: int | None = None, batch: int = 1) -> dict[str, int]:
    """FLOPs of one attention sublayer for ``L`` queries over ``S`` keys (``S`` defaults to ``L``).

    Keys: ``q_proj`` / ``k_proj`` / ``v_proj`` / ``o_proj`` (the projections, linear in the
    sequence lengths), ``qk`` (the ``Q K^T`` scores, ``2 B h L S d_k``) and ``av`` (weights times
    values), ``projections`` and ``total``. Scaling, masking and softmax are not counted.

    >>> f = attention_flops(TransformerConfig(d_model=1024, n_heads=16), 128)
    >>> f["qk"], f["q_proj"]
    (33554432, 268435456)
    """
    S = L if S is None else S
    d, h, h_kv, d_head = config.d_model, config.n_heads, config.kv_heads, config.d_head
    f = {
        "q_proj": batch * matmul_flops(L, d, h * d_head),
        "k_proj": batch * matmul_flops(S, d, h_kv * d_head),
        "v_proj": batch * matmul_flops(S, d, h_kv * d_head),
        "o_proj": batch * matmul_flops(L, h * d_head, d),
        "qk": batch * h * matmul_flops(L, d_head, S),
        "av": batch * h * matmul_flops(L, S, d_head),
    }
    f["projections"] = f["q_proj"] + f["k_proj"] + f["v_proj"] + f["o_proj"]
    f["total"] = f["projections"] + f["qk"] + f["av"]
    return f


def attention_memory(
    config: TransformerConfig, L: int, S: int | None = None, batch: int = 1, bytes_per_value: int = 2
) -> dict[str, int]:
    """Size of the materialised score (= weight) matrices of one attention sublayer.

    ``score_entries`` is ``B x h x L x S``: quadratic in sequence length, the memory that
    FlashAttention avoids storing. ``score_bytes`` multiplies by ``bytes_per_value``.

    >>> attention_memory(PRESETS["gpt2-small"], 1024)["score_entries"]  # 12 heads x 1024^2
    12582912
    """
    S = L if S is None else S
    entries = batch * config.n_heads * L * S
    return {"score_entries": entries, "score_bytes": entries * bytes_per_value}


# ------------------------------------------------------------------- presets


def _gpt2(name: str, d_model: int, n_layers: int, n_heads: int) -> TransformerConfig:
    return TransformerConfig(
        name=name, d_model=d_model, n_heads=n_heads, d_ff=4 * d_model, ffn_kind="gelu_tanh",
        vocab_size=50257, n_decoder_layers=n_layers, max_positions=1024, position="learned",
        norm="layer", norm_first=True, qkv_bias=True, out_bias=True, ffn_bias=True,
        tie_embeddings=True, final_norm=True,
    )  # fmt: skip


def _bert(name: str, d_model: int, n_layers: int, n_heads: int) -> TransformerConfig:
    return TransformerConfig(
        name=name, d_model=d_model, n_heads=n_heads, d_ff=4 * d_model, ffn_kind="gelu",
        vocab_size=30522, n_encoder_layers=n_layers, n_decoder_layers=0, max_positions=512,
        position="learned", norm="layer", norm_first=False, norm_eps=1e-12, qkv_bias=True,
        out_bias=True, ffn_bias=True, lm_head=False, token_types=2, embedding_norm=True,
        final_norm=False, pooler=True, notes="BertModel with its pooler, without the MLM head",
    )  # fmt: skip


def _llama_like(name: str, **kw: object) -> TransformerConfig:
    base = dict(
        d_model=4096, n_heads=32, ffn_kind="swiglu", n_decoder_layers=32, position="rope",
        norm="rms", norm_first=True, tie_embeddings=False, final_norm=True,
    )  # fmt: skip
    base.update(kw)
    return TransformerConfig(name=name, **base)  # type: ignore[arg-type]


PRESETS: dict[str, TransformerConfig] = {
    "gpt2-small": _gpt2("gpt2-small", 768, 12, 12),
    "gpt2-medium": _gpt2("gpt2-medium", 1024, 24, 16),
    "gpt2-large": _gpt2("gpt2-large", 1280, 36, 20),
    "gpt2-xl": _gpt2("gpt2-xl", 1600, 48, 25),
    "bert-base": _bert("bert-base", 768, 12, 12),
    "bert-large": _bert("bert-large", 1024, 24, 16),
    "llama-2-7b": _llama_like(
        "llama-2-7b", d_ff=11008, vocab_size=32000, max_positions=4096, norm_eps=1e-5
    ),
    "llama-3-8b": _llama_like(
        "llama-3-8b", n_kv_heads=8, d_ff=14336, vocab_size=128256, max_positions=8192,
        norm_eps=1e-5, rope_base=500000.0,
    ),  # fmt: skip
    "mistral-7b": _llama_like(
        "mistral-7b", n_kv_heads=8, d_ff=14336, vocab_size=32000, max_positions=32768,
        norm_eps=1e-5, notes="v0.1",
    ),  # fmt: skip
    "qwen3-4b": _llama_like(
        "qwen3-4b", d_model=2560, n_heads=32, n_kv_heads=8, head_dim=128, d_ff=9728,
        vocab_size=151936, n_decoder_layers=36, max_positions=40960, norm_eps=1e-6,
        qk_norm=True, tie_embeddings=True, rope_base=1000000.0,
    ),  # fmt: skip
    "t5-small": TransformerConfig(
        name="t5-small", d_model=512, n_heads=8, d_ff=2048, ffn_kind="relu", vocab_size=32128,
        n_encoder_layers=6, n_decoder_layers=6, position="relative", norm="rms", norm_eps=1e-6,
        norm_first=True, final_norm=True, tie_embeddings=True, relative_attention_buckets=32,
        notes="T5 v1.0: no biases anywhere, one relative-position bias table per stack",
    ),  # fmt: skip
    "transformer-base": TransformerConfig(
        name="transformer-base", d_model=512, n_heads=8, d_ff=2048, ffn_kind="relu",
        vocab_size=37000, n_encoder_layers=6, n_decoder_layers=6, position="sinusoidal",
        norm="layer", norm_first=False, final_norm=False, qkv_bias=True, out_bias=True,
        ffn_bias=True, tie_embeddings=True,
        notes=(
            "Vaswani et al. (2017) base model as described: one 37000-token embedding shared by "
            "both stacks and the output layer, sinusoidal positions (no parameters), post-LN with "
            "LayerNorm scale and shift, biases on every projection. That gives 63,082,496 "
            "parameters; the paper's table lists 65M, a rounded figure whose counting convention "
            "it does not state."
        ),
    ),  # fmt: skip
}


def _check_presets() -> None:
    """Fail fast at import if a preset name and its ``name`` field disagree."""
    for key, cfg in PRESETS.items():
        if cfg.name != key:  # pragma: no cover - guards future edits
            raise ValueError(f"PRESETS[{key!r}] is named {cfg.name!r}")


_check_presets()
