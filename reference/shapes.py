"""Symbolic shape tracing through attention and the transformer block.

Shape questions ("what is the shape of the score matrix?") have answers like
``(B, h, L, S)``. Each function here lists the pipeline's stages in order, with every shape
written in dimension *names*; :meth:`ShapeTrace.evaluate` substitutes numbers. A dimension is
a name (``"d_k"``) or a product of names and integers (``"h*d_k"``, the width of the
concatenated heads), kept as text so it reads the way the lecture notes write it.

Names: ``B`` batch, ``L`` query length, ``S`` key/value length (equal to ``L`` in
self-attention), ``d_model``, ``h`` query heads, ``h_kv`` key/value heads (grouped-query
attention), ``d_k`` query/key width per head, ``d_v`` value width per head, ``d_ff`` FFN width.
Weights follow the row-vector convention (``x @ W`` with ``W`` shaped ``d_in x d_out``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DIM_NAMES",
    "ShapeTrace",
    "attention_shapes",
    "block_shapes",
    "dims_for",
    "multi_head_attention_shapes",
]

DIM_NAMES = {
    "B": "batch size",
    "L": "query sequence length",
    "S": "key/value sequence length",
    "d_model": "model width",
    "h": "number of query heads",
    "h_kv": "number of key/value heads",
    "d_k": "query/key width per head",
    "d_v": "value width per head",
    "d_ff": "feed-forward hidden width",
}

Shape = tuple[str, ...]


@dataclass(frozen=True)
class ShapeTrace:
    """Ordered ``(stage, shape)`` pairs; index it by stage name.

    >>> t = attention_shapes()
    >>> t["scores"]
    ('L', 'S')
    >>> t.evaluate({"L": 3, "S": 5, "d_k": 4, "d_v": 2})["output"]
    (3, 2)
    """

    stages: tuple[tuple[str, Shape], ...]

    def __getitem__(self, stage: str) -> Shape:
        for name, shape in self.stages:
            if name == stage:
                return shape
        raise KeyError(f"shape trace has no stage {stage!r}; stages: {', '.join(self.names())}")

    def __iter__(self) -> Iterator[tuple[str, Shape]]:
        return iter(self.stages)

    def names(self) -> list[str]:
        """Stage names in pipeline order."""
        return [name for name, _ in self.stages]

    def as_dict(self) -> dict[str, Shape]:
        """``{stage: shape}`` in pipeline order."""
        return dict(self.stages)

    def symbols(self) -> set[str]:
        """Every dimension name used by the trace."""
        return {part for _, shape in self.stages for dim in shape for part in dim.split("*") if not part.isdigit()}

    def evaluate(self, dims: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
        """Substitute integer sizes for the names: ``{stage: (ints...)}``.

        Raises ``KeyError`` naming any dimension that ``dims`` does not give.
        """
        missing = sorted(self.symbols() - set(dims))
        if missing:
            raise KeyError(f"shape trace: no size given for {', '.join(missing)}")
        return {name: tuple(_size(dim, dims) for dim in shape) for name, shape in self.stages}


def _size(dim: str, dims: Mapping[str, int]) -> int:
    return math.prod(int(part) if part.isdigit() else int(dims[part]) for part in dim.split("*"))


def _rename(stages: list[tuple[str, Shape]], renames: Mapping[str, str]) -> ShapeTrace:
    """Apply dimension renames (e.g. ``S -> L`` for self-attention) to every shape."""

    def fix(dim: str) -> str:
        return "*".join(renames.get(part, part) for part in dim.split("*"))

    return ShapeTrace(tuple((name, tuple(fix(d) for d in shape)) for name, shape in stages))


def attention_shapes(*, batch: bool = False) -> ShapeTrace:
    """Single-head scaled dot-product attention: Q, K, V to scores, weights and output.

    >>> attention_shapes()["k_transposed"]
    ('d_k', 'S')
    """
    b: Shape = ("B",) if batch else ()
    stages = [
        ("q", (*b, "L", "d_k")),
        ("k", (*b, "S", "d_k")),
        ("v", (*b, "S", "d_v")),
        ("k_transposed", (*b, "d_k", "S")),
        ("scores", (*b, "L", "S")),
        ("scaled_scores", (*b, "L", "S")),
        ("weights", (*b, "L", "S")),
        ("output", (*b, "L", "d_v")),
    ]
    return ShapeTrace(tuple(stages))


def multi_head_attention_shapes(
    kind: Literal["self", "cross"] = "self", *, grouped: bool = False, batch: bool = True
) -> ShapeTrace:
    """Multi-head attention, stage by stage, from the inputs to the output projection.

    ``kind="cross"`` takes keys/values from a second sequence of length ``S`` (scores are
    ``L x S``, not square); ``"self"`` writes ``L`` for ``S``. ``grouped=True`` gives keys and
    values their own head count ``h_kv`` (GQA/MQA); otherwise ``h_kv`` is ``h``. Per-head
    weights (``w_q_head`` ...) are the ``d_model x d_k`` slices of the packed ``w_q``.

    >>> t = multi_head_attention_shapes()
    >>> t["q_heads"], t["scores"], t["concat"]
    (('B', 'h', 'L', 'd_k'), ('B', 'h', 'L', 'L'), ('B', 'L', 'h*d_v'))
    >>> multi_head_attention_shapes("cross")["scores"]
    ('B', 'h', 'L', 'S')
    >>> multi_head_attention_shapes(grouped=True)["k_heads"]
    ('B', 'h_kv', 'L', 'd_k')
    """
    b: Shape = ("B",) if batch else ()
    stages: list[tuple[str, Shape]] = [("x_q", (*b, "L", "d_model"))]
    if kind == "cross":
        stages.append(("x_kv", (*b, "S", "d_model")))
    elif kind != "self":
        raise ValueError(f"multi_head_attention_shapes: kind must be 'self' or 'cross', got {kind!r}")
    stages += [
        ("w_q_head", ("d_model", "d_k")),
        ("w_k_head", ("d_model", "d_k")),
        ("w_v_head", ("d_model", "d_v")),
        ("w_q", ("d_model", "h*d_k")),
        ("w_k", ("d_model", "h_kv*d_k")),
        ("w_v", ("d_model", "h_kv*d_v")),
        ("q", (*b, "L", "h*d_k")),
        ("k", (*b, "S", "h_kv*d_k")),
        ("v", (*b, "S", "h_kv*d_v")),
        ("q_heads", (*b, "h", "L", "d_k")),
        ("k_heads", (*b, "h_kv", "S", "d_k")),
        ("v_heads", (*b, "h_kv", "S", "d_v")),
        ("scores", (*b, "h", "L", "S")),
        ("scaled_scores", (*b, "h", "L", "S")),
        ("weights", (*b, "h", "L", "S")),
        ("head_outputs", (*b, "h", "L", "d_v")),
        ("concat", (*b, "L", "h*d_v")),
        ("w_o", ("h*d_v", "d_model")),
        ("output", (*b, "L", "d_model")),
    ]
    renames = {} if grouped else {"h_kv": "h"}
    if kind == "self":
        renames["S"] = "L"
    return _rename(stages, renames)


def block_shapes(
    *,
    norm_first: bool = True,
    cross: bool = False,
    ffn_kind: Literal["relu", "gelu", "gelu_tanh", "swiglu"] = "relu",
    batch: bool = True,
) -> ShapeTrace:
    """A transformer block: every stage keeps ``(B, L, d_model)`` except the FFN's hidden layer.

    Pre-LN order is norm, sublayer, residual add; post-LN is sublayer, residual add, norm.
    ``cross=True`` adds the decoder's cross-attention over an encoder output of length ``S``
    (its weights are ``(B, h, L, S)``).

    >>> t = block_shapes()
    >>> t.names()[:4], t["ffn_hidden"]
    (['x', 'attn_norm', 'attn_weights', 'attn_out'], ('B', 'L', 'd_ff'))
    """
    b: Shape = ("B",) if batch else ()
    seq, hidden = (*b, "L", "d_model"), (*b, "L", "d_ff")

    def sublayer(prefix: str, weights: Shape, inner: list[tuple[str, Shape]]) -> list[tuple[str, Shape]]:
        core = ([(f"{prefix}_weights", weights)] if weights else []) + inner + [(f"{prefix}_out", seq)]
        if norm_first:
            return [(f"{prefix}_norm", seq), *core, (f"{prefix}_residual", seq)]
        return [*core, (f"{prefix}_residual", seq), (f"{prefix}_norm", seq)]

    stages: list[tuple[str, Shape]] = [("x", seq)]
    if cross:
        stages.append(("memory", (*b, "S", "d_model")))
    stages += sublayer("attn", (*b, "h", "L", "L"), [])
    if cross:
        stages += sublayer("cross", (*b, "h", "L", "S"), [])
    ffn_inner = [("ffn_gate", hidden), ("ffn_up", hidden)] if ffn_kind == "swiglu" else []
    stages += sublayer("ffn", (), [*ffn_inner, ("ffn_hidden", hidden)])
    stages.append(("output", seq))
    return ShapeTrace(tuple(stages))


def dims_for(
    d_model: int,
    n_heads: int,
    *,
    L: int,
    S: int | None = None,
    B: int = 1,
    n_kv_heads: int | None = None,
    head_dim: int | None = None,
    d_ff: int | None = None,
) -> dict[str, int]:
    """Sizes for :meth:`ShapeTrace.evaluate`, with ``d_k = d_v = d_model / h`` by default.

    >>> dims_for(1024, 16, L=128)["d_k"]
    64
    """
    if head_dim is None:
        if d_model % n_heads:
            raise ValueError(f"dims_for: d_model={d_model} does not split evenly into {n_heads} heads")
        head_dim = d_model // n_heads
    return {
        "B": B,
        "L": L,
        "S": L if S is None else S,
        "d_model": d_model,
        "h": n_heads,
        "h_kv": n_heads if n_kv_heads is None else n_kv_heads,
        "d_k": head_dim,
        "d_v": head_dim,
        "d_ff": 4 * d_model if d_ff is None else d_ff,
    }
