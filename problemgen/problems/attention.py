"""Attention arithmetic by hand: scores, scaling, softmax weights, outputs, projections, asymmetry.

Every kind draws small integer queries/keys/values first (entries in −1..1 when d_k = 4, so the
scaled scores stay in a range where the softmax is not saturated), then computes each answer and
each misconception's value from exactly those numbers with the reference. Row-vector convention
throughout (a token is a row; Q = X W_Q) except where ``attention.projection`` states the column
convention.
"""

from __future__ import annotations

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft, ProblemgenError
from problemgen.misconceptions.attention import (
    attention_no_scaling,
    attention_scale_by_dk,
    attention_scale_multiplied,
    attention_softmax_base,
    attention_softmax_wrong_axis,
)
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import (
    OUTPUT_ATOL,
    SCORE_ATOL,
    WEIGHT_ATOL,
    choice_options,
    int_matrix,
    override,
    pick,
    require,
    require_unsaturated,
    exact_string,
    exp_terms_latex,
    softmax_latex,
)
from problemgen.model.registry import register


def _exact():
    """``reference.exact`` (SymPy arithmetic), loaded on the first exact softmax: importing SymPy at
    start-up would cost the quiz a second before its first question, and most kinds never need it."""
    from reference import exact  # lazy: SymPy start-up cost, see the docstring

    return exact


# Per difficulty: query/key counts, d_k choices and the entry range of Q and K.
# d_k = 4 keeps sqrt(d_k) = 2 rational at difficulty 1; entries in -1..1 keep |scaled score| <= 2.
_SIZES = {
    1: {"L": (2, 3), "d_k": (4,), "qk": (-1, 1), "v": (0, 3)},
    2: {"L": (3, 4), "d_k": (2, 4), "qk": (-1, 1), "v": (-2, 3)},
    3: {"L": (4, 5), "d_k": (4, 8, 9), "qk": (-1, 1), "v": (-3, 4)},
}


def _draw_qk(rng, difficulty: int, L: int | None, d_k: int | None, *, cross: bool = False, S: int | None = None):
    """Queries (L, d_k) and keys (S, d_k); S == L unless ``cross`` at difficulty >= 2."""
    size = _SIZES[difficulty]
    L = override("L", L, pick(rng, size["L"]), range(2, 7))
    d_k = override("d_k", d_k, pick(rng, size["d_k"]), (2, 3, 4, 8, 9, 16))
    S = _key_count(rng, S, L, size["L"], cross and difficulty >= 2)
    low, high = size["qk"]
    q = int_matrix(rng, (L, d_k), low, high)  # (L, d_k)
    k = int_matrix(rng, (S, d_k), low, high)  # (S, d_k)
    return q, k


def _key_count(rng, S: int | None, L: int, lengths, cross: bool) -> int:
    """The number of keys: drawn (an override, so a class set pins it) when queries and keys differ in
    length, else L — asking for S there is an error rather than silently ignored."""
    if cross:
        return override("S", S, pick(rng, lengths), range(2, 7))
    if S is not None and S != L:
        raise ProblemgenError(f"override S={S!r} needs keys apart from queries; at this difficulty S equals L")
    return L


def _scores(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Raw dot products; scale=1 in the reference leaves them unscaled before the softmax."""
    return q @ k.T  # (L, S)


# ---------------------------------------------------------------------------------------- scores


@register("attention.scores", title="Attention scores QKᵀ")
def scores(rng, difficulty, *, L=None, d_k=None, S=None):
    """Raw score matrix S = QKᵀ from small integer queries and keys (``S`` keys, an override)."""
    size = {1: ((2, 3), (2, 3), (-2, 2)), 2: ((3, 4), (3, 4), (-2, 2)), 3: ((4, 5), (4, 5, 6), (-3, 3))}
    lengths, widths, (low, high) = size[difficulty]
    L = override("L", L, pick(rng, lengths), range(2, 7))
    d_k = override("d_k", d_k, pick(rng, widths), range(1, 9))
    S = _key_count(rng, S, L, lengths, difficulty >= 2)
    q = int_matrix(rng, (L, d_k), low, high)  # (L, d_k)
    k = int_matrix(rng, (S, d_k), low, high)  # (S, d_k)
    s = _scores(q, k)  # (L, S)
    require(len(np.unique(s)) > 2, "too few distinct scores")
    part = AnswerPart(
        key="scores", type="matrix", value=s, label="the score matrix S = QKᵀ", atol=0.0,
        mistakes=(mistake("transpose_scores", k @ q.T),),
    )
    return Draft(params={"Q": q, "K": k, "L": L, "S": S, "d_k": d_k}, parts=[part], solution={"S": s, "KT": k.T})


# ---------------------------------------------------------------------------------- scaled scores


@register("attention.scaled_scores", title="Scaled attention scores QKᵀ/√dₖ")
def scaled_scores(rng, difficulty, *, L=None, d_k=None, S=None):
    """Scale factor and scaled scores QKᵀ/√d_k for small integer queries and keys."""
    q, k = _draw_qk(rng, difficulty, L, d_k, cross=True, S=S)
    d_k = q.shape[1]
    s = _scores(q, k)  # (L, S)
    scaled = s / np.sqrt(d_k)  # (L, S)
    require(np.count_nonzero(s) >= 2, "scores almost all zero")
    parts = [
        AnswerPart(
            key="scale", type="number", value=1 / np.sqrt(d_k), label="the factor multiplying every score",
            atol=0.0005, exact=f"1/sqrt({d_k})",
            mistakes=(mistake("scale_by_dk", 1 / d_k), mistake("no_scaling", 1.0), mistake("scale_multiplied", np.sqrt(d_k))),
        ),
        AnswerPart(
            key="scaled", type="matrix", value=scaled, label="the scaled scores QKᵀ/√dₖ", atol=SCORE_ATOL,
            mistakes=(mistake("no_scaling", s), mistake("scale_by_dk", s / d_k), mistake("scale_multiplied", s * np.sqrt(d_k))),
        ),
    ]
    return Draft(
        params={"Q": q, "K": k, "d_k": d_k},
        parts=parts,
        solution={"S": s, "sqrt_dk": float(np.sqrt(d_k)), "scaled": scaled},
    )


# ---------------------------------------------------------------------------------------- weights


def _weight_mistakes(q, k, v, scaled) -> tuple:
    """The misconceptions that change the weight matrix, each computed for this variant.

    A base-2 softmax scales the exponents by ln 2 / √d_k; for d_k = 2 that is 0.49, within rounding of
    the 1/d_k = 0.5 of ``scale_by_dk``, so there the two cannot be told apart and base 2 is not listed
    (redrawing instead would never ask about d_k = 2).
    """
    found = [
        mistake("no_scaling", attention_no_scaling(q, k, v)[1]),
        mistake("scale_by_dk", attention_scale_by_dk(q, k, v)[1]),
        mistake("scale_multiplied", attention_scale_multiplied(q, k, v)[1]),
        mistake("softmax_wrong_axis", attention_softmax_wrong_axis(q, k, v)[1]),
        mistake("no_softmax", scaled),
    ]
    if q.shape[-1] != 2:
        found.append(mistake("softmax_wrong_base", attention_softmax_base(q, k, v, base=2.0)[1]))
    return tuple(found)


@register("attention.weights", title="Attention weights from queries and keys")
def weights(rng, difficulty, *, L=None, d_k=None, S=None):
    """Softmax of the scaled scores for small integer Q and K."""
    q, k = _draw_qk(rng, difficulty, L, d_k, cross=difficulty == 3, S=S)
    v = np.eye(k.shape[0])  # (S, S) values do not matter for the weights
    _, w = reference.scaled_dot_product_attention(q, k, v)  # (L, S)
    require_unsaturated(w, difficulty)
    s = _scores(q, k)  # (L, S)
    scaled = s / np.sqrt(q.shape[1])  # (L, S)
    part = AnswerPart(
        key="weights", type="matrix", value=w, label="the attention weights A", atol=WEIGHT_ATOL,
        mistakes=_weight_mistakes(q, k, v, scaled),
    )
    first_row = list(_exact().scaled_scores(q[:1].tolist(), k.tolist()))  # exact scaled scores of query 1
    return Draft(
        params={"Q": q, "K": k, "d_k": q.shape[1]},
        parts=[part],
        solution={"S": s, "sqrt_dk": float(np.sqrt(q.shape[1])), "scaled": scaled, "exp": np.exp(scaled), "A": w,
                  "exact_terms": exp_terms_latex(first_row)},
    )


# ----------------------------------------------------------------------------------------- output


@register("attention.output", title="Attention output softmax(QKᵀ/√dₖ)V")
def output(rng, difficulty, *, L=None, d_k=None):
    """Weights and output of scaled dot-product attention for small integer Q, K, V."""
    q, k = _draw_qk(rng, difficulty, L, d_k)
    d_v = 2 if difficulty == 1 else 3
    v = int_matrix(rng, (k.shape[0], d_v), *_SIZES[difficulty]["v"])  # (S, d_v)
    out, w = reference.scaled_dot_product_attention(q, k, v)  # (L, d_v), (L, S)
    require_unsaturated(w, difficulty)
    require(len(np.unique(v, axis=0)) == v.shape[0], "two identical value rows")
    s = _scores(q, k)  # (L, S)
    scaled = s / np.sqrt(q.shape[1])  # (L, S)
    out_mistakes = [
        mistake("no_scaling", attention_no_scaling(q, k, v)[0]),
        mistake("softmax_wrong_axis", attention_softmax_wrong_axis(q, k, v)[0]),
        mistake("no_softmax", scaled @ v),
    ]
    if k.shape[1] == d_v:
        out_mistakes.append(mistake("weights_times_wrong", w @ k))
    parts = [
        AnswerPart(
            key="weights", type="matrix", value=w, label="the attention weights A", atol=WEIGHT_ATOL,
            mistakes=_weight_mistakes(q, k, v, scaled),
        ),
        AnswerPart(
            key="output", type="matrix", value=out, label="the output O = AV", atol=OUTPUT_ATOL,
            mistakes=tuple(out_mistakes),
        ),
    ]
    return Draft(
        params={"Q": q, "K": k, "V": v, "d_k": q.shape[1]},
        parts=parts,
        solution={"S": s, "sqrt_dk": float(np.sqrt(q.shape[1])), "scaled": scaled, "A": w, "O": out},
    )


# -------------------------------------------------------------------------------------- one query


@register("attention.one_query", title="One query against many keys")
def one_query(rng, difficulty, *, n=None, d_k=None):
    """Scores, weights (with one exact weight) and output for a single query vector."""
    size = _SIZES[difficulty]
    n = override("n", n, {1: 3, 2: 4, 3: 5}[difficulty], range(2, 7))
    d_k = override("d_k", d_k, pick(rng, size["d_k"]), (2, 3, 4, 8, 9, 16))
    low, high = size["qk"]
    q = int_matrix(rng, (d_k,), low, high)  # (d_k,)
    k = int_matrix(rng, (n, d_k), low, high)  # (n, d_k)
    v = int_matrix(rng, (n, 2), *size["v"])  # (n, d_v)
    out, w = reference.scaled_dot_product_attention(q[None, :], k, v)  # (1, d_v), (1, n)
    out, w = out[0], w[0]  # (d_v,), (n,)
    require_unsaturated(w, difficulty)
    s = k @ q  # (n,) one raw score per key
    require(len(np.unique(s)) >= 2, "all scores equal")
    top = int(np.argmax(w))
    require(int(np.sum(s == s[top])) == 1, "tie for the largest score")
    scaled = s / np.sqrt(d_k)  # (n,)
    no_scale_out, no_scale_w = attention_no_scaling(q[None, :], k, v)
    by_dk_w = attention_scale_by_dk(q[None, :], k, v)[1][0]  # (n,)
    exact_scaled = _exact().scaled_scores(q[None, :].tolist(), k.tolist())  # (1, n) exact; no output stage needed
    exact = exact_string(_exact().softmax(exact_scaled)[0, top])
    exact_latex = softmax_latex(list(exact_scaled), top)
    parts = [
        AnswerPart(key="scores", type="matrix", value=s, label="the raw scores q·k_j", atol=0.0),
        AnswerPart(
            key="weights", type="matrix", value=w, label="the attention weights", atol=WEIGHT_ATOL,
            mistakes=(mistake("no_scaling", no_scale_w[0]), mistake("scale_by_dk", by_dk_w), mistake("no_softmax", scaled)),
        ),
        AnswerPart(
            key="top", type="number", value=w[top], exact=exact, atol=0.0005,
            label=f"the weight on key {top + 1}, exactly or to 4 decimals",
            mistakes=(mistake("no_scaling", no_scale_w[0][top]), mistake("scale_by_dk", by_dk_w[top])),
        ),
        AnswerPart(
            key="output", type="matrix", value=out, label="the output vector", atol=OUTPUT_ATOL,
            mistakes=(mistake("no_scaling", no_scale_out[0]), mistake("no_softmax", scaled @ v)),
        ),
    ]
    return Draft(
        params={"q": q, "K": k, "V": v, "d_k": d_k, "top": top + 1},
        parts=parts,
        solution={"s": s, "sqrt_dk": float(np.sqrt(d_k)), "scaled": scaled, "exp": np.exp(scaled),
                  "total": float(np.exp(scaled).sum()), "w": w, "out": out, "exact_latex": exact_latex},
    )


# ------------------------------------------------------------------------------------- projection


@register("attention.projection", title="Projecting tokens to queries, keys and values")
def projection(rng, difficulty, *, convention=None, d_model=None, d_k=None):
    """Q, K and V from X and the projection matrices, in the row or the column convention."""
    convention = override("convention", convention, pick(rng, ("row", "column")), ("row", "column"))
    L, model_width, key_width = {1: (2, 3, 2), 2: (3, 3, 3), 3: (4, 4, 2)}[difficulty]
    if difficulty == 1 and rng.random() < 0.5:  # half the time square matrices, where a transpose still fits
        model_width = key_width = pick(rng, (2, 3))
    # the sizes are overrides so a class set gives every student one shape
    d_model = override("d_model", d_model, model_width, (2, 3) if difficulty == 1 else (model_width,))
    d_k = override("d_k", d_k, key_width, (2, 3) if difficulty == 1 else (key_width,))
    x = int_matrix(rng, (L, d_model), 0 if difficulty == 1 else -1, 1)  # (L, d_model)
    shape = (d_model, d_k) if convention == "row" else (d_k, d_model)
    ws = {name: int_matrix(rng, shape, -1, 1) for name in ("W_Q", "W_K", "W_V")}  # each shape
    parts = []
    results = {}
    for name, letter in (("W_Q", "Q"), ("W_K", "K"), ("W_V", "V")):
        w_row = ws[name] if convention == "row" else ws[name].T  # (d_model, d_k)
        value = reference.project(x, w_row)  # (L, d_k)
        results[letter] = value
        mistakes = ()
        if d_model == d_k:
            wrong = reference.project(x, w_row.T)  # (L, d_k) the other convention's product
            mistakes = (mistake("projection_transposed", wrong),)
        parts.append(AnswerPart(key=letter, type="matrix", value=value, label=f"the matrix {letter}", atol=0.0,
                                mistakes=mistakes))
    require(all(np.count_nonzero(r) >= 2 for r in results.values()), "a projection is almost all zero")
    require(not np.array_equal(results["Q"], results["K"]), "Q equals K")
    return Draft(
        params={"X": x, **ws, "convention": convention, "d_model": d_model, "d_k": d_k},
        parts=parts,
        solution=results,
    )


# -------------------------------------------------------------------------------------- asymmetry


@register("attention.asymmetry", title="Asymmetry of attention scores")
def asymmetry(rng, difficulty, *, L=None):
    """score(i, j) and score(j, i) differ because queries and keys come from different projections."""
    L = override("L", L, 3 if difficulty == 1 else 4, range(2, 6))
    i, j = (int(t) for t in rng.choice(L, size=2, replace=False))
    if difficulty == 1:
        q = int_matrix(rng, (L, 2), -2, 2)  # (L, 2)
        k = int_matrix(rng, (L, 2), -2, 2)  # (L, 2)
        params = {"Q": q, "K": k}
    else:
        d_model = 3
        x = int_matrix(rng, (L, d_model), -1, 1)  # (L, d_model)
        w_q = int_matrix(rng, (d_model, 2), -1, 1)  # (d_model, 2)
        w_k = int_matrix(rng, (d_model, 2), -1, 1)  # (d_model, 2)
        q, k = reference.project(x, w_q).astype(int), reference.project(x, w_k).astype(int)  # (L, 2) each
        params = {"X": x, "W_Q": w_q, "W_K": w_k}
    s_ij, s_ji = int(q[i] @ k[j]), int(q[j] @ k[i])
    parts = [
        AnswerPart(key="s_ij", type="integer", value=s_ij, label=f"score({i + 1}, {j + 1}) = q_{i + 1}·k_{j + 1}",
                   mistakes=(mistake("transpose_scores", s_ji),)),
        AnswerPart(key="s_ji", type="integer", value=s_ji, label=f"score({j + 1}, {i + 1}) = q_{j + 1}·k_{i + 1}",
                   mistakes=(mistake("assumed_symmetric_scores", s_ij),)),
    ]
    if difficulty == 3:
        options, key = choice_options(rng, _SYMMETRY_CORRECT, _SYMMETRY_WRONG)
        parts.append(AnswerPart(key="when", type="choice", value=key, label="when S is symmetric for every input",
                                spec={"options": options, "multiple": False}))
    params.update({"i": i + 1, "j": j + 1, "L": L})
    return Draft(params=params, parts=parts, solution={"Q": q, "K": k, "s_ij": s_ij, "s_ji": s_ji})


_SYMMETRY_CORRECT = [
    ("When the matrix $W_Q W_K^\\top$ is symmetric, for example when $W_Q = W_K$.",
     "$S = X W_Q W_K^\\top X^\\top$, which is symmetric for every $X$ exactly when $W_Q W_K^\\top$ is."),
]
_SYMMETRY_WRONG = [
    ("Always, because a dot product does not depend on the order of its factors.",
     "$q_i \\cdot k_j = k_j \\cdot q_i$, but score$(j, i)$ is $q_j \\cdot k_i$: different vectors, not the same pair swapped."),
    ("Only when $d_k$ equals $d_{\\text{model}}$.",
     "The widths do not matter; what matters is whether $W_Q W_K^\\top$ is symmetric."),
    ("Never, because queries and keys always differ.",
     "With $W_Q = W_K$ the queries equal the keys and $S = Q Q^\\top$ is symmetric."),
]
