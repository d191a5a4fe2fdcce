"""The key/value cache used for incremental (token-by-token) decoding.

When a decoder generates token ``t``, the keys and values of tokens ``0..t-1`` are exactly
what they were at the previous step (causal attention never lets a past token see a later
one), so they are stored instead of recomputed. Each step then projects only the new tokens,
appends their keys and values, and lets the new queries attend over everything cached. The new
queries are the *last* rows of the full sequence, hence the bottom-right causal alignment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from reference.attention import grouped_attention, merge_heads, project, split_heads
from reference.masks import causal_mask

__all__ = ["KVCache", "cached_self_attention"]


@dataclass
class KVCache:
    """Per-layer keys and values, each ``(..., h_kv, T, d_head)`` after ``T`` cached tokens.

    >>> cache = KVCache(n_layers=2)
    >>> k, v = cache.append(0, np.ones((1, 3, 4)), np.zeros((1, 3, 4)))
    >>> k.shape, cache.length(0), cache.length(1)
    ((1, 3, 4), 3, 0)
    """

    n_layers: int
    keys: list[np.ndarray | None] = field(default_factory=list)
    values: list[np.ndarray | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.keys:
            self.keys = [None] * self.n_layers
            self.values = [None] * self.n_layers

    def length(self, layer: int = 0) -> int:
        """Number of cached positions in ``layer`` (the next token's absolute position)."""
        k = self.keys[layer]
        return 0 if k is None else k.shape[-2]

    def append(self, layer: int, k_new: np.ndarray, v_new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Store the new tokens' keys/values and return everything cached for ``layer``."""
        k_old, v_old = self.keys[layer], self.values[layer]
        k_all = k_new if k_old is None else np.concatenate([k_old, k_new], axis=-2)  # (..., h_kv, T+t, d_k)
        v_all = v_new if v_old is None else np.concatenate([v_old, v_new], axis=-2)  # (..., h_kv, T+t, d_v)
        self.keys[layer], self.values[layer] = k_all, v_all
        return k_all, v_all

    def nbytes(self, bytes_per_value: int = 2) -> int:
        """Size the cache would take at ``bytes_per_value`` bytes per number (fp16 default)."""
        count = sum(a.size for a in self.keys + self.values if a is not None)
        return count * bytes_per_value


def cached_self_attention(
    x_new: np.ndarray,
    params: Mapping[str, np.ndarray],
    n_heads: int,
    cache: KVCache,
    layer: int = 0,
    *,
    n_kv_heads: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Causal multi-head self-attention for new tokens ``(..., t, d_model)``, using ``cache``.

    Same parameters and result as :func:`reference.attention.multi_head_attention` with a
    causal mask, restricted to the new rows: feeding a sequence one token at a time gives the
    rows of the full causal computation (weights are ``(..., h, t, T + t)``).

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(4, 6))
    >>> p = {n: rng.normal(size=(6, 6)) for n in ("w_q", "w_k", "w_v", "w_o")}
    >>> from reference import multi_head_attention, causal_mask
    >>> full, _ = multi_head_attention(x, x, p, 2, mask=causal_mask(4))
    >>> cache = KVCache(n_layers=1)
    >>> steps = [cached_self_attention(x[t : t + 1], p, 2, cache)[0] for t in range(4)]
    >>> bool(np.allclose(np.concatenate(steps), full))
    True
    """
    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    q = split_heads(project(x_new, params["w_q"], params.get("b_q")), n_heads)  # (..., h, t, d_k)
    k = split_heads(project(x_new, params["w_k"], params.get("b_k")), n_kv_heads)  # (..., h_kv, t, d_k)
    v = split_heads(project(x_new, params["w_v"], params.get("b_v")), n_kv_heads)  # (..., h_kv, t, d_v)
    k_all, v_all = cache.append(layer, k, v)  # (..., h_kv, T+t, d_k), (..., h_kv, T+t, d_v)
    mask = causal_mask(q.shape[-2], k_all.shape[-2], align="bottom-right")  # (t, T+t)
    heads, weights = grouped_attention(q, k_all, v_all, mask)  # (..., h, t, d_v), (..., h, t, T+t)
    return project(merge_heads(heads), params["w_o"], params.get("b_o")), weights  # (..., t, d_model)
