"""Buggy sinusoidal position tables: swapped or concatenated sin/cos, the column index as the
frequency index, positions from 1, degrees, float32."""

from __future__ import annotations

import numpy as np

import reference as ref


def sinusoidal(P: int, d: int, *, swap=False, exponent="pair", start=0, concat=False, degrees=False,
               dtype=np.float64) -> np.ndarray:  # fmt: skip
    """The (P, d) table with knobs: ``swap`` sin_cos_swapped, ``exponent`` "column" (10000^(j/d) for
    column j) or "column_doubled" (10000^(2j/d): the formula's 2i with i read as the column) for
    pe_wrong_frequency_index,
    ``start=1`` positions_zero_vs_one, ``concat`` pe_concatenated, ``degrees`` degrees_not_radians,
    ``dtype=np.float32`` pe_float32 (returned as float64 with float32's rounding)."""
    if concat:
        full = ref.sinusoidal_encoding(P + start, d)[start:]  # (P, d)
        return np.concatenate([full[:, 0::2], full[:, 1::2]], axis=1)  # (P, d) sines then cosines
    pos = np.arange(start, start + P, dtype=dtype)[:, None]  # (P, 1)
    cols = np.arange(d, dtype=dtype)[None, :]  # (1, d)
    two_i = {"pair": np.floor(cols / 2) * 2, "column": cols, "column_doubled": 2 * cols}[exponent]  # (1, d)
    angles = pos / dtype(10000.0) ** (two_i / dtype(d))  # (P, d)
    if degrees:
        angles = np.deg2rad(angles)  # (P, d) the angle read as degrees
    sin, cos = np.sin(angles), np.cos(angles)  # (P, d)
    even = (np.arange(d) % 2 == 0)[None, :]  # (1, d)
    return np.where(even != swap, sin, cos).astype(np.float64)  # (P, d)
