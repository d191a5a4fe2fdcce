"""Attention masks: building causal, padding and combined masks, using them, and the classic bugs.

Masks are stored as booleans (True = may attend) and shown in the representation the problem asks
for: ``bool`` (T/F), ``01`` or ``additive`` (0 / −∞ added to the scaled scores before the softmax).
Every mask answer comes from ``reference.masks``; the misconception values are the same mask with
one thing done wrong (shifted diagonal, inverted polarity, padding on rows, top-left alignment).
"""

from __future__ import annotations

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft
from problemgen.misconceptions.catalogue import mistake
from problemgen.misconceptions.masks import causal_off_by_one, causal_upper_triangle
from problemgen.problems._common import (
    OUTPUT_ATOL,
    WEIGHT_ATOL,
    choice_options,
    int_matrix,
    override,
    pick,
    require,
    require_unsaturated,
    sentence,
)
from problemgen.model.registry import register

REPRESENTATIONS = ("bool", "01", "additive")


def _representation(rng, representation: str | None) -> str:
    return override("representation", representation, pick(rng, REPRESENTATIONS), REPRESENTATIONS)


def _mask_part(key: str, mask: np.ndarray, rep: str, label: str, mistakes: tuple) -> AnswerPart:
    return AnswerPart(key=key, type="mask", value=mask, label=label, spec={"representation": rep},
                      mistakes=mistakes)


def _key_valid(lengths: list[int], S: int, side: str) -> np.ndarray:
    """Which positions hold real tokens, for right padding (reference) or left padding (mirrored)."""
    valid = reference.lengths_to_valid(lengths, S)  # (B, S) real tokens first
    return valid if side == "right" else valid[:, ::-1]  # (B, S) left padding: real tokens last


def _full(mask: np.ndarray, L: int, S: int) -> np.ndarray:
    """A mask broadcast to its full (L, S) grid, as a plain boolean array."""
    return np.array(np.broadcast_to(mask, (L, S)), dtype=bool)  # (L, S)


# ----------------------------------------------------------------------------------------- causal


@register("masks.causal", title="Building a causal mask")
def causal(rng, difficulty, *, L=None, representation=None):
    """The causal (look-ahead) mask for L tokens, in boolean, 0/1 or additive form.

    Small answer space: the causal mask is fixed by its length L and its written form, and L stays
    small enough to type a full L × L mask at the prompt."""
    L = override("L", L, pick(rng, {1: (3, 4), 2: (4, 5, 6, 7), 3: (5, 6, 7, 8)}[difficulty]), range(2, 9))
    rep = _representation(rng, representation)
    mask = reference.causal_mask(L)  # (L, L)
    mask_mistakes = (
        mistake("causal_off_by_one", causal_off_by_one(L, shift=-1)),
        mistake("causal_off_by_one", causal_off_by_one(L, shift=1)),
        mistake("inverted_mask", ~mask),
        mistake("causal_upper_triangle", causal_upper_triangle(L)),
    )
    parts = [_mask_part("mask", mask, rep, "the causal mask", mask_mistakes)]
    if difficulty >= 2:
        parts.append(AnswerPart(
            key="allowed", type="integer", value=int(mask.sum()), label="the number of allowed (query, key) pairs",
            mistakes=(mistake("causal_off_by_one", int(causal_off_by_one(L, shift=-1).sum())),
                      mistake("causal_off_by_one", int(causal_off_by_one(L, shift=1).sum()))),
        ))
    return Draft(params={"L": L, "tokens": sentence(rng, L), "representation": rep}, parts=parts,
                 solution={"mask": mask, "allowed": int(mask.sum()), "total": L * L})


# ---------------------------------------------------------------------------------------- padding


@register("masks.padding", title="Building a padding mask")
def padding(rng, difficulty, *, representation=None, B=None, S=None):
    """Which tokens are padding in a batch, and the attention mask that hides them for one sequence
    (``B`` sequences of ``S`` positions: overrides, so a class set gives every student one size)."""
    rep = _representation(rng, representation)
    batches, lengths_ = {1: ((2, 3), (3, 4)), 2: ((3,), (4, 5)), 3: ((3,), (5, 6))}[difficulty]
    B = override("B", B, pick(rng, batches) if len(batches) > 1 else batches[0], batches)
    S = override("S", S, pick(rng, lengths_), lengths_)
    side = "left" if difficulty == 3 else "right"
    lengths = [int(x) for x in rng.integers(1, S + 1, size=B)]
    require(max(lengths) == S and min(lengths) < S, "need a full sequence and a padded one")
    b = int(rng.choice([i for i, n in enumerate(lengths) if n < S]))
    valid = _key_valid(lengths, S, side)  # (B, S)
    mask = _full(reference.padding_mask(valid[b]), S, S)  # (S, S) pads hidden as keys
    rows_instead = _full(valid[b][:, None], S, S)  # (S, S) pads hidden as queries
    parts = [
        _mask_part("valid", valid, "01", "which positions hold real tokens (1) and which padding (0)",
                   (mistake("inverted_mask", ~valid),)),
        _mask_part("mask", mask, rep, f"the attention mask for sequence {b + 1}",
                   (mistake("padding_rows_not_columns", rows_instead), mistake("inverted_mask", ~mask))),
    ]
    return Draft(params={"lengths": lengths, "S": S, "b": b + 1, "side": side, "representation": rep},
                 parts=parts, solution={"valid": valid, "mask": mask, "length": lengths[b]})


# --------------------------------------------------------------------------------------- combined


@register("masks.combined", title="Combining causal and padding masks")
def combined(rng, difficulty, *, L=None, representation=None):
    """One sequence with padding in a causal model: the mask that is causal and hides the pads."""
    L = override("L", L, pick(rng, {1: (3, 4), 2: (4, 5, 6), 3: (5, 6, 7)}[difficulty]), range(3, 9))
    rep = _representation(rng, representation)
    side = "right" if difficulty == 1 else pick(rng, ("left", "right"))
    n_pad = int(rng.integers(1, L - 1))
    valid = _key_valid([L - n_pad], L, side)[0]  # (L,)
    causal_part = reference.causal_mask(L)  # (L, L)
    mask = _full(reference.combine_masks(causal_part, reference.padding_mask(valid)), L, L)  # (L, L)
    wrong = (
        mistake("padding_rows_not_columns", causal_part & valid[:, None]),
        mistake("causal_off_by_one", causal_off_by_one(L, shift=-1) & valid[None, :]),
        mistake("inverted_mask", ~mask),
    )
    parts = [_mask_part("mask", mask, rep, "the combined mask", wrong)]
    empty = int((~mask.any(axis=1)).sum())
    if difficulty >= 2:
        parts.append(AnswerPart(key="empty_rows", type="integer", value=empty,
                                label="the number of query rows with no allowed key"))
    words, pads = sentence(rng, L - n_pad), ["PAD"] * n_pad
    return Draft(
        params={"L": L, "tokens": words + pads if side == "right" else pads + words,
                "n_pad": n_pad, "side": side, "representation": rep},
        parts=parts,
        solution={"causal": causal_part, "valid": valid, "mask": mask, "empty": empty},
    )


# --------------------------------------------------------------------------------- masked weights


def _masked_softmax(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Reference softmax of the scores with the mask added in its additive form (0 / -inf)."""
    return reference.softmax(scores + reference.additive_mask(mask))  # (L, S)


@register("masks.masked_weights", title="Attention weights under a mask")
def masked_weights(rng, difficulty, *, representation=None):
    """Softmax of given scaled scores under a causal, padding or combined mask."""
    rep = override("representation", representation, pick(rng, ("bool", "additive")), ("bool", "01", "additive"))
    L = {1: 3, 2: 4, 3: 4}[difficulty]
    scores = int_matrix(rng, (L, L), -2, 2).astype(float)  # (L, L) already scaled
    if difficulty == 3:
        scores = scores / 2  # (L, L) half-integers: a little more arithmetic
    causal_mask = reference.causal_mask(L)  # (L, L)
    n_pad = 1
    valid = _key_valid([L - n_pad], L, "right")[0]  # (L,)
    which = {1: "causal", 2: "padding", 3: "combined"}[difficulty]
    mask = {"causal": causal_mask, "padding": _full(valid[None, :], L, L),
            "combined": causal_mask & valid[None, :]}[which]
    w = _masked_softmax(scores, mask)  # (L, L)
    require_unsaturated(w, difficulty)
    wrong = [
        mistake("mask_after_softmax", reference.softmax(scores) * mask),
        mistake("mask_zero_not_inf", reference.softmax(scores)),
        mistake("inverted_mask", _masked_softmax(scores, ~mask)),
    ]
    if which != "padding":
        wrong.append(mistake("causal_off_by_one", _masked_softmax(scores, mask & causal_off_by_one(L, shift=-1))))
    if which != "causal":
        wrong.append(mistake("padding_rows_not_columns",
                             _masked_softmax(scores, (causal_mask if which == "combined" else True) & valid[:, None])))
    parts = [AnswerPart(key="weights", type="matrix", value=w, label="the masked attention weights", atol=WEIGHT_ATOL,
                        mistakes=tuple(wrong))]
    params = {"scores": scores, "mask": mask, "which": which, "representation": rep}
    solution = {"masked": np.where(mask, scores, 0.0), "exp": np.where(mask, np.exp(scores), 0.0), "A": w}
    if difficulty == 3:
        v = int_matrix(rng, (L, 2), -2, 3)  # (L, 2)
        out = w @ v  # (L, 2) every row of w already sums to 1 over the allowed keys
        parts.append(AnswerPart(
            key="output", type="matrix", value=out, label="the output A V", atol=OUTPUT_ATOL,
            mistakes=(mistake("mask_after_softmax", (reference.softmax(scores) * mask) @ v),
                      mistake("mask_zero_not_inf", reference.softmax(scores) @ v)),
        ))
        params["V"], solution["O"] = v, out
    return Draft(params=params, parts=parts, solution=solution)


# ---------------------------------------------------------------------------------- kv alignment


@register("masks.kv_alignment", title="Causal mask alignment with a KV cache")
def kv_alignment(rng, difficulty, *, representation=None, L=None, S=None):
    """Bottom-right causal mask for L new queries against S cached-plus-new keys (L < S).

    ``L`` and ``S`` are overrides, so a class set gives every student one mask size."""
    rep = _representation(rng, representation)
    queries = {1: (1,), 2: (2, 3), 3: (3,)}[difficulty]
    L = override("L", L, pick(rng, queries) if len(queries) > 1 else queries[0], queries)
    S = override("S", S, int(rng.integers(L + 2, min(L + 4, 6) + 1)), range(L + 2, min(L + 4, 6) + 1))  # ≤ 6 positions
    mask = reference.causal_mask(L, S, align="bottom-right")  # (L, S)
    top_left = reference.causal_mask(L, S, align="top-left")  # (L, S)
    shifted = np.tril(np.ones((L, S), dtype=bool), k=S - L - 1)  # (L, S) bottom-right, diagonal blocked
    r = int(rng.integers(1, L + 1))
    parts = [
        _mask_part("mask", mask, rep, "the mask for the new queries",
                   (mistake("causal_wrong_alignment", top_left), mistake("causal_off_by_one", shifted),
                    mistake("inverted_mask", ~mask), mistake("causal_upper_triangle", causal_upper_triangle(L, S, offset=S - L)),
                    mistake("cache_mask_new_tokens_only", reference.causal_mask(L)))),
        AnswerPart(key="visible", type="integer", value=int(mask[r - 1].sum()),
                   label=f"the number of keys new query {r} may attend to",
                   mistakes=(mistake("causal_wrong_alignment", int(top_left[r - 1].sum())),
                             mistake("causal_off_by_one", int(shifted[r - 1].sum())))),
    ]
    return Draft(
        params={"L": L, "S": S, "cached": S - L, "r": r, "tokens": sentence(rng, S), "representation": rep},
        parts=parts,
        solution={"mask": mask, "top_left": top_left, "position": S - L + r},
    )


# --------------------------------------------------------------------------------- after softmax


def _row_options(rng, L: int, broken: np.ndarray) -> tuple[list[dict], list[str]]:
    """Multiple choice over rows: which rows of the buggy weights no longer sum to 1."""
    options = [{"id": f"{'abcdefgh'[i]}", "text": f"row {i + 1}",
                "why": ("it has a blocked key whose softmax weight was zeroed afterwards, so its sum fell below 1"
                        if broken[i] else "none of its keys is blocked, so nothing was removed and it still sums to 1")}
               for i in range(L)]
    return options, [o["id"] for o, bad in zip(options, broken) if bad]


_DIAGNOSES = (
    ("The mask was applied after the softmax instead of before it.",
     "That is the bug: blocked weights were zeroed but the rows were not renormalised, so every row with a "
     "blocked key sums to less than 1."),
    ("The blocked positions were given 0 instead of $-\\infty$ in the additive mask.",
     "Adding 0 leaves the softmax unmasked: every row would still sum to 1 and no entry would be 0."),
    ("The mask polarity is inverted: 1 was read as blocked.",
     "Then the weight would sit on the blocked keys and every allowed key would get 0; here every nonzero weight "
     "is on an allowed key."),
    ("The scores were not divided by $\\sqrt{d_k}$ before the softmax.",
     "A wrong scale changes how peaked the rows are, but every row would still sum to 1."),
)


@register("masks.after_softmax", title="Diagnosing a mask applied after the softmax")
def after_softmax(rng, difficulty):
    """What code that masks after the softmax returns, which rows break, and how to spot the bug."""
    L = {1: 3, 2: 4, 3: 4}[difficulty]
    scores = int_matrix(rng, (L, L), -2, 2).astype(float)  # (L, L) scaled scores
    mask = reference.causal_mask(L)  # (L, L)
    padded = difficulty == 3 or (difficulty == 2 and rng.random() < 0.5)  # else the last row stays whole
    if padded:
        valid = _key_valid([L - 1], L, "right")[0]  # (L,) the last token is padding
        mask = reference.combine_masks(mask, reference.padding_mask(valid))  # (L, L)
    plain = reference.softmax(scores)  # (L, L)
    buggy = plain * mask  # (L, L) zeroed after the softmax
    correct = _masked_softmax(scores, mask)  # (L, L)
    require_unsaturated(correct, 2)
    broken = buggy.sum(axis=1) < 1 - 1e-9  # (L,)
    parts = []
    if difficulty <= 2:
        parts.append(AnswerPart(key="buggy", type="matrix", value=buggy, atol=WEIGHT_ATOL,
                                label="the weights the buggy code returns"))
        options, key = _row_options(rng, L, broken)
        parts.append(AnswerPart(key="rows", type="choice", value=key, label="the rows that no longer sum to 1",
                                spec={"options": options, "multiple": True}))
    else:
        correct_options = [_DIAGNOSES[0]]
        options, key = choice_options(rng, correct_options, list(_DIAGNOSES[1:]))
        parts.append(AnswerPart(key="diagnosis", type="choice", value=key, label="the bug",
                                spec={"options": options, "multiple": False}))
    if difficulty >= 2:
        parts.append(AnswerPart(key="correct", type="matrix", value=correct, atol=WEIGHT_ATOL,
                                label="the correct masked weights",
                                mistakes=(mistake("mask_after_softmax", buggy), mistake("mask_zero_not_inf", plain))))
    return Draft(
        params={"scores": scores, "mask": mask, "L": L, "shown": buggy if difficulty == 3 else None},
        parts=parts,
        solution={"plain": plain, "buggy": buggy, "sums": buggy.sum(axis=1), "correct": correct},
    )
