"""Positional information: fixed sinusoidal encodings and rotary position embeddings (RoPE).

Self-attention is permutation-equivariant: shuffle the tokens and the outputs are shuffled the
same way. These functions break that symmetry. Sinusoidal encodings are *added* to the token
embeddings once, at the bottom of the stack; RoPE instead *rotates* queries and keys inside
every attention layer so their dot product depends on the relative offset of the two tokens.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["rope", "rope_angles", "sinusoidal_encoding"]


def sinusoidal_encoding(n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """The fixed ``(n_positions, d_model)`` encoding of the original Transformer.

    Columns are *interleaved*: for pair index ``i``, column ``2i`` holds
    ``sin(pos / base**(2i / d_model))`` and column ``2i + 1`` holds the matching cosine. Each
    pair is a clock turning at its own frequency, from one radian per position (``i = 0``) down
    to very slow ones, so nearby positions get similar vectors and every offset is a fixed
    rotation. An odd ``d_model`` ends with a lone sine column.

    >>> np.round(sinusoidal_encoding(2, 4), 4)
    array([[0.    , 1.    , 0.    , 1.    ],
           [0.8415, 0.5403, 0.01  , 1.    ]])
    """
    pos = np.arange(n_positions, dtype=np.float64)[:, None]  # (P, 1)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]  # (1, ceil(d/2))
    angles = pos / base ** (two_i / d_model)  # (P, ceil(d/2))
    pe = np.empty((n_positions, d_model), dtype=np.float64)  # (P, d)
    pe[:, 0::2] = np.sin(angles)  # (P, ceil(d/2))
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])  # (P, floor(d/2))
    return pe


def rope_angles(positions: np.ndarray, d: int, *, base: float = 10000.0) -> np.ndarray:
    """Rotation angles ``pos * base**(-2i/d)`` for each position and pair ``i < d/2``.

    >>> rope_angles(np.array([0, 1]), 4)
    array([[0.  , 0.  ],
           [1.  , 0.01]])
    """
    if d % 2:
        raise ValueError(f"rope: the rotated width must be even, got {d}")
    freqs = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)
    return np.asarray(positions, dtype=np.float64)[..., None] * freqs  # (..., L, d/2)


def rope(
    x: np.ndarray,
    positions: np.ndarray | None = None,
    *,
    base: float = 10000.0,
    style: Literal["half", "interleaved"] = "half",
) -> np.ndarray:
    """Rotate ``x`` of shape ``(..., L, d)`` by position-dependent angles (RoPE).

    Feature pairs are rotated by ``rope_angles(positions)``; ``positions`` defaults to
    ``0..L-1`` and may be any integer positions (a KV-cache step passes its absolute position).
    Because rotations compose, ``rope(q, m) . rope(k, n)`` depends on ``m - n`` only.

    Two pairings are in use and they are *not* interchangeable with the same weights:
    ``"half"`` pairs feature ``i`` with ``i + d/2`` (Hugging Face Llama/Mistral/Qwen code);
    ``"interleaved"`` pairs ``2i`` with ``2i + 1`` (the RoFormer paper, Meta's original Llama).

    >>> q = np.array([[1.0, 0.0]])
    >>> np.round(rope(q, np.array([1])), 4)
    array([[0.5403, 0.8415]])
    >>> k = np.array([[0.3, -0.7, 0.2, 0.5]])
    >>> a = rope(k, np.array([5])) @ rope(k, np.array([3])).T
    >>> b = rope(k, np.array([2])) @ rope(k, np.array([0])).T
    >>> bool(np.allclose(a, b))
    True
    """
    x = np.asarray(x, dtype=np.float64)  # (..., L, d)
    L, d = x.shape[-2], x.shape[-1]
    positions = np.arange(L) if positions is None else np.asarray(positions)  # (..., L)
    angles = rope_angles(positions, d, base=base)  # (..., L, d/2)
    cos, sin = np.cos(angles), np.sin(angles)  # (..., L, d/2) each
    if style == "half":
        a, b = x[..., : d // 2], x[..., d // 2 :]  # (..., L, d/2) each
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)  # (..., L, d)
    if style == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]  # (..., L, d/2) each
        out = np.empty(np.broadcast_shapes(x.shape, cos.shape[:-1] + (d,)))  # (..., L, d)
        out[..., 0::2] = a * cos - b * sin  # (..., L, d/2)
        out[..., 1::2] = a * sin + b * cos  # (..., L, d/2)
        return out
    raise ValueError(f"rope: style must be 'half' or 'interleaved', got {style!r}")
