"""Buggy causal masks: shifted diagonals, the upper triangle, the wrong alignment or size for a KV cache."""

from __future__ import annotations

import numpy as np


def causal_off_by_one(L: int, S: int | None = None, *, shift: int = -1):
    """causal_off_by_one: a causal boolean mask shifted by ``shift`` diagonals (-1 blocks the diagonal,
    +1 leaks one future key)."""
    S = L if S is None else S
    return np.tril(np.ones((L, S), dtype=bool), k=shift)  # (L, S)


def causal_upper_triangle(L: int, S: int | None = None, *, offset: int = 0):
    """causal_upper_triangle: np.triu where np.tril was meant; queries see the future and themselves."""
    S = L if S is None else S
    return np.triu(np.ones((L, S), dtype=bool), k=offset)  # (L, S)


def cache_mask_new_tokens_only(t: int, T: int):
    """cache_mask_new_tokens_only: the (t, t) causal mask of the new tokens padded with blocked cached keys.

    The student built ``tril(ones((t, t)))`` for the t new queries; placed over T + t keys it hides
    the T cached ones, so each new query sees only the new tokens up to itself.
    """
    return np.concatenate([np.zeros((t, T), dtype=bool), np.tril(np.ones((t, t), dtype=bool))], axis=1)  # (t, T + t)
