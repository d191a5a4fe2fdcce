"""The form of a result (structure, shapes, dtype kinds) and the first way a returned value departs from it.

Why: a property check judges a law (rows sum to 1, keys can be permuted) from the submission's own
outputs. Without knowing what those outputs must look like, a law can hold on garbage: a (1, 1) array
of ones "sums to 1 along every row". So before any law is checked, each returned value must have the
form the task's reference-quality solution gives for the same call: the same nesting, array shapes,
and dtype kind (boolean, or a number).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from problemgen.code.base import fmt_shape


def form_of(value: Any) -> tuple:
    """A hashable description of ``value``'s structure; decoded results and raw Python values agree."""
    if isinstance(value, (bool, np.bool_)):
        return ("array", (), "bool")
    if isinstance(value, (int, float, np.number)):
        return ("array", (), "number")  # numpy scalars travel as 0-d arrays
    if isinstance(value, np.ndarray):
        return ("array", tuple(value.shape), "bool" if value.dtype == bool else "number" if value.dtype.kind in "iuf" else "other")
    if isinstance(value, (list, tuple)):
        return ("list", tuple(form_of(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), form_of(v)) for k, v in value.items())))
    return ("other", type(value).__name__)


def mismatch(expected: tuple, got: Any, label: str = "the result") -> str:
    """Why ``got`` does not have the form ``expected`` ("" when it does); never shows values."""
    actual = form_of(got)
    if actual == expected:
        return ""
    if expected[0] == "list" and actual[0] == "list" and len(actual[1]) == len(expected[1]):
        for i, (part, item) in enumerate(zip(expected[1], got)):
            problem = mismatch(part, item, f"{label}[{i}]")
            if problem:
                return problem
    if expected[0] == "array" and actual[0] == "array":
        if actual[1] != expected[1]:
            return f"{label} has shape {fmt_shape(actual[1])}, expected {fmt_shape(expected[1])}"
        return f"{label} has dtype kind {actual[2]}, expected {expected[2]}"
    return f"{label} is {_kind(actual)}, expected {_kind(expected)}"


def _kind(form: tuple) -> str:
    if form[0] == "array":
        return f"an array of shape {fmt_shape(form[1])}" if form[1] else "a number"
    if form[0] == "list":
        return f"a tuple or list of {len(form[1])} items"
    if form[0] == "dict":
        return f"a dict with keys {', '.join(k for k, _ in form[1])}"
    return f"a {form[1]}"
