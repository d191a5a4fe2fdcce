"""Coding task: a pre-LN transformer block, graded stage by stage."""

from __future__ import annotations

import math

import numpy as np

import reference as ref
from problemgen.code.sandbox import Call
from problemgen.code import inputs as I
from problemgen.misconceptions import layers as FF
from problemgen.misconceptions import multihead as MH
from problemgen.misconceptions import norms as N
from problemgen.misconceptions.catalogue import safely
from problemgen.code.tasks.attention import CONVENTIONS
from problemgen.code.base import Case, Property, Task
from problemgen.model.streams import stream
from problemgen.code.static import SOFTMAX_SHORTCUTS

STAGES = ("layer norm", "attention sublayer", "feed-forward sublayer", "block output")

SPEC = f"""\
# transformer_block

Write a pre-LN transformer block (GPT-2 style) as four functions:

- `layer_norm(x, gamma, beta, eps=1e-5)`: over the last axis, population variance, eps inside the root.
- `attention_sublayer(x, params, n_heads, mask=None)`: `x + MHA(layer_norm(x, ln1_gamma, ln1_beta))`,
  multi-head *self*-attention with `w_q, w_k, w_v, w_o` `(d_model, d_model)` (row vectors, `x @ w`),
  scale `1/sqrt(d_k)` with `d_k = d_model / n_heads`, boolean `mask` (True = may attend) broadcasting
  to `(B, L, L)` and shared by all heads.
- `ffn_sublayer(x, params)`: `x + FFN(layer_norm(x, ln2_gamma, ln2_beta))` with
  `FFN(z) = gelu_tanh(z @ w_1 + b_1) @ w_2 + b_2` and the tanh form of GELU,
  `gelu_tanh(z) = 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z**3)))`.
- `transformer_block(x, params, n_heads, mask=None)`: `ffn_sublayer(attention_sublayer(x, ...), ...)`.

`x` is `(B, L, d_model)`; every function returns an array of that shape. `params` is a flat dict:
`ln1_gamma, ln1_beta, ln2_gamma, ln2_beta` `(d_model,)`, `w_q, w_k, w_v, w_o` `(d_model, d_model)`,
`w_1` `(d_model, d_ff)`, `b_1` `(d_ff,)`, `w_2` `(d_ff, d_model)`, `b_2` `(d_model,)`.
Each function is also graded on its own (with inputs the reference computed), so the report names
the first stage that diverges: {", ".join(STAGES)}.

{CONVENTIONS}
"""

STARTER = '''\
"""Task: transformer_block. Run `problemgen task show transformer_block` for the full spec."""

import math

import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    raise NotImplementedError


def attention_sublayer(x, params, n_heads, mask=None):
    """x + MHA(layer_norm(x)) with ln1_gamma / ln1_beta."""
    raise NotImplementedError


def ffn_sublayer(x, params):
    """x + FFN(layer_norm(x)) with ln2_gamma / ln2_beta and the tanh GELU."""
    raise NotImplementedError


def transformer_block(x, params, n_heads, mask=None):
    raise NotImplementedError
'''


def _ln(x, p, which: str, ddof: int = 0):
    return N.layer_norm(x, p[f"{which}_gamma"], p[f"{which}_beta"], ddof=ddof)


def attention_sublayer(x, p, h, mask=None, *, residual=True, pre=True, ddof=0, scale=None, w_o="right", **_):
    """The first half of the block with one knob per misconception (defaults are correct)."""
    attn = {k: p[k] for k in ("w_q", "w_k", "w_v", "w_o")}
    if not pre:  # post-LN: norm(x + attention(x))
        out, _w = MH.mha(x, x, attn, h, mask, scale=scale, w_o=w_o)
        return _ln(x + out if residual else out, p, "ln1", ddof)
    z = _ln(x, p, "ln1", ddof)  # (B, L, d)
    out, _w = MH.mha(z, z, attn, h, mask, scale=scale, w_o=w_o)  # (B, L, d)
    return x + out if residual else out


def ffn_sublayer(x, p, *, residual=True, pre=True, ddof=0, act=None, **_):
    ffn = {k: p[k] for k in ("w_1", "b_1", "w_2", "b_2")}
    if not pre:
        out = FF.feed_forward(x, ffn, "gelu_tanh", activation=act)
        return _ln(x + out if residual else out, p, "ln2", ddof)
    out = FF.feed_forward(_ln(x, p, "ln2", ddof), ffn, "gelu_tanh", activation=act)  # (B, L, d)
    return x + out if residual else out


def block(x, p, h, mask=None, **knobs):
    return ffn_sublayer(attention_sublayer(x, p, h, mask, **knobs), p, **knobs)


KNOBS = {
    "forgot_residual": {"residual": False},
    "pre_post_ln_swapped": {"pre": False},
    "unbiased_variance": {"ddof": 1},
    "no_scaling": {"scale": 1.0},
    "missing_w_o": {"w_o": "missing"},
    "relu_for_gelu": {"act": ref.relu},
    "gelu_form_confused": {"act": ref.gelu},
}


def _reference_block(x, p, h, mask):
    """Expected values from the reference's own pieces (not from the knob pipeline above)."""
    attn = {k: p[k] for k in ("w_q", "w_k", "w_v", "w_o")}
    ffn = {k: p[k] for k in ("w_1", "b_1", "w_2", "b_2")}
    z = ref.layer_norm(x, p["ln1_gamma"], p["ln1_beta"])  # (B, L, d)
    after_attn = x + ref.multi_head_attention(z, z, attn, h, mask=mask)[0]  # (B, L, d)
    z2 = ref.layer_norm(after_attn, p["ln2_gamma"], p["ln2_beta"])  # (B, L, d)
    out = after_attn + ref.feed_forward(z2, ffn, "gelu_tanh")  # (B, L, d)
    return z, after_attn, out


def _params(rng, d: int, f: int) -> dict[str, np.ndarray]:
    s, sf = 1 / math.sqrt(d), 1 / math.sqrt(f)
    return {
        "ln1_gamma": 1 + 0.2 * I.normal(rng, d), "ln1_beta": 0.2 * I.normal(rng, d),
        "w_q": I.normal(rng, d, d, scale=s), "w_k": I.normal(rng, d, d, scale=s),
        "w_v": I.normal(rng, d, d, scale=s), "w_o": I.normal(rng, d, d, scale=s),
        "ln2_gamma": 1 + 0.2 * I.normal(rng, d), "ln2_beta": 0.2 * I.normal(rng, d),
        "w_1": I.normal(rng, d, f, scale=1.5 * s), "b_1": I.normal(rng, f, scale=0.3),
        "w_2": I.normal(rng, f, d, scale=sf), "b_2": I.normal(rng, d, scale=0.3),
    }  # fmt: skip


def _cases_for(prefix: str, group: str, x, p, h: int, mask, about: str) -> list[Case]:
    z, after_attn, out = _reference_block(x, p, h, mask)

    def made(expected, fn, *args, applies):
        makers = {tag: (lambda k=k: fn(*args, **k)) for tag, k in KNOBS.items() if tag in applies}
        return I.variants(expected, safely(makers))

    attn_tags = ("forgot_residual", "pre_post_ln_swapped", "unbiased_variance", "no_scaling", "missing_w_o")
    ffn_tags = ("forgot_residual", "pre_post_ln_swapped", "unbiased_variance", "relu_for_gelu", "gelu_form_confused")
    ln_variants = I.variants(z, safely({"unbiased_variance": lambda: _ln(x, p, "ln1", 1),
                                          "norm_wrong_axis": lambda: N.layer_norm(x, p["ln1_gamma"], p["ln1_beta"], axis=-2)}))  # fmt: skip
    return [
        Case(f"{prefix}/layer_norm", group, Call("layer_norm", (x, p["ln1_gamma"], p["ln1_beta"])), z,
             f"{about}; layer_norm with ln1", stages=("layer norm",), input_id=prefix, variants=ln_variants),
        Case(f"{prefix}/attention_sublayer", group, Call("attention_sublayer", (x, p, h), {"mask": mask}), after_attn,
             about, stages=("attention sublayer",), input_id=prefix,
             variants=made(after_attn, attention_sublayer, x, p, h, mask, applies=attn_tags)),
        Case(f"{prefix}/ffn_sublayer", group, Call("ffn_sublayer", (after_attn, p)), out, f"{about}; input: the attention sublayer's output",
             stages=("feed-forward sublayer",), input_id=prefix, variants=made(out, ffn_sublayer, after_attn, p, applies=ffn_tags)),
        Case(f"{prefix}/transformer_block", group, Call("transformer_block", (x, p, h), {"mask": mask}), out, about,
             stages=("block output",), input_id=prefix, variants=made(out, block, x, p, h, mask, applies=tuple(KNOBS))),
    ]  # fmt: skip


def _draw(rng, B: int, L: int, h: int, d_k: int, mask):
    d = h * d_k

    def make(r):
        return I.normal(r, B, L, d), _params(r, d, 2 * d)

    def ok(drawn):
        x, p = drawn
        z = ref.layer_norm(x, p["ln1_gamma"], p["ln1_beta"])
        attn = {k: p[k] for k in ("w_q", "w_k", "w_v", "w_o")}
        return I.not_saturated(ref.multi_head_attention(z, z, attn, h, mask=mask)[1])

    return I.redraw(rng, make, ok)


def _cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        x, p = _draw(stream(3), 1, 3, 2, 2, ref.causal_mask(3))
        x2, p2 = _draw(stream(4), 2, 3, 2, 2, None)  # mask=None: a block that masks anyway fails here
        return (_cases_for("public/1", "public", x, p, 2, ref.causal_mask(3), "B=1, L=3, d_model=4, 2 heads, causal mask")
                + _cases_for("public/2", "public", x2, p2, 2, None, "B=2, L=3, d_model=4, 2 heads, no mask"))
    cases = []
    for i, (B, L, h, causal) in enumerate([(2, 4, 2, True), (1, 5, 3, True), (2, 3, 2, False)]):
        d_k = int(rng.integers(2, 4))
        mask = ref.causal_mask(L) if causal else None
        x, p = _draw(rng, B, L, h, d_k, mask)
        about = f"B={B}, L={L}, d_model={h * d_k}, {h} heads, mask: {'causal' if causal else 'none'}"
        cases += _cases_for(f"hidden/{i + 1}", "hidden", x, p, h, mask, about)
    return cases


def _causal_block(values: list) -> str:
    a = I.array(values, 0)
    b = I.array(values, 1, shape=a.shape)
    if a.ndim != 3:
        raise I.Unusable(f"the output has shape {a.shape}")
    return I.agree(a[:, :-1], b[:, :-1], "changing the last token changed earlier outputs")


def _properties(rng: np.random.Generator) -> list[Property]:
    x, p = _draw(rng, 1, 4, 2, 3, ref.causal_mask(4))
    changed = x.copy()
    changed[:, -1] = I.normal(rng, 1, 6)
    mask = ref.causal_mask(4)
    return [Property("property/causality", (Call("transformer_block", (x, p, 2), {"mask": mask}),
                                            Call("transformer_block", (changed, p, 2), {"mask": mask})),
                     _causal_block, "with a causal mask, earlier positions cannot see a change to the last token")]  # fmt: skip


BLOCK = Task(
    name="transformer_block", title="A pre-LN transformer block", topic="blocks",
    summary="layer_norm, attention_sublayer, ffn_sublayer and the whole pre-LN block, graded per stage.",
    spec=SPEC, starter=STARTER, functions=("layer_norm", "attention_sublayer", "ffn_sublayer", "transformer_block"),
    make_cases=_cases, make_properties=_properties, banned=(SOFTMAX_SHORTCUTS,), stage_order=STAGES,
)  # fmt: skip

TASKS = (BLOCK,)
"""This module's tasks, in teaching order."""
ORDER = 4
"""Where this module's tasks come in ``problemgen task list`` (modules are discovered, not listed)."""
