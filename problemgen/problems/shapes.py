"""Tensor shapes through batched multi-head self- and cross-attention, and spotting a shape bug.

Shapes come from ``reference.shapes`` (stage names with symbolic dims such as ``("B", "h", "L",
"d_k")``). Answers are symbolic; each part's ``spec["dims"]`` holds the numbers the problem gave, so
a student may answer with names or numbers. Every drawn size is distinct from the others, so a
number always identifies one dimension and a swapped axis can never look right by coincidence.
"""

from __future__ import annotations

import itertools

from problemgen.model.core import AnswerPart, Draft
from problemgen.misconceptions.catalogue import mistake
from problemgen.problems._common import override, pick, require
from problemgen.model.registry import register
from reference import shapes as ref_shapes

_MODELS = ((64, 4), (96, 6), (128, 8), (256, 8), (512, 8), (768, 12), (1024, 16), (512, 16), (384, 6), (192, 3))
"""(d_model, h) pairs for shape problems; d_k = d_model / h."""

_TRACE_STAGES = ("q", "q_heads", "k_heads", "scores", "weights", "head_outputs", "concat", "output")
"""The tensors of the self-attention pipeline, in order; each variant asks about some of them."""
_TRACE_ASKED = {1: (("q", "q_heads", "head_outputs", "output"), 2),
                2: (tuple(s for s in _TRACE_STAGES if s != "scores"), 4),
                3: (tuple(s for s in _TRACE_STAGES if s != "scores"), 5)}
"""Per difficulty: the stages a self-attention variant may ask besides the scores, and how many."""
_CROSS_ASKED = {1: (("q", "k", "v", "weights"), 2), 2: (("q_heads", "k_heads", "v_heads", "weights",
                                                          "head_outputs", "concat"), 3),
                3: (("q_heads", "k_heads", "v_heads", "weights", "head_outputs", "concat"), 4)}
"""Per difficulty: the stages a cross-attention variant may ask besides the scores and the output."""


_ORDER = ("q", "k", "v", "q_heads", "k_heads", "v_heads", "scores", "weights", "head_outputs", "concat", "output")


def _pick_stages(rng, offered: tuple[str, ...], count: int, always: tuple[str, ...] = (),
                 asked: str | None = None) -> tuple[str, ...]:
    """``count`` of the offered stages drawn at random, plus ``always``, in pipeline order: which tensors
    are asked changes from variant to variant, so the answers cannot be learned by heart.

    ``asked`` (the ``stages`` override, e.g. ``"q,weights"``) fixes the drawn ones, so a class set can
    ask every student about the same tensors."""
    in_order = tuple(stage for stage in _ORDER if stage in offered)
    drawn = {offered[i] for i in rng.choice(len(offered), size=count, replace=False).tolist()}
    options = [",".join(combo) for combo in itertools.combinations(in_order, count)]
    text = override("stages", asked, ",".join(s for s in in_order if s in drawn), options)
    chosen = set(text.split(",")) | set(always)
    return tuple(stage for stage in _ORDER if stage in chosen)


def _draw_dims(rng, *, cross: bool) -> dict[str, int]:
    """Sizes with pairwise different values for B, L, (S,) h, d_k and d_model."""
    d_model, heads = _MODELS[int(rng.integers(len(_MODELS)))]
    dims = ref_shapes.dims_for(d_model, heads, L=pick(rng, (5, 7, 10, 12, 20, 50, 100, 128, 256)),
                               S=pick(rng, (6, 9, 11, 30, 40, 60, 200)) if cross else None,
                               B=pick(rng, (2, 3, 4, 8, 32)))
    names = ("B", "L", "S", "h", "d_k", "d_model") if cross else ("B", "L", "h", "d_k", "d_model")
    require(len({dims[n] for n in names}) == len(names), "two dimensions have the same size")
    return dims


def _given(dims: dict[str, int], names: tuple[str, ...]) -> dict[str, int]:
    """The sizes the prompt states (the grader accepts these numbers in place of the names)."""
    return {n: dims[n] for n in names}


SAME_WIDTH_HEADS = {"d_v": "d_k", "d_model": "h*d_k"}
"""Names the multi-head prompts define as equal ("h heads of width d_k = d_v", d_k = d_model / h): the
grader takes (B, L, d_model) for (B, L, h*d_v) there, as it takes the numbers."""


def _shape_part(key: str, value: tuple, dims: dict[str, int], mistakes: tuple = (), equal: dict | None = None
                ) -> AnswerPart:
    spec = {"dims": dims, "equal": equal} if equal else {"dims": dims}
    return AnswerPart(key=key, type="shape", value=list(value), label=f"the shape of {key}", spec=spec,
                      mistakes=mistakes)


def _swap_head_and_length(shape: tuple) -> list:
    """The shape a head split would have without moving the head axis before the sequence axis."""
    b, h, length, width = shape
    return [b, length, h, width]


# ------------------------------------------------------------------------------------------ trace


@register("shapes.trace", title="Tracing shapes through batched multi-head self-attention")
def trace(rng, difficulty, *, stages=None):
    """Shapes of Q, the heads, the scores, the head outputs, the concatenation and the output."""
    dims = _draw_dims(rng, cross=False)
    given = _given(dims, ("B", "L", "d_model", "h", "d_k", "d_v"))
    shapes = ref_shapes.multi_head_attention_shapes("self").as_dict()
    wrong = {
        "q_heads": (mistake("split_without_transpose", _swap_head_and_length(shapes["q_heads"])),
                    mistake("dk_equals_d_model", ["B", "h", "L", "d_model"])),
        "k_heads": (mistake("split_without_transpose", _swap_head_and_length(shapes["k_heads"])),),
        "scores": (mistake("split_without_transpose", ["B", "L", "h", "h"]),),
        "weights": (mistake("split_without_transpose", ["B", "L", "h", "h"]),),
        "head_outputs": (mistake("split_without_transpose", _swap_head_and_length(shapes["head_outputs"])),),
        "concat": (mistake("concat_wrong_axis", ["B", "h*L", "d_v"]),),
    }
    stages = _pick_stages(rng, *_TRACE_ASKED[difficulty], always=("scores",), asked=stages)
    parts = [_shape_part(s, shapes[s], given, wrong.get(s, ()), SAME_WIDTH_HEADS) for s in stages]
    return Draft(params={"dims": given, "stages": list(stages)}, parts=parts,
                 solution={"shapes": {s: list(shapes[s]) for s in stages},
                           "numbers": {s: list(v) for s, v in
                                       ref_shapes.multi_head_attention_shapes("self").evaluate(dims).items()
                                       if s in stages}})


# ------------------------------------------------------------------------------------------ cross


@register("shapes.cross", title="Shapes in cross-attention")
def cross(rng, difficulty, *, stages=None):
    """Cross-attention: queries from the decoder (L), keys and values from the encoder (S)."""
    dims = _draw_dims(rng, cross=True)
    if difficulty == 1:
        # A single head may give values their own width; a d_v unlike every other size means the
        # numbers alone tell (L, d_v) from (L, d_k), and the output visibly takes the value width.
        dims = {**dims, "d_v": pick(rng, [w for w in (8, 24, 40, 56) if w not in dims.values()])}
        shapes = ref_shapes.attention_shapes(batch=False).as_dict()
        given = _given(dims, ("L", "S", "d_k", "d_v"))
    else:
        shapes = ref_shapes.multi_head_attention_shapes("cross").as_dict()
        given = _given(dims, ("B", "L", "S", "d_model", "h", "d_k", "d_v"))
    stages = _pick_stages(rng, *_CROSS_ASKED[difficulty], always=("scores", "output"), asked=stages)
    wrong = {"scores": (mistake("transpose_scores", [*shapes["scores"][:-2], "S", "L"]),)}
    equal = SAME_WIDTH_HEADS if difficulty > 1 else None  # difficulty 1 gives the values their own width
    parts = [_shape_part(s, shapes[s], given, wrong.get(s, ()), equal) for s in stages]
    return Draft(params={"dims": given, "stages": list(stages), "batched": difficulty > 1}, parts=parts,
                 solution={"shapes": {s: list(shapes[s]) for s in stages}})


# -------------------------------------------------------------------------------------------- bug

_PIPELINE = (  # (stage, what the line says was computed)
    ("x_q", "the input $X$"),
    ("q", "$Q = X W_Q$ (all heads packed)"),
    ("q_heads", "$Q$ split into heads, as fed to the per-head product $Q K^\\top$"),
    ("scores", "the scores $Q K^\\top$ of every head"),
    ("weights", "the softmax weights"),
    ("head_outputs", "the head outputs $A V$"),
    ("concat", "the heads merged for $W_O$"),
    ("output", "the output after $W_O$"),
)

_BUGS = {  # stage -> (wrong symbolic shape, why that line is wrong)
    "q_heads": (("B", "L", "h", "d_k"),
                "the head axis must come before the sequence axis: reshape to $(B, L, h, d_k)$, then transpose to "
                "$(B, h, L, d_k)$ so that each head multiplies its own $L \\times d_k$ block."),
    "scores": (("B", "h", "d_k", "d_k"),
               "$Q K^\\top$ contracts the feature axis and keeps one row per query and one column per key, so it is "
               "$L \\times L$ per head; this line multiplied $Q^\\top K$ instead."),
    "concat": (("B", "h*L", "d_k"),
               "merging stacks the heads along the feature axis, giving $(B, L, h d_v)$; this line stacked them "
               "along the sequence axis."),
    "output": (("B", "L", "d_k"),
               "$W_O$ maps the merged width $h d_v$ back to $d_{\\text{model}}$, so the output is "
               "$(B, L, d_{\\text{model}})$ like the input, ready for the residual addition."),
    "head_outputs": (("B", "h", "L", "L"),
                     "$A V$ replaces each key axis entry by a value vector: the result is $(B, h, L, d_v)$, not "
                     "another $L \\times L$ matrix."),
}


def _numbers(shape: tuple, dims: dict[str, int]) -> str:
    """A shape written with the problem's numbers, e.g. ``(2, 4, 10, 16)`` (products multiplied out)."""
    sizes = []
    for dim in shape:
        value = 1
        for factor in dim.split("*"):
            value *= dims[factor]
        sizes.append(str(value))
    return "$(" + ", ".join(sizes) + ")$"


@register("shapes.bug", title="Spotting the shape bug in an attention pipeline")
def bug(rng, difficulty):
    """A batched multi-head self-attention pipeline with one wrong shape: which line is it?"""
    dims = _draw_dims(rng, cross=False)
    bug_stage = pick(rng, tuple(_BUGS) if difficulty > 1 else ("q_heads", "scores", "output"))
    shapes = ref_shapes.multi_head_attention_shapes("self").as_dict()
    lines = _PIPELINE if difficulty == 3 else tuple(p for p in _PIPELINE if p[0] != "weights")
    options, key = [], []
    for index, (stage, what) in enumerate(lines):
        wrong = stage == bug_stage
        shape = _BUGS[stage][0] if wrong else shapes[stage]
        option_id = "abcdefgh"[index]
        options.append({
            "id": option_id,
            "text": f"{what}: {_numbers(shape, dims)}",
            "why": _BUGS[stage][1] if wrong else "this line is consistent with the lines before it.",
        })
        if wrong:
            key.append(option_id)
    given = _given(dims, ("B", "L", "d_model", "h"))
    part = AnswerPart(key="line", type="choice", value=key, label="the line with the wrong shape",
                      spec={"options": options, "multiple": False})
    numbers = ref_shapes.multi_head_attention_shapes("self").evaluate(dims)
    return Draft(params={"dims": given}, parts=[part],
                 solution={"bug": bug_stage, "correct": list(numbers[bug_stage]), "d_k": dims["d_k"]})
