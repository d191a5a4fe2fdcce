"""Drawing helpers shared by the problem generators.

Generators choose what the student sees first (small integers, short sequences) and compute every
answer from exactly those numbers. The helpers here keep that first step honest and uniform: integer
matrices in a stated range, checks that turn a degenerate draw into a ``Redraw`` (a saturated
softmax, ties that would make two answers coincide), validation of keyword overrides, and shuffled
multiple-choice options whose ids are assigned after shuffling so the correct letter varies.

Other generator modules may import these helpers; they hold no state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

import reference
from problemgen.model.core import Redraw
from problemgen.model.overrides import OverrideValueError, note

WEIGHT_ATOL = 0.005
"""Tolerance on attention weights: the prompt asks for 3 decimals and accepts ±0.005."""

OUTPUT_ATOL = 0.01
"""Tolerance on attention outputs (weighted sums of values, so rounding errors add up a little)."""

SCORE_ATOL = 0.005
"""Tolerance on scaled scores given as decimals."""

SATURATION_LIMIT = {1: 0.97, 2: 0.97, 3: 0.99}
"""Largest weight a row may carry before the softmax counts as saturated (per difficulty)."""

OPTION_IDS = "abcdefghij"

TOKENS = (
    ("The", "cat", "sat", "on", "the", "mat"),
    ("Alice", "will", "eat", "pizza", "today", "again"),
    ("She", "sat", "by", "the", "river", "bank"),
    ("Le", "chat", "est", "assis", "sur", "le"),
    ("Bob", "will", "drink", "hot", "coffee", "now"),
    ("The", "dog", "will", "chase", "the", "ball"),
    ("My", "cat", "will", "ignore", "me", "again"),
    ("The", "robot", "will", "assemble", "the", "car"),
)
"""Short sentences (at most 6 tokens) used to label positions in mask problems."""


def counted(unit: str) -> dict:
    """The ``spec`` of a whole-number answer that counts ``unit`` (``parameters``, ``bytes`` or ``FLOPs``): the
    grader reads that unit after the number (bits and MiB converted where bytes are asked) and refuses
    any other, so 2097152 bits is no parameter count. A plain count (entries, heads) has no unit."""
    return {"unit": unit}


def int_matrix(rng: np.random.Generator, shape: tuple[int, ...], low: int, high: int) -> np.ndarray:
    """Integers drawn uniformly from ``low..high`` inclusive."""
    return rng.integers(low, high + 1, size=shape)  # shape


def pick(rng: np.random.Generator, options: Sequence):
    """One element of ``options`` as a plain Python value (not a numpy scalar)."""
    value = options[int(rng.integers(len(options)))]
    return value.item() if hasattr(value, "item") else value


def override(name: str, value, default, allowed: Iterable) -> object:
    """Return ``value`` if given (checked against ``allowed``), else ``default``.

    Overrides come from users (``problemgen show KIND --seed 1`` with keyword overrides from banks),
    so a bad one is a ``ProblemgenError`` naming the parameter, not a crash inside numpy.
    """
    if value is None:
        note(name, allowed, default)  # lets list --json show the allowed values and class sets pin the choice
        return default
    allowed = allowed if isinstance(allowed, range) else list(allowed)
    check_override(name, value, allowed)
    note(name, allowed, value)
    return value


def check_override(name: str, value, allowed: Iterable) -> None:
    """Refuse a given ``value`` outside ``allowed`` (None passes), as :func:`override` does.

    For a choice that shapes the draw before it can be noted: a generator checks the value first, draws
    with it, then notes the value used through :func:`override` (``form`` in ``params.model``).

    A value must also be of its allowed value's kind: Python finds ``4.0 == 4`` and ``True == 1``, so a
    bank's ``d_model = 512.0`` was printed as 512.0 and ``d_k = 4.0`` crashed inside numpy. A refusal may
    depend on the draw (``S`` must fit the drawn ``L``), so ``generate`` asks again with other draws: a
    range is checked without listing its values."""
    if value is None:
        return
    allowed = allowed if isinstance(allowed, range) else list(allowed)
    kind = _value_kind(value)
    if _allows(allowed, value, kind):
        return
    shown = ", ".join(str(a) for a in allowed[:12]) + (" …" if len(allowed) > 12 else "")
    kinds = {int} if isinstance(allowed, range) else {_value_kind(a) for a in allowed}
    wanted = _KIND_WORDS.get(next(iter(kinds))) if len(kinds) == 1 else None
    if wanted and kind not in kinds:
        given = _KIND_WORDS.get(kind, type(value).__name__)
        raise OverrideValueError(f"override {name}={value!r} is {given}, not {wanted}; choose one of {shown}", name)
    raise OverrideValueError(f"override {name}={value!r} is not allowed; choose one of {shown}", name)


def _allows(allowed: range | list, value, kind: type) -> bool:
    """Whether ``allowed`` holds ``value`` as a value of the same kind."""
    if isinstance(allowed, range):
        return kind is int and int(value) in allowed
    try:
        first_equal = allowed[allowed.index(value)]  # C-speed search
    except ValueError:
        return False
    return _value_kind(first_equal) is kind or any(a == value and _value_kind(a) is kind for a in allowed)


_KIND_WORDS = {bool: "true or false", int: "a whole number", float: "a decimal number", str: "text"}


def _value_kind(value) -> type:
    """bool, int, float or str for the values overrides take (numpy scalars included), else the type."""
    if isinstance(value, (bool, np.bool_)):
        return bool
    if isinstance(value, (int, np.integer)):
        return int
    if isinstance(value, (float, np.floating)):
        return float
    return str if isinstance(value, str) else type(value)


ATTENTION_FORMS = ("mha", "gqa")
"""The ``form`` override of a model's attention: every head its own K and V (``mha``), or fewer K/V heads
shared by groups of query heads (``gqa``; one K/V head, multi-query attention, is its extreme)."""


def attention_form(cfg) -> str:
    """``gqa`` when the config shares K/V heads between query heads, else ``mha``."""
    return "gqa" if cfg.kv_heads < cfg.n_heads else "mha"


def presets_of_form(names: Iterable[str], form: str | None) -> list[str]:
    """The reference presets among ``names`` whose attention has ``form`` (all of them for None)."""
    return [n for n in names if form in (None, attention_form(reference.PRESETS[n]))]


def require(condition: bool, reason: str) -> None:
    """Raise ``Redraw(reason)`` unless ``condition`` holds."""
    if not condition:
        raise Redraw(reason)


def max_weight(weights: np.ndarray) -> float:
    """Largest weight over the rows that have a real choice (two or more keys with weight > 0).

    A row with a single visible key (the first row of a causal mask) has weight 1 by construction;
    that is not saturation and is ignored.
    """
    weights = np.atleast_2d(np.asarray(weights, dtype=float))  # (..., L, S)
    rows = weights.reshape(-1, weights.shape[-1])  # (rows, S)
    choice = (rows > 0).sum(axis=-1) >= 2  # (rows,)
    if not choice.any():
        return 0.0
    return float(rows[choice].max())


def require_unsaturated(weights: np.ndarray, difficulty: int) -> None:
    """Redraw when a softmax row is nearly one-hot (scaling and masking effects would hide)."""
    require(max_weight(weights) <= SATURATION_LIMIT[difficulty], "saturated softmax")


def choice_options(
    rng: np.random.Generator, correct: Sequence[tuple[str, str]], wrong: Sequence[tuple[str, str]]
) -> tuple[list[dict], list[str]]:
    """Shuffle (text, why) options, label them a, b, c…; return (options, sorted correct ids)."""
    tagged = [(text, why, True) for text, why in correct] + [(text, why, False) for text, why in wrong]
    order = rng.permutation(len(tagged))
    options, key = [], []
    for slot, index in enumerate(order):
        text, why, ok = tagged[int(index)]
        options.append({"id": OPTION_IDS[slot], "text": text, "why": why})
        if ok:
            key.append(OPTION_IDS[slot])
    return options, sorted(key)


def sentence(rng: np.random.Generator, n: int) -> list[str]:
    """The first ``n`` tokens of a randomly chosen short sentence (labels for positions)."""
    if n > len(TOKENS[0]):
        return [f"t{i + 1}" for i in range(n)]
    return list(TOKENS[int(rng.integers(len(TOKENS)))][:n])


def exact_string(expr) -> str:
    """A SymPy expression as an answer-key string, with Euler's number spelled ``exp(1)``.

    SymPy prints it as ``E``; a key such as ``exp(1)/(exp(1) + exp(-1/2) + 1)`` reads like the lecture
    notes and like what students type.
    """
    from sympy.printing.str import StrPrinter

    class _Printer(StrPrinter):
        def _print_Exp1(self, expr) -> str:  # noqa: N802 (SymPy's printer naming)
            return "exp(1)"

    return _Printer().doprint(expr)


def softmax_latex(exponents: Sequence, index: int) -> str:
    """LaTeX of one softmax weight written out term by term, ``\\frac{e^{a}}{e^{a} + e^{b} + …}``.

    ``exponents`` are exact SymPy values (e.g. from ``reference.exact.scaled_scores``). SymPy's own
    LaTeX of the simplified weight regroups negative exponents into nested fractions; writing every
    term as ``e^{score}`` keeps the worked solution in the form a student computes by hand.
    """
    terms = exp_terms_latex(exponents)
    return rf"\frac{{{terms[index]}}}{{{' + '.join(terms)}}}"


def exp_terms_latex(exponents: Sequence) -> list[str]:
    """LaTeX ``e^{score}`` for each exact exponent, in order (the terms of one softmax row)."""
    import sympy

    return [f"e^{{{sympy.latex(e)}}}" for e in exponents]
