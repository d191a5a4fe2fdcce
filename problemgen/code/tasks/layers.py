"""Coding tasks: LayerNorm, RMSNorm, the feed-forward network and sinusoidal positional encodings."""

from __future__ import annotations

import math

import numpy as np

import reference as ref
from problemgen.misconceptions import layers as FF
from problemgen.misconceptions import norms as N
from problemgen.misconceptions import positional as PE
from problemgen.misconceptions.catalogue import safely
from problemgen.code.sandbox import Call
from problemgen.code import inputs as I
from problemgen.code.tasks.attention import CONVENTIONS
from problemgen.code.base import DEFAULT_ATOL, DEFAULT_RTOL, Case, Property, Task, Variant, fmt_shape
from problemgen.code.compare import same_value

# --------------------------------------------------------------------------- layer norm

LN_SPEC = f"""\
# layer_norm

Write `layer_norm(x, gamma, beta, eps=1e-5)`: normalise every token (the last axis of `x`,
shape `(..., d)`) to zero mean and unit variance, then scale and shift:

    y = gamma * (x - mean) / sqrt(var + eps) + beta

- `mean` and `var` are taken over the last axis only; `var` is the *population* variance (divide
  by `d`, not `d - 1`), and `eps` sits inside the square root.
- `gamma` and `beta` have shape `(d,)`.

{CONVENTIONS}
"""

LN_STARTER = '''\
"""Task: layer_norm. Run `problemgen task show layer_norm` for the full spec."""

import numpy as np


def layer_norm(x, gamma, beta, eps=1e-5):
    """Normalise over the last axis, then scale by gamma and shift by beta."""
    raise NotImplementedError
'''


def _ln_case(name: str, group: str, x, gamma, beta, about: str) -> Case:
    expected = ref.layer_norm(x, gamma, beta, eps=1e-5)
    made = safely({
        "unbiased_variance": lambda: N.layer_norm_unbiased(x, gamma, beta),
        "norm_wrong_axis": lambda: N.layer_norm_wrong_axis(x, gamma, beta),
        "eps_outside_sqrt": lambda: N.layer_norm_eps_outside(x, gamma, beta),
        "unbiased_variance_eps_outside": lambda: N.layer_norm_unbiased_eps_outside(x, gamma, beta),
        "affine_skipped": lambda: N.layer_norm(x, gamma, beta, affine=False),
    })  # fmt: skip
    return Case(name, group, Call("layer_norm", (x, gamma, beta)), expected, about, variants=I.variants(expected, made))


def _norm_inputs(rng, shape: tuple[int, ...], scale: float = 2.0):
    d = shape[-1]
    x = I.normal(rng, *shape, scale=scale) + rng.normal(size=(*shape[:-1], 1)) * scale  # (..., d) per-token offsets
    return x, 1.0 + 0.3 * I.normal(rng, d), 0.3 * I.normal(rng, d)


def _ln_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        x = np.array([[1.0, 2.0, 3.0], [0.0, -2.0, 2.0]])
        quiet = np.array([[0.003, -0.001, 0.004, 0.0], [1.0, 2.0, 3.0, 6.0]])  # token 0: variance ~ eps
        return [_ln_case("public/2x3", "public", x, np.ones(3), np.zeros(3), "2 tokens of 3 features, gamma=1, beta=0"),
                _ln_case("public/affine", "public", x, np.array([2.0, 1.0, 0.5]), np.array([0.0, 1.0, -1.0]),
                         "the same tokens with gamma and beta"),
                _ln_case("public/small-variance", "public", quiet, np.ones(4), np.zeros(4),
                         "a token whose variance is close to eps, and an ordinary one")]  # fmt: skip
    cases = []
    for i, shape in enumerate([(4, 6), (2, 3, 5), (3, 8), (2, 2, 3, 4)]):
        x, gamma, beta = _norm_inputs(rng, shape)
        cases.append(_ln_case(f"hidden/{i + 1}", "hidden", x, gamma, beta, f"x {fmt_shape(shape)}"))
    x, gamma, beta = _norm_inputs(rng, (3, 5), scale=0.004)  # tiny variance: eps placement matters
    cases.append(_ln_case("hidden/small-variance", "hidden", x, gamma, beta, "x (3, 5) with a variance close to eps"))
    return cases


def _standardised(values: list) -> str:
    y = I.array(values, 0, shape=(4, 7))
    if not np.allclose(y.mean(axis=-1), 0.0, atol=1e-6):
        return "with gamma=1 and beta=0, a token's features do not average to 0"
    return "" if np.allclose(y.var(axis=-1), 1.0, atol=1e-3) else "with gamma=1 and beta=0, a token's features do not have variance 1"


LAYER_NORM = Task(
    name="layer_norm", title="LayerNorm", topic="normalisation",
    summary="Normalise each token over its features (population variance, eps inside the root).",
    spec=LN_SPEC, starter=LN_STARTER, functions=("layer_norm",), make_cases=_ln_cases,
    make_properties=lambda rng: [Property(
        "property/standardises", (Call("layer_norm", (I.normal(rng, 4, 7, scale=3.0), np.ones(7), np.zeros(7))),),
        _standardised, "with gamma=1, beta=0 every token has mean 0 and variance 1")],
)  # fmt: skip

# --------------------------------------------------------------------------- RMS norm

RMS_SPEC = f"""\
# rms_norm

Write `rms_norm(x, gamma, eps=1e-6)`: divide every token (last axis of `x`, shape `(..., d)`) by its
root mean square, then scale:

    y = gamma * x / sqrt(mean(x**2) + eps)

- No mean is subtracted and there is no shift (that is what distinguishes it from LayerNorm).
- `gamma` has shape `(d,)`.

{CONVENTIONS}
"""

RMS_STARTER = '''\
"""Task: rms_norm. Run `problemgen task show rms_norm` for the full spec."""

import numpy as np


def rms_norm(x, gamma, eps=1e-6):
    """Divide by the root mean square over the last axis, then scale by gamma."""
    raise NotImplementedError
'''


def _rms_case(name: str, group: str, x, gamma, about: str) -> Case:
    expected = ref.rms_norm(x, gamma, eps=1e-6)
    made = safely({
        "rms_subtracts_mean": lambda: N.rms_norm_subtracts_mean(x, gamma),
        "rms_no_eps": lambda: N.rms_norm_no_eps(x, gamma),
        "norm_wrong_axis": lambda: N.rms_norm(x, gamma, axis=-2),
        "eps_outside_sqrt": lambda: N.rms_norm(x, gamma, eps_inside=False),
        "affine_skipped": lambda: N.rms_norm(x, gamma, affine=False),
    })  # fmt: skip
    return Case(name, group, Call("rms_norm", (x, gamma)), expected, about, variants=I.variants(expected, made))


def _rms_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        quiet = np.array([[0.001, -0.0005, 0.0015], [1.0, -2.0, 2.0]])  # token 0: mean square ~ eps
        return [_rms_case("public/3-4", "public", np.array([[3.0, 4.0], [1.0, -1.0]]), np.ones(2), "2 tokens of 2 features, gamma=1"),
                _rms_case("public/small-values", "public", quiet, np.ones(3),
                          "a token whose mean square is close to eps, and an ordinary one")]  # fmt: skip
    cases = []
    for i, shape in enumerate([(4, 6), (2, 3, 5), (3, 8)]):
        x, gamma, _ = _norm_inputs(rng, shape)
        cases.append(_rms_case(f"hidden/{i + 1}", "hidden", x, gamma, f"x {fmt_shape(shape)}"))
    x, gamma, _ = _norm_inputs(rng, (3, 4), scale=0.0008)
    cases.append(_rms_case("hidden/small-values", "hidden", x, gamma, "x (3, 4) with a mean square close to eps"))
    return cases


def _unit_rms(values: list) -> str:
    y = I.array(values, 0, shape=(3, 6))
    return "" if np.allclose(np.sqrt((y**2).mean(axis=-1)), 1.0, atol=1e-4) else "with gamma=1 the output tokens do not have RMS 1"


RMS_NORM = Task(
    name="rms_norm", title="RMSNorm", topic="normalisation",
    summary="Divide each token by its root mean square (no centring, no shift).",
    spec=RMS_SPEC, starter=RMS_STARTER, functions=("rms_norm",), make_cases=_rms_cases,
    make_properties=lambda rng: [Property("property/unit-rms", (Call("rms_norm", (I.normal(rng, 3, 6, scale=4.0), np.ones(6))),),
                                          _unit_rms, "with gamma=1 every output token has root mean square 1")],
)  # fmt: skip

# --------------------------------------------------------------------------- feed-forward network

FFN_SPEC = f"""\
# feed_forward

Write `feed_forward(x, params, kind)`, the position-wise feed-forward network applied to every
token of `x` `(..., d_model)`:

- `kind="relu"`: `relu(x @ w_1 + b_1) @ w_2 + b_2`
- `kind="gelu"`: the same with the exact GELU, `gelu(z) = z * Phi(z) = 0.5 z (1 + erf(z / sqrt 2))`
  (not the tanh approximation; `math.erf` works element by element, e.g. through `np.vectorize`)
- `kind="swiglu"`: `(silu(x @ w_gate) * (x @ w_up)) @ w_down` with `silu(z) = z * sigmoid(z)`

`w_1`, `w_gate`, `w_up` are `(d_model, d_ff)`; `w_2`, `w_down` are `(d_ff, d_model)`. The biases
`b_1` `(d_ff,)` and `b_2` `(d_model,)` are present in `params` for relu/gelu when the model has
biases; add them when they are there. The result has the shape of `x`.

{CONVENTIONS}
"""

FFN_STARTER = '''\
"""Task: feed_forward. Run `problemgen task show feed_forward` for the full spec."""

import math

import numpy as np


def feed_forward(x, params, kind):
    """Position-wise FFN; kind is "relu", "gelu" (exact, erf) or "swiglu"."""
    raise NotImplementedError
'''


def _ffn_params(rng, d: int, f: int, kind: str, biases: bool) -> dict[str, np.ndarray]:
    s1, s2 = 1.5 / math.sqrt(d), 1.0 / math.sqrt(f)
    if kind == "swiglu":
        return {"w_gate": I.normal(rng, d, f, scale=s1), "w_up": I.normal(rng, d, f, scale=s1), "w_down": I.normal(rng, f, d, scale=s2)}
    p = {"w_1": I.normal(rng, d, f, scale=s1), "w_2": I.normal(rng, f, d, scale=s2)}
    if biases:
        p |= {"b_1": I.normal(rng, f, scale=0.5), "b_2": I.normal(rng, d, scale=0.5)}
    return p


def _ffn_case(name: str, group: str, x, p, kind: str, about: str) -> Case:
    expected = ref.feed_forward(x, p, kind)
    makers = {"activation_skipped": lambda: FF.feed_forward(x, p, kind, activation=FF.identity)}
    if kind == "gelu":
        makers |= {"relu_for_gelu": lambda: FF.feed_forward(x, p, kind, activation=ref.relu),
                   "gelu_form_confused": lambda: FF.feed_forward(x, p, kind, activation=FF.gelu_tanh)}  # fmt: skip
    if kind == "swiglu":
        makers |= {"swiglu_gate_swapped": lambda: FF.feed_forward(x, p, kind, swap_gate=True),
                   "relu_for_gelu": lambda: FF.feed_forward(x, p, kind, activation=ref.relu)}  # fmt: skip
    if "b_1" in p:
        makers["ffn_biases_skipped"] = lambda: FF.feed_forward(x, p, kind, biases=False)
    return Case(name, group, Call("feed_forward", (x, p, kind)), expected, about, variants=I.variants(expected, safely(makers)))


def _ffn_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:
        x = np.array([[1.0, -1.0]])
        p = {"w_1": np.array([[1.0, 0.5, -1.0], [0.0, 1.0, 1.0]]), "w_2": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
             "b_1": np.array([0.0, 0.5, 0.0]), "b_2": np.array([0.1, 0.0])}  # fmt: skip
        return [_ffn_case("public/relu", "public", x, p, "relu", "one token, d_model=2, d_ff=3, relu with biases"),
                _ffn_case("public/gelu", "public", x, p, "gelu", "the same with the exact GELU")]  # fmt: skip
    cases = []
    plans = [("relu", True, (4, 3)), ("relu", False, (2, 3, 4)), ("gelu", True, (3, 4)), ("gelu", False, (2, 2, 5)),
             ("swiglu", False, (4, 4)), ("swiglu", False, (2, 3, 6))]  # fmt: skip
    for i, (kind, biases, shape) in enumerate(plans):
        d, f = shape[-1], int(rng.integers(2, 4)) * shape[-1]
        x, p = I.normal(rng, *shape), _ffn_params(rng, d, f, kind, biases)
        about = f"kind={kind}, x {fmt_shape(shape)}, d_ff={f}, biases: {'yes' if biases else 'no'}"
        cases.append(_ffn_case(f"hidden/{i + 1}", "hidden", x, p, kind, about))
    return cases


def _position_wise(values: list) -> str:
    a = I.array(values, 0)
    b = I.array(values, 1, shape=a.shape)
    return I.agree(a[::-1], b, "reversing the tokens did not just reverse the outputs")


def _ffn_properties(rng: np.random.Generator) -> list[Property]:
    x, p = I.normal(rng, 5, 4), _ffn_params(rng, 4, 8, "gelu", True)
    return [Property("property/position-wise", (Call("feed_forward", (x, p, "gelu")), Call("feed_forward", (x[::-1].copy(), p, "gelu"))),
                     _position_wise, "each token is transformed on its own (reordering tokens reorders outputs)")]  # fmt: skip


FEED_FORWARD = Task(
    name="feed_forward", title="Feed-forward network (ReLU, GELU, SwiGLU)", topic="layers",
    summary="The position-wise FFN with ReLU, exact GELU or SwiGLU.",
    spec=FFN_SPEC, starter=FFN_STARTER, functions=("feed_forward",), make_cases=_ffn_cases, make_properties=_ffn_properties,
)  # fmt: skip

# --------------------------------------------------------------------------- sinusoidal encoding

PE_SPEC = f"""\
# sinusoidal_encoding

Write `sinusoidal_encoding(n_positions, d_model)` returning the `(n_positions, d_model)` fixed
positional encoding of the original Transformer. For position `pos` (counted from 0) and pair
index `i`:

    PE[pos, 2i]     = sin(pos / 10000 ** (2i / d_model))
    PE[pos, 2i + 1] = cos(pos / 10000 ** (2i / d_model))

Sines and cosines are *interleaved* (columns 0, 2, 4… hold sines) and both columns of a pair share
one frequency. `d_model` is even in the tests. Angles are in radians.

{CONVENTIONS}
"""

PE_STARTER = '''\
"""Task: sinusoidal_encoding. Run `problemgen task show sinusoidal_encoding` for the full spec."""

import numpy as np


def sinusoidal_encoding(n_positions, d_model):
    """The (n_positions, d_model) sin/cos encoding with interleaved columns."""
    raise NotImplementedError
'''


FLOAT32_ATOL = 1e-3
"""How far a float32 table may be from the float64 one and still be recognised as float32 (angles up to
a few thousand radians, float32 spacing ~1e-4 there)."""


def _pe_case(name: str, group: str, P: int, d: int) -> Case:
    expected = ref.sinusoidal_encoding(P, d)
    made = [
        ("sin_cos_swapped", PE.sinusoidal(P, d, swap=True)),
        ("pe_wrong_frequency_index", PE.sinusoidal(P, d, exponent="column_doubled")),
        ("pe_wrong_frequency_index", PE.sinusoidal(P, d, exponent="column")),
        ("positions_zero_vs_one", PE.sinusoidal(P, d, start=1)),
        ("pe_concatenated", PE.sinusoidal(P, d, concat=True)),
        ("degrees_not_radians", PE.sinusoidal(P, d, degrees=True)),
    ]
    found = I.variants(expected, made)
    single = PE.sinusoidal(P, d, dtype=np.float32)  # (P, d) right to float32 precision only
    if not same_value(single, expected, DEFAULT_RTOL, DEFAULT_ATOL):  # long tables: float32 fails the tolerance
        found += (Variant("pe_float32", single, atol=FLOAT32_ATOL),)  # last: exact variants are matched first
    return Case(name, group, Call("sinusoidal_encoding", (P, d)), expected, f"n_positions={P}, d_model={d}",
                variants=found)  # fmt: skip


def _pe_cases(rng: np.random.Generator, hidden: bool) -> list[Case]:
    if not hidden:  # the long table is where float32 fails the float64 tolerance
        return [_pe_case("public/2x4", "public", 2, 4), _pe_case("public/512x64", "public", 512, 64)]
    cases = [_pe_case(f"hidden/{i + 1}", "hidden", int(rng.integers(3, 12)), 2 * int(rng.integers(2, 9))) for i in range(4)]
    long = int(rng.integers(300, 1025)), 2 * int(rng.integers(16, 65))
    return cases + [_pe_case("hidden/long", "hidden", *long)]


def _pe_bounded(values: list) -> str:
    pe = I.array(values, 0, shape=(50, 16))
    if np.any(np.abs(pe) > 1.0 + 1e-12):
        return "some entries lie outside [-1, 1]"
    return "" if np.allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1.0) else "sin² + cos² of a pair is not 1"


SINUSOIDAL = Task(
    name="sinusoidal_encoding", title="Sinusoidal positional encoding", topic="positions",
    summary="The fixed interleaved sin/cos position table.",
    spec=PE_SPEC, starter=PE_STARTER, functions=("sinusoidal_encoding",), make_cases=_pe_cases,
    make_properties=lambda rng: [Property("property/unit-circle-pairs", (Call("sinusoidal_encoding", (50, 16)),), _pe_bounded,
                                          "each (sin, cos) pair lies on the unit circle")],
)  # fmt: skip

TASKS = (LAYER_NORM, RMS_NORM, FEED_FORWARD, SINUSOIDAL,)
"""This module's tasks, in teaching order."""
ORDER = 3
"""Where this module's tasks come in ``problemgen task list`` (modules are discovered, not listed)."""
