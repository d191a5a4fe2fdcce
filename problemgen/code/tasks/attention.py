"""Coding tasks: softmax, scaled dot-product attention, causal and padding masks."""

from __future__ import annotations

import numpy as np

import reference as ref
from problemgen.misconceptions import attention as A
from problemgen.misconceptions import masks as M
from problemgen.misconceptions.catalogue import safely
from problemgen.code.sandbox import Call
from problemgen.code import inputs as I
from problemgen.code.base import Case, Property, Task, fmt_shape
from problemgen.code.static import SOFTMAX_SHORTCUTS

CONVENTIONS = """\
Conventions: numpy only (plus the standard library); arrays are float64; boolean masks use
True = "may attend"; leading (batch, head) dimensions broadcast. Results are compared entry-wise
with rtol = 1e-5 and atol = 1e-6 after an exact shape check (no broadcasting)."""

# --------------------------------------------------------------------------- softmax

SOFTMAX_SPEC = f"""\
# softmax

Write `softmax(x, axis=-1)` returning an array of the same shape as `x` whose slices along
`axis` are probability distributions: `exp(x) / sum(exp(x))` along that axis.

- `x` has any shape (1 to 4 dimensions in the tests); `axis` may be negative.
- It must be numerically stable: inputs around ±1000 must not overflow (subtract the maximum of
  each slice first; the result does not change). Entries equal to `-inf` get probability 0 (every
  slice in the tests has at least one finite entry).
- Library softmax functions (`scipy.special.softmax`, `torch`) are not allowed.

{CONVENTIONS}
"""

SOFTMAX_STARTER = '''\
"""Task: softmax. Run `problemgen task show softmax` for the full spec."""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Probabilities along ``axis``: exp(x) / sum(exp(x)), computed without overflow."""
    raise NotImplementedError
'''


def _softmax_case(name: str, group: str, x: np.ndarray, axis: int, about: str) -> Case:
    expected = ref.softmax(x, axis=axis)
    made = safely({
        "softmax_overflow": lambda: A.softmax_naive(x, axis),
        "softmax_ignores_axis": lambda: ref.softmax(x, axis=-1),
        "softmax_global_sum": lambda: A.softmax_global(x, axis),
        "softmax_wrong_base": lambda: A.softmax_base(x, axis),
    })  # fmt: skip
    return Case(name, group, Call("softmax", (x,), {"axis": axis}), expected, about, variants=I.variants(expected, made))


def _softmax_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        return [
            _softmax_case("public/vector", "public", np.array([1.0, 2.0, 3.0]), -1, "a vector of 3"),
            _softmax_case("public/rows", "public", np.array([[0.0, 1.0], [2.0, 2.0], [-1.0, 3.0]]), -1, "3 rows of 2"),
            _softmax_case("public/columns", "public", np.array([[0.0, 1.0], [2.0, 2.0], [-1.0, 3.0]]), 0, "axis=0 of a 3x2"),
            _softmax_case("public/large", "public", np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0]]), -1,
                          "values near +1000 and -1000 (exp overflows or underflows without the max subtraction)"),
        ]
    cases = []
    for i in range(6):
        ndim = 1 + i % 4
        shape = tuple(int(n) for n in rng.integers(2, 6, size=ndim))
        axis = int(rng.integers(-ndim, ndim))
        x = I.normal(rng, *shape, scale=1.5)
        cases.append(_softmax_case(f"hidden/{i + 1}", "hidden", x, axis, f"shape {fmt_shape(shape)}, axis={axis}"))
    big = I.normal(rng, 3, 5) + 1000.0
    cases.append(_softmax_case("hidden/large-inputs", "hidden", big, -1, "3x5 with values near +1000"))
    small = I.normal(rng, 4, 3) - 1000.0
    cases.append(_softmax_case("hidden/very-negative-inputs", "hidden", small, 1, "4x3 with values near -1000"))
    masked = I.normal(rng, 2, 3, 5)
    masked[I.random_mask(rng, (2, 3, 5)) == False] = -np.inf  # noqa: E712 - elementwise
    cases.append(_softmax_case("hidden/with-minus-inf", "hidden", masked, -1, "2x3x5 with some -inf entries"))
    return cases


def _rows_sum_to_one(values: list) -> str:
    p = I.array(values, 0)
    if np.any(p < -1e-12):
        return "some probabilities are negative"
    sums = p.sum(axis=1)  # (2, 4)
    return "" if np.allclose(sums, 1.0, atol=1e-6) else "the slices along axis=1 do not sum to 1"


def _shift_invariant(values: list) -> str:
    a, b = I.array(values, 0), I.array(values, 1, shape=I.array(values, 0).shape)
    return I.agree(a, b, "softmax(x + 7) differs from softmax(x); it must not")


def _softmax_properties(rng: np.random.Generator) -> list[Property]:
    x = I.normal(rng, 2, 6, 4)
    y = I.normal(rng, 3, 5)
    return [
        Property("property/slices-sum-to-one", (Call("softmax", (x,), {"axis": 1}),), _rows_sum_to_one,
                 "probabilities are non-negative and each slice sums to 1"),
        Property("property/shift-invariance", (Call("softmax", (y,)), Call("softmax", (y + 7.0,))), _shift_invariant,
                 "adding a constant to every entry leaves the result unchanged"),
    ]  # fmt: skip


SOFTMAX = Task(
    name="softmax", title="Numerically stable softmax", topic="attention",
    summary="softmax(x, axis=-1) along any axis, stable for large inputs.",
    spec=SOFTMAX_SPEC, starter=SOFTMAX_STARTER, functions=("softmax",),
    make_cases=_softmax_cases, make_properties=_softmax_properties, banned=(SOFTMAX_SHORTCUTS,),
)  # fmt: skip

# --------------------------------------------------------------------------- scaled dot-product attention

SDPA_SPEC = f"""\
# scaled_dot_product_attention

Write `scaled_dot_product_attention(q, k, v, mask=None)` returning `(output, weights)`:

    weights = softmax(q @ kᵀ / sqrt(d_k))   (softmax along the key axis)
    output  = weights @ v

- `q`: `(..., L, d_k)`, `k`: `(..., S, d_k)`, `v`: `(..., S, d_v)`; leading dimensions (batch,
  heads) are the same for all three. `L` and `S` may differ (cross-attention), so may `d_k` and `d_v`.
- `weights`: `(..., L, S)`, each row sums to 1. `output`: `(..., L, d_v)`.
- `mask` is `None` or a boolean array that broadcasts to `(..., L, S)`; `True` means "query i may
  attend to key j". Blocked positions must get weight exactly 0 — set their scores to `-inf`
  before the softmax. In the tests every query may attend to at least two keys.
- Library softmax functions are not allowed.

{CONVENTIONS}
"""

SDPA_STARTER = '''\
"""Task: scaled_dot_product_attention. Run `problemgen task show scaled_dot_product_attention`."""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    """Return (output, weights); q (..., L, d_k), k (..., S, d_k), v (..., S, d_v), mask True = may attend."""
    raise NotImplementedError
'''


def sdpa_variants(q, k, v, mask) -> dict:
    makers = {
        "no_scaling": lambda: A.attention_no_scaling(q, k, v, mask),
        "scale_by_dk": lambda: A.attention_scale_by_dk(q, k, v, mask),
        "scale_multiplied": lambda: A.attention_scale_multiplied(q, k, v, mask),
        "softmax_wrong_axis": lambda: A.attention_softmax_wrong_axis(q, k, v, mask),
        "softmax_wrong_base": lambda: A.attention_softmax_base(q, k, v, mask),
        "no_softmax": lambda: A.attention(q, k, v, mask, softmax=False),
        "weights_times_wrong": lambda: A.attention(q, k, v, mask, mix="k"),
    }
    if q.shape[-2] == k.shape[-2]:
        makers["transpose_scores"] = lambda: A.attention(q, k, v, mask, transpose=True)
    if mask is not None:
        makers |= {
            "mask_after_softmax": lambda: A.attention_mask_after_softmax(q, k, v, mask),
            "mask_ignored": lambda: A.attention(q, k, v, mask, mask_mode="ignore"),
            "inverted_mask": lambda: A.attention_inverted_mask(q, k, v, mask),  # NaN rows, like student code
        }
    return safely(makers)


def _sdpa_case(name: str, group: str, q, k, v, mask, about: str) -> Case:
    expected = ref.scaled_dot_product_attention(q, k, v, mask)
    return Case(name, group, Call("scaled_dot_product_attention", (q, k, v), {"mask": mask}), expected, about,
                parts=("output", "weights"), variants=I.variants(expected, sdpa_variants(q, k, v, mask)))  # fmt: skip


def _draw_attention(rng, lead: tuple[int, ...], L: int, S: int, d_k: int, d_v: int, mask) -> tuple:
    def make(r):
        return I.normal(r, *lead, L, d_k), I.normal(r, *lead, S, d_k), I.normal(r, *lead, S, d_v)

    def ok(qkv):
        _, w = ref.scaled_dot_product_attention(*qkv, mask)
        return I.not_saturated(w)

    return I.redraw(rng, make, ok)


def _sdpa_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        q = np.array([[1.0, 0.0], [0.0, 1.0]])
        k = np.array([[1.0, 0.0], [1.0, 1.0]])
        v = np.array([[1.0, 2.0], [3.0, 4.0]])
        q3, k3, v3 = (np.arange(12.0).reshape(3, 4) / 10 - 0.5 for _ in range(3))
        return [
            _sdpa_case("public/2x2", "public", q, k, v, None, "the 2x2 example of the notes, no mask"),
            _sdpa_case("public/causal", "public", q3, k3 * 0.5, v3, ref.causal_mask(3), "3 tokens, causal mask"),
        ]
    plans = [  # (leading dims, L, S, d_k, d_v, mask kind)
        ((), 4, 4, 8, 8, None), ((2,), 3, 5, 6, 4, None), ((2, 3), 4, 6, 8, 5, None),
        ((2,), 5, 5, 8, 8, "causal"), ((3,), 4, 6, 4, 6, "padding"), ((2, 2), 3, 5, 16, 4, "random"),
        ((1,), 6, 3, 8, 2, "random"), ((2,), 4, 4, 6, 6, "causal-padding"),
    ]  # fmt: skip
    cases = []
    for i, (lead, L, S, d_k, d_v, kind) in enumerate(plans):
        mask = _mask(rng, kind, lead, L, S)
        q, k, v = _draw_attention(rng, lead, L, S, d_k, d_v, mask)
        about = f"q {fmt_shape(q.shape)}, k {fmt_shape(k.shape)}, v {fmt_shape(v.shape)}, mask: {kind or 'none'}"
        cases.append(_sdpa_case(f"hidden/{i + 1}", "hidden", q, k, v, mask, about))
    return cases


def _mask(rng: np.random.Generator, kind: str | None, lead: tuple[int, ...], L: int, S: int):
    if kind is None:
        return None
    if kind == "causal":
        return ref.causal_mask(L, S)  # (L, S) broadcasts over leading dims
    if kind == "random":
        return I.random_mask(rng, (*lead, L, S))
    batch = lead[0] if lead else 1
    valid = ref.lengths_to_valid(I.lengths(rng, batch, S), S)  # (B, S)
    pad = ref.padding_mask(valid).reshape(batch, *([1] * (len(lead) - 1)), 1, S)  # (B, 1.., 1, S)
    return pad if kind == "padding" else pad & ref.causal_mask(L, S)


def _weights_are_distributions(values: list) -> str:
    w = I.array(values, 0, part=1, shape=(2, 4, 6))
    if np.any(w < -1e-12):
        return "some attention weights are negative"
    if not np.allclose(w.sum(axis=-1), 1.0, atol=1e-6):
        return "the rows of the attention weights do not sum to 1"
    return "" if np.all(w[..., 4:] == 0.0) else "blocked keys (mask False) received non-zero weight"


def _key_order_irrelevant(values: list) -> str:
    a = I.array(values, 0, part=0)
    b = I.array(values, 1, part=0, shape=a.shape)
    return I.agree(a, b, "shuffling the key/value pairs together changed the output")


def _sdpa_properties(rng: np.random.Generator) -> list[Property]:
    q, k, v = _draw_attention(rng, (2,), 4, 6, 5, 3, None)
    mask = np.ones((2, 1, 6), dtype=bool)
    mask[..., 4:] = False
    perm = rng.permutation(6)
    call = "scaled_dot_product_attention"
    return [
        Property("property/weights-are-distributions", (Call(call, (q, k, v), {"mask": mask}),),
                 _weights_are_distributions, "weights are non-negative, rows sum to 1, blocked keys get 0"),
        Property("property/key-order", (Call(call, (q, k, v)), Call(call, (q, k[:, perm], v[:, perm]))),
                 _key_order_irrelevant, "permuting keys and values together leaves the output unchanged"),
    ]  # fmt: skip


SDPA = Task(
    name="scaled_dot_product_attention", title="Scaled dot-product attention with masks", topic="attention",
    summary="(output, weights) = attention(q, k, v, mask) with batch/head dims and boolean masks.",
    spec=SDPA_SPEC, starter=SDPA_STARTER, functions=("scaled_dot_product_attention",),
    make_cases=_sdpa_cases, make_properties=_sdpa_properties, banned=(SOFTMAX_SHORTCUTS,),
)  # fmt: skip

# --------------------------------------------------------------------------- causal mask

CAUSAL_SPEC = f"""\
# causal_mask

Write `causal_mask(L, S=None, align="top-left")` returning a boolean `(L, S)` array that is `True`
where query `i` may attend to key `j` (`S` defaults to `L`).

- `"top-left"`: query `i` sees keys `j <= i` (what `np.tril(np.ones((L, S)))` gives).
- `"bottom-right"`: the `L` queries are the *last* `L` of `S` positions (KV-cache decoding), so
  query `i` sees keys `j <= i + (S - L)`; the last query sees every key.
- The dtype must be `bool` (not 0/1 integers).

{CONVENTIONS}
"""

CAUSAL_STARTER = '''\
"""Task: causal_mask. Run `problemgen task show causal_mask` for the full spec."""

import numpy as np


def causal_mask(L, S=None, align="top-left"):
    """Boolean (L, S) mask, True where query i may attend to key j."""
    raise NotImplementedError
'''


def _causal_case(name: str, group: str, L: int, S: int | None, align: str) -> Case:
    expected = ref.causal_mask(L, S, align=align)
    S_ = L if S is None else S
    other = "top-left" if align == "bottom-right" else "bottom-right"
    offset = S_ - L if align == "bottom-right" else 0
    made = [
        ("causal_off_by_one", M.causal_off_by_one(L, S_, shift=offset - 1)),  # diagonal blocked
        ("causal_off_by_one", M.causal_off_by_one(L, S_, shift=offset + 1)),  # one future key leaks
        ("causal_wrong_alignment", ref.causal_mask(L, S_, align=other)),
        ("inverted_mask", ~expected),
        ("causal_upper_triangle", M.causal_upper_triangle(L, S_, offset=offset)),
    ]
    kwargs = {} if S is None else {"S": S}
    if align != "top-left":
        kwargs["align"] = align
    return Case(name, group, Call("causal_mask", (L,), kwargs), expected, f"L={L}, S={S_}, align={align}",
                variants=I.variants(expected, made))  # fmt: skip


def _causal_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        return [_causal_case("public/3", "public", 3, None, "top-left"),
                _causal_case("public/2x4-cache", "public", 2, 4, "bottom-right")]  # fmt: skip
    cases = [_causal_case("hidden/1", "hidden", int(rng.integers(4, 9)), None, "top-left")]
    for i, align in enumerate(("top-left", "bottom-right", "top-left", "bottom-right")):
        L = int(rng.integers(2, 6))
        S = L + int(rng.integers(1, 5)) if i < 2 else max(1, L - int(rng.integers(1, L)))
        cases.append(_causal_case(f"hidden/{i + 2}", "hidden", L, S, align))
    cases.append(_causal_case("hidden/6", "hidden", 1, int(rng.integers(3, 7)), "bottom-right"))
    return cases


def _causal_rows_grow(values: list) -> str:
    m = values[0]
    if not isinstance(m, np.ndarray) or m.shape != (6, 6) or m.dtype != bool:
        raise I.Unusable("the mask is not a (6, 6) boolean array")
    if np.any(m[:, 1:] & ~m[:, :-1]):
        return "some row allows a key after a blocked one (allowed keys must be a prefix)"
    return "" if np.all(m.sum(axis=1) == np.arange(1, 7)) else "row i must allow exactly i + 1 keys"


CAUSAL = Task(
    name="causal_mask", title="Causal masks (top-left and KV-cache alignment)", topic="masks",
    summary="Boolean (L, S) causal mask with top-left or bottom-right alignment.",
    spec=CAUSAL_SPEC, starter=CAUSAL_STARTER, functions=("causal_mask",), make_cases=_causal_cases,
    make_properties=lambda rng: [Property("property/rows-are-prefixes", (Call("causal_mask", (6,)),), _causal_rows_grow,
                                          "each row allows a prefix of keys, one more than the row above")],
)  # fmt: skip

# --------------------------------------------------------------------------- padding mask

PADDING_SPEC = f"""\
# padding_mask

Batches are padded on the right to a common length `S`. Write `padding_mask(lengths, S)` returning a
boolean `(B, 1, S)` array: entry `[b, 0, j]` is `True` when position `j` holds a real token of
sequence `b` (`j < lengths[b]`) and `False` for padding.

- `lengths` is an integer array of shape `(B,)` with `0 < lengths[b] <= S`.
- The middle axis of size 1 lets the mask broadcast against `(B, L, S)` scores: a pad *key* is
  hidden from every query (mask the columns, not the rows).

{CONVENTIONS}
"""

PADDING_STARTER = '''\
"""Task: padding_mask. Run `problemgen task show padding_mask` for the full spec."""

import numpy as np


def padding_mask(lengths, S):
    """Boolean (B, 1, S) mask, True at real (non-padding) key positions."""
    raise NotImplementedError
'''


def _padding_case(name: str, group: str, lengths: np.ndarray, S: int) -> Case:
    valid = ref.lengths_to_valid(lengths, S)  # (B, S)
    expected = ref.padding_mask(valid)  # (B, 1, S)
    made = {
        "padding_rows_not_columns": valid[:, :, None],  # (B, S, 1)
        "inverted_mask": ~expected,
        "padding_off_by_one": ref.padding_mask(np.arange(S)[None, :] <= lengths[:, None]),
    }
    return Case(name, group, Call("padding_mask", (lengths, S)), expected,
                f"B={len(lengths)}, S={S}", variants=I.variants(expected, made))  # fmt: skip


def _padding_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        return [_padding_case("public/2x4", "public", np.array([2, 4]), 4)]
    cases = []
    for i in range(4):
        B, S = int(rng.integers(2, 5)), int(rng.integers(3, 8))
        cases.append(_padding_case(f"hidden/{i + 1}", "hidden", I.lengths(rng, B, S), S))
    return cases


PADDING = Task(
    name="padding_mask", title="Padding masks", topic="masks",
    summary="Boolean (B, 1, S) key-padding mask from sequence lengths.",
    spec=PADDING_SPEC, starter=PADDING_STARTER, functions=("padding_mask",), make_cases=_padding_cases,
)  # fmt: skip

TASKS = (SOFTMAX, SDPA, CAUSAL, PADDING,)
"""This module's tasks, in teaching order."""
ORDER = 1
"""Where this module's tasks come in ``problemgen task list`` (modules are discovered, not listed)."""
