"""Why attention divides by √d_k: the variance of q·k, softmax saturation, and choosing the scale.

The numbers follow the lecture notes: for q and k with independent zero-mean components of unit
variance, Var(q·k) = d_k, so raw scores spread like √d_k and push the softmax towards one-hot;
dividing by √d_k restores unit variance. Saturation problems draw raw scores of realistic size
(a few multiples of √d_k) and compare the largest softmax weight with and without the scale.
"""

from __future__ import annotations

import math

import numpy as np
import sympy

import reference
from problemgen.model.core import AnswerPart, Draft, ProblemgenError
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import (
    WEIGHT_ATOL,
    exact_string,
    softmax_latex,
    int_matrix,
    override,
    pick,
    require,
)
from problemgen.model.registry import register


def _exact():
    """``reference.exact`` (SymPy arithmetic), loaded on the first exact softmax: importing SymPy at
    start-up would cost the quiz a second before its first question, and most kinds never need it."""
    from reference import exact  # lazy: SymPy start-up cost, see the docstring

    return exact


_WIDTHS = tuple(range(4, 257, 4))
"""Key widths for variance questions: multiples of 4 up to 256 (typical per-head widths included)."""


def _sqrt_text(n: float) -> str:
    """SymPy text for sqrt(n), simplified when n is a perfect square."""
    root = math.isqrt(int(n)) if float(n).is_integer() else None
    return str(root) if root is not None and root * root == n else f"sqrt({n})"


# ----------------------------------------------------------------------------------- dot variance


@register("scaling.dot_variance", title="Variance of a dot product q·k")
def dot_variance(rng, difficulty, *, d_k=None):
    """Variance and spread of q·k for random vectors, before and after dividing by √d_k."""
    d_k = override("d_k", d_k, pick(rng, _WIDTHS), range(2, 4097))
    var_q, var_k = (1, 1) if difficulty == 1 else (pick(rng, (1, 2, 3, 4)), pick(rng, (1, 2, 3, 4)))
    variance = d_k * var_q * var_k  # Var(sum of d_k independent products) = d_k * Var(q_i) * Var(k_i)
    std = math.sqrt(variance)
    scaled_variance = variance / d_k  # dividing by sqrt(d_k) divides the variance by d_k
    require(variance != std, "variance equals its square root")
    parts = [
        AnswerPart(key="variance", type="number", value=float(variance), atol=0.01,
                   label="the variance of q·k", mistakes=(mistake("std_for_variance", std),)),
        AnswerPart(key="std", type="number", value=std, atol=0.005, exact=_sqrt_text(variance),
                   label="the standard deviation of q·k", mistakes=(mistake("std_for_variance", float(variance)),)),
        AnswerPart(key="scaled_variance", type="number", value=float(scaled_variance), atol=0.01,
                   label="the variance of q·k/√d_k",
                   mistakes=(mistake("std_for_variance", variance / math.sqrt(d_k)),)),
    ]
    if difficulty == 3:
        scale = 1 / std  # multiplying by 1/std gives unit variance
        parts.append(AnswerPart(
            key="unit_scale", type="number", value=scale, atol=0.0005, exact=f"1/{_sqrt_text(variance)}",
            label="the factor that gives the scores unit variance",
            mistakes=(mistake("std_for_variance", 1 / variance), mistake("scale_by_dk", 1 / d_k)),
        ))
    return Draft(
        params={"d_k": d_k, "var_q": var_q, "var_k": var_k},
        parts=parts,
        solution={"variance": variance, "std": std, "scaled_variance": scaled_variance, "term_variance": var_q * var_k},
    )


# ------------------------------------------------------------------------------------- saturation


@register("scaling.saturation", title="Softmax saturation with and without 1/√dₖ")
def saturation(rng, difficulty, *, d_k=None):
    """Largest softmax weight of one query's raw scores, unscaled and scaled by 1/√d_k."""
    d_k = override("d_k", d_k, pick(rng, {1: (16, 64, 100), 2: (16, 64, 100, 144), 3: (128, 256, 512)}[difficulty]),
                   (16, 64, 100, 128, 144, 256, 512))
    n = {1: 4, 2: 5, 3: 6}[difficulty]
    spread = int(2.5 * math.sqrt(d_k))
    s = int_matrix(rng, (n,), -spread, spread)  # (n,) raw scores q·k_j of realistic size
    unscaled = reference.softmax(s.astype(float))  # (n,)
    scaled = reference.softmax(s / math.sqrt(d_k))  # (n,)
    by_dk = reference.softmax(s / d_k)  # (n,)
    top = int(np.argmax(s))
    require(int(np.sum(s == s[top])) == 1, "tie for the largest score")
    require(scaled.max() <= 0.9, "even the scaled softmax is saturated")
    require(unscaled.max() >= 0.95, "the unscaled softmax is not saturated: nothing to contrast")
    exponents = [sympy.Integer(int(x)) / sympy.sqrt(d_k) for x in s]  # exact scaled scores
    exact = exact_string(_exact().softmax([exponents])[0, top])
    exact_latex = softmax_latex(exponents, top)
    parts = [
        AnswerPart(key="unscaled_max", type="number", value=float(unscaled[top]), atol=0.0005,
                   label="the largest weight without scaling"),
        AnswerPart(key="scaled_max", type="number", value=float(scaled[top]), atol=WEIGHT_ATOL, exact=exact,
                   label="the largest weight with the 1/√d_k scaling",
                   mistakes=(mistake("no_scaling", float(unscaled[top])), mistake("scale_by_dk", float(by_dk[top])))),
    ]
    return Draft(
        params={"scores": s, "d_k": d_k},
        parts=parts,
        solution={"sqrt_dk": math.sqrt(d_k), "scaled_scores": s / math.sqrt(d_k), "unscaled": unscaled,
                  "scaled": scaled, "top": top + 1, "gap": float(s.max() - np.sort(s)[-2]),
                  "exact_latex": exact_latex},
    )


# ----------------------------------------------------------------------------------- choose scale

_CONFIGS = (  # (d_model, heads, head_dim) where head_dim != d_model / heads, as some models choose
    (2560, 32, 128), (2048, 32, 128), (1024, 16, 128), (3072, 24, 256), (4096, 64, 128), (1536, 12, 256),
)


@register("scaling.choose_scale", title="Choosing the attention scale for a given dₖ")
def choose_scale(rng, difficulty, *, d_model=None, heads=None):
    """The factor 1/√d_k that multiplies the scores, from d_k, from d_model and h, or from a head_dim.

    Small answer space: every answer is a function of d_k alone (d_k itself and 1/√d_k), so the
    variety is the number of head widths drawn, not of (d_model, h) pairs."""
    parts = []
    if difficulty != 2 and (d_model is not None or heads is not None):
        raise ProblemgenError("scaling.choose_scale takes d_model and heads only at difficulty 2")
    if difficulty == 1:
        d_k = pick(rng, _WIDTHS)
        params = {"d_k": d_k}
    elif difficulty == 2:
        heads = override("heads", heads, pick(rng, (2, 4, 8, 12, 16, 32)), (2, 4, 6, 8, 12, 16, 24, 32, 64))
        d_k_choice = pick(rng, (16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 104, 112, 128, 160, 192, 256))
        d_model = override("d_model", d_model, heads * d_k_choice, range(8, 16385))
        if d_model % heads:
            raise ProblemgenError(f"d_model={d_model} does not split evenly into {heads} heads")
        d_k = d_model // heads
        params = {"d_model": d_model, "heads": heads}
        parts.append(AnswerPart(key="d_k", type="integer", value=d_k, label="the per-head width d_k",
                                mistakes=(mistake("dk_equals_d_model", d_model),)))
    else:
        d_model, heads, d_k = _CONFIGS[int(rng.integers(len(_CONFIGS)))]
        low, high = sorted(pick(rng, ((16, 64), (32, 128), (64, 256), (16, 256), (8, 128), (64, 512), (32, 512))))
        params = {"d_model": d_model, "heads": heads, "head_dim": d_k, "low": low, "high": high}
    scale = 1 / math.sqrt(d_k)
    wrong = [mistake("scale_by_dk", 1 / d_k), mistake("no_scaling", 1.0)]
    if "d_model" in params:
        wrong.append(mistake("scale_by_d_model", 1 / math.sqrt(params["d_model"])))
    parts.append(AnswerPart(key="scale", type="number", value=scale, atol=0.0005, exact=f"1/{_sqrt_text(d_k)}",
                            label="the factor multiplying every score", mistakes=tuple(wrong)))
    if difficulty == 3:
        growth = math.sqrt(high / low)  # the spread of q.k grows like sqrt(d_k)
        parts.append(AnswerPart(
            key="growth", type="number", value=growth, atol=0.005, exact=_sqrt_text(high // low) if high % low == 0
            else f"sqrt({high}/{low})", label="the factor by which the spread of raw scores grows",
            mistakes=(mistake("std_for_variance", high / low),),
        ))
    return Draft(params=params, parts=parts, solution={"d_k": d_k, "sqrt_dk": math.sqrt(d_k), "scale": scale})
