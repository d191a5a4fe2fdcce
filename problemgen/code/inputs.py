"""Drawing hidden test inputs that actually test something.

A test whose softmax saturates (one weight ~1, the rest ~0) passes an implementation that forgot
the 1/√d_k scaling: both give the same one-hot rows. So attention inputs are drawn with moderate
scores, checked, and redrawn when a row is close to one-hot; and every variant kept for a case
must differ from the right answer beyond tolerance (``keep_distinct``).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from problemgen.code.base import DEFAULT_ATOL, DEFAULT_RTOL, Variant
from problemgen.code.compare import same_value


class Unusable(ValueError):
    """A property could not be checked because the outputs have the wrong form."""


def normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return rng.normal(scale=scale, size=shape)


def redraw(rng: np.random.Generator, make: Callable[[np.random.Generator], Any], ok: Callable[[Any], bool], tries: int = 100) -> Any:
    """Draw until ``ok``; deterministic for a given generator state."""
    for _ in range(tries):
        drawn = make(rng)
        if ok(drawn):
            return drawn
    raise RuntimeError("could not draw a non-degenerate test input")  # a bug in the task, not user input


def not_saturated(weights: np.ndarray, limit: float = 0.9) -> bool:
    """No attention row is close to one-hot (rows with a single allowed key are exempt)."""
    allowed = (weights > 0).sum(axis=-1)  # (..., L)
    peaks = weights.max(axis=-1)  # (..., L)
    return bool(np.all((peaks < limit) | (allowed <= 1)))


def random_mask(rng: np.random.Generator, shape: tuple[int, ...], keep: float = 0.6) -> np.ndarray:
    """Boolean mask, True = may attend, with at least two allowed keys in every row."""
    mask = rng.random(shape) < keep  # (..., L, S)
    first = rng.integers(0, shape[-1], size=shape[:-1])  # (..., L)
    second = (first + 1 + rng.integers(0, shape[-1] - 1, size=shape[:-1])) % shape[-1]  # (..., L)
    np.put_along_axis(mask, first[..., None], True, axis=-1)
    np.put_along_axis(mask, second[..., None], True, axis=-1)
    return mask


def lengths(rng: np.random.Generator, batch: int, S: int) -> np.ndarray:
    """Valid lengths in [2, S], at least one of them shorter than S (so padding exists)."""
    out = rng.integers(2, S + 1, size=batch)  # (B,)
    out[rng.integers(0, batch)] = rng.integers(2, S)
    return out


def variants(expected: Any, made: dict[str, Any] | list[tuple[str, Any]], rtol: float = 1e-5, atol: float = 1e-6) -> tuple[Variant, ...]:
    """Keep the variants that differ from ``expected`` (tuples become lists, like decoded results).

    ``made`` maps tags to outputs; a list of pairs allows one tag to have several outputs.
    """
    pairs = made.items() if isinstance(made, dict) else made
    return keep_distinct(expected, [Variant(tag, as_lists(value)) for tag, value in pairs], rtol, atol)


def as_lists(value: Any) -> Any:
    if isinstance(value, tuple):
        return [as_lists(v) for v in value]
    return value


# --------------------------------------------------------------------------- property helpers


def array(values: list[Any], index: int, part: int | None = None, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """The ``index``-th returned value (or its ``part``) as a float array, or Unusable."""
    value = values[index]
    if part is not None:
        if not isinstance(value, list) or len(value) <= part:
            raise Unusable("the result is not a tuple of the expected length")
        value = value[part]
    if not isinstance(value, np.ndarray) or value.dtype == bool:
        raise Unusable("the result is not a numeric array")
    if shape is not None and value.shape != shape:
        raise Unusable(f"the result has shape {value.shape}, expected {shape}")
    return value.astype(np.float64)


def agree(a: np.ndarray, b: np.ndarray, failure: str) -> str:
    """An invariance law: ``a`` and ``b`` must agree, and ``a`` must not be constant.

    A submission that returns zeros satisfies every invariance trivially; such a law confirms nothing.
    Nor does one that returns infinities: inf agrees with inf, and the spread of a constant inf is NaN,
    which no threshold catches, so every value must be finite before agreement means anything.
    """
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return "the outputs are not all finite numbers, so this law cannot be confirmed"
    if a.size == 0 or float(np.ptp(a)) <= 1e-12:
        return "the outputs are constant, so this law cannot be confirmed"
    return "" if np.allclose(a, b, rtol=1e-6, atol=1e-9) else failure


def keep_distinct(expected: Any, variants: list[Variant], rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL) -> tuple[Variant, ...]:
    """Variants whose output differs from the expected one beyond tolerance (others teach nothing)."""
    kept, seen = [], []
    for variant in variants:
        if variant.value is None or same_value(variant.value, expected, rtol, atol):
            continue
        if any(same_value(variant.value, other, rtol, atol) for other in seen):
            continue  # two misconceptions giving the same output: the first (more common) one names it
        kept.append(variant)
        seen.append(variant.value)
    return tuple(kept)
