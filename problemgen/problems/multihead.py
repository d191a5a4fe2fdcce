"""Multi-head attention: head width, projection shapes, concatenation, W_O, parameter counts, GQA/MQA.

Row-vector convention unless a problem states the column convention: a per-head projection is
``d_model x d_k`` and the h heads' matrices sit side by side in one ``d_model x (h d_k)`` matrix.
Counts come from ``reference.params.attention_parameters``; concatenation from
``reference.merge_heads``; shapes from ``reference.shapes``.
"""

from __future__ import annotations

import numpy as np

import reference
from problemgen.model.core import AnswerPart, Draft, ProblemgenError
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import counted, int_matrix, override, pick, require
from problemgen.model.registry import register
from reference import shapes as ref_shapes
from reference.params import TransformerConfig, attention_parameters

_HEADS = (2, 4, 6, 8, 12, 16, 20, 24, 32, 40, 64)
_HEAD_WIDTHS = (16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128)


def _width_and_heads(rng, d_model: int | None, heads: int | None) -> tuple[int, int]:
    """A (d_model, h) pair with h dividing d_model; overrides are validated."""
    heads = override("heads", heads, pick(rng, _HEADS), range(1, 129))
    d_model = override("d_model", d_model, heads * pick(rng, _HEAD_WIDTHS), range(1, 65537))
    if d_model % heads:
        raise ProblemgenError(f"d_model={d_model} does not split evenly into {heads} heads")
    return d_model, heads


def _params(d_model: int, heads: int, *, kv_heads: int | None = None, head_dim: int | None = None,
            qkv_bias: bool = False, out_bias: bool = False) -> int:
    """Parameters of one attention layer, from the reference's counting."""
    config = TransformerConfig(d_model=d_model, n_heads=heads, n_kv_heads=kv_heads, head_dim=head_dim,
                               qkv_bias=qkv_bias, out_bias=out_bias)
    return attention_parameters(config)


# --------------------------------------------------------------------------------------- head dim


@register("multihead.head_dim", title="Per-head width dₖ from the model width and the head count")
def head_dim(rng, difficulty, *, d_model=None, heads=None):
    """d_k = d_model / h, then the size of one head's W_Q and of all heads' W_Q together."""
    d_model, heads = _width_and_heads(rng, d_model, heads)
    d_k = d_model // heads
    parts = [AnswerPart(key="d_k", type="integer", value=d_k, label="the per-head width d_k",
                        mistakes=(mistake("dk_equals_d_model", d_model),))]
    if difficulty >= 2:
        parts.append(AnswerPart(key="head_wq", type="integer", value=d_model * d_k,
                                label="the number of entries of one head's W_Q", spec=counted("parameters"),
                                mistakes=(mistake("dk_equals_d_model", d_model * d_model),)))
    if difficulty == 3:
        total = _params(d_model, heads) // 4  # one of the four equal-sized projections
        parts.append(AnswerPart(key="all_wq", type="integer", value=total,
                                label="the number of W_Q entries over all heads", spec=counted("parameters"),
                                mistakes=(mistake("heads_multiply_params", heads * d_model * d_model),)))
    return Draft(params={"d_model": d_model, "heads": heads}, parts=parts,
                 solution={"d_k": d_k, "head_wq": d_model * d_k, "all_wq": heads * d_model * d_k})


# ------------------------------------------------------------------------------ projection shapes


@register("multihead.projection_shapes", title="Shapes of the per-head and packed projections")
def projection_shapes(rng, difficulty, *, convention=None):
    """Shapes of one head's W_Q, the packed W_Q of all heads and W_O, in a stated convention."""
    convention = override("convention", convention, "row" if difficulty == 1 else pick(rng, ("row", "column")),
                          ("row", "column"))
    d_model, heads = _width_and_heads(rng, None, None)
    d_k = d_model // heads
    d_kv = d_model if difficulty < 3 else pick(rng, (d_model // 2, 2 * d_model, 3 * d_model // 2))
    trace = ref_shapes.multi_head_attention_shapes("cross").evaluate(ref_shapes.dims_for(d_model, heads, L=1))
    orient = (lambda s: list(s)) if convention == "row" else (lambda s: list(s)[::-1])

    def shape_part(key: str, row_shape: tuple, label: str, wrong_width: int | None = None) -> AnswerPart:
        value = orient(row_shape)
        mistakes = [mistake("projection_transposed", value[::-1])] if value[0] != value[1] else []
        if wrong_width is not None:
            mistakes.append(mistake("dk_equals_d_model", orient((row_shape[0], wrong_width))))
        return AnswerPart(key=key, type="shape", value=value, label=label, mistakes=tuple(mistakes))

    parts = [
        shape_part("w_q_head", trace["w_q_head"], "the shape of one head's W_Q", d_model),
        shape_part("w_q", trace["w_q"], "the shape of the packed W_Q of all heads", heads * d_model),
        shape_part("w_o", trace["w_o"], "the shape of W_O"),
    ]
    if difficulty == 3:
        parts.append(shape_part("w_k_head", (d_kv, d_k), "the shape of one head's W_K (cross-attention)", d_model))
    return Draft(
        params={"d_model": d_model, "heads": heads, "convention": convention, "d_kv": d_kv},
        parts=parts,
        solution={"d_k": d_k, "packed": heads * d_k},
    )


# ----------------------------------------------------------------------------------------- concat


@register("multihead.concat", title="Concatenating head outputs")
def concat(rng, difficulty):
    """Concatenate h head outputs (each L x d_v) into one L x (h d_v) matrix."""
    heads, L, d_v = {1: (2, 2, 2), 2: (3, 3, 2), 3: (3, 2, 3)}[difficulty]
    outs = int_matrix(rng, (heads, L, d_v), -3, 5)  # (h, L, d_v)
    joined = reference.merge_heads(outs)  # (L, h*d_v)
    stacked = np.concatenate(list(outs), axis=0)  # (h*L, d_v) the wrong axis
    no_transpose = outs.reshape(L, heads * d_v)  # (L, h*d_v) reshaped without moving the head axis
    interleaved = np.moveaxis(outs, 0, -1).reshape(L, heads * d_v)  # (L, h*d_v) feature j·h + r from head r
    require(not np.array_equal(joined, no_transpose), "reshape without transpose happens to agree")
    parts = [
        AnswerPart(key="concat", type="matrix", value=joined, label="the concatenated matrix", atol=0.0,
                   mistakes=(mistake("concat_wrong_axis", stacked),
                             mistake("merge_without_transpose", no_transpose,
                                     hint="Reshaping (h, L, d_v) straight to (L, h·d_v) scrambles tokens and heads: "
                                          "move the head axis next to the features first, (L, h, d_v), then reshape."),
                             mistake("heads_split_wrong_axis", interleaved))),
        AnswerPart(key="shape", type="shape", value=[L, heads * d_v], label="the shape of the concatenated matrix",
                   mistakes=(mistake("concat_wrong_axis", [heads * L, d_v]),)),
    ]
    if difficulty == 3:
        dims = {"B": 8, "h": heads, "L": 128, "d_v": 64}
        parts.append(AnswerPart(key="batched", type="shape", value=["B", "L", "h*d_v"], spec={"dims": dims},
                                label="the shape after merging batched heads of shape (B, h, L, d_v)",
                                mistakes=(mistake("split_without_transpose", ["B", "h", "L", "d_v"]),
                                          mistake("concat_wrong_axis", ["B", "h*L", "d_v"]))))
    return Draft(params={"heads": outs, "h": heads, "L": L, "d_v": d_v}, parts=parts,
                 solution={"concat": joined})


# ---------------------------------------------------------------------------------- output projection


@register("multihead.output_projection", title="Mixing the heads with the output projection")
def output_projection(rng, difficulty):
    """Concatenate two heads and multiply by W_O (plus b_O at difficulty 3)."""
    heads, L, d_v = 2, {1: 2, 2: 3, 3: 3}[difficulty], 2
    d_model = heads * d_v
    outs = int_matrix(rng, (heads, L, d_v), -2, 3)  # (h, L, d_v)
    w_o = int_matrix(rng, (heads * d_v, d_model), -1, 1)  # (h*d_v, d_model)
    b_o = int_matrix(rng, (d_model,), -2, 2) if difficulty == 3 else None  # (d_model,)
    joined = reference.merge_heads(outs)  # (L, h*d_v)
    y = reference.project(joined, w_o, b_o)  # (L, d_model)
    require(np.count_nonzero(b_o) >= 2 if b_o is not None else True, "bias almost zero")
    wrong = [mistake("missing_w_o", joined), mistake("w_o_transposed", reference.project(joined, w_o.T, b_o))]
    if b_o is not None:
        wrong.append(mistake("forgot_biases", reference.project(joined, w_o)))
    parts = [AnswerPart(key="output", type="matrix", value=y, label="the layer output", atol=0.0,
                        mistakes=tuple(wrong))]
    contribution = reference.project(outs[0], w_o[:d_v])  # (L, d_model) head 1 through its rows of W_O
    if difficulty >= 2:
        parts.append(AnswerPart(key="head1", type="matrix", value=contribution, atol=0.0,
                                label="head 1's contribution: head 1 times its block of rows of W_O",
                                mistakes=(mistake("missing_w_o", outs[0]),)))
    params = {"heads": outs, "W_O": w_o, "L": L, "d_v": d_v, "d_model": d_model}
    if b_o is not None:
        params["b_O"] = b_o
    return Draft(params=params, parts=parts, solution={"concat": joined, "output": y, "head1": contribution,
                                                       "head2": reference.project(outs[1], w_o[d_v:])})


# ----------------------------------------------------------------------------------------- params


@register("multihead.params", title="Parameters of one multi-head attention layer")
def params(rng, difficulty, *, d_model=None, heads=None):
    """Q, K, V and O projections of one layer: weights, then biases, then a free head width."""
    d_model, heads = _width_and_heads(rng, d_model, heads)
    bias = difficulty >= 2
    head_width = None
    if difficulty == 3:
        head_width = pick(rng, tuple(w for w in (64, 80, 96, 128, 256) if w != d_model // heads))
    total = _params(d_model, heads, head_dim=head_width, qkv_bias=bias, out_bias=bias)
    no_bias = _params(d_model, heads, head_dim=head_width)
    inner = heads * (head_width or d_model // heads)  # h * d_k, the width of Q, K, V
    wrong = [
        mistake("heads_multiply_params", heads * 4 * d_model * d_model),
        mistake("missing_w_o", no_bias - inner * d_model + (3 * inner if bias else 0)),
    ]
    if bias:
        wrong.append(mistake("forgot_biases", no_bias))
    part = AnswerPart(key="count", type="integer", value=total, label="the number of parameters",
                      spec=counted("parameters"), mistakes=tuple(wrong))
    return Draft(
        params={"d_model": d_model, "heads": heads, "bias": bias, "head_dim": head_width},
        parts=[part],
        solution={"inner": inner, "per_matrix": d_model * inner, "weights": no_bias, "biases": total - no_bias,
                  "total": total},
    )


# -------------------------------------------------------------------------------------------- gqa

_GQA_PRESETS = (  # (name, d_model, heads, kv heads, head_dim)
    ("Llama-3-8B", 4096, 32, 8, 128),
    ("Mistral-7B", 4096, 32, 8, 128),
    ("Qwen3-4B", 2560, 32, 8, 128),
)


@register("multihead.gqa", title="Grouped-query and multi-query attention")
def gqa(rng, difficulty, *, multi_query=None):
    """Group size, K/V projection shape and parameter count when K and V have fewer heads
    (``multi_query``: one shared K/V head, which has no head-reads question; an override so a class
    set asks every student the same parts)."""
    if difficulty == 3 and rng.random() < 0.5:
        name, d_model, heads, kv_heads, d_k = _GQA_PRESETS[int(rng.integers(len(_GQA_PRESETS)))]
    else:
        name = None
        heads = pick(rng, (8, 16, 32, 64))
        single = override("multi_query", multi_query, bool(difficulty == 2 and rng.random() < 0.5),
                          (False, True) if difficulty == 2 else (False,))
        kv_heads = 1 if single else pick(rng, [g for g in (2, 4, 8) if g < heads])
        d_k = pick(rng, (32, 48, 64, 80, 96, 128))
        d_model = heads * d_k
    full = _params(d_model, heads, head_dim=d_k)
    grouped = _params(d_model, heads, kv_heads=kv_heads, head_dim=d_k)
    parts = [
        AnswerPart(key="group", type="integer", value=heads // kv_heads,
                   label="how many query heads share each key/value head"),
        AnswerPart(key="w_k", type="shape", value=[d_model, kv_heads * d_k], label="the shape of the packed W_K",
                   mistakes=(mistake("kv_projection_all_heads", [d_model, heads * d_k]),)),
    ]
    if difficulty >= 2:
        parts.append(AnswerPart(
            key="count", type="integer", value=grouped, label="the parameters of the attention layer (no biases)",
            spec=counted("parameters"), mistakes=(mistake("kv_projection_all_heads", full),),
        ))
    if difficulty == 3:
        parts.append(AnswerPart(key="saved", type="integer", value=full - grouped,
                                label="the parameters saved compared with full multi-head attention",
                                spec=counted("parameters")))
    group = heads // kv_heads
    # a query head whose group differs from the head a tiled layout gives it (1-based numbers)
    readers = [r for r in range(1, heads + 1) if (r - 1) // group != (r - 1) % kv_heads]
    r = pick(rng, readers) if difficulty >= 2 and readers else None
    if r is not None:
        parts.append(AnswerPart(key="reads", type="integer", value=(r - 1) // group + 1,
                                label=f"the key/value head query head {r} reads",
                                mistakes=(mistake("gqa_repeat_wrong", (r - 1) % kv_heads + 1),)))
    return Draft(
        params={"name": name, "d_model": d_model, "heads": heads, "kv_heads": kv_heads, "d_k": d_k, "r": r},
        parts=parts,
        solution={"q": d_model * heads * d_k, "kv": d_model * kv_heads * d_k, "o": heads * d_k * d_model,
                  "full": full, "grouped": grouped},
    )
