"""Buggy multi-head attention: heads split or merged wrongly, K/V repeated wrongly for GQA, W_O
dropped or transposed, plus every attention knob of :mod:`problemgen.misconceptions.attention`."""

from __future__ import annotations

import math

import numpy as np

import reference as ref
from problemgen.misconceptions.attention import attention
from problemgen.misconceptions.catalogue import safely


def split_heads(x: np.ndarray, h: int, *, how: str = "right") -> np.ndarray:
    """(…, L, h·d) -> (…, h, L, d). ``how``: "right"; "no_transpose" (split_without_transpose: a plain
    reshape to (…, h, L, d)); "wrong_axis" (heads_split_wrong_axis: features read as (d, h))."""
    if how == "right":
        return ref.split_heads(x, h)  # (..., h, L, d)
    *lead, L, width = x.shape
    if how == "no_transpose":
        return x.reshape(*lead, h, L, width // h)  # (..., h, L, d) scrambled
    return np.moveaxis(x.reshape(*lead, L, width // h, h), -1, -3)  # (..., h, L, d) head r = columns r, r+h, ...


def merge_heads(x: np.ndarray, *, how: str = "right") -> np.ndarray:
    """(…, h, L, d) -> (…, L, h·d); the inverse of :func:`split_heads` with the same ``how``."""
    if how == "right":
        return ref.merge_heads(x)  # (..., L, h·d)
    *lead, h, L, d = x.shape
    if how == "no_transpose":
        return x.reshape(*lead, L, h * d)  # (..., L, h·d) scrambled
    return np.moveaxis(x, -3, -1).reshape(*lead, L, h * d)  # (..., L, h·d) feature j·h + r from head r


def repeat_kv(x: np.ndarray, n_rep: int, *, tile: bool = False) -> np.ndarray:
    """(…, h_kv, S, d) -> (…, h_kv·n_rep, S, d); ``tile`` is gqa_repeat_wrong (head r reads KV head r % h_kv)."""
    if not tile:
        return ref.repeat_kv(x, n_rep)  # (..., h, S, d)
    reps = [1] * x.ndim
    reps[-3] = n_rep
    return np.tile(x, reps)  # (..., h, S, d) KV heads cycled instead of repeated in place


def mha(x_q, x_kv, params, h, mask=None, *, n_kv_heads=None, split="right", merge="right", w_o="right",
        tile_kv=False, **attention_knobs):  # fmt: skip
    """Multi-head attention built from the knobs above; returns (output, weights (…, h, L, S)).

    ``w_o``: "right", "missing" (missing_w_o) or "transposed" (w_o_transposed).
    """
    h_kv = h if n_kv_heads is None else n_kv_heads
    q = split_heads(ref.project(x_q, params["w_q"], params.get("b_q")), h, how=split)  # (..., h, L, d)
    k = split_heads(ref.project(x_kv, params["w_k"], params.get("b_k")), h_kv, how=split)  # (..., h_kv, S, d)
    v = split_heads(ref.project(x_kv, params["w_v"], params.get("b_v")), h_kv, how=split)  # (..., h_kv, S, d)
    k, v = repeat_kv(k, h // h_kv, tile=tile_kv), repeat_kv(v, h // h_kv, tile=tile_kv)  # (..., h, S, d)
    if mask is not None:
        mask = np.asarray(mask)[..., None, :, :]  # (..., 1, L, S) one mask for every head
    heads, weights = attention(q, k, v, mask, **attention_knobs)  # (..., h, L, d), (..., h, L, S)
    concat = merge_heads(heads, how=merge)  # (..., L, h·d)
    if w_o == "missing":
        return concat, weights
    w = params["w_o"].T if w_o == "transposed" else params["w_o"]  # (h·d, d_model)
    return ref.project(concat, w, params.get("b_o")), weights  # (..., L, d_model)


def mha_variants(x_q, x_kv, params, h, mask=None, *, n_kv_heads=None) -> dict[str, tuple]:
    """Every applicable multi-head mistake's output, by tag (those that do not apply are left out)."""
    d_model = params["w_q"].shape[-1]

    def run(**knobs):
        return lambda: mha(x_q, x_kv, params, h, mask, n_kv_heads=n_kv_heads, **knobs)

    makers = {
        "missing_w_o": run(w_o="missing"),
        "w_o_transposed": run(w_o="transposed"),
        "split_without_transpose": run(split="no_transpose", merge="no_transpose"),
        "heads_split_wrong_axis": run(split="wrong_axis", merge="wrong_axis"),
        "merge_without_transpose": run(merge="no_transpose"),
        "no_scaling": run(scale=1.0),
        "scale_by_d_model": run(scale=1.0 / math.sqrt(d_model)),
        "softmax_wrong_axis": run(axis=-2),
    }
    if n_kv_heads is not None and 1 < n_kv_heads < h:
        makers["gqa_repeat_wrong"] = run(tile_kv=True)
    if mask is not None:
        makers |= {
            "mask_after_softmax": run(mask_mode="after"),
            "mask_ignored": run(mask_mode="ignore"),
            "inverted_mask": run(mask_mode="invert"),
        }
    return safely(makers)
