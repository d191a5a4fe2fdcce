"""Buggy variants used to diagnose code submissions (implementation-level, on top of the catalogue).

Each function is the reference computation with exactly one thing done wrong, written as a
parameter of a small pipeline (scale, axis, split, mask handling...) so the same code produces the
correct answer and every mistake. Every tag, including those that only show up in code (numerical
overflow, a cache not appended), is described in the one catalogue, ``problemgen.misconceptions.catalogue``.
"""

from __future__ import annotations

import math

import numpy as np

import reference as ref
from problemgen.misconceptions import catalogue as misconceptions


def describe(tag: str) -> tuple[str, str]:
    """(title, hint) of a tag from the shared catalogue (the tag itself when unknown)."""
    entry = misconceptions.CATALOGUE.get(tag)
    return (entry.title, entry.hint) if entry else (tag, "")


def known(tag: str) -> bool:
    return tag in misconceptions.CATALOGUE


# --------------------------------------------------------------------------- softmax


def softmax_naive(x: np.ndarray, axis: int = -1) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x)  # (...)
        return e / e.sum(axis=axis, keepdims=True)  # (...)


def softmax_global(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x))  # (...)
    return e / e.sum()  # (...)


# --------------------------------------------------------------------------- attention pipeline


def attention(q, k, v, mask=None, *, scale=None, axis=-1, mask_mode="before", softmax=True, transpose=False, mix="v"):
    """Scaled dot-product attention with one knob per misconception; returns (output, weights).

    ``mask_mode``: "before" (correct), "after" (zero weights after the softmax), "ignore",
    "invert". ``axis``: the softmax axis (-1 correct, -2 = over queries). ``transpose``: scores
    as K Qᵀ. ``mix``: which matrix the weights average ("v" correct, "k").
    """
    d_k = q.shape[-1]
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    scores = (k @ np.swapaxes(q, -1, -2) if transpose else q @ np.swapaxes(k, -1, -2)) * scale  # (..., L, S)
    allowed = None if mask is None or mask_mode == "ignore" else np.broadcast_to(np.asarray(mask, bool), scores.shape)
    if allowed is not None and mask_mode == "invert":
        allowed = ~allowed
    if allowed is not None and mask_mode in ("before", "invert"):
        scores = np.where(allowed, scores, -np.inf)  # (..., L, S)
    if softmax:
        weights = ref.softmax(scores, axis=axis)  # (..., L, S)
        if mask_mode == "invert":  # an inverted mask can block whole rows; a plain softmax then gives NaN
            weights = np.where(np.isneginf(scores).all(axis=axis, keepdims=True), np.nan, weights)  # (..., L, S)
    else:
        weights = np.where(np.isfinite(scores), scores, 0.0)  # (..., L, S)
    if allowed is not None and mask_mode == "after":
        weights = weights * allowed  # (..., L, S)
    values = k if mix == "k" else v  # (..., S, d)
    return weights @ values, weights  # (..., L, d_v), (..., L, S)


def split_heads(x: np.ndarray, h: int, *, transpose: bool = True) -> np.ndarray:
    """(B, L, h·d) -> (B, h, L, d); without the transpose it is a plain (wrong) reshape."""
    if transpose:
        return ref.split_heads(x, h)  # (..., h, L, d)
    *lead, L, width = x.shape
    return x.reshape(*lead, h, L, width // h)  # (..., h, L, d) scrambled


def merge_heads(x: np.ndarray, *, transpose: bool = True) -> np.ndarray:
    if transpose:
        return ref.merge_heads(x)  # (..., L, h·d)
    *lead, h, L, d = x.shape
    return x.reshape(*lead, L, h * d)  # (..., L, h·d) scrambled


def mha(x_q, x_kv, params, h, mask=None, *, split_t=True, merge_t=True, w_o=True, **attention_knobs):
    """Multi-head attention built from the knobs above; returns (output, weights (B, h, L, S))."""
    q = split_heads(ref.project(x_q, params["w_q"], params.get("b_q")), h, transpose=split_t)  # (B, h, L, d)
    k = split_heads(ref.project(x_kv, params["w_k"], params.get("b_k")), h, transpose=split_t)  # (B, h, S, d)
    v = split_heads(ref.project(x_kv, params["w_v"], params.get("b_v")), h, transpose=split_t)  # (B, h, S, d)
    if mask is not None:
        mask = np.asarray(mask)[..., None, :, :]  # (B, 1, L, S) one mask for every head
    heads, weights = attention(q, k, v, mask, **attention_knobs)  # (B, h, L, d), (B, h, L, S)
    concat = merge_heads(heads, transpose=merge_t)  # (B, L, h·d)
    out = ref.project(concat, params["w_o"], params.get("b_o")) if w_o else concat  # (B, L, d_model)
    return out, weights


def mha_variants(x_q, x_kv, params, h, mask=None) -> dict[str, tuple]:
    """Every applicable multi-head mistake's output, by tag."""
    d_model = params["w_q"].shape[-1]
    found = {
        "missing_w_o": lambda: mha(x_q, x_kv, params, h, mask, w_o=False),
        "split_without_transpose": lambda: mha(x_q, x_kv, params, h, mask, split_t=False, merge_t=False),
        "merge_without_transpose": lambda: mha(x_q, x_kv, params, h, mask, merge_t=False),
        "no_scaling": lambda: mha(x_q, x_kv, params, h, mask, scale=1.0),
        "scale_by_d_model": lambda: mha(x_q, x_kv, params, h, mask, scale=1.0 / math.sqrt(d_model)),
        "softmax_wrong_axis": lambda: mha(x_q, x_kv, params, h, mask, axis=-2),
    }
    if mask is not None:
        found |= {
            "mask_after_softmax": lambda: mha(x_q, x_kv, params, h, mask, mask_mode="after"),
            "mask_ignored": lambda: mha(x_q, x_kv, params, h, mask, mask_mode="ignore"),
            "inverted_mask": lambda: mha(x_q, x_kv, params, h, mask, mask_mode="invert"),
        }
    return safely(found)


def safely(makers: dict) -> dict:
    """Evaluate variant makers, dropping those that do not apply (shape errors and the like)."""
    out = {}
    for tag, make in makers.items():
        try:
            with np.errstate(all="ignore"):
                out[tag] = make()
        except (ValueError, IndexError, TypeError, ZeroDivisionError):
            continue
    return out


# --------------------------------------------------------------------------- norms and FFN


def layer_norm(x, gamma, beta, eps=1e-5, *, ddof=0, axis=-1, eps_inside=True, affine=True):
    mean = x.mean(axis=axis, keepdims=True)  # (..., 1)
    var = x.var(axis=axis, ddof=ddof, keepdims=True)  # (..., 1)
    y = (x - mean) / (np.sqrt(var + eps) if eps_inside else np.sqrt(var) + eps)  # (..., d)
    return y * gamma + beta if affine else y


def rms_norm(x, gamma, eps=1e-6, *, center=False, axis=-1, eps_inside=True, affine=True):
    if center:
        x = x - x.mean(axis=axis, keepdims=True)  # (..., d)
    ms = (x**2).mean(axis=axis, keepdims=True)  # (..., 1)
    y = x / (np.sqrt(ms + eps) if eps_inside else np.sqrt(ms) + eps)  # (..., d)
    return y * gamma if affine else y


def gelu_tanh(x):
    return ref.gelu(x, approximate="tanh")


def feed_forward(x, params, kind, *, activation=None, biases=True, swap_gate=False):
    """The FFN with its activation replaceable (None = the one ``kind`` names)."""
    if kind == "swiglu":
        gate, up = x @ params["w_gate"], x @ params["w_up"]  # (..., d_ff)
        if swap_gate:
            gate, up = up, gate
        act = ref.silu if activation is None else activation
        return (act(gate) * up) @ params["w_down"]  # (..., d)
    act = activation or {"relu": ref.relu, "gelu": ref.gelu, "gelu_tanh": gelu_tanh}[kind]
    hidden = x @ params["w_1"] + (params.get("b_1", 0.0) if biases else 0.0)  # (..., d_ff)
    return act(hidden) @ params["w_2"] + (params.get("b_2", 0.0) if biases else 0.0)  # (..., d)


def identity(x):
    return x
