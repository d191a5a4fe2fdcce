"""Positional problems: sinusoidal encoding values, and permutation equivariance without positions.

Values come from ``reference.sinusoidal_encoding`` (interleaved: column ``2i`` is
``sin(pos / 10000^(2i/d))``, column ``2i + 1`` the matching cosine) and from
``reference.scaled_dot_product_attention`` on permuted inputs.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft, Redraw
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import override, pick, sentence
from problemgen.problems.concepts import Option, choice_part, option_texts
from problemgen.model.registry import register

PE_ATOL = 0.0005
"""Encoding values lie in [-1, 1]; four decimals keep neighbouring positions and the slips apart."""
OUT_ATOL = 0.01
BASE = 10000


def _angle_exact(pos: int, pair: int, d_model: int) -> str:
    """``pos / 10000^(2i/d)`` as a SymPy-readable string, with the exponent reduced."""
    exponent = Fraction(2 * pair, d_model)
    if exponent == 0:
        return str(pos)
    return f"{pos}/{BASE}**({exponent})"


def _columns(rng: np.random.Generator, difficulty: int, d_model: int, pos: int) -> list[int]:
    """Feature columns to ask for, restricted to pairs whose angle is at least 0.5 rad (visible slips)."""
    pairs = [i for i in range(d_model // 2) if pos / BASE ** (2 * i / d_model) >= 0.5]
    if difficulty == 1:
        pair = pick(rng, pairs[:2])
        return [2 * pair, 2 * pair + 1]
    count = 2 if difficulty == 2 else 3
    if len(pairs) < 2:
        raise Redraw("too few fast-turning pairs")
    chosen = sorted(rng.choice(len(pairs), size=min(count, len(pairs)), replace=False))
    return sorted(2 * pairs[k] + int(rng.integers(2)) for k in chosen)


@register("positional.sinusoidal", title="Sinusoidal positional encoding values")
def sinusoidal(rng: np.random.Generator, difficulty: int, *, d_model: int | None = None) -> Draft:
    """PE values of the k-th token (position k − 1) at a few feature columns, from the stated formula."""
    d_model = override("d_model", d_model, pick(rng, {1: (4, 6, 8), 2: (8, 16), 3: (64, 128, 512)}[difficulty]),
                       (4, 6, 8, 16, 32, 64, 128, 256, 512))
    ordinal = int(rng.integers(2, 17 if difficulty == 1 else 24 if difficulty == 2 else 60))
    pos = ordinal - 1  # the first token has position 0
    pe = reference.sinusoidal_encoding(pos + 2, d_model)  # (pos + 2, d) rows pos and pos + 1 are needed
    parts, shown = [], []
    for j in _columns(rng, difficulty, d_model, pos):
        pair, is_cos = j // 2, j % 2 == 1
        angle = pos / BASE ** (2 * pair / d_model)
        fn = "cos" if is_cos else "sin"
        slips = [
            mistake("sin_cos_swapped", float(pe[pos, j - 1 if is_cos else j + 1])),
            mistake("positions_zero_vs_one", float(pe[pos + 1, j])),
            mistake("degrees_not_radians", float(getattr(np, fn)(np.deg2rad(angle)))),
        ]
        if is_cos:  # exponent j/d instead of (j - 1)/d: only the cosine columns can get this wrong
            slips.append(mistake("pe_wrong_frequency_index", float(np.cos(pos / BASE ** (j / d_model)))))
        if j > 0:  # the formula's 2i read with i the column: exponent 2j/d (column 0 has exponent 0 either way)
            slips.append(mistake("pe_wrong_frequency_index", float(getattr(np, fn)(pos / BASE ** (2 * j / d_model)))))
        exact = f"{fn}({_angle_exact(pos, pair, d_model)})"
        parts.append(AnswerPart(f"pe_{j}", "number", float(pe[pos, j]), label=f"PE at feature {j}",
                                atol=PE_ATOL, exact=exact, mistakes=tuple(slips)))
        shown.append({"column": j, "pair": pair, "fn": fn, "two_i": 2 * pair, "angle": angle,
                      "value": float(pe[pos, j]), "exact": exact})
    return Draft(params={"d_model": d_model, "ordinal": ordinal, "columns": [s["column"] for s in shown]},
                 parts=parts, solution={"pos": pos, "rows": shown})


# ------------------------------------------------------------------------------------ equivariance


def _equivariance_options(with_positions: bool) -> list[Option]:
    same = "The outputs are the same vectors as before, reordered exactly like the inputs."
    if not with_positions:
        return [
            Option(same, "Without positions attention only sees content, so every token's output moves with it.",
                   correct=True),
            Option("The outputs stay the same, in the original order.",
                   "The output rows follow the tokens; only a permutation-invariant pooling would stay fixed.",
                   misconception="permutation_ignored"),
            Option("The output vectors change their values, not just their order.",
                   "Nothing in the computation depends on where a token sits, so no value can change."),
            Option("The attention weight matrix becomes symmetric.",
                   r"The scores $q_i \cdot k_j$ and $q_j \cdot k_i$ still use different projections; permuting does not make them equal."),
        ]
    return [
        Option("The output vectors generally change their values, not just their order.",
               "The added encodings depend on position, so a token moved to a new position gets a new input vector.",
               correct=True),
        Option(same, "That holds only without positional information; the encodings break the symmetry."),
        Option("The outputs stay the same, in the original order.",
               "Even without encodings the outputs would move with their tokens.",
               misconception="permutation_ignored"),
        Option("The encodings are permuted along with the tokens, so nothing changes.",
               "The encodings belong to positions, not to tokens: position 0 keeps its encoding whatever token sits there."),
    ]


def _permutation(rng: np.random.Generator, n: int) -> np.ndarray:
    """A permutation that is not its own inverse (so applying the inverse is a visible slip)."""
    while True:
        perm = rng.permutation(n)
        if not np.array_equal(perm[perm], np.arange(n)):
            return perm


@register("positional.equivariance", title="Permutation equivariance without positions")
def equivariance(rng: np.random.Generator, difficulty: int, *, with_positions: bool | None = None) -> Draft:
    """Choose what permuting the tokens does (d1), or write the permuted attention output (d2, d3)."""
    if difficulty == 1:
        with_positions = override("with_positions", with_positions,
                                  bool(rng.integers(2)) if with_positions is None else None, (False, True))
        part = choice_part(rng, _equivariance_options(with_positions), label="what happens to the outputs")
        return Draft(params={"with_positions": with_positions, "options": option_texts(part)}, parts=[part],
                     solution={})
    L, d = (3, 2) if difficulty == 2 else (4, 2)
    x = rng.integers(-2, 3, size=(L, d)).astype(float)  # (L, d)
    w = {name: rng.integers(-1, 2, size=(d, d)).astype(float) for name in ("w_q", "w_k", "w_v")} \
        if difficulty == 3 else {name: np.eye(d) for name in ("w_q", "w_k", "w_v")}
    if round(abs(np.linalg.det(w["w_v"]))) == 0:
        raise Redraw("a singular W_V makes the output columns copies of each other (or zero)")
    perm = _permutation(rng, L)

    def attend(inputs: np.ndarray) -> np.ndarray:
        q, k, v = (reference.project(inputs, w[n]) for n in ("w_q", "w_k", "w_v"))  # (L, d) each
        return reference.scaled_dot_product_attention(q, k, v)[0]  # (L, d)

    out = attend(x)  # (L, d)
    permuted_out = attend(x[perm])  # (L, d) the key: rows of out reordered by perm
    gaps = np.abs(out[:, None, :] - out[None, :, :]).max(axis=-1)  # (L, L) largest entry difference per row pair
    if np.any(gaps[np.triu_indices(L, k=1)] < 3 * OUT_ATOL):
        raise Redraw("two output rows are too close to tell apart")
    inverse = np.argsort(perm)
    part = AnswerPart("output", "matrix", permuted_out, label="the outputs for the permuted sequence", atol=OUT_ATOL,
                      mistakes=(mistake("permutation_ignored", out), mistake("permutation_inverted", out[inverse])))
    words = sentence(rng, L)
    return Draft(
        params={"X": x, "O": out, "perm": perm, "tokens": words, "new_tokens": [words[i] for i in perm],
                "projections": difficulty == 3, "w": w, "L": L, "d": d},
        parts=[part],
        solution={"output": permuted_out, "perm_1based": perm + 1},
    )
