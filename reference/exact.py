"""Exact (sympy) versions of the attention pipeline and norms, for hand-sized problems.

A worked solution should be able to say ``A_12 = e^6 / (e^2 + e^6 + e^-2)`` rather than
``0.9817``; this module produces those closed forms. Inputs are small integer/rational
matrices (floats are read at their shortest decimal form, so ``0.2`` becomes ``1/5``). Every
function here mirrors a float64 function in the reference, and :func:`to_numpy` turns a result
back into numbers so tests can check the two agree.

The inputs are trusted (built by generators or tests); this module never parses text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral
from typing import Any

import numpy as np
import sympy as sp

__all__ = [
    "ExactAttention",
    "attention",
    "exact",
    "layer_norm",
    "matrix",
    "rms_norm",
    "scaled_scores",
    "scores",
    "sinusoidal_encoding",
    "sinusoidal_value",
    "softmax",
    "to_numpy",
]


def exact(x: Any) -> sp.Expr:
    """An exact sympy number for an int, Fraction, float (via its decimal repr) or sympy value.

    >>> exact(0.2), exact(3), exact(Fraction(1, 3))
    (1/5, 3, 1/3)
    """
    if isinstance(x, sp.Basic):
        return x
    if isinstance(x, bool | np.bool_):
        return sp.Integer(int(x))
    if isinstance(x, Integral | np.integer):
        return sp.Integer(int(x))
    if isinstance(x, Fraction):
        return sp.Rational(x.numerator, x.denominator)
    if isinstance(x, float | np.floating):
        if not np.isfinite(x):
            return sp.oo if x > 0 else -sp.oo
        f = Fraction(repr(float(x)))  # shortest round-tripping decimal: 0.1 -> 1/10
        return sp.Rational(f.numerator, f.denominator)
    raise TypeError(f"exact: cannot turn {type(x).__name__} into an exact number")


def matrix(rows: Any) -> sp.ImmutableMatrix:
    """An exact matrix from nested lists or a numpy array; a flat vector becomes one row.

    >>> matrix([[1, 0.5], [0, 2]])
    Matrix([
    [1, 1/2],
    [0,   2]])
    """
    if isinstance(rows, sp.MatrixBase):
        return sp.ImmutableMatrix(rows)
    arr = np.asarray(rows, dtype=object)  # (n, m) or (m,)
    if arr.ndim == 1:
        arr = arr[None, :]  # (1, m)
    if arr.ndim != 2:
        raise ValueError(f"matrix: expected a vector or a matrix, got {arr.ndim} dimensions")
    return sp.ImmutableMatrix([[exact(v) for v in row] for row in arr])


def scores(q: Any, k: Any) -> sp.ImmutableMatrix:
    """Raw scores ``Q K^T`` (``L x S``).

    >>> scores([[2], [0], [1]], [[1], [3], [-1]])
    Matrix([
    [2, 6, -2],
    [0, 0,  0],
    [1, 3, -1]])
    """
    Q, K = matrix(q), matrix(k)
    if Q.shape[1] != K.shape[1]:
        raise ValueError(f"scores: query width {Q.shape[1]} != key width {K.shape[1]}")
    return sp.ImmutableMatrix(Q * K.T)


def scaled_scores(q: Any, k: Any, scale: Any = None) -> sp.ImmutableMatrix:
    """``Q K^T * scale`` with the exact default ``scale = 1/sqrt(d_k)``.

    >>> scaled_scores([[1, 0]], [[1, 0], [1, 1]])
    Matrix([[sqrt(2)/2, sqrt(2)/2]])
    """
    Q = matrix(q)
    factor = 1 / sp.sqrt(Q.shape[1]) if scale is None else exact(scale)
    return sp.ImmutableMatrix(scores(q, k) * factor)


def _allowed(mask: Any, shape: tuple[int, int]) -> tuple[list[list[bool]], list[list[sp.Expr]]]:
    """Split a boolean or additive mask into (allowed?, exact additive bias) per entry."""
    L, S = shape
    if mask is None:
        return [[True] * S for _ in range(L)], [[sp.Integer(0)] * S for _ in range(L)]
    m = np.broadcast_to(np.asarray(mask), shape)  # (L, S)
    if m.dtype == bool:
        return m.tolist(), [[sp.Integer(0)] * S for _ in range(L)]
    bias = [[exact(v) for v in row] for row in m]
    return [[b != -sp.oo for b in row] for row in bias], [[0 if b == -sp.oo else b for b in row] for row in bias]


def softmax(logits: Any, mask: Any = None) -> sp.ImmutableMatrix:
    """Row-wise exact softmax: ``exp(s_ij) / sum_k exp(s_ik)`` over the allowed ``k``.

    Masked entries are exactly 0, and a fully masked row is all zeros (as in the float
    reference). ``mask`` is boolean (True = may attend) or additive (``-inf`` blocks).

    >>> softmax([[2, 6, -2]])[0]
    exp(2)/(exp(-2) + exp(2) + exp(6))
    >>> softmax([[0, 0, 0]])
    Matrix([[1/3, 1/3, 1/3]])
    >>> softmax([[1, 5]], mask=[[True, False]])
    Matrix([[1, 0]])
    """
    Z = matrix(logits)
    allowed, bias = _allowed(mask, Z.shape)
    rows = []
    for i in range(Z.shape[0]):
        terms = [sp.exp(Z[i, j] + bias[i][j]) if allowed[i][j] else sp.Integer(0) for j in range(Z.shape[1])]
        total = sp.Add(*terms)
        rows.append([t / total if total != 0 else sp.Integer(0) for t in terms])
    return sp.ImmutableMatrix(rows)


@dataclass(frozen=True)
class ExactAttention:
    """Every stage of one exact attention computation (all ``sympy`` matrices)."""

    scores: sp.ImmutableMatrix  # Q K^T, (L, S)
    scaled_scores: sp.ImmutableMatrix  # Q K^T * scale, (L, S)
    weights: sp.ImmutableMatrix  # softmax rows, (L, S)
    output: sp.ImmutableMatrix  # weights @ V, (L, d_v)


def attention(q: Any, k: Any, v: Any, mask: Any = None, *, scale: Any = None) -> ExactAttention:
    """Exact scaled dot-product attention with every intermediate stage.

    Output entries are written over the common denominator of their row, which is how a hand
    solution writes them: ``(sum_j e^(s_j) v_j) / (sum_j e^(s_j))``.

    The seed notes' 3-token exercise (d_k = 1, so scaling changes nothing):

    >>> r = attention([[2], [0], [1]], [[1], [3], [-1]], [[10], [20], [30]])
    >>> r.weights[0, 1]
    exp(6)/(exp(-2) + exp(2) + exp(6))
    >>> r.output[1, 0]
    20
    >>> r.output[0, 0]
    (30*exp(-2) + 10*exp(2) + 20*exp(6))/(exp(-2) + exp(2) + exp(6))
    """
    S = scaled_scores(q, k, scale)
    V = matrix(v)
    if V.shape[0] != S.shape[1]:
        raise ValueError(f"attention: {S.shape[1]} keys but {V.shape[0]} values")
    allowed, bias = _allowed(mask, S.shape)
    W = softmax(S, mask)
    out = []
    for i in range(S.shape[0]):
        e = [sp.exp(S[i, j] + bias[i][j]) if allowed[i][j] else sp.Integer(0) for j in range(S.shape[1])]
        total = sp.Add(*e)
        if total == 0:
            out.append([sp.Integer(0)] * V.shape[1])
            continue
        out.append([sp.Add(*[e[j] * V[j, c] for j in range(len(e))]) / total for c in range(V.shape[1])])
    return ExactAttention(scores(q, k), S, W, sp.ImmutableMatrix(out))


def layer_norm(x: Iterable[Any], gamma: Any = None, beta: Any = None, eps: Any = 0) -> sp.ImmutableMatrix:
    """Exact LayerNorm of one vector (biased variance); ``eps`` defaults to 0 for hand work.

    >>> layer_norm([1, 2, 3])
    Matrix([[-sqrt(6)/2, 0, sqrt(6)/2]])
    """
    row = list(matrix(list(x)))
    d = len(row)
    mean = sp.Add(*row) / d
    var = sp.Add(*[(v - mean) ** 2 for v in row]) / d
    y = [(v - mean) / sp.sqrt(var + exact(eps)) for v in row]
    return sp.ImmutableMatrix([_affine(y, gamma, beta)])


def rms_norm(x: Iterable[Any], gamma: Any = None, eps: Any = 0) -> sp.ImmutableMatrix:
    """Exact RMSNorm of one vector: ``x / sqrt(mean(x^2) + eps)``, then the scale.

    >>> rms_norm([3, 4])
    Matrix([[3*sqrt(2)/5, 4*sqrt(2)/5]])
    """
    row = list(matrix(list(x)))
    rms = sp.sqrt(sp.Add(*[v**2 for v in row]) / len(row) + exact(eps))
    return sp.ImmutableMatrix([_affine([v / rms for v in row], gamma, None)])


def _affine(y: list[sp.Expr], gamma: Any, beta: Any) -> list[sp.Expr]:
    g = [sp.Integer(1)] * len(y) if gamma is None else list(matrix(list(gamma)))
    b = [sp.Integer(0)] * len(y) if beta is None else list(matrix(list(beta)))
    return [sp.radsimp(yi * gi + bi) for yi, gi, bi in zip(y, g, b, strict=True)]


def sinusoidal_value(pos: int, column: int, d_model: int, base: int = 10000) -> sp.Expr:
    """Exact entry ``PE[pos, column]`` of the interleaved sinusoidal encoding.

    Even columns ``2i`` are ``sin(pos / base^(2i/d))``, odd columns the matching cosine. The
    frequency ``base^(-2i/d)`` is kept exact (``10000^(-1/2) = 1/100``).

    >>> sinusoidal_value(1, 2, 4), sinusoidal_value(0, 1, 4), sinusoidal_value(3, 0, 4)
    (sin(1/100), 1, sin(3))
    """
    two_i = column - column % 2
    angle = sp.Integer(pos) * sp.Pow(sp.Integer(base), -sp.Rational(two_i, d_model))
    return sp.sin(angle) if column % 2 == 0 else sp.cos(angle)


def sinusoidal_encoding(n_positions: int, d_model: int, base: int = 10000) -> sp.ImmutableMatrix:
    """The whole ``(n_positions, d_model)`` encoding with exact entries.

    >>> sinusoidal_encoding(2, 2)
    Matrix([
    [     0,      1],
    [sin(1), cos(1)]])
    """
    return sp.ImmutableMatrix(
        [[sinusoidal_value(p, c, d_model, base) for c in range(d_model)] for p in range(n_positions)]
    )


def to_numpy(m: Any) -> np.ndarray:
    """Evaluate an exact matrix (or expression) to a float64 numpy array.

    >>> to_numpy(softmax([[0, 0]]))
    array([[0.5, 0.5]])
    """
    if isinstance(m, sp.MatrixBase):
        return np.array([[float(sp.N(v, 30)) for v in m.row(i)] for i in range(m.rows)], dtype=np.float64)
    return np.asarray(float(sp.N(m, 30)), dtype=np.float64)
