"""Per-token layers: normalisation, activations and the position-wise feed-forward network.

None of these mix information between positions; they act on the last axis (``d_model``) of
``(..., d_model)`` arrays, independently for every token.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

import numpy as np

from reference.attention import project

__all__ = [
    "FFN_KINDS",
    "feed_forward",
    "gelu",
    "layer_norm",
    "relu",
    "rms_norm",
    "sigmoid",
    "silu",
]

FFN_KINDS = ("relu", "gelu", "gelu_tanh", "swiglu")

_erf = np.frompyfunc(math.erf, 1, 1)  # numpy has no erf; math.erf is correctly rounded enough


def layer_norm(
    x: np.ndarray,
    gamma: np.ndarray | None = None,
    beta: np.ndarray | None = None,
    eps: float = 1e-5,
) -> np.ndarray:
    """LayerNorm over the last axis: ``gamma * (x - mean) / sqrt(var + eps) + beta``.

    The variance is the *biased* one (divide by ``d``, not ``d - 1``), as in PyTorch and the
    original paper's implementations; ``eps`` sits inside the square root. ``gamma`` defaults
    to ones and ``beta`` to zeros.

    >>> layer_norm(np.array([1.0, 2.0, 3.0]), eps=0.0)
    array([-1.22474487,  0.        ,  1.22474487])
    """
    x = np.asarray(x, dtype=np.float64)  # (..., d)
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1) biased variance
    y = (x - mean) / np.sqrt(var + eps)  # (..., d)
    if gamma is not None:
        y = y * np.asarray(gamma, dtype=np.float64)  # (..., d)
    if beta is not None:
        y = y + np.asarray(beta, dtype=np.float64)  # (..., d)
    return y


def rms_norm(x: np.ndarray, gamma: np.ndarray | None = None, eps: float = 1e-6) -> np.ndarray:
    """RMSNorm over the last axis: ``gamma * x / sqrt(mean(x**2) + eps)``.

    Unlike LayerNorm it neither subtracts the mean nor adds a bias, which saves parameters and
    work (Llama, Mistral, Qwen and T5 use it). ``eps`` defaults to ``1e-6``; pass the model's
    value explicitly when matching a specific implementation.

    >>> rms_norm(np.array([3.0, 4.0]), eps=0.0)
    array([0.84852814, 1.13137085])
    """
    x = np.asarray(x, dtype=np.float64)  # (..., d)
    rms = np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)  # (..., 1)
    y = x / rms  # (..., d)
    if gamma is not None:
        y = y * np.asarray(gamma, dtype=np.float64)  # (..., d)
    return y


def relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)`` elementwise.

    >>> relu(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 2.])
    """
    return np.maximum(np.asarray(x, dtype=np.float64), 0.0)  # (...)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Logistic function, written so neither branch overflows for large ``|x|``.

    >>> sigmoid(np.array([0.0, -1000.0, 1000.0]))
    array([0.5, 0. , 1. ])
    """
    x = np.asarray(x, dtype=np.float64)  # (...)
    e = np.exp(-np.abs(x))  # (...) in (0, 1], never overflows
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))  # (...)


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU / swish: ``x * sigmoid(x)`` (the gate activation inside SwiGLU).

    >>> silu(np.array([0.0, 1.0]))
    array([0.        , 0.73105858])
    """
    x = np.asarray(x, dtype=np.float64)  # (...)
    return x * sigmoid(x)  # (...)


def gelu(x: np.ndarray, approximate: Literal["none", "tanh"] = "none") -> np.ndarray:
    """GELU: ``x * Phi(x)`` with ``Phi`` the standard normal CDF.

    ``approximate="none"`` uses the exact ``erf`` form (BERT, PyTorch's default);
    ``approximate="tanh"`` uses ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, the form
    GPT-2 was trained with. The two differ by up to about 1e-3, enough to matter in a checked
    answer, so problems must say which one they mean.

    >>> gelu(np.array([1.0]))
    array([0.84134475])
    >>> gelu(np.array([1.0]), approximate="tanh")
    array([0.84119199])
    """
    x = np.asarray(x, dtype=np.float64)  # (...)
    if approximate == "none":
        phi2 = np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64)  # (...) erf(x / sqrt 2)
        return 0.5 * x * (1.0 + phi2)  # (...)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)  # (...)
        return 0.5 * x * (1.0 + np.tanh(inner))  # (...)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def feed_forward(
    x: np.ndarray,
    params: Mapping[str, np.ndarray],
    kind: Literal["relu", "gelu", "gelu_tanh", "swiglu"] = "relu",
) -> np.ndarray:
    """Position-wise feed-forward network applied to every token independently.

    * ``"relu"`` / ``"gelu"`` / ``"gelu_tanh"``: ``act(x @ w_1 + b_1) @ w_2 + b_2`` with ``w_1``
      ``(d_model, d_ff)`` and ``w_2`` ``(d_ff, d_model)``; biases optional (the 2017 paper uses
      ReLU with biases, GPT-2 uses tanh-GELU with biases).
    * ``"swiglu"``: ``(silu(x @ w_gate) * (x @ w_up)) @ w_down`` with ``w_gate``/``w_up``
      ``(d_model, d_ff)`` and ``w_down`` ``(d_ff, d_model)`` (Llama, Mistral, Qwen): three
      matrices instead of two, which is why those models use a smaller ``d_ff``.

    >>> x = np.array([[1.0, -1.0]])
    >>> p = {"w_1": np.eye(2), "w_2": np.eye(2)}
    >>> feed_forward(x, p, kind="relu")
    array([[1., 0.]])
    """
    if kind in ("relu", "gelu", "gelu_tanh"):
        hidden = project(x, params["w_1"], params.get("b_1"))  # (..., d_ff)
        if kind == "relu":
            hidden = relu(hidden)  # (..., d_ff)
        else:
            hidden = gelu(hidden, approximate="none" if kind == "gelu" else "tanh")  # (..., d_ff)
        return project(hidden, params["w_2"], params.get("b_2"))  # (..., d_model)
    if kind == "swiglu":
        gate = silu(project(x, params["w_gate"], params.get("b_gate")))  # (..., d_ff)
        up = project(x, params["w_up"], params.get("b_up"))  # (..., d_ff)
        return project(gate * up, params["w_down"], params.get("b_down"))  # (..., d_model)
    raise ValueError(f"feed_forward: kind must be one of {FFN_KINDS}, got {kind!r}")
