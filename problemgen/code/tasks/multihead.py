"""Coding tasks: multi-head attention (with its stages), cross-attention and one KV-cache decoding step."""

from __future__ import annotations

import math

import numpy as np

import reference as ref
from problemgen.code.sandbox import Call
from problemgen.code import inputs as I
from problemgen.misconceptions import attention as A
from problemgen.misconceptions import masks as M
from problemgen.misconceptions import multihead as MH
from problemgen.misconceptions.catalogue import safely
from problemgen.code.tasks.attention import CONVENTIONS
from problemgen.code.base import Case, Property, Task
from problemgen.model.streams import stream
from problemgen.code.static import SOFTMAX_SHORTCUTS

PARAMS_TEXT = """\
`params` is a dict of row-vector weights applied as `x @ w`: `w_q` `(d_model, d_model)`,
`w_k` and `w_v` `(d_kv, d_model)`, `w_o` `(d_model, d_model)`. With `h` heads each head has width
`d_k = d_model / h`, and head `r` owns the feature columns `r*d_k : (r+1)*d_k` of the projections."""


def _params(rng: np.random.Generator, d_model: int, d_kv: int | None = None, kv_width: int | None = None) -> dict[str, np.ndarray]:
    """Weights ~ N(0, 1/d_in) so projected features have unit scale (scores neither tiny nor saturated).

    ``kv_width`` is the output width of W_K and W_V (n_kv_heads·d_k under grouped-query attention).
    """
    d_kv = d_model if d_kv is None else d_kv
    kv_width = d_model if kv_width is None else kv_width
    return {
        "w_q": I.normal(rng, d_model, d_model, scale=1 / math.sqrt(d_model)),
        "w_k": I.normal(rng, d_kv, kv_width, scale=1 / math.sqrt(d_kv)),
        "w_v": I.normal(rng, d_kv, kv_width, scale=1 / math.sqrt(d_kv)),
        "w_o": I.normal(rng, d_model, d_model, scale=1 / math.sqrt(d_model)),
    }


def _draw_mha(rng, B: int, L: int, S: int, d_model: int, d_kv: int, h: int, mask, self_attention: bool,
              n_kv: int | None = None):  # fmt: skip
    kv_width = None if n_kv is None else n_kv * (d_model // h)

    def make(r):
        x = I.normal(r, B, L, d_model)
        memory = x if self_attention else I.normal(r, B, S, d_kv)
        return x, memory, _params(r, d_model, d_kv, kv_width)

    def ok(drawn):
        x, memory, p = drawn
        _, w = ref.multi_head_attention(x, memory, p, h, n_kv_heads=n_kv, mask=mask)
        return I.not_saturated(w)

    return I.redraw(rng, make, ok)


# --------------------------------------------------------------------------- multi-head attention

MHA_SPEC = f"""\
# multi_head_attention

Write three functions:

- `split_heads(x, n_heads)`: `(B, L, h*d_k)` -> `(B, h, L, d_k)` (reshape to `(B, L, h, d_k)`,
  then move the head axis in front of the sequence axis).
- `merge_heads(x)`: the inverse, `(B, h, L, d_k)` -> `(B, L, h*d_k)` (the concatenation of the heads).
- `multi_head_attention(x_q, x_kv, params, n_heads, mask=None)` returning `(output, weights)`:
  project `Q = x_q @ w_q`, `K = x_kv @ w_k`, `V = x_kv @ w_v`, split each into heads, run scaled
  dot-product attention per head (scale `1/sqrt(d_k)` with the *per-head* `d_k`), merge the heads
  and project with `w_o`. `output` is `(B, L, d_model)`, `weights` is `(B, h, L, S)`.

`x_q` is `(B, L, d_model)`, `x_kv` is `(B, S, d_model)` (the same array for self-attention).
{PARAMS_TEXT}
`mask` is `None` or boolean, broadcasting to `(B, L, S)`, and applies to every head.

Grouped-query attention: when `n_kv_heads` is given (a divisor of `n_heads`), `w_k` and `w_v` are
`(d_model, n_kv_heads*d_k)`: split K and V into `n_kv_heads` heads, and let query head `r` use
key/value head `r // (n_heads // n_kv_heads)` (each K/V head repeated in place for its group of
consecutive query heads, as `np.repeat` along the head axis does). `None` means `n_kv_heads = n_heads`.
The grader also calls `split_heads` and `merge_heads` on their own, and names the first stage that
goes wrong: split_heads, attention weights, merge_heads, output projection.

{CONVENTIONS}
"""

MHA_STARTER = '''\
"""Task: multi_head_attention. Run `problemgen task show multi_head_attention` for the full spec."""

import numpy as np


def split_heads(x, n_heads):
    """(B, L, h*d_k) -> (B, h, L, d_k)."""
    raise NotImplementedError


def merge_heads(x):
    """(B, h, L, d_k) -> (B, L, h*d_k)."""
    raise NotImplementedError


def multi_head_attention(x_q, x_kv, params, n_heads, mask=None, n_kv_heads=None):
    """Return (output (B, L, d_model), weights (B, h, L, S))."""
    raise NotImplementedError
'''

MHA_STAGES = ("split_heads", "attention weights", "merge_heads", "output projection")


def _mha_cases_for(prefix: str, group: str, x, x_kv, p, h: int, mask, about: str, n_kv: int | None = None) -> list[Case]:
    """The stage cases and the full case for one input; they share an input_id."""
    h_kv = h if n_kv is None else n_kv
    q = ref.project(x, p["w_q"])  # (B, L, d_model)
    heads, _ = ref.grouped_attention(ref.split_heads(q, h), ref.split_heads(ref.project(x_kv, p["w_k"]), h_kv),
                                     ref.split_heads(ref.project(x_kv, p["w_v"]), h_kv), mask)  # fmt: skip
    split = ref.split_heads(q, h)  # (B, h, L, d_k)
    merged = ref.merge_heads(heads)  # (B, L, d_model)
    expected = ref.multi_head_attention(x, x_kv, p, h, n_kv_heads=n_kv, mask=mask)
    kwargs = {"mask": mask} | ({} if n_kv is None else {"n_kv_heads": n_kv})
    return [
        Case(f"{prefix}/split_heads", group, Call("split_heads", (q, h)), split, f"{about}; split_heads of x_q @ w_q",
             stages=("split_heads",), input_id=prefix,
             variants=I.variants(split, {"split_without_transpose": MH.split_heads(q, h, how="no_transpose"),
                                         "heads_split_wrong_axis": MH.split_heads(q, h, how="wrong_axis")})),
        Case(f"{prefix}/merge_heads", group, Call("merge_heads", (heads,)), merged, f"{about}; merge_heads of the head outputs",
             stages=("merge_heads",), input_id=prefix,
             variants=I.variants(merged, {"merge_without_transpose": MH.merge_heads(heads, how="no_transpose"),
                                          "heads_split_wrong_axis": MH.merge_heads(heads, how="wrong_axis")})),
        Case(f"{prefix}/attention", group, Call("multi_head_attention", (x, x_kv, p, h), kwargs), expected,
             about, parts=("output", "weights"), stages=("output projection", "attention weights"), input_id=prefix,
             variants=I.variants(expected, MH.mha_variants(x, x_kv, p, h, mask, n_kv_heads=n_kv)
                                 | _transposed(x, x_kv, p, h, mask, n_kv))),
    ]  # fmt: skip


def _transposed(x, x_kv, p, h: int, mask, n_kv: int | None = None) -> dict:
    """Every square weight used as Wᵀ (the column convention applied to row-vector weights)."""
    flipped = {name: w.T for name, w in p.items()}
    return safely({"projection_transposed": lambda: MH.mha(x, x_kv, flipped, h, mask, n_kv_heads=n_kv)})


def _mha_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        x, _, p = _draw_mha(stream(7), 1, 3, 3, 4, 4, 2, None, True)
        xg, _, pg = _draw_mha(stream(8), 1, 3, 3, 8, 8, 4, None, True, n_kv=2)
        return (_mha_cases_for("public/1", "public", x, x, p, 2, None, "B=1, L=3, d_model=4, 2 heads, no mask")
                + _mha_cases_for("public/gqa", "public", xg, xg, pg, 4, None,
                                 "B=1, L=3, d_model=8, 4 query heads sharing 2 key/value heads, no mask", n_kv=2))
    plans = [(2, 4, 4, 3, None, None), (1, 5, 5, 2, "causal", None), (3, 3, 3, 4, None, None), (2, 4, 6, 2, "padding", None),
             (2, 5, 5, 3, "causal", None), (2, 4, 4, 4, None, 2), (1, 5, 5, 6, "causal", 3)]  # fmt: skip
    cases = []
    for i, (B, L, S, h, kind, n_kv) in enumerate(plans):
        d_k = int(rng.integers(2, 5))
        d_model = h * d_k
        mask = _mask(rng, kind, B, L, S)
        x, memory, p = _draw_mha(rng, B, L, S, d_model, d_model, h, mask, L == S, n_kv)
        heads = f"{h} heads" if n_kv is None else f"{h} query heads sharing {n_kv} key/value heads"
        about = f"B={B}, L={L}, S={S}, d_model={d_model}, {heads}, mask: {kind or 'none'}"
        cases += _mha_cases_for(f"hidden/{i + 1}", "hidden", x, memory, p, h, mask, about, n_kv)
    return cases


def _mask(rng, kind, B: int, L: int, S: int):
    if kind is None:
        return None
    if kind == "causal":
        return ref.causal_mask(L, S)  # (L, S)
    return ref.padding_mask(ref.lengths_to_valid(I.lengths(rng, B, S), S))  # (B, 1, S)


def _permutation_equivariant(perm: np.ndarray):
    def check(values: list) -> str:
        a = I.array(values, 0, part=0)
        b = I.array(values, 1, part=0, shape=a.shape)
        if a.ndim != 3 or a.shape[1] != len(perm):
            raise I.Unusable(f"the output has shape {a.shape}")
        return I.agree(a[:, perm], b, "permuting the tokens did not permute the outputs")

    return check


def _mha_properties(rng: np.random.Generator) -> list[Property]:
    x, _, p = _draw_mha(rng, 2, 5, 5, 6, 6, 3, None, True)
    perm = rng.permutation(5)
    xp = x[:, perm]
    return [Property("property/permutation-equivariance",
                     (Call("multi_head_attention", (x, x, p, 3)), Call("multi_head_attention", (xp, xp, p, 3))),
                     _permutation_equivariant(perm), "self-attention without positions: permuted tokens give permuted outputs")]  # fmt: skip


MHA = Task(
    name="multi_head_attention", title="Multi-head attention (split, attend, merge, W_O)", topic="attention",
    summary="split_heads, merge_heads and multi_head_attention with a W_O projection.",
    spec=MHA_SPEC, starter=MHA_STARTER, functions=("split_heads", "merge_heads", "multi_head_attention"),
    make_cases=_mha_cases, make_properties=_mha_properties, banned=(SOFTMAX_SHORTCUTS,), stage_order=MHA_STAGES,
)  # fmt: skip

# --------------------------------------------------------------------------- cross-attention

CROSS_SPEC = f"""\
# cross_attention

Write `cross_attention(x, memory, params, n_heads, memory_valid=None)` returning `(output, weights)`:
multi-head attention whose queries come from the decoder states `x` `(B, L, d_model)` and whose
keys and values come from the encoder output `memory` `(B, S, d_mem)`. `L != S` and
`d_mem != d_model` in general.
{PARAMS_TEXT} (Here `d_kv = d_mem`.)
`memory_valid` is `None` or a boolean `(B, S)` array, `True` for real encoder tokens and `False` for
padding: padded *keys* must get weight 0 for every query and every head.
`output` is `(B, L, d_model)`, `weights` is `(B, h, L, S)`.

{CONVENTIONS}
"""

CROSS_STARTER = '''\
"""Task: cross_attention. Run `problemgen task show cross_attention` for the full spec."""

import numpy as np


def cross_attention(x, memory, params, n_heads, memory_valid=None):
    """Queries from x (B, L, d_model); keys/values from memory (B, S, d_mem). Return (output, weights)."""
    raise NotImplementedError
'''


def _cross_case(name: str, group: str, x, memory, p, h: int, valid, about: str) -> Case:
    mask = None if valid is None else ref.padding_mask(valid)  # (B, 1, S)
    expected = ref.multi_head_attention(x, memory, p, h, mask=mask)
    made = MH.mha_variants(x, memory, p, h, mask)
    return Case(name, group, Call("cross_attention", (x, memory, p, h), {"memory_valid": valid}), expected, about,
                parts=("output", "weights"), stages=("output projection", "attention weights"), input_id=name,
                variants=I.variants(expected, made))  # fmt: skip


def _cross_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        x, memory, p = _draw_mha(stream(11), 1, 2, 3, 4, 3, 2, None, False)
        return [_cross_case("public/1", "public", x, memory, p, 2, None, "B=1, L=2, S=3, d_model=4, d_mem=3, 2 heads")]
    cases = []
    for i, (B, L, S, h, padded) in enumerate([(2, 3, 5, 2, True), (1, 4, 2, 2, False), (3, 2, 6, 3, True), (2, 5, 4, 4, True)]):
        d_model, d_mem = h * int(rng.integers(2, 4)), int(rng.integers(3, 7))
        valid = ref.lengths_to_valid(I.lengths(rng, B, S), S) if padded else None
        mask = None if valid is None else ref.padding_mask(valid)
        x, memory, p = _draw_mha(rng, B, L, S, d_model, d_mem, h, mask, False)
        about = f"B={B}, L={L}, S={S}, d_model={d_model}, d_mem={d_mem}, {h} heads, padding: {'yes' if padded else 'no'}"
        cases.append(_cross_case(f"hidden/{i + 1}", "hidden", x, memory, p, h, valid, about))
    return cases


def _padding_content_irrelevant(values: list) -> str:
    a = I.array(values, 0, part=0)
    b = I.array(values, 1, part=0, shape=a.shape)
    return I.agree(a, b, "changing padded memory tokens changed the output")


def _cross_properties(rng: np.random.Generator) -> list[Property]:
    x, memory, p = _draw_mha(rng, 2, 3, 5, 4, 5, 2, None, False)
    valid = np.array([[True, True, True, False, False], [True, True, True, True, False]])
    noisy = memory.copy()
    noisy[~valid] = I.normal(rng, int((~valid).sum()), 5, scale=10.0)
    call = "cross_attention"
    return [Property("property/padding-is-invisible",
                     (Call(call, (x, memory, p, 2), {"memory_valid": valid}), Call(call, (x, noisy, p, 2), {"memory_valid": valid})),
                     _padding_content_irrelevant, "what sits in padded memory positions cannot change the output")]  # fmt: skip


CROSS = Task(
    name="cross_attention", title="Cross-attention with encoder padding", topic="attention",
    summary="Decoder queries attend to a padded encoder memory of another length and width.",
    spec=CROSS_SPEC, starter=CROSS_STARTER, functions=("cross_attention",), make_cases=_cross_cases,
    make_properties=_cross_properties, banned=(SOFTMAX_SHORTCUTS,), stage_order=("attention weights", "output projection"),
)  # fmt: skip

# --------------------------------------------------------------------------- KV-cache decoding step

KV_SPEC = f"""\
# kv_cache_step

Incremental decoding keeps the keys and values of earlier tokens instead of recomputing them.
Write `kv_cache_step(x_new, params, n_heads, cache_k, cache_v)` returning `(output, keys, values)`:

1. project the `t` new tokens `x_new` `(B, t, d_model)` to queries, keys and values, split into heads;
2. append the new keys/values to `cache_k`/`cache_v` `(B, h, T, d_k)` along the sequence axis
   (`T` may be 0), giving `keys`/`values` `(B, h, T + t, d_k)`;
3. let the new queries attend over all `T + t` keys with a causal mask aligned *bottom-right*
   (new query `i` sits at position `T + i` and sees keys `j <= T + i`);
4. merge the heads and project with `w_o`: `output` is `(B, t, d_model)`.

{PARAMS_TEXT} (Here `d_kv = d_model`: self-attention.)
Decoding a sequence one step at a time must give the rows of full causal self-attention.

{CONVENTIONS}
"""

KV_STARTER = '''\
"""Task: kv_cache_step. Run `problemgen task show kv_cache_step` for the full spec."""

import numpy as np


def kv_cache_step(x_new, params, n_heads, cache_k, cache_v):
    """Return (output (B, t, d_model), keys (B, h, T+t, d_k), values (B, h, T+t, d_k))."""
    raise NotImplementedError
'''


def kv_step(x_new, p, h, cache_k, cache_v, *, mask_mode="bottom-right", append=True, scale=None, w_o=True):
    """One decoding step with knobs for the cache misconceptions; returns (output, keys, values)."""
    q = ref.split_heads(ref.project(x_new, p["w_q"]), h)  # (B, h, t, d_k)
    k = ref.split_heads(ref.project(x_new, p["w_k"]), h)  # (B, h, t, d_k)
    v = ref.split_heads(ref.project(x_new, p["w_v"]), h)  # (B, h, t, d_k)
    keys = np.concatenate([cache_k, k], axis=-2) if append else k  # (B, h, T+t, d_k)
    values = np.concatenate([cache_v, v], axis=-2) if append else v  # (B, h, T+t, d_k)
    t, total = q.shape[-2], keys.shape[-2]
    if mask_mode == "new_only":  # the new tokens' (t, t) causal mask, cached keys blocked
        mask = M.cache_mask_new_tokens_only(t, total - t)  # (t, T+t)
    else:
        mask = None if mask_mode == "none" else ref.causal_mask(t, total, align=mask_mode)  # (t, T+t)
    heads, _ = A.attention(q, keys, values, mask, scale=scale)  # (B, h, t, d_k)
    concat = ref.merge_heads(heads)  # (B, t, d_model)
    return (ref.project(concat, p["w_o"]) if w_o else concat), keys, values


def _kv_case(name: str, group: str, x_new, p, h: int, cache_k, cache_v, about: str) -> Case:
    cache = ref.KVCache(n_layers=1, keys=[cache_k], values=[cache_v])
    output, _ = ref.cached_self_attention(x_new, p, h, cache)  # (B, t, d_model)
    expected = (output, cache.keys[0], cache.values[0])
    made = safely({
        "causal_wrong_alignment": lambda: kv_step(x_new, p, h, cache_k, cache_v, mask_mode="top-left"),
        "causal_missing": lambda: kv_step(x_new, p, h, cache_k, cache_v, mask_mode="none"),
        "cache_mask_new_tokens_only": lambda: kv_step(x_new, p, h, cache_k, cache_v, mask_mode="new_only"),
        "cache_not_appended": lambda: kv_step(x_new, p, h, cache_k, cache_v, append=False),
        "no_scaling": lambda: kv_step(x_new, p, h, cache_k, cache_v, scale=1.0),
        "missing_w_o": lambda: kv_step(x_new, p, h, cache_k, cache_v, w_o=False),
    })  # fmt: skip
    return Case(name, group, Call("kv_cache_step", (x_new, p, h, cache_k, cache_v)), expected, about,
                parts=("output", "keys", "values"), stages=("output", "cache update", "cache update"), input_id=name,
                variants=I.variants(expected, made))  # fmt: skip


def _kv_inputs(rng, B: int, T: int, t: int, h: int, d_k: int):
    """A sequence of T + t tokens whose first T keys/values are already cached (by the reference)."""
    d_model = h * d_k
    p = _params(rng, d_model)
    x = I.normal(rng, B, T + t, d_model)
    cache_k = ref.split_heads(ref.project(x[:, :T], p["w_k"]), h)  # (B, h, T, d_k)
    cache_v = ref.split_heads(ref.project(x[:, :T], p["w_v"]), h)  # (B, h, T, d_k)
    return x[:, T:], p, cache_k, cache_v


def _kv_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        public = stream(5)
        x0, p0, k0, v0 = _kv_inputs(public, 1, 0, 3, 2, 2)
        x1, p1, k1, v1 = _kv_inputs(public, 1, 3, 1, 2, 2)
        x2, p2, k2, v2 = _kv_inputs(public, 1, 3, 2, 2, 2)  # the case a mask built for the new tokens only gets wrong
        return [_kv_case("public/prefill", "public", x0, p0, 2, k0, v0, "empty cache, 3 new tokens, 2 heads"),
                _kv_case("public/one-token", "public", x1, p1, 2, k1, v1, "3 cached tokens, 1 new token, 2 heads"),
                _kv_case("public/cached-and-new", "public", x2, p2, 2, k2, v2, "3 cached tokens, 2 new tokens, 2 heads")]  # fmt: skip
    cases = []
    for i, (B, T, t, h) in enumerate([(2, 4, 1, 2), (1, 3, 3, 2), (2, 0, 4, 3), (3, 5, 2, 2), (1, 6, 1, 4)]):
        d_k = int(rng.integers(2, 5))
        x_new, p, cache_k, cache_v = _kv_inputs(rng, B, T, t, h, d_k)
        about = f"B={B}, {T} cached tokens, {t} new, {h} heads of width {d_k}"
        cases.append(_kv_case(f"hidden/{i + 1}", "hidden", x_new, p, h, cache_k, cache_v, about))
    return cases


KV_CACHE = Task(
    name="kv_cache_step", title="One KV-cache decoding step", topic="decoding",
    summary="Append new keys/values to the cache and attend with bottom-right causal alignment.",
    spec=KV_SPEC, starter=KV_STARTER, functions=("kv_cache_step",), make_cases=_kv_cases,
    banned=(SOFTMAX_SHORTCUTS,), stage_order=("cache update", "output"),
)  # fmt: skip

TASKS = (MHA, CROSS, KV_CACHE,)
"""This module's tasks, in teaching order."""
ORDER = 2
"""Where this module's tasks come in ``problemgen task list`` (modules are discovered, not listed)."""
