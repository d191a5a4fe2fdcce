"""Parameter-count problems: one matrix, one attention or FFN layer, norms, embeddings, a whole model.

Counts come from ``reference.params`` (``attention_parameters``, ``ffn_parameters``,
``norm_parameters``, ``count_parameters``) on a :class:`reference.TransformerConfig`; a known mistake
is the same count on a config with one thing changed (biases switched off, the head untied, SwiGLU
counted as a two-matrix FFN, …), so every wrong value is exactly what that slip produces. Real models
come from ``reference.PRESETS`` (GPT-2 small = 124,439,808 with its tied head).
"""

from __future__ import annotations

from dataclasses import asdict, replace

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft, ProblemgenError
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import (ATTENTION_FORMS, attention_form, check_override, counted, override, pick,
                                         presets_of_form)
from problemgen.model.registry import register

TransformerConfig = reference.TransformerConfig

MODEL_PRESETS = (
    "gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base", "bert-large", "llama-2-7b",
    "llama-3-8b", "mistral-7b", "qwen3-4b", "t5-small", "transformer-base",
)
"""Presets a whole-model problem may use (every one documented in ``reference.params``)."""

PRESET_NAMES = {
    "gpt2-small": "GPT-2 small", "gpt2-medium": "GPT-2 medium", "gpt2-large": "GPT-2 large", "gpt2-xl": "GPT-2 XL",
    "bert-base": "BERT-base", "bert-large": "BERT-large", "llama-2-7b": "Llama 2 7B", "llama-3-8b": "Llama 3 8B",
    "mistral-7b": "Mistral 7B", "qwen3-4b": "Qwen3-4B", "t5-small": "T5-small",
    "transformer-base": "the base Transformer of 2017",
}
"""How prose names each preset; params keep the preset id (``llama-3-8b``) so a variant can be rebuilt."""


def preset_params(cfg: TransformerConfig) -> dict:
    """``preset`` (the id, or None for a custom config) and ``model_name`` (its display name) for params."""
    if cfg.name == "custom":
        return {"preset": None, "model_name": None}
    return {"preset": cfg.name, "model_name": PRESET_NAMES[cfg.name]}


def config_params(cfg: TransformerConfig) -> dict:
    """The config as plain data for the template, plus the derived widths it needs to state."""
    data = {k: v for k, v in asdict(cfg).items() if k != "notes"}
    data |= {"kv_heads": cfg.kv_heads, "d_head": cfg.d_head, "arch": cfg.arch, "n_stacks": cfg.n_stacks}
    return data


def _total(cfg: TransformerConfig) -> int:
    return reference.count_parameters(cfg)["total"]


def _without_biases(cfg: TransformerConfig) -> TransformerConfig:
    return replace(cfg, qkv_bias=False, out_bias=False, ffn_bias=False)


def _with_biases(cfg: TransformerConfig) -> TransformerConfig:
    """The same model with a bias on every linear layer (what counting biases it does not have gives)."""
    return replace(cfg, qkv_bias=True, out_bias=True, ffn_bias=True)


# ------------------------------------------------------------------------------------- one matrix


def linear_parameters(d_in: int, d_out: int, bias: bool) -> int:
    """Parameters of one linear map ``x @ W + b``: a ``d_in × d_out`` matrix and ``d_out`` biases.

    The reference counts whole sublayers, not single matrices; the tests check that four of these
    make ``reference.attention_parameters`` and two make ``reference.ffn_parameters``.
    """
    return d_in * d_out + d_out * int(bias)


_MATRICES = {
    "w1": ("d_model", "d_ff"),
    "w2": ("d_ff", "d_model"),
    "wo": ("d_model", "d_model"),
}


@register("params.matrix", title="Parameters of one weight matrix")
def matrix(rng: np.random.Generator, difficulty: int, *, bias: bool | None = None) -> Draft:
    """One projection: an FFN or output matrix (d1), one head's W_Q (d2), W_Q of every head and layer (d3)."""
    d_model = pick(rng, (256, 512, 768, 1024) if difficulty == 1
                   else (384, 512, 640, 768, 896, 1024, 1280, 1536, 2048, 2560, 3072, 4096))
    n_heads = pick(rng, [h for h in (8, 12, 16, 20, 32) if d_model % h == 0 and d_model // h >= 32])
    n_layers = pick(rng, (6, 12, 24, 36))
    bias = override("bias", bias, bool(rng.integers(2)) if bias is None else None, (False, True))
    d_k, d_ff = d_model // n_heads, 4 * d_model
    dims = {"d_model": d_model, "d_ff": d_ff}
    if difficulty == 1:
        what = pick(rng, sorted(_MATRICES))
        rows, cols = (dims[n] for n in _MATRICES[what])
        key = linear_parameters(rows, cols, bias)
        mistakes = [mistake("forgot_biases", linear_parameters(rows, cols, False)) if bias
                    else mistake("biases_counted_when_none", linear_parameters(rows, cols, True))]
    elif difficulty == 2:
        what, rows, cols = "wq_head", d_model, d_k
        key = linear_parameters(d_model, d_k, bias)
        mistakes = [mistake("dk_equals_d_model", linear_parameters(d_model, d_model, bias))]
        if bias:
            mistakes.append(mistake("forgot_biases", linear_parameters(d_model, d_k, False)))
    else:
        what, rows, cols = "wq_all", d_model, d_k
        per_layer = n_heads * linear_parameters(d_model, d_k, bias)
        key = n_layers * per_layer
        mistakes = [
            mistake("layers_forgotten", per_layer),
            mistake("heads_multiply_params", n_layers * n_heads * linear_parameters(d_model, d_model, bias)),
        ]
        if bias:
            mistakes.append(mistake("forgot_biases", n_layers * n_heads * linear_parameters(d_model, d_k, False)))
    part = AnswerPart("count", "integer", key, label="the number of parameters", spec=counted("parameters"),
                      mistakes=tuple(mistakes))
    return Draft(
        params={"what": what, "d_model": d_model, "d_ff": d_ff, "n_heads": n_heads, "n_layers": n_layers,
                "bias": bias, "rows": rows, "cols": cols, "d_k": d_k},
        parts=[part],
        solution={"weights": rows * cols, "biases": cols * int(bias), "one": linear_parameters(rows, cols, bias),
                  "count": key},
    )


# ---------------------------------------------------------------------------------- one sublayer


def _attention_breakdown(cfg: TransformerConfig) -> dict:
    """Weights and biases of W_Q, W_K, W_V, W_O (shown in the worked solution)."""
    d, h, h_kv, d_head = cfg.d_model, cfg.n_heads, cfg.kv_heads, cfg.d_head
    q, kv, o = linear_parameters(d, h * d_head, cfg.qkv_bias), linear_parameters(d, h_kv * d_head, cfg.qkv_bias), \
        linear_parameters(h * d_head, d, cfg.out_bias)
    return {"q": q, "k": kv, "v": kv, "o": o, "q_out": h * d_head, "kv_out": h_kv * d_head}


@register("params.attention_layer", title="Parameters of one attention layer")
def attention_layer(rng: np.random.Generator, difficulty: int, *, bias: bool | None = None) -> Draft:
    """Q, K, V and output projections of one layer: MHA with or without biases, GQA at difficulty 3."""
    d_model = pick(rng, (32, 48, 64, 96, 128, 192, 256, 384, 512) if difficulty == 1
                   else (384, 512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 4096, 5120))
    n_heads = pick(rng, [h for h in (2, 4, 8, 12, 16, 32) if d_model % h == 0 and d_model // h >= 16])
    bias = override("bias", bias, bool(rng.integers(2)) if bias is None else None, (False, True))
    out_bias = bias if difficulty == 1 else bias and bool(rng.integers(2))
    n_kv_heads, head_dim = None, None
    if difficulty == 3:
        n_kv_heads = pick(rng, [g for g in (1, 2, 4, 8) if n_heads % g == 0 and g < n_heads])
        if rng.integers(3) == 0:
            head_dim = pick(rng, [w for w in (64, 128) if w != d_model // n_heads])
    cfg = TransformerConfig(d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim,
                            qkv_bias=bias, out_bias=out_bias)
    key = reference.attention_parameters(cfg)
    mistakes = [mistake("heads_multiply_params", reference.attention_parameters(replace(cfg, head_dim=d_model)))]
    if bias or out_bias:
        mistakes.append(mistake("forgot_biases", reference.attention_parameters(_without_biases(cfg))))
    else:
        mistakes.append(mistake("biases_counted_when_none", reference.attention_parameters(_with_biases(cfg))))
    if cfg.kv_heads < n_heads:
        mistakes.append(mistake("kv_projection_all_heads", reference.attention_parameters(replace(cfg, n_kv_heads=None))))
    part = AnswerPart("count", "integer", key, label="the parameters of the attention layer",
                      spec=counted("parameters"), mistakes=tuple(mistakes))
    return Draft(params={"config": config_params(cfg)}, parts=[part],
                 solution=_attention_breakdown(cfg) | {"count": key})


def _swiglu_widths(d_model: int) -> tuple[int, ...]:
    """SwiGLU hidden widths for ``d_model``: 8/3 · d_model rounded up to a multiple of 64, 128 or 256.

    Real models pick such widths (Llama 2 7B: 4096 -> 11008 = 8/3 · 4096 rounded up to 256), and some
    pick wider ones (Llama 3 8B uses 14336), which is why the width is always stated in the problem.
    """
    target = 8 * d_model / 3
    return tuple(sorted({int(-(-target // m) * m) for m in (64, 128, 256)} | {int(3.5 * d_model)}))


_FFN_WIDTHS = {
    d: _swiglu_widths(d)
    for d in (128, 192, 256, 320, 384, 512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096, 5120,
              6144, 8192)
}


@register("params.ffn_layer", title="Parameters of a feed-forward layer")
def ffn_layer(rng: np.random.Generator, difficulty: int, *, kind: str | None = None,
              bias: bool | None = None) -> Draft:
    """A two-matrix ReLU/GELU FFN or a three-matrix SwiGLU FFN; the whole stack at difficulty 3.

    ``bias``: whether the two-matrix FFN has biases (SwiGLU never has; asking for biases rules it out)."""
    check_override("kind", kind, ("relu", "gelu", "swiglu"))
    check_override("bias", bias, (False, True))
    if kind is None:
        kind = pick(rng, ("relu", "gelu")) if difficulty == 1 else "swiglu" if difficulty == 2 else \
            pick(rng, ("gelu", "swiglu") if not bias else ("gelu",))
    override("kind", kind, None, ("relu", "gelu", "swiglu"))  # notes the kind drawn
    d_model = pick(rng, sorted(_FFN_WIDTHS))
    d_ff = pick(rng, _FFN_WIDTHS[d_model]) if kind == "swiglu" else 4 * d_model
    drawn = kind != "swiglu" and bool(rng.integers(2))
    bias = override("bias", bias, drawn, (False, True) if kind != "swiglu" else (False,))
    n_layers = pick(rng, (12, 24, 32)) if difficulty == 3 else 1
    cfg = TransformerConfig(d_model=d_model, n_heads=8, d_ff=d_ff, ffn_kind=kind, ffn_bias=bias,
                            n_decoder_layers=n_layers)
    one = reference.ffn_parameters(cfg)
    key = reference.count_parameters(cfg)["ffn"]
    mistakes = []
    if kind == "swiglu":
        mistakes.append(mistake("swiglu_two_matrices", n_layers * reference.ffn_parameters(replace(cfg, ffn_kind="gelu"))))
    if bias:
        mistakes.append(mistake("forgot_biases", n_layers * reference.ffn_parameters(_without_biases(cfg))))
    if n_layers > 1:
        mistakes.append(mistake("layers_forgotten", one))
    part = AnswerPart("count", "integer", key, label="the feed-forward parameters", spec=counted("parameters"),
                      mistakes=tuple(mistakes))
    n_mat = 3 if kind == "swiglu" else 2
    return Draft(
        params={"kind": kind, "d_model": d_model, "d_ff": d_ff, "bias": bias, "n_layers": n_layers},
        parts=[part],
        solution={"matrices": n_mat, "matrix": d_model * d_ff, "biases": (d_ff + d_model) * int(bias), "one": one,
                  "count": key},
    )


# ------------------------------------------------------------------------------------------ norms


@register("params.norms", title="Parameters of LayerNorm and RMSNorm")
def norms(rng: np.random.Generator, difficulty: int, *, norm: str | None = None) -> Draft:
    """One norm (d1), all norms of a pre-LN decoder (d2) or of an encoder–decoder model (d3)."""
    norm = override("norm", norm, pick(rng, ("layer", "rms")) if norm is None else None, ("layer", "rms"))
    d_model = pick(rng, (256, 512, 768, 1024, 2048, 4096))
    n_layers = pick(rng, (6, 12, 24, 32))
    enc_dec = difficulty == 3
    cfg = TransformerConfig(d_model=d_model, n_heads=8, norm=norm, norm_first=True, final_norm=difficulty >= 2,
                            n_encoder_layers=n_layers if enc_dec else 0, n_decoder_layers=1 if difficulty == 1 else n_layers)
    other = replace(cfg, norm="rms" if norm == "layer" else "layer")
    one = reference.norm_parameters(cfg)
    key = one if difficulty == 1 else reference.count_parameters(cfg)["norms"]
    confused = reference.norm_parameters(other) if difficulty == 1 else reference.count_parameters(other)["norms"]
    if norm == "layer":
        mistakes = [mistake("forgot_norm_params", confused, hint="LayerNorm has a shift β as well as a scale γ.")]
    else:
        mistakes = [mistake("rms_subtracts_mean", confused, hint="RMSNorm has only a scale γ: no shift β.")]
    if difficulty >= 2:
        single = replace(cfg, n_encoder_layers=min(cfg.n_encoder_layers, 1), n_decoder_layers=1)
        mistakes.append(mistake("layers_forgotten", reference.count_parameters(single)["norms"]))
    part = AnswerPart("count", "integer", key, label="the normalisation parameters", spec=counted("parameters"),
                      mistakes=tuple(mistakes))
    n_norms = key // one
    return Draft(
        params={"norm": norm, "d_model": d_model, "n_layers": n_layers, "enc_dec": enc_dec, "difficulty": difficulty},
        parts=[part],
        solution={"one": one, "n_norms": n_norms, "count": key},
    )


# ------------------------------------------------------------------------------------- embeddings


@register("params.embeddings", title="Embedding and output-head parameters")
def embeddings(rng: np.random.Generator, difficulty: int, *, tied: bool | None = None, preset: str | None = None) -> Draft:
    """Token table, learned positions and the output head, tied or untied (real presets at difficulty 3)."""
    override("preset", preset, None, MODEL_PRESETS)
    if preset or (difficulty == 3 and rng.integers(2)):
        cfg = reference.PRESETS[preset or pick(rng, ("gpt2-small", "gpt2-medium", "bert-base", "llama-2-7b",
                                                      "llama-3-8b", "mistral-7b", "qwen3-4b"))]
    elif difficulty == 3:  # an encoder with segment embeddings, with or without an (untied) MLM-style head
        cfg = TransformerConfig(d_model=pick(rng, (256, 384, 512, 768, 1024)), n_heads=8,
                                vocab_size=pick(rng, (8000, 21128, 30522, 50265)),
                                n_encoder_layers=6, n_decoder_layers=0, token_types=2, position="learned",
                                max_positions=pick(rng, (128, 256, 512)), lm_head=bool(rng.integers(2)),
                                tie_embeddings=False)
    else:
        vocab = pick(rng, (4096, 8000, 16000, 30522, 32000, 50257, 65536))
        d_model = pick(rng, (128, 256, 384, 512, 768, 1024, 2048))
        tie = override("tied", tied, bool(rng.integers(2)) if tied is None else None, (False, True))
        cfg = TransformerConfig(d_model=d_model, n_heads=8, vocab_size=vocab, tie_embeddings=tie if difficulty == 2 else True,
                                position="learned" if difficulty == 2 else "rope",
                                max_positions=pick(rng, (512, 1024, 2048)))
    counts = reference.count_parameters(cfg)
    key = counts["token_embeddings"] + counts["position_embeddings"] + counts["token_type_embeddings"] + counts["head"]
    mistakes = []
    if cfg.lm_head and cfg.tie_embeddings:
        mistakes.append(mistake("tied_counted_twice", key + cfg.vocab_size * cfg.d_model))
    if cfg.lm_head and not cfg.tie_embeddings:
        mistakes.append(mistake("untied_counted_once", key - counts["head"]))
    if counts["position_embeddings"]:
        mistakes.append(mistake("forgot_position_embeddings", key - counts["position_embeddings"]))
    part = AnswerPart("count", "integer", key, label="the embedding and head parameters", spec=counted("parameters"),
                      mistakes=tuple(mistakes))
    return Draft(params={"config": config_params(cfg)} | preset_params(cfg),
                 parts=[part], solution={k: counts[k] for k in ("token_embeddings", "position_embeddings",
                                                               "token_type_embeddings", "head")} | {"count": key})


# ------------------------------------------------------------------------------------ whole model


def _custom_model(rng: np.random.Generator, difficulty: int, form: str | None, tied: bool | None) -> TransformerConfig:
    """A small GPT-like model (d1) or a Llama-like one with RMSNorm, SwiGLU and maybe GQA (d2); ``form`` and
    ``tied``, when given, decide GQA and a tied head (the draws keep their order, so a seed drawn without
    them is the model it always was)."""
    if difficulty == 1:
        d_model = pick(rng, (64, 128, 256))
        return TransformerConfig(
            d_model=d_model, n_heads=pick(rng, (2, 4, 8)), d_ff=4 * d_model, ffn_kind="gelu",
            vocab_size=pick(rng, (1000, 4096, 8000, 10000)), n_decoder_layers=pick(rng, (2, 3, 4)),
            max_positions=pick(rng, (128, 256, 512)), position="learned", norm="layer", qkv_bias=True,
            out_bias=True, ffn_bias=True, tie_embeddings=True,
        )
    d_model = pick(rng, (512, 768, 1024))
    n_heads = pick(rng, (8, 16))
    n_kv_heads = pick(rng, (None, 2, 4))
    if form == "mha":
        n_kv_heads = None
    elif form == "gqa" and n_kv_heads is None:
        n_kv_heads = pick(rng, (2, 4))
    vocab_size, n_layers = pick(rng, (16000, 32000)), pick(rng, (4, 8, 12))
    drawn_tie = bool(rng.integers(2))
    return TransformerConfig(
        d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, d_ff=_FFN_WIDTHS[d_model][0],
        ffn_kind="swiglu", vocab_size=vocab_size, n_decoder_layers=n_layers,
        position="rope", norm="rms", tie_embeddings=drawn_tie if tied is None else tied,
    )


_FAMILIES = ("gpt2-small", "bert-base", "llama-2-7b", "qwen3-4b", "t5-small", "transformer-base")


def _family_model(rng: np.random.Generator, form: str | None) -> TransformerConfig:
    """A real model family (GPT-2, BERT, Llama, Qwen3, T5, the 2017 base model) at freshly drawn sizes."""
    family = reference.PRESETS[pick(rng, presets_of_form(_FAMILIES, form))]
    d_model = pick(rng, (512, 768, 1024, 2048))
    n_heads = pick(rng, [h for h in (8, 16) if d_model // h >= 64])
    n_layers = pick(rng, (4, 6, 12, 24))
    changes = {"name": "custom", "d_model": d_model, "n_heads": n_heads,
               "d_ff": pick(rng, _FFN_WIDTHS[d_model]) if family.ffn_kind == "swiglu" else 4 * d_model,
               "vocab_size": pick(rng, (16000, 32000, 50257))}
    if family.n_kv_heads is not None:
        changes["n_kv_heads"] = pick(rng, [g for g in (2, 4, 8) if n_heads % g == 0 and g < n_heads])
    if family.n_encoder_layers:
        changes["n_encoder_layers"] = n_layers
    if family.n_decoder_layers:
        changes["n_decoder_layers"] = n_layers
    return replace(family, **changes)


def _model_mistakes(cfg: TransformerConfig, counts: dict) -> list:
    """Every counting slip that changes this model's total, each computed on a modified config."""
    total = counts["total"]
    found = []
    if cfg.qkv_bias or cfg.out_bias or cfg.ffn_bias:
        found.append(mistake("forgot_biases", _total(_without_biases(cfg))))
    else:
        found.append(mistake("biases_counted_when_none", _total(_with_biases(cfg))))
    found.append(mistake("forgot_norm_params", total - counts["norms"]))
    if cfg.lm_head and cfg.tie_embeddings:
        found.append(mistake("tied_counted_twice", _total(replace(cfg, tie_embeddings=False))))
    if cfg.lm_head and not cfg.tie_embeddings:
        found.append(mistake("untied_counted_once", _total(replace(cfg, tie_embeddings=True))))
    if cfg.ffn_kind == "swiglu":
        found.append(mistake("swiglu_two_matrices", _total(replace(cfg, ffn_kind="gelu"))))
    if counts["position_embeddings"]:
        found.append(mistake("forgot_position_embeddings", total - counts["position_embeddings"]))
    if cfg.kv_heads < cfg.n_heads:
        found.append(mistake("kv_projection_all_heads", _total(replace(cfg, n_kv_heads=None))))
    found.append(mistake("heads_multiply_params", _total(replace(cfg, head_dim=cfg.d_model))))
    return found


def _per_layer(cfg: TransformerConfig) -> int:
    """Parameters one more decoder layer adds (attention, FFN and its norms)."""
    return _total(replace(cfg, n_decoder_layers=2)) - _total(replace(cfg, n_decoder_layers=1))


@register("params.model", title="Parameters of a whole model")
def model(rng: np.random.Generator, difficulty: int, *, preset: str | None = None, form: str | None = None,
          tied: bool | None = None) -> Draft:
    """Count a whole model from its config: small custom models (d1, d2) or real presets (d3).

    Overrides that shape the question, so a class set pins them: ``form``, with or without grouped-query
    attention (``mha``/``gqa``; a real model or family of that form at d3), and ``tied``, whether the drawn
    model of difficulty 2 ties its output head to the embeddings."""
    override("preset", preset, None, MODEL_PRESETS)
    forms = ("mha",) if difficulty == 1 and not preset else ATTENTION_FORMS
    check_override("form", form, forms)
    drawn_model = not preset and difficulty < 3
    if tied is not None and not drawn_model:
        raise ProblemgenError("params.model takes tied only for the models it draws (difficulties 1 and 2, no preset)")
    check_override("tied", tied, (True,) if difficulty == 1 else (False, True))
    if preset or (difficulty == 3 and rng.integers(2)):
        cfg = reference.PRESETS[preset or pick(rng, presets_of_form(MODEL_PRESETS, form))]
    elif difficulty == 3:
        cfg = _family_model(rng, form)
    else:
        cfg = _custom_model(rng, difficulty, form, tied)
    if form not in (None, attention_form(cfg)):
        raise ProblemgenError(f"the preset {preset} has form={attention_form(cfg)}, not form={form}")
    override("form", form, attention_form(cfg), forms)
    if drawn_model:
        override("tied", tied, cfg.tie_embeddings, (True,) if difficulty == 1 else (False, True))
    counts = reference.count_parameters(cfg)
    parts = []
    decoder_only = cfg.arch == "decoder-only"
    if decoder_only and not preset and difficulty < 3:
        per_layer = _per_layer(cfg)
        layer_mistakes = [mistake("heads_multiply_params", _per_layer(replace(cfg, head_dim=cfg.d_model)))]
        if cfg.ffn_kind == "swiglu":
            layer_mistakes.append(mistake("swiglu_two_matrices", _per_layer(replace(cfg, ffn_kind="gelu"))))
        if cfg.qkv_bias or cfg.ffn_bias:
            layer_mistakes.append(mistake("forgot_biases", _per_layer(_without_biases(cfg))))
        parts.append(AnswerPart("per_layer", "integer", per_layer, label="the parameters of one layer",
                                spec=counted("parameters"), mistakes=tuple(layer_mistakes)))
    parts.append(AnswerPart("total", "integer", counts["total"], label="the total parameter count",
                            spec=counted("parameters"), mistakes=tuple(_model_mistakes(cfg, counts))))
    per_layer_solution = _per_layer(cfg) if decoder_only else None
    return Draft(
        params={"config": config_params(cfg)} | preset_params(cfg),
        parts=parts,
        solution={"counts": counts, "per_layer": per_layer_solution,
                  "attention_one": reference.attention_parameters(cfg),
                  "ffn_one": reference.ffn_parameters(cfg), "norm_one": reference.norm_parameters(cfg)},
    )
