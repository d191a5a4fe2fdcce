"""Position-wise feed-forward problems: a ReLU FFN, GELU values, and a SwiGLU FFN on small integers.

Every value comes from ``reference.feed_forward`` / ``reference.gelu`` / ``reference.silu``; the known
mistakes are the same reference calls with one thing changed (no activation, no biases, ReLU in place
of GELU, the other GELU formula, the SiLU on the wrong branch).
"""

from __future__ import annotations

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft, Redraw
from problemgen.misconceptions.catalogue import mistake
from problemgen.model.registry import register
from problemgen.problems._common import override

ATOL = 0.005
GELU_FINE_ATOL = 0.00005
"""At difficulty 3 the GELU answer needs 4–5 decimals: the erf and tanh forms differ by at most ~5e-4."""


def _ints(rng: np.random.Generator, low: int, high: int, shape) -> np.ndarray:
    return rng.integers(low, high + 1, size=shape).astype(float)


def _squeeze(x: np.ndarray) -> np.ndarray:
    """One-token problems show plain vectors."""
    return x[0] if x.shape[0] == 1 else x


@register("ffn.relu_ffn", title="ReLU feed-forward network")
def relu_ffn(rng: np.random.Generator, difficulty: int, *, d_ff: int | None = None) -> Draft:
    """FFN(x) = ReLU(x W_1 + b_1) W_2 + b_2 on small integers (biases from difficulty 2)."""
    d_model = 2 if difficulty == 1 else 3
    d_ff = override("d_ff", d_ff, 3 if difficulty == 1 else 4, range(2, 9))
    tokens = 2 if difficulty == 3 else 1
    x = _ints(rng, -2, 3, (tokens, d_model))  # (T, d_model)
    p = {"w_1": _ints(rng, -2, 2, (d_model, d_ff)), "w_2": _ints(rng, -2, 2, (d_ff, d_model))}
    if difficulty >= 2:
        p |= {"b_1": _ints(rng, -2, 2, d_ff), "b_2": _ints(rng, -2, 2, d_model)}
        if not np.any(p["b_1"]) or not np.any(p["b_2"]):
            raise Redraw("zero biases would hide the bias step")
    pre = reference.project(x, p["w_1"], p.get("b_1"))  # (T, d_ff)
    if not np.any(pre < 0) or not np.any(pre > 0):
        raise Redraw("the ReLU should both clip and pass something")
    hidden = reference.relu(pre)  # (T, d_ff)
    out = reference.feed_forward(x, p, kind="relu")  # (T, d_model)

    no_relu = reference.project(pre, p["w_2"], p.get("b_2"))  # (T, d_model) activation skipped
    hidden_mistakes = [mistake("activation_skipped", _squeeze(pre))]
    out_mistakes = [mistake("activation_skipped", _squeeze(no_relu))]
    if difficulty >= 2:
        unbiased = {"w_1": p["w_1"], "w_2": p["w_2"]}
        hidden_mistakes.append(mistake("forgot_biases", _squeeze(reference.relu(reference.project(x, p["w_1"]))),
                                       hint="The bias b_1 is added before the ReLU: h = ReLU(x W_1 + b_1)."))
        out_mistakes.append(mistake("forgot_biases", _squeeze(reference.feed_forward(x, unbiased, kind="relu")),
                                    hint="Both layers have biases: add b_1 before the ReLU and b_2 at the end."))
    parts = [
        AnswerPart("hidden", "matrix", _squeeze(hidden), label="the hidden activations h", atol=ATOL,
                   mistakes=tuple(hidden_mistakes)),
        AnswerPart("output", "matrix", _squeeze(out), label="the FFN output", atol=ATOL, mistakes=tuple(out_mistakes)),
    ]
    return Draft(
        params={"x": _squeeze(x), "tokens": tokens, "d_model": d_model, "d_ff": d_ff, "ffn": p,
                "biases": difficulty >= 2},
        parts=parts,
        solution={"pre": _squeeze(pre), "hidden": _squeeze(hidden), "output": _squeeze(out)},
    )


_GELU_POINTS = {
    1: (-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0),
    2: (-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0, 3.0),
    3: (-3.0, -2.5, -1.5, -1.0, 1.0, 1.5, 2.5, 3.0),
}
"""Inputs per difficulty; the difficulty-3 set keeps points where the erf and tanh forms differ by > 1e-4."""


@register("ffn.gelu", title="GELU values")
def gelu(rng: np.random.Generator, difficulty: int, *, form: str | None = None) -> Draft:
    """GELU at a few points, with the exact (erf) or tanh form stated; ReLU and the other form are mistakes."""
    drawn = None if form is not None else "exact" if difficulty == 1 else ("exact", "tanh")[int(rng.integers(2))]
    form = override("form", form, drawn, ("exact", "tanh"))
    n = 2 if difficulty == 1 else 3
    x = np.sort(rng.choice(_GELU_POINTS[difficulty], size=n, replace=False))  # (n,)
    approximate = "none" if form == "exact" else "tanh"
    values = reference.gelu(x, approximate=approximate)  # (n,)
    other = reference.gelu(x, approximate="tanh" if form == "exact" else "none")  # (n,)
    fine = difficulty == 3
    mistakes = [mistake("relu_for_gelu", reference.relu(x))]
    if fine:
        mistakes.append(mistake("gelu_form_confused", other))
    cdf = values / x  # (n,) Φ(x) (exact form) or its tanh stand-in; no x is 0
    part = AnswerPart("gelu", "matrix", values, label="the GELU values", atol=GELU_FINE_ATOL if fine else ATOL,
                      mistakes=tuple(mistakes))
    return Draft(params={"x": x, "form": form, "fine": fine}, parts=[part],
                 solution={"phi": cdf, "gelu": values, "other": other})


def _swiglu_parts(x, p):
    """Gate, up and hidden vectors of a SwiGLU FFN, computed with the reference pieces."""
    gate_pre = reference.project(x, p["w_gate"])  # (T, d_ff)
    up = reference.project(x, p["w_up"])  # (T, d_ff)
    hidden = reference.silu(gate_pre) * up  # (T, d_ff)
    return gate_pre, up, hidden


@register("ffn.swiglu", title="SwiGLU feed-forward network")
def swiglu(rng: np.random.Generator, difficulty: int) -> Draft:
    """SwiGLU(x) = (SiLU(x W_gate) ⊙ x W_up) W_down on small integers; three matrices, no biases."""
    d_model, d_ff = (2, 2) if difficulty == 1 else (3, 3) if difficulty == 2 else (2, 3)
    tokens = 2 if difficulty == 3 else 1
    x = _ints(rng, -2, 2, (tokens, d_model))  # (T, d_model)
    p = {"w_gate": _ints(rng, -1, 2, (d_model, d_ff)), "w_up": _ints(rng, -1, 2, (d_model, d_ff)),
         "w_down": _ints(rng, -1, 2, (d_ff, d_model))}
    if any(np.any(np.all(p[name] == 0, axis=0)) for name in ("w_gate", "w_up")):
        raise Redraw("a zero column in W_gate or W_up makes a hidden unit 0 whatever the input")
    gate_pre, up, hidden = _swiglu_parts(x, p)
    if np.array_equal(gate_pre, up) or not np.any(hidden):
        raise Redraw("gate and up must differ and the hidden vector must not vanish")
    out = reference.feed_forward(x, p, kind="swiglu")  # (T, d_model)

    swapped_hidden = reference.silu(up) * gate_pre  # (T, d_ff) SiLU on the wrong branch
    linear_hidden = gate_pre * up  # (T, d_ff) no SiLU at all
    w_down = p["w_down"]
    parts = [
        AnswerPart("hidden", "matrix", _squeeze(hidden), label="the gated hidden vector", atol=ATOL,
                   mistakes=(mistake("swiglu_gate_swapped", _squeeze(swapped_hidden)),
                             mistake("activation_skipped", _squeeze(linear_hidden)))),
        AnswerPart("output", "matrix", _squeeze(out), label="the SwiGLU output", atol=ATOL,
                   mistakes=(mistake("swiglu_gate_swapped", _squeeze(swapped_hidden @ w_down)),
                             mistake("activation_skipped", _squeeze(linear_hidden @ w_down)))),
    ]
    return Draft(
        params={"x": _squeeze(x), "tokens": tokens, "d_model": d_model, "d_ff": d_ff, "ffn": p},
        parts=parts,
        solution={"gate_pre": _squeeze(gate_pre), "gate": _squeeze(reference.silu(gate_pre)), "up": _squeeze(up),
                  "hidden": _squeeze(hidden), "output": _squeeze(out)},
    )
