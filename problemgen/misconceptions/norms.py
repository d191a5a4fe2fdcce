"""Buggy LayerNorm and RMSNorm: one knob per misconception (variance, axis, ε, affine, centring)."""

from __future__ import annotations

import numpy as np


def layer_norm(x, gamma=None, beta=None, eps=1e-5, *, ddof=0, axis=-1, eps_inside=True, affine=True):
    """LayerNorm with knobs: ``ddof=1`` unbiased_variance, ``axis=-2`` norm_wrong_axis,
    ``eps_inside=False`` eps_outside_sqrt (both: unbiased_variance_eps_outside), ``affine=False`` affine_skipped."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=axis, keepdims=True)  # (..., 1)
    var = x.var(axis=axis, ddof=ddof, keepdims=True)  # (..., 1)
    y = (x - mean) / (np.sqrt(var + eps) if eps_inside else np.sqrt(var) + eps)  # (..., d)
    return _affine(y, gamma, beta) if affine else y


def rms_norm(x, gamma=None, eps=1e-6, *, center=False, axis=-1, eps_inside=True, affine=True):
    """RMSNorm with knobs: ``center`` rms_subtracts_mean, ``eps=0`` rms_no_eps, ``axis=-2``
    norm_wrong_axis, ``eps_inside=False`` eps_outside_sqrt, ``affine=False`` affine_skipped."""
    x = np.asarray(x, dtype=np.float64)
    if center:
        x = x - x.mean(axis=axis, keepdims=True)  # (..., d)
    ms = (x**2).mean(axis=axis, keepdims=True)  # (..., 1)
    with np.errstate(divide="ignore", invalid="ignore"):  # rms_no_eps on a zero token: inf/NaN, as student code gives
        y = x / (np.sqrt(ms + eps) if eps_inside else np.sqrt(ms) + eps)  # (..., d)
    return _affine(y, gamma, None) if affine else y


def layer_norm_unbiased(x, gamma=None, beta=None, eps=1e-5):
    """unbiased_variance: LayerNorm with the n − 1 (sample) variance."""
    return layer_norm(x, gamma, beta, eps, ddof=1)


def layer_norm_wrong_axis(x, gamma=None, beta=None, eps=1e-5):
    """norm_wrong_axis: LayerNorm statistics over the token axis (-2) instead of the feature axis."""
    return layer_norm(x, gamma, beta, eps, axis=-2)


def layer_norm_eps_outside(x, gamma=None, beta=None, eps=1e-5):
    """eps_outside_sqrt: (x − mean) / (sqrt(var) + ε)."""
    return layer_norm(x, gamma, beta, eps, eps_inside=False)


def layer_norm_unbiased_eps_outside(x, gamma=None, beta=None, eps=1e-5):
    """unbiased_variance_eps_outside: both mistakes at once."""
    return layer_norm(x, gamma, beta, eps, ddof=1, eps_inside=False)


def rms_norm_subtracts_mean(x, gamma=None, eps=1e-6):
    """rms_subtracts_mean: 'RMSNorm' that centres first (LayerNorm without β)."""
    return rms_norm(x, gamma, eps, center=True)


def rms_norm_no_eps(x, gamma=None, eps=1e-6):
    """rms_no_eps: x / sqrt(mean(x²)), ε left out."""
    return rms_norm(x, gamma, 0.0)


def _affine(x, gamma, beta):
    if gamma is not None:
        x = x * gamma
    if beta is not None:
        x = x + beta
    return x
