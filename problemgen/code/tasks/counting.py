"""Coding task: count the parameters of a decoder-only transformer from its configuration."""

from __future__ import annotations

import dataclasses

import numpy as np

import reference as ref
from problemgen.code.sandbox import Call
from problemgen.code import inputs as I
from problemgen.code.base import Case, Task

KEYS = ("embeddings", "attention", "ffn", "norms", "head", "total")

SPEC = """\
# count_parameters

Write `count_parameters(config)` for a decoder-only transformer (GPT / Llama family) and return a
dict of ints with the keys `embeddings`, `attention`, `ffn`, `norms`, `head` and `total`
(`total` is the sum of the other five). `config` is a dict:

| key | meaning |
|---|---|
| `d_model`, `n_layers`, `d_ff`, `vocab_size`, `max_positions` | sizes |
| `n_heads`, `n_kv_heads` | query heads and key/value heads (`n_kv_heads < n_heads` is grouped-query attention); head width `d_model / n_heads` |
| `ffn` | `"relu"` or `"gelu"` (two matrices `d_model x d_ff` and `d_ff x d_model`) or `"swiglu"` (three) |
| `norm` | `"layer"` (LayerNorm: scale and shift per feature) or `"rms"` (RMSNorm: scale only) |
| `position` | `"learned"` (a `max_positions x d_model` table), `"sinusoidal"` or `"rope"` (no parameters) |
| `bias` | whether every linear layer (Q, K, V, O and the FFN matrices) has a bias vector |
| `tie_embeddings` | whether the output head reuses the token embedding matrix |

Conventions: `embeddings` = token table (`vocab_size x d_model`) + learned position table;
`attention` counts Q, K, V, O of all layers (K and V have `n_kv_heads * d_k` outputs);
`norms` counts two norms per layer plus one final norm; `head` is `d_model x vocab_size` when the
head is not tied and 0 when it is. Counts are compared exactly.
"""

STARTER = '''\
"""Task: count_parameters. Run `problemgen task show count_parameters` for the full spec."""


def count_parameters(config):
    """Return {"embeddings", "attention", "ffn", "norms", "head", "total"} as ints."""
    raise NotImplementedError
'''


def to_reference(config: dict) -> ref.TransformerConfig:
    bias = bool(config["bias"])
    return ref.TransformerConfig(
        d_model=config["d_model"], n_heads=config["n_heads"], n_kv_heads=config["n_kv_heads"], d_ff=config["d_ff"],
        ffn_kind=config["ffn"], vocab_size=config["vocab_size"], n_encoder_layers=0, n_decoder_layers=config["n_layers"],
        max_positions=config["max_positions"], position=config["position"], norm=config["norm"], norm_first=True,
        norm_bias=True, qkv_bias=bias, out_bias=bias, ffn_bias=bias, lm_head=True,
        tie_embeddings=bool(config["tie_embeddings"]), final_norm=True,
    )  # fmt: skip


def breakdown(cfg: ref.TransformerConfig) -> dict[str, int]:
    counts = ref.count_parameters(cfg)
    out = {
        "embeddings": counts["token_embeddings"] + counts["position_embeddings"],
        "attention": counts["attention"], "ffn": counts["ffn"], "norms": counts["norms"], "head": counts["head"],
    }  # fmt: skip
    out["total"] = sum(out.values())
    assert out["total"] == counts["total"], "a component of the reference count is not mapped"
    return {k: int(v) for k, v in out.items()}


def _with(counts: dict[str, int], **changes: int) -> dict[str, int]:
    out = dict(counts) | changes
    out["total"] = sum(out[k] for k in KEYS if k != "total")
    return out


def count_variants(config: dict) -> list[tuple[str, dict]]:
    cfg = to_reference(config)
    right = breakdown(cfg)
    d, V, h = config["d_model"], config["vocab_size"], config["n_heads"]
    made = [("forgot_norm_params", _with(right, norms=0)),
            ("layers_forgotten", breakdown(dataclasses.replace(cfg, n_decoder_layers=1))),
            ("heads_multiply_params", _with(right, attention=right["attention"] * h))]  # fmt: skip
    if config["bias"]:
        made.append(("forgot_biases", breakdown(dataclasses.replace(cfg, qkv_bias=False, out_bias=False, ffn_bias=False))))
    else:
        made.append(("biases_counted_when_none", breakdown(dataclasses.replace(cfg, qkv_bias=True, out_bias=True, ffn_bias=True))))
    if config["tie_embeddings"]:
        made.append(("tied_counted_twice", _with(right, head=V * d)))
    else:
        made.append(("untied_counted_once", _with(right, head=0)))
    if config["n_kv_heads"] < h:
        made.append(("kv_projection_all_heads", breakdown(dataclasses.replace(cfg, n_kv_heads=None))))
    if config["ffn"] == "swiglu":
        made.append(("swiglu_two_matrices", breakdown(dataclasses.replace(cfg, ffn_kind="relu"))))
    if config["position"] == "learned":
        made.append(("forgot_position_embeddings", _with(right, embeddings=V * d)))
    if config["norm"] == "layer":
        made.append(("forgot_norm_params", _with(right, norms=right["norms"] // 2)))  # γ counted, β forgotten
    return made


def _case(name: str, group: str, config: dict, about: str) -> Case:
    expected = breakdown(to_reference(config))
    return Case(name, group, Call("count_parameters", (config,)), expected, about,
                variants=I.variants(expected, count_variants(config)))  # fmt: skip


GPT2_SMALL = {"d_model": 768, "n_heads": 12, "n_kv_heads": 12, "n_layers": 12, "d_ff": 3072, "vocab_size": 50257,
              "max_positions": 1024, "ffn": "gelu", "norm": "layer", "position": "learned", "bias": True,
              "tie_embeddings": True}  # fmt: skip
LLAMA_LIKE = {"d_model": 4096, "n_heads": 32, "n_kv_heads": 8, "n_layers": 32, "d_ff": 14336, "vocab_size": 128256,
              "max_positions": 8192, "ffn": "swiglu", "norm": "rms", "position": "rope", "bias": False,
              "tie_embeddings": False}  # fmt: skip


def _random_config(rng: np.random.Generator, ffn: str | None = None, bias: bool | None = None, **fixed: object) -> dict:
    n_heads = int(rng.choice([2, 4, 8]))
    d_model = n_heads * int(rng.choice([8, 16, 32]))
    ffn = str(rng.choice(["relu", "gelu", "swiglu"])) if ffn is None else ffn
    return {
        "d_model": d_model, "n_heads": n_heads, "n_kv_heads": n_heads // int(rng.choice([1, 2])),
        "n_layers": int(rng.integers(2, 7)), "d_ff": d_model * int(rng.integers(2, 5)),
        "vocab_size": int(rng.integers(100, 5000)), "max_positions": int(rng.choice([64, 128, 256])),
        "ffn": ffn, "norm": str(rng.choice(["layer", "rms"])), "position": str(rng.choice(["learned", "sinusoidal", "rope"])),
        "bias": (bool(rng.random() < 0.5) if bias is None else bias) and ffn != "swiglu",
        "tie_embeddings": bool(rng.random() < 0.5),
    } | fixed  # fmt: skip


def _cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        return [_case("public/gpt2-small", "public", GPT2_SMALL, "GPT-2 small (124,439,808 parameters)")]
    cases = [_case("hidden/llama-like", "hidden", LLAMA_LIKE, "a Llama-3-8B-like configuration (GQA, SwiGLU, RMSNorm, untied)")]
    # The first two are pinned so that every feature a misconception needs (biases, LayerNorm, a learned
    # position table, a tied head, SwiGLU) occurs in every draw; the Llama-like case adds GQA and an untied head.
    pinned = [{"ffn": str(rng.choice(["relu", "gelu"])), "bias": True, "norm": "layer", "position": "learned",
               "tie_embeddings": True}, {"ffn": "swiglu", "bias": False}]  # fmt: skip
    for i in range(5):
        config = _random_config(rng, **(pinned[i] if i < len(pinned) else {}))
        about = ", ".join(f"{k}={config[k]}" for k in ("ffn", "norm", "position", "bias", "tie_embeddings"))
        cases.append(_case(f"hidden/{i + 1}", "hidden", config, about))
    return cases


COUNT_PARAMETERS = Task(
    name="count_parameters", title="Parameter count of a decoder-only transformer", topic="counting",
    summary="Count embeddings, attention, FFN, norms and head parameters from a config dict.",
    spec=SPEC, starter=STARTER, functions=("count_parameters",), make_cases=_cases,
)  # fmt: skip

TASKS = (COUNT_PARAMETERS,)
"""This module's tasks, in teaching order."""
ORDER = 5
"""Where this module's tasks come in ``problemgen task list`` (modules are discovered, not listed)."""
