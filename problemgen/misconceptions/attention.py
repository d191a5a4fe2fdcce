"""Buggy softmax and attention: the reference computation with one thing done wrong, by tag.

``attention`` is one small pipeline with a knob per misconception (scale, softmax axis and base, mask
handling, which matrix is mixed), so the same code yields the right answer and every mistake's value;
sheet generators and coding tasks call it (or the named wrappers below) for a variant's inputs.
"""

from __future__ import annotations

import math

import numpy as np

import reference as ref

# --------------------------------------------------------------------------- softmax


def softmax_naive(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax_overflow: exp without subtracting the maximum (inf / inf = NaN for large inputs)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x)  # (...)
        return e / e.sum(axis=axis, keepdims=True)  # (...)


def softmax_global(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax_global_sum: exponentials divided by the sum over the whole array."""
    e = np.exp(x - np.max(x))  # (...)
    return e / e.sum()  # (...)


def softmax_base(x: np.ndarray, axis: int = -1, base: float = 2.0) -> np.ndarray:
    """softmax_wrong_base: base**x instead of exp(x) (still shifted by the maximum, so stable)."""
    return ref.softmax(np.asarray(x, dtype=np.float64) * math.log(base), axis=axis)  # (...) = base**x normalised


# --------------------------------------------------------------------------- attention pipeline


def attention(q, k, v, mask=None, *, scale=None, axis=-1, mask_mode="before", softmax=True, transpose=False,
              mix="v", base=math.e):  # fmt: skip
    """Scaled dot-product attention with one knob per misconception; returns (output, weights).

    ``scale``: the factor the scores are multiplied by (1/√d_k correct). ``axis``: the softmax axis
    (-1 correct, -2 = over queries). ``base``: the softmax's base (e correct). ``mask_mode``:
    "before" (correct), "after" (zero weights after the softmax), "ignore", "invert".
    ``transpose``: scores as K Qᵀ. ``mix``: which matrix the weights average ("v" correct, "k").
    Masks may be boolean (True = may attend) or additive (0 / −∞).
    """
    d_k = q.shape[-1]
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    scores = (k @ np.swapaxes(q, -1, -2) if transpose else q @ np.swapaxes(k, -1, -2)) * scale  # (..., L, S)
    allowed = None if mask is None or mask_mode == "ignore" else np.broadcast_to(_allowed(mask), scores.shape)
    if allowed is not None and mask_mode == "invert":
        allowed = ~allowed
    if allowed is not None and mask_mode in ("before", "invert"):
        scores = np.where(allowed, scores, -np.inf)  # (..., L, S)
    if softmax:
        weights = ref.softmax(scores * math.log(base), axis=axis)  # (..., L, S)
        if mask_mode == "invert":  # an inverted mask can block whole rows; a plain softmax then gives NaN
            weights = np.where(np.isneginf(scores).all(axis=axis, keepdims=True), np.nan, weights)  # (..., L, S)
    else:
        weights = np.where(np.isfinite(scores), scores, 0.0)  # (..., L, S)
    if allowed is not None and mask_mode == "after":
        weights = weights * allowed  # (..., L, S)
    values = k if mix == "k" else v  # (..., S, d)
    return weights @ values, weights  # (..., L, d_v), (..., L, S)


def _allowed(mask) -> np.ndarray:
    """A boolean or additive (0 / −∞) mask as booleans, True = may attend."""
    mask = np.asarray(mask)
    return mask if mask.dtype == bool else np.isfinite(mask)


def attention_with_scale(q, k, v, mask=None, *, scale):
    """Reference attention with an explicit (possibly wrong) scale; returns (output, weights)."""
    return ref.scaled_dot_product_attention(q, k, v, mask, scale=scale)


def attention_no_scaling(q, k, v, mask=None):
    """no_scaling: the raw scores go into the softmax."""
    return attention_with_scale(q, k, v, mask, scale=1.0)


def attention_scale_by_dk(q, k, v, mask=None):
    """scale_by_dk: scores divided by d_k instead of √d_k."""
    return attention_with_scale(q, k, v, mask, scale=1.0 / q.shape[-1])


def attention_scale_multiplied(q, k, v, mask=None):
    """scale_multiplied: scores multiplied by √d_k instead of divided."""
    return attention_with_scale(q, k, v, mask, scale=math.sqrt(q.shape[-1]))


def attention_softmax_wrong_axis(q, k, v, mask=None):
    """softmax_wrong_axis: the softmax normalises each key's column (over queries)."""
    return attention(q, k, v, mask, axis=-2)


def attention_softmax_base(q, k, v, mask=None, base: float = 2.0):
    """softmax_wrong_base: the weights are base**scores normalised instead of exp(scores)."""
    return attention(q, k, v, mask, base=base)


def attention_mask_after_softmax(q, k, v, mask):
    """mask_after_softmax: softmax of the unmasked scores, then blocked weights zeroed."""
    return attention(q, k, v, mask, mask_mode="after")


def attention_mask_zero_not_inf(q, k, v, mask):
    """mask_zero_not_inf: blocked positions get +0 added, identical to no mask at all."""
    return attention(q, k, v, mask, mask_mode="ignore")


def attention_inverted_mask(q, k, v, mask):
    """inverted_mask: the boolean mask read with the opposite polarity (True = blocked)."""
    return attention(q, k, v, mask, mask_mode="invert")
