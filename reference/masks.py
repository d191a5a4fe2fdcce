"""Attention masks: which keys each query may look at.

Two representations are used throughout the reference, and both appear in problems:

* **boolean** masks, where ``True`` means "this query may attend to this key";
* **additive** (float) masks, holding ``0`` where attention is allowed and ``-inf`` where it is
  not. They are *added to the scaled scores* before the softmax, so a blocked entry becomes
  ``exp(-inf) = 0`` after normalisation.

Masks have shape ``(..., L, S)`` (``L`` queries, ``S`` keys) and broadcast over leading batch dims,
so a single ``(L, S)`` causal mask serves a whole batch. A padding mask is ``(..., 1, S)``: it
depends only on the key and broadcasts over the query rows.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = [
    "additive_mask",
    "causal_mask",
    "combine_masks",
    "lengths_to_valid",
    "padding_mask",
]

Align = Literal["top-left", "bottom-right"]


def causal_mask(L: int, S: int | None = None, *, align: Align = "top-left") -> np.ndarray:
    """Boolean ``(L, S)`` mask that stops query ``i`` from seeing "future" keys.

    ``S`` defaults to ``L`` (plain self-attention). When ``L != S`` the diagonal has to be
    anchored somewhere, and the two conventions in use differ:

    * ``"top-left"``: query ``i`` sees keys ``j <= i`` (the diagonal starts in the top-left
      corner; this is what ``torch.tril(ones(L, S))`` gives).
    * ``"bottom-right"``: query ``i`` sees keys ``j <= i + (S - L)``. This is the KV-cache
      alignment: the ``L`` new queries are the *last* ``L`` positions of an ``S``-long sequence,
      so the last query sees every key.

    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    >>> causal_mask(2, 4, align="bottom-right").astype(int)
    array([[1, 1, 1, 0],
           [1, 1, 1, 1]])
    """
    S = L if S is None else S
    if L < 0 or S < 0:
        raise ValueError(f"causal_mask: lengths must be non-negative, got L={L}, S={S}")
    if align == "top-left":
        offset = 0
    elif align == "bottom-right":
        offset = S - L
    else:
        raise ValueError(f"causal_mask: align must be 'top-left' or 'bottom-right', got {align!r}")
    i = np.arange(L)[:, None]  # (L, 1) query index
    j = np.arange(S)[None, :]  # (1, S) key index
    return j <= i + offset  # (L, S)


def lengths_to_valid(lengths: np.ndarray | list[int], S: int) -> np.ndarray:
    """Boolean ``(B, S)`` array, ``True`` for the first ``lengths[b]`` positions of row ``b``.

    Batches are padded on the right to a common length ``S``; this recovers which positions hold
    real tokens.

    >>> lengths_to_valid([2, 3], 4).astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 1, 0]])
    """
    lengths = np.asarray(lengths)  # (B,)
    if np.any(lengths < 0) or np.any(lengths > S):
        raise ValueError(f"lengths_to_valid: every length must lie in [0, {S}], got {lengths.tolist()}")
    return np.arange(S)[None, :] < lengths[:, None]  # (B, S)


def padding_mask(key_valid: np.ndarray) -> np.ndarray:
    """Boolean ``(..., 1, S)`` mask hiding padded keys from every query.

    ``key_valid`` is ``(..., S)`` with ``True`` for real tokens. The inserted query axis of size 1
    lets the result broadcast against ``(..., L, S)`` scores: a pad token is invisible to every
    query, whatever row it is in. (Rows that *are* padding still attend normally; their outputs
    are simply ignored downstream.)

    >>> padding_mask(np.array([True, True, False])).astype(int)
    array([[1, 1, 0]])
    """
    key_valid = np.asarray(key_valid, dtype=bool)  # (..., S)
    return key_valid[..., None, :]  # (..., 1, S)


def additive_mask(mask: np.ndarray) -> np.ndarray:
    """Turn a boolean mask into the equivalent additive one (``0`` allowed, ``-inf`` blocked).

    Float masks are returned unchanged (as float64), so callers can normalise either kind.

    >>> additive_mask(causal_mask(2))
    array([[  0., -inf],
           [  0.,   0.]])
    """
    mask = np.asarray(mask)  # (..., L, S)
    if mask.dtype == bool:
        return np.where(mask, 0.0, -np.inf)  # (..., L, S)
    return mask.astype(np.float64)  # (..., L, S)


def combine_masks(*masks: np.ndarray | None) -> np.ndarray | None:
    """Combine masks so that a key is visible only if *every* mask allows it.

    ``None`` entries are skipped (``None`` alone means "no mask"). If all masks are boolean the
    result is their logical AND, still boolean; if any is additive, all are converted to
    additive form and summed (``0 + -inf = -inf``, which is how frameworks combine a causal and
    a padding mask). Shapes broadcast.

    >>> causal = causal_mask(3)
    >>> pad = padding_mask(np.array([True, True, False]))
    >>> combine_masks(causal, pad).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 0]])
    >>> combine_masks(additive_mask(causal), pad)[2]
    array([  0.,   0., -inf])
    """
    present = [np.asarray(m) for m in masks if m is not None]  # each (..., L, S)
    if not present:
        return None
    if all(m.dtype == bool for m in present):
        return np.logical_and.reduce(np.broadcast_arrays(*present))  # (..., L, S)
    total = additive_mask(present[0])  # (..., L, S)
    for m in present[1:]:
        total = total + additive_mask(m)  # (..., L, S)
    return total
