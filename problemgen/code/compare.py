"""Judge a returned value against a case: OK, WRONG (with where and why) or BAD_OUTPUT (wrong kind).

The value arrives decoded from the sandbox wire format, so it is plain data (numpy arrays, ints,
floats, lists, dicts), but its structure is whatever the student returned: every check here first
asks what it was given. Shapes must match exactly (no broadcasting). Feedback for hidden cases says
where a value is wrong, never what it should have been.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from problemgen.code.base import Case, Variant, fmt_shape

OK, WRONG, BAD_OUTPUT = "OK", "WRONG", "BAD_OUTPUT"


@dataclass(frozen=True)
class Verdict:
    status: str
    feedback: str = ""
    failed_parts: tuple[str, ...] = ()  # names of the parts that were not right, in part order
    variant: Variant | None = None


def judge(case: Case, value: Any) -> Verdict:
    """Compare ``value`` with ``case.expected`` part by part."""
    parts = _split(case, value)
    if isinstance(parts, str):
        return Verdict(BAD_OUTPUT, parts, case.parts)
    problems: list[tuple[str, str, str]] = []  # (part, status, message)
    expected_parts = case.expected if len(case.parts) > 1 else (case.expected,)
    for name, expected, got in zip(case.parts, expected_parts, parts):
        status, message = _check(expected, got, case, label=name if len(case.parts) > 1 else "the result")
        if status != OK:
            problems.append((name, status, message))
    if not problems:
        return Verdict(OK)
    status = BAD_OUTPUT if any(s == BAD_OUTPUT for _, s, _ in problems) else WRONG
    feedback = "; ".join(message for _, _, message in problems)
    variant = None if status == BAD_OUTPUT else match_variant(case, value)
    return Verdict(status, feedback, tuple(name for name, _, _ in problems), variant)


def _split(case: Case, value: Any) -> list | str:
    if len(case.parts) == 1:
        return [value]
    if not isinstance(value, list) or len(value) != len(case.parts):
        return f"expected a tuple of {len(case.parts)} items ({', '.join(case.parts)}), got {describe(value)}"
    return value


def describe(value: Any) -> str:
    """A short, safe description of a returned value (its kind and shape, never its contents)."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {fmt_shape(value.shape)} and dtype {value.dtype}"
    if isinstance(value, list):
        return f"a sequence of {len(value)} items"
    if isinstance(value, dict):
        return f"a dict with {len(value)} keys"
    if value is None:
        return "None (is a return statement missing?)"
    return f"a {type(value).__name__}"


def _check(expected: Any, got: Any, case: Case, label: str) -> tuple[str, str]:
    if isinstance(expected, dict):
        return _check_dict(expected, got, case, label)
    if isinstance(expected, (int, np.integer)) and not isinstance(expected, bool):
        return _check_int(int(expected), got, case, label)
    return _check_array(np.asarray(expected), got, case, label)


def _check_array(expected: np.ndarray, got: Any, case: Case, label: str) -> tuple[str, str]:
    if not isinstance(got, np.ndarray):
        return BAD_OUTPUT, f"{label} should be a numpy array, got {describe(got)}"
    if got.shape != expected.shape:
        return WRONG, f"{label} has shape {fmt_shape(got.shape)}, expected {fmt_shape(expected.shape)}"
    if expected.dtype == bool:
        if got.dtype != bool:
            return WRONG, f"{label} has dtype {got.dtype}; a boolean mask (dtype bool, True = may attend) is expected"
        wrong = got != expected
    else:
        if got.dtype == bool:
            return WRONG, f"{label} has dtype bool; real numbers are expected"
        values = got.astype(np.float64)
        if not np.all(np.isfinite(values)):
            bad = np.argwhere(~np.isfinite(values))
            return WRONG, f"{label} contains NaN or inf ({len(bad)} entries, first at {_index(bad[0])})"
        wrong = ~close(values, expected, case.rtol, case.atol)
    if not wrong.any():
        return OK, ""
    first = np.argwhere(wrong)[0]
    message = f"{label}: {int(wrong.sum())} of {wrong.size} entries are wrong, the first at index {_index(first)}"
    if case.public:  # public examples are in the spec anyway
        message += f" (got {_item(got, first)}, expected {_item(expected, first)})"
    return WRONG, message


def close(values: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """``np.isclose(values, expected, rtol, atol)`` for finite ``values``, without its per-call set-up,
    which cost more than the comparison on a test's small arrays (a property test holds the two equal).
    An entry is close when it is within ``atol + rtol * |expected|`` of a finite expected entry."""
    expected = expected.astype(np.float64, copy=False)
    finite = np.isfinite(expected)
    magnitude = np.abs(np.where(finite, expected, 0.0))  # no inf * 0 when rtol is 0
    return (np.abs(values - expected) <= atol + rtol * magnitude) & finite


def _check_int(expected: int, got: Any, case: Case, label: str) -> tuple[str, str]:
    if isinstance(got, np.ndarray) and got.shape == () and got.dtype.kind in "iu":
        got = int(got)
    if isinstance(got, bool) or not isinstance(got, int):
        return BAD_OUTPUT, f"{label} should be an int, got {describe(got)}"
    if got == expected:
        return OK, ""
    return WRONG, f"{label} is wrong" + (f" (got {got}, expected {expected})" if case.public else "")


def _check_dict(expected: dict, got: Any, case: Case, label: str) -> tuple[str, str]:
    if not isinstance(got, dict):
        return BAD_OUTPUT, f"{label} should be a dict with keys {', '.join(sorted(expected))}, got {describe(got)}"
    missing = sorted(set(expected) - set(got))
    if missing:
        return BAD_OUTPUT, f"{label} lacks the keys {', '.join(missing)}"
    messages, status = [], OK
    for key in expected:
        part_status, message = _check(expected[key], got[key], case, label=f"{key!r}")
        if part_status != OK:
            messages.append(message)
            status = BAD_OUTPUT if BAD_OUTPUT in (status, part_status) else WRONG
    return status, "; ".join(messages)


def _index(index: np.ndarray) -> str:
    return fmt_shape(tuple(int(i) for i in index))


def _item(array: np.ndarray, index: np.ndarray) -> str:
    value = array[tuple(index)]
    return str(bool(value)) if array.dtype == bool else f"{float(value):.6g}"


# --------------------------------------------------------------------------- diagnosis


def same_value(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Structural closeness of two decoded values (either may be hostile-shaped); never raises."""
    try:
        if isinstance(b, tuple):
            b = list(b)
        if isinstance(a, tuple):
            a = list(a)
        if isinstance(a, list) or isinstance(b, list):
            return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                    and all(same_value(x, y, rtol, atol) for x, y in zip(a, b)))
        if isinstance(a, dict) or isinstance(b, dict):
            return (isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b)
                    and all(same_value(a[k], b[k], rtol, atol) for k in a))
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype == object or y.dtype == object:
            return False
        if x.dtype == bool or y.dtype == bool:
            return bool(x.dtype == y.dtype and np.array_equal(x, y))
        # equal_nan: an overflowing softmax is recognised by its NaNs in the same places
        return bool(np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))
    except (TypeError, ValueError, OverflowError):
        return False


def match_variant(case: Case, value: Any) -> Variant | None:
    """The misconception whose output the submission reproduced for this case, if any."""
    for variant in case.variants:
        atol = case.atol if variant.atol is None else variant.atol
        if same_value(value, variant.value, case.rtol, atol):
            return variant
    return None
