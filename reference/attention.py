"""Scaled dot-product attention and multi-head attention (row-vector convention).

Every array here follows the row-vector convention: a sequence is a matrix whose *rows* are
tokens, projections are ``x @ w`` with ``w`` shaped ``(d_in, d_out)``. Computation is done in
float64 so the reference can serve as an oracle for hand-worked and PyTorch-checked values.

Shape letters: ``L`` queries, ``S`` keys/values, ``h`` query heads, ``h_kv`` key/value heads,
``d_k`` query/key width per head, ``d_v`` value width per head.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = [
    "grouped_attention",
    "merge_heads",
    "multi_head_attention",
    "project",
    "repeat_kv",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
]


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    The row maximum is subtracted before exponentiating, so large scores cannot overflow. A
    slice that is entirely ``-inf`` (a query with every key masked) returns **zeros** instead of
    NaN; PyTorch's ``scaled_dot_product_attention`` returns zero output for such fully masked
    query rows too, and zeros keep downstream arithmetic finite.

    >>> softmax(np.array([0.0, 0.0, 0.0]))
    array([0.33333333, 0.33333333, 0.33333333])
    >>> softmax(np.array([1000.0, 1000.0]))
    array([0.5, 0.5])
    >>> softmax(np.array([-np.inf, -np.inf]))
    array([0., 0.])
    """
    x = np.asarray(x, dtype=np.float64)  # (...)
    peak = np.max(x, axis=axis, keepdims=True)  # (..., 1, ...)
    peak = np.where(np.isneginf(peak), 0.0, peak)  # (..., 1, ...) all -inf rows: shift by 0
    e = np.exp(x - peak)  # (...)
    total = np.sum(e, axis=axis, keepdims=True)  # (..., 1, ...)
    safe_total = np.where(total > 0, total, 1.0)  # (..., 1, ...) avoid 0/0 on all-masked rows
    return e / safe_total  # (...)


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``softmax(q k^T * scale + mask) v``; returns ``(output, weights)``.

    q is ``(..., L, d_k)``, k is ``(..., S, d_k)``, v is ``(..., S, d_v)``; leading dims
    broadcast. ``scale`` defaults to ``1/sqrt(d_k)``, which keeps the scores' variance near 1
    so the softmax does not saturate as ``d_k`` grows.

    ``mask`` broadcasts to ``(..., L, S)``. A boolean mask keeps entries where it is ``True``
    (``False`` entries get weight exactly 0); a float mask is *added* to the scaled scores before
    the softmax (use ``-inf`` to block). A query whose keys are all blocked gets zero weights and
    a zero output (see :func:`softmax`).

    The seed notes' 2x2 example (no mask, d_k = 2):

    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> k = np.array([[1.0, 0.0], [1.0, 1.0]])
    >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> out, w = scaled_dot_product_attention(q, k, v)
    >>> np.round(w, 4)
    array([[0.5   , 0.5   ],
           [0.3302, 0.6698]])
    >>> np.round(out, 4)
    array([[2.    , 3.    ],
           [2.3395, 3.3395]])
    """
    q = np.asarray(q, dtype=np.float64)  # (..., L, d_k)
    k = np.asarray(k, dtype=np.float64)  # (..., S, d_k)
    v = np.asarray(v, dtype=np.float64)  # (..., S, d_v)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"attention: query width {q.shape[-1]} != key width {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"attention: {k.shape[-2]} keys but {v.shape[-2]} values")
    if scale is None:
        scale = 1.0 / np.sqrt(q.shape[-1])
    scores = (q @ k.swapaxes(-1, -2)) * scale  # (..., L, S)
    if mask is not None:
        mask = np.asarray(mask)  # (..., L, S) or broadcastable
        if mask.dtype == bool:
            scores = np.where(mask, scores, -np.inf)  # (..., L, S)
        else:
            scores = scores + mask  # (..., L, S)
    weights = softmax(scores, axis=-1)  # (..., L, S)
    return weights @ v, weights  # (..., L, d_v), (..., L, S)


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """Reshape ``(..., L, n_heads * d)`` to ``(..., n_heads, L, d)``.

    Head ``r`` owns the feature columns ``r*d : (r+1)*d``, which is how one wide projection
    ``x @ w_q`` packs the per-head matrices ``W_Q^(r)`` side by side.

    >>> split_heads(np.arange(8.0).reshape(2, 4), 2)[1]
    array([[2., 3.],
           [6., 7.]])
    """
    x = np.asarray(x)  # (..., L, n_heads*d)
    *lead, L, width = x.shape
    if width % n_heads:
        raise ValueError(f"split_heads: width {width} is not divisible by {n_heads} heads")
    x = x.reshape(*lead, L, n_heads, width // n_heads)  # (..., L, h, d)
    return np.swapaxes(x, -2, -3)  # (..., h, L, d)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """Inverse of :func:`split_heads`: ``(..., h, L, d)`` to ``(..., L, h * d)`` (the concat).

    >>> x = np.arange(24.0).reshape(2, 3, 4)
    >>> bool(np.array_equal(split_heads(merge_heads(x), 2), x))
    True
    """
    x = np.asarray(x)  # (..., h, L, d)
    *lead, h, L, d = x.shape
    x = np.swapaxes(x, -2, -3)  # (..., L, h, d)
    return x.reshape(*lead, L, h * d)  # (..., L, h*d)


def project(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Affine map in the row-vector convention: ``x @ w + b``.

    >>> project(np.array([[1.0, 2.0]]), np.eye(2), np.array([0.5, 0.5]))
    array([[1.5, 2.5]])
    """
    out = np.asarray(x, dtype=np.float64) @ np.asarray(w, dtype=np.float64)  # (..., d_out)
    if b is not None:
        out = out + np.asarray(b, dtype=np.float64)  # (..., d_out)
    return out


def repeat_kv(x: np.ndarray, n_rep: int) -> np.ndarray:
    """Repeat each key/value head ``n_rep`` times along the head axis.

    Grouped-query attention shares one K/V head among ``n_rep`` consecutive query heads: query
    head ``r`` reads K/V head ``r // n_rep`` (the layout used by Llama-family implementations).

    >>> repeat_kv(np.array([[[1.0]], [[2.0]]]), 2)[:, 0, 0]
    array([1., 1., 2., 2.])
    """
    x = np.asarray(x)  # (..., h_kv, S, d)
    return np.repeat(x, n_rep, axis=-3)  # (..., h_kv*n_rep, S, d)


def grouped_attention(
    q_heads: np.ndarray,
    k_heads: np.ndarray,
    v_heads: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-head attention when there may be fewer K/V heads than query heads.

    ``q_heads`` is ``(..., h, L, d_k)``; ``k_heads``/``v_heads`` are ``(..., h_kv, S, d)`` with
    ``h`` a multiple of ``h_kv`` (``h_kv == h`` is ordinary multi-head attention, ``h_kv == 1``
    is multi-query attention). ``mask`` broadcasts to ``(..., L, S)``: it describes positions,
    not heads, so a head axis is inserted before it is applied.
    """
    h, h_kv = q_heads.shape[-3], k_heads.shape[-3]
    if h % h_kv:
        raise ValueError(f"attention: {h} query heads cannot share {h_kv} key/value heads evenly")
    k_all = repeat_kv(k_heads, h // h_kv)  # (..., h, S, d_k)
    v_all = repeat_kv(v_heads, h // h_kv)  # (..., h, S, d_v)
    if mask is not None:
        mask = np.asarray(mask)[..., None, :, :]  # (..., 1, L, S)
    return scaled_dot_product_attention(q_heads, k_all, v_all, mask, scale=scale)


def multi_head_attention(
    x_q: np.ndarray,
    x_kv: np.ndarray,
    params: Mapping[str, np.ndarray],
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention; returns ``(output, weights)`` with weights ``(..., h, L, S)``.

    ``x_q`` is ``(..., L, d_model)``. Pass the same array as ``x_kv`` for self-attention, or an
    encoder output ``(..., S, d_kv_in)`` for cross-attention. ``params`` holds row-vector
    weights (each applied as ``x @ w``):

    * ``w_q``: ``(d_model, h * d_k)``  -- the ``h`` per-head ``W_Q^(r)`` side by side
    * ``w_k``: ``(d_kv_in, h_kv * d_k)``, ``w_v``: ``(d_kv_in, h_kv * d_v)``
    * ``w_o``: ``(h * d_v, d_model)``
    * optional biases ``b_q``, ``b_k``, ``b_v``, ``b_o``.

    ``n_kv_heads`` (default ``n_heads``) enables grouped-query (``1 < h_kv < h``) and multi-query
    (``h_kv == 1``) attention. ``mask`` is boolean or additive and broadcasts to ``(..., L, S)``
    (the same mask applies to every head).

    With one head this is single-head attention on the projected sequences:

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(3, 4))
    >>> p = {name: rng.normal(size=(4, 4)) for name in ("w_q", "w_k", "w_v", "w_o")}
    >>> out, w = multi_head_attention(x, x, p, n_heads=1)
    >>> single, _ = scaled_dot_product_attention(x @ p["w_q"], x @ p["w_k"], x @ p["w_v"])
    >>> bool(np.allclose(out, single @ p["w_o"])), w.shape
    (True, (1, 3, 3))
    """
    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    q = project(x_q, params["w_q"], params.get("b_q"))  # (..., L, h*d_k)
    k = project(x_kv, params["w_k"], params.get("b_k"))  # (..., S, h_kv*d_k)
    v = project(x_kv, params["w_v"], params.get("b_v"))  # (..., S, h_kv*d_v)
    q_heads = split_heads(q, n_heads)  # (..., h, L, d_k)
    k_heads = split_heads(k, n_kv_heads)  # (..., h_kv, S, d_k)
    v_heads = split_heads(v, n_kv_heads)  # (..., h_kv, S, d_v)
    heads, weights = grouped_attention(q_heads, k_heads, v_heads, mask)  # (..., h, L, d_v), (..., h, L, S)
    concat = merge_heads(heads)  # (..., L, h*d_v)
    return project(concat, params["w_o"], params.get("b_o")), weights  # (..., L, d_model), (..., h, L, S)
