"""Normalisation and residual problems: LayerNorm, RMSNorm, the residual add, pre-LN vs post-LN.

Inputs are small integer vectors so the statistics can be done by hand; every value (and every
mistaken value) comes from ``reference.layer_norm`` / ``reference.rms_norm`` or the buggy variants in
:mod:`problemgen.misconceptions.catalogue`. Problems state ε = 0 so the hand computation is exact; the tolerance
(±0.005) is far larger than anything ε would change anyway.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft, Redraw
from problemgen.misconceptions.catalogue import mistake
from problemgen.misconceptions import norms as buggy
from problemgen.misconceptions.norms import layer_norm_unbiased, layer_norm_wrong_axis
from problemgen.problems._common import override, pick
from problemgen.problems.concepts import Option, choice_part, option_texts
from problemgen.model.registry import register

ATOL = 0.005


def _ints(rng: np.random.Generator, low: int, high: int, shape) -> np.ndarray:
    """Integers in [low, high] as floats (the reference works in float64)."""
    return rng.integers(low, high + 1, size=shape).astype(float)


def _exact_mean_var(x: np.ndarray) -> tuple[str, str]:
    """Exact mean and biased variance of an integer vector as fraction strings ("7/4")."""
    values = [Fraction(int(v)) for v in x]
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return str(mean), str(var)


def _vector_or_matrix(x: np.ndarray) -> np.ndarray:
    """Drop a leading token axis of length 1 so one-token problems show a plain vector."""
    return x[0] if x.shape[0] == 1 else x


def _affine_params(rng: np.random.Generator, d: int, *, with_beta: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """γ (non-zero small integers, not all 1) and β (small integers, not all 0)."""
    gamma = rng.choice([-1.0, 1.0, 2.0, 3.0], size=d)
    beta = _ints(rng, -2, 2, d) if with_beta else np.zeros(d)
    if np.all(gamma == 1.0) and not np.any(beta):
        raise Redraw("γ = 1 and β = 0 hide the affine step")
    return gamma, beta


@register("norms.layer_norm", title="LayerNorm of a small vector")
def layer_norm(rng: np.random.Generator, difficulty: int, *, d: int | None = None) -> Draft:
    """LayerNorm by hand: mean, biased variance and the normalised (scaled, shifted) output."""
    # d stays 3 or 4: the prompt's example fraction (169/7) is out of reach only for these widths.
    d = override("d", d, 4 if difficulty < 3 else int(rng.integers(3, 5)), (3, 4))
    tokens = 2 if difficulty == 3 else 1
    x = _ints(rng, -3, 6, (tokens, d))  # (T, d)
    if np.any(x.var(axis=-1) == 0):
        raise Redraw("a constant token has zero variance")
    if tokens > 1 and np.any(x.var(axis=0) == 0):
        raise Redraw("a feature equal across tokens makes the wrong-axis variant divide by zero")
    affine = difficulty >= 2
    gamma, beta = _affine_params(rng, d) if affine else (np.ones(d), np.zeros(d))

    mean = x.mean(axis=-1)  # (T,)
    var = x.var(axis=-1)  # (T,) biased (divide by d)
    centred = x - mean[:, None]  # (T, d)
    normalised = reference.layer_norm(x, eps=0.0)  # (T, d)
    out = reference.layer_norm(x, gamma, beta, eps=0.0)  # (T, d)

    out_mistakes = [mistake("unbiased_variance", _vector_or_matrix(layer_norm_unbiased(x, gamma, beta, eps=0.0)))]
    if affine:
        out_mistakes.append(mistake("affine_skipped", _vector_or_matrix(normalised)))
    if tokens > 1:
        out_mistakes.append(mistake("norm_wrong_axis", layer_norm_wrong_axis(x, gamma, beta, eps=0.0)))

    unbiased = x.var(axis=-1, ddof=1)  # (T,) the n − 1 variance a student might use
    if tokens == 1:
        mean_exact, var_exact = _exact_mean_var(x[0])
        mean_part = AnswerPart("mean", "number", float(mean[0]), label="the mean", atol=ATOL, exact=mean_exact)
        var_part = AnswerPart(
            "variance", "number", float(var[0]), label="the variance", atol=ATOL, exact=var_exact,
            mistakes=(mistake("unbiased_variance", float(unbiased[0])),),
        )
    else:
        mean_part = AnswerPart("mean", "matrix", mean, label="the mean of each token", atol=ATOL)
        var_part = AnswerPart(
            "variance", "matrix", var, label="the variance of each token", atol=ATOL,
            mistakes=(mistake("unbiased_variance", unbiased),),
        )
    out_part = AnswerPart(
        "output", "matrix", _vector_or_matrix(out), label="the LayerNorm output", atol=ATOL,
        mistakes=tuple(out_mistakes),
    )
    return Draft(
        params={"x": _vector_or_matrix(x), "d": d, "tokens": tokens, "affine": affine, "gamma": gamma, "beta": beta},
        parts=[mean_part, var_part, out_part],
        solution={
            "mean": mean, "var": var, "std": np.sqrt(var), "centred": _vector_or_matrix(centred),
            "normalised": _vector_or_matrix(normalised), "output": _vector_or_matrix(out),
        },
    )


@register("norms.rms_norm", title="RMSNorm of a small vector")
def rms_norm(rng: np.random.Generator, difficulty: int, *, d: int | None = None) -> Draft:
    """RMSNorm by hand: the root mean square and the rescaled output (no centring, no shift)."""
    d = override("d", d, int(rng.integers(3, 5)) if difficulty == 1 else 4, (3, 4))
    tokens = 2 if difficulty == 3 else 1
    x = _ints(rng, -2, 6, (tokens, d))  # (T, d)
    if np.any(x.var(axis=-1) == 0) or np.any(np.abs(x.mean(axis=-1)) < 0.5):
        raise Redraw("centring must visibly change the answer")
    if tokens > 1 and np.any(np.all(x == 0, axis=0)):
        raise Redraw("a feature that is zero in every token breaks the wrong-axis variant")
    affine = difficulty >= 2
    gamma = _affine_params(rng, d, with_beta=False)[0] if affine else np.ones(d)

    mean_square = (x**2).mean(axis=-1)  # (T,)
    rms = np.sqrt(mean_square)  # (T,)
    normalised = reference.rms_norm(x, eps=0.0)  # (T, d)
    out = reference.rms_norm(x, gamma, eps=0.0)  # (T, d)

    centred = reference.layer_norm(x, gamma, None, eps=0.0)  # (T, d) what "RMSNorm with the mean removed" gives
    out_mistakes = [mistake("rms_subtracts_mean", _vector_or_matrix(centred))]
    if affine:
        out_mistakes.append(mistake("affine_skipped", _vector_or_matrix(normalised)))
    if tokens > 1:
        across_tokens = reference.rms_norm(x.T, eps=0.0).T * gamma  # (T, d) statistics over the token axis
        out_mistakes.append(mistake("norm_wrong_axis", across_tokens))

    std = x.std(axis=-1)  # (T,) the centred spread, which is not the RMS
    if tokens == 1:
        ms = Fraction(sum(int(v) ** 2 for v in x[0]), d)
        rms_part = AnswerPart(
            "rms", "number", float(rms[0]), label="the root mean square", atol=ATOL, exact=f"sqrt({ms})",
            mistakes=(mistake("rms_subtracts_mean", float(std[0])),),
        )
    else:
        rms_part = AnswerPart(
            "rms", "matrix", rms, label="the root mean square of each token", atol=ATOL,
            mistakes=(mistake("rms_subtracts_mean", std),),
        )
    out_part = AnswerPart(
        "output", "matrix", _vector_or_matrix(out), label="the RMSNorm output", atol=ATOL,
        mistakes=tuple(out_mistakes),
    )
    return Draft(
        params={"x": _vector_or_matrix(x), "d": d, "tokens": tokens, "affine": affine, "gamma": gamma},
        parts=[rms_part, out_part],
        solution={
            "sum_squares": (x**2).sum(axis=-1), "mean_square": mean_square, "rms": rms,
            "normalised": _vector_or_matrix(normalised),
            "output": _vector_or_matrix(out),
        },
    )


EPSILON = 0.01
"""The ε of the quiet-token problems: as large as a small token's mean square, so its place shows."""


def _quiet_token(rng: np.random.Generator, d: int, centred: bool) -> np.ndarray:
    """A token of tenths whose mean square (variance when ``centred``) lies within a factor 4 of ε."""
    x = _ints(rng, -3, 3, d) / 10  # (d,)
    spread = x.var() if centred else (x**2).mean()
    if not EPSILON / 4 <= spread <= 4 * EPSILON:
        raise Redraw("ε should be comparable to the token's spread")
    return x


@register("norms.epsilon", title="Normalising a quiet token: where ε goes")
def epsilon(rng: np.random.Generator, difficulty: int, *, norm: str | None = None) -> Draft:
    """RMSNorm (d1), LayerNorm (d2) or either (d3, four features) of a token whose spread is close to ε."""
    drawn = {1: "rms", 2: "layer"}.get(difficulty) or pick(rng, ("rms", "layer"))
    norm = override("norm", norm, drawn, ("rms", "layer"))
    d = 3 if difficulty == 1 else 4
    x = _quiet_token(rng, d, centred=norm == "layer")  # (d,)
    if norm == "rms":
        key = reference.rms_norm(x, eps=EPSILON)  # (d,)
        ms = float((x**2).mean())
        slips = (
            mistake("rms_no_eps", buggy.rms_norm_no_eps(x)),
            mistake("eps_outside_sqrt", buggy.rms_norm(x, eps=EPSILON, eps_inside=False)),
            mistake("rms_subtracts_mean", buggy.rms_norm_subtracts_mean(x, eps=EPSILON)),
        )
        solution = {"mean_square": ms, "root": float(np.sqrt(ms + EPSILON)), "output": key}
    else:
        key = reference.layer_norm(x, eps=EPSILON)  # (d,)
        slips = (
            mistake("unbiased_variance", buggy.layer_norm_unbiased(x, eps=EPSILON)),
            mistake("eps_outside_sqrt", buggy.layer_norm_eps_outside(x, eps=EPSILON)),
            mistake("unbiased_variance_eps_outside", buggy.layer_norm_unbiased_eps_outside(x, eps=EPSILON)),
        )
        var = float(x.var())
        solution = {"mean": float(x.mean()), "variance": var, "root": float(np.sqrt(var + EPSILON)), "output": key}
    label = "the RMSNorm output" if norm == "rms" else "the LayerNorm output"
    part = AnswerPart("output", "matrix", key, label=label, atol=ATOL, mistakes=slips)
    return Draft(params={"x": x, "d": d, "norm": norm, "eps": EPSILON}, parts=[part], solution=solution)


@register("norms.residual", title="Residual connection around a sublayer")
def residual(rng: np.random.Generator, difficulty: int, *, d: int | None = None) -> Draft:
    """x + sublayer(x) where the sublayer is a linear map (d1) or a small ReLU FFN (d2, d3)."""
    d = override("d", d, 3 if difficulty < 3 else 2, range(2, 7))
    tokens = 2 if difficulty == 3 else 1
    x = _ints(rng, -2, 3, (tokens, d))  # (T, d)
    if np.any(np.all(x == 0, axis=-1)):
        raise Redraw("a zero token hides the residual")
    if tokens > 1 and np.array_equal(x[0], x[1]):
        raise Redraw("two equal tokens would make the second row a copy of the first")
    if difficulty == 1:
        w = _ints(rng, -1, 2, (d, d))  # (d, d)
        params_ffn = {"w": w}
        hidden = None
        sub = reference.project(x, w)  # (T, d)
    else:
        d_ff = 3 if difficulty == 2 else 4
        params_ffn = {"w_1": _ints(rng, -1, 2, (d, d_ff)), "w_2": _ints(rng, -1, 2, (d_ff, d))}
        if difficulty == 3:
            params_ffn |= {"b_1": _ints(rng, -1, 1, d_ff), "b_2": _ints(rng, -1, 1, d)}
        pre = reference.project(x, params_ffn["w_1"], params_ffn.get("b_1"))  # (T, d_ff)
        if not np.any(pre < 0) or not np.any(pre > 0):
            raise Redraw("the ReLU should both clip and pass something")
        hidden = reference.relu(pre)  # (T, d_ff)
        sub = reference.feed_forward(x, params_ffn, kind="relu")  # (T, d)
    y = x + sub  # (T, d) the residual add
    parts = [
        AnswerPart("sublayer", "matrix", _vector_or_matrix(sub), label="the sublayer output F(x)", atol=ATOL),
        AnswerPart(
            "output", "matrix", _vector_or_matrix(y), label="the block output x + F(x)", atol=ATOL,
            mistakes=(mistake("forgot_residual", _vector_or_matrix(sub)),),
        ),
    ]
    return Draft(
        params={"x": _vector_or_matrix(x), "tokens": tokens, "ffn": params_ffn, "difficulty": difficulty},
        parts=parts,
        solution={"hidden": None if hidden is None else _vector_or_matrix(hidden), "sub": _vector_or_matrix(sub),
                  "output": _vector_or_matrix(y)},
    )


_PRE = r"x + F(\mathrm{LN}(x))"
_POST = r"\mathrm{LN}(x + F(x))"
_PRE_NO_RES = r"F(\mathrm{LN}(x))"
_POST_NO_RES = r"\mathrm{LN}(F(x))"
_LN_BOTH = r"\mathrm{LN}(x) + F(x)"


def _order_options(order: str) -> list[Option]:
    """The five candidate wirings of one sublayer, marked for the asked ``order``."""
    pre, post = order == "pre", order == "post"
    return [
        Option(f"${_PRE}$", "Pre-LN: normalise the sublayer's input, then add the untouched $x$ back."
               if pre else "That is pre-LN: the norm sits inside the branch, before the sublayer.",
               correct=pre, misconception=None if pre else "pre_post_ln_swapped"),
        Option(f"${_POST}$", "Post-LN: add the residual first, then normalise the sum (the 2017 layout)."
               if post else "That is post-LN: the norm is applied after the residual add.",
               correct=post, misconception=None if post else "pre_post_ln_swapped"),
        Option(f"${_PRE_NO_RES if pre else _POST_NO_RES}$",
               "The residual path is missing: the input $x$ never reaches the output directly.",
               misconception="forgot_residual"),
        Option(f"${_LN_BOTH}$",
               "This normalises the skip path instead of the sublayer path; neither standard layout does that."),
        Option(r"$x + \mathrm{LN}(x) + F(x)$",
               "Here $x$ is added twice and the sublayer never sees normalised input."),
    ]


@register("norms.pre_post_ln", title="Pre-LN versus post-LN")
def pre_post_ln(rng: np.random.Generator, difficulty: int, *, order: str | None = None) -> Draft:
    """Identify (d1) or compute (d2, d3) one sublayer wired pre-LN or post-LN."""
    order = override("order", order, ("pre", "post")[int(rng.integers(2))] if order is None else None, ("pre", "post"))
    if difficulty == 1:
        part = choice_part(rng, _order_options(order), label=f"the {order}-LN wiring")
        return Draft(params={"order": order, "options": option_texts(part)}, parts=[part], solution={"order": order})

    d = 3 if difficulty == 2 else 4
    x = _ints(rng, -2, 4, d)  # (d,)
    w = _ints(rng, -1, 1, (d, d))  # (d, d) the sublayer F(x) = x W
    gamma, beta = _affine_params(rng, d) if difficulty == 3 else (np.ones(d), np.zeros(d))

    def ln(v: np.ndarray) -> np.ndarray:
        return reference.layer_norm(v, gamma, beta, eps=0.0)  # (d,)

    if x.var() == 0 or (x + x @ w).var() == 0 or (x @ w).var() == 0:
        raise Redraw("a constant vector cannot be normalised")
    pre = x + reference.project(ln(x), w)  # (d,) x + F(LN(x))
    post = ln(x + reference.project(x, w))  # (d,) LN(x + F(x))
    pre_no_res = reference.project(ln(x), w)  # (d,)
    post_no_res = ln(reference.project(x, w))  # (d,)
    key, other = (pre, post) if order == "pre" else (post, pre)
    no_res = pre_no_res if order == "pre" else post_no_res
    part = AnswerPart(
        "output", "matrix", key, label=f"the {order}-LN output", atol=ATOL,
        mistakes=(mistake("pre_post_ln_swapped", other), mistake("forgot_residual", no_res)),
    )
    residual_sum = x + reference.project(x, w)  # (d,) what post-LN normalises
    solution = {
        "mean": float((x if order == "pre" else residual_sum).mean()),
        "var": float((x if order == "pre" else residual_sum).var()),
        "ln_x": ln(x), "f_ln_x": pre_no_res, "pre": pre,
        "f_x": reference.project(x, w), "sum": x + reference.project(x, w), "post": post,
    }
    return Draft(params={"order": order, "x": x, "w": w, "gamma": gamma, "beta": beta, "affine": difficulty == 3},
                 parts=[part], solution=solution)
