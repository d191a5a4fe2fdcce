"""The problem model: what a generated variant is made of, and how it is frozen to JSON.

A variant is identified by (kind, seed, overrides). Everything a worksheet, a grader or the quiz needs
is derived from it and stored here as plain JSON-able data, so that grading never depends on the numpy
build that generated the problem (the frozen ``variant.json`` is enough).

This module imports no numpy at module level: the grader and the CLI start fast without it.
"""

from __future__ import annotations

import functools
import importlib
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from problemgen.errors import ProblemgenError  # noqa: F401 - re-exported: the project exception
from problemgen.misconceptions.entries import DEFAULT_HINTS


def _answer_type_names() -> tuple[str, ...]:
    """The modules of ``problemgen/answers/types`` (listed, not imported: answers sits above model)."""
    folder = Path(__file__).resolve().parents[1] / "answers" / "types"
    return tuple(sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")))


ANSWER_TYPES = _answer_type_names()
"""The checkable answer types: one module each in ``problemgen.answers.types`` (the file list is the list).

- number: a real value; ``rtol``/``atol`` apply; ``exact`` may hold the exact form (a SymPy-readable string).
- integer: an exact integer (parameter counts, bytes); no tolerance. ``spec["unit"]`` names what it counts
  (``bytes``, ``parameters`` or ``FLOPs``; none for a plain count): the only unit read after the number.
- matrix: nested lists of reals (a vector is a 1-D list); exact shape first, then entry-wise tolerance.
- shape: a list of dims, each a symbol name (``"d_k"``) or an int; ``spec["dims"]`` maps symbols to the
  numbers the problem gave, so numeric answers can be accepted where the problem gave numbers.
- expression: an exact value given as a SymPy-readable string in ``value`` (written by trusted code);
  equivalent forms score correct; decimals within tolerance when ``spec["allow_decimal"]``.
- choice: ``value`` is the sorted list of correct option ids; ``spec["options"]`` lists
  ``{"id", "text", "why"}``; ``spec["multiple"]`` says whether several may be chosen.
- mask: nested lists of bools (True = may attend); ``spec["representation"]`` is the form the student
  must use: ``"bool"``, ``"01"`` or ``"additive"`` (0 / -inf).
- term: a short word answer; ``value`` is the list of accepted spellings (compared case-insensitively).
"""


def frozen_instance(cls: type, values: dict) -> Any:
    """The instance ``cls(**values)`` of a frozen dataclass, built without its generated ``__init__``.

    ``values`` must name every field and nothing else (callers check; a test compares the two ways).
    The generated ``__init__`` of a frozen dataclass sets each field through ``object.__setattr__``;
    grading loads about a hundred of these objects per student from ``variant.json``, and that way
    building them cost as much as parsing the JSON. ``__post_init__`` is not run: call it when the
    class has one.
    """
    instance = object.__new__(cls)
    instance.__dict__.update(values)
    return instance


class Redraw(Exception):
    """Raised by a generator when the drawn variant is degenerate (saturated softmax, ties, …).

    ``registry.generate`` catches it and draws again from the next deterministic sub-seed.
    """


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: the value a named misconception produces for this variant, and a hint."""

    name: str
    value: Any
    hint: str

    def to_dict(self) -> dict:
        """The hint is left out when it is the catalogue's default for the tag (a fifth of a variant file)."""
        if self.hint == DEFAULT_HINTS.get(self.name):
            return {"name": self.name, "value": self.value}
        return {"name": self.name, "value": self.value, "hint": self.hint}

    @classmethod
    def from_dict(cls, data: dict) -> "Mistake":
        hint = data["hint"] if "hint" in data else DEFAULT_HINTS.get(data["name"], "")
        return frozen_instance(cls, {"name": data["name"], "value": data["value"], "hint": hint})


@dataclass(frozen=True)
class AnswerPart:
    """One gradable answer of a problem, carrying its own checking rules and known mistakes."""

    key: str
    type: str
    value: Any
    label: str = ""
    weight: float = 1.0
    rtol: float = 0.0
    atol: float = 0.0
    exact: str | None = None
    spec: dict = field(default_factory=dict)
    mistakes: tuple[Mistake, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in ANSWER_TYPES:
            raise ValueError(f"unknown answer type {self.type!r}; expected one of {ANSWER_TYPES}")
        if not self.key.isidentifier():
            raise ValueError(f"answer key {self.key!r} must be an identifier")

    @functools.cached_property
    def layout(self) -> tuple[tuple[int, ...], list[Any]]:
        """(shape, flat entries) of the key value, worked out once per part: reading an array answer,
        checking it and matching it against each mistake all need it. Read-only; ValueError when ragged."""
        return _flatten(self.value)

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "type": self.type,
            "value": self.value,
            "label": self.label,
            "weight": self.weight,
            "rtol": self.rtol,
            "atol": self.atol,
            "exact": self.exact,
            "spec": self.spec,
            "mistakes": [m.to_dict() for m in self.mistakes],
        }

    @classmethod
    def from_dict(cls, data: dict) -> "AnswerPart":
        values = dict(data)
        values["mistakes"] = tuple(Mistake.from_dict(m) for m in data.get("mistakes", ()))
        if values.keys() != _PART_FIELDS:  # defaults to fill in, or an unknown key to refuse
            return cls(**values)
        part = frozen_instance(cls, values)  # what to_dict writes: every field
        part.__post_init__()
        return part


@dataclass(frozen=True)
class Draft:
    """What a generator returns: the visible params, the answer parts, and the worked-solution values."""

    params: dict
    parts: list[AnswerPart]
    solution: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Problem:
    """A fully derived, JSON-able problem variant."""

    kind: str
    seed: int
    difficulty: int
    overrides: dict
    title: str
    topic: str
    params: dict
    parts: tuple[AnswerPart, ...]
    solution: dict

    @property
    def variant_id(self) -> str:
        """Human-readable identity of this variant: kind, difficulty and seed (overrides appended)."""
        extra = "".join(f",{k}={self.overrides[k]}" for k in sorted(self.overrides))
        return f"{self.kind}/d{self.difficulty}/s{self.seed}{extra}"

    def part(self, key: str) -> AnswerPart:
        for part in self.parts:
            if part.key == key:
                return part
        raise KeyError(key)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "seed": self.seed,
            "difficulty": self.difficulty,
            "overrides": self.overrides,
            "title": self.title,
            "topic": self.topic,
            "params": self.params,
            "parts": [p.to_dict() for p in self.parts],
            "solution": self.solution,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Problem":
        values = dict(data)
        values["parts"] = tuple(AnswerPart.from_dict(p) for p in data["parts"])
        return frozen_instance(cls, values) if values.keys() == _PROBLEM_FIELDS else cls(**values)


_PART_FIELDS = frozenset(f.name for f in fields(AnswerPart))
_PROBLEM_FIELDS = frozenset(f.name for f in fields(Problem))


def to_jsonable(value: Any) -> Any:
    """Convert numpy arrays/scalars, tuples and dicts to plain JSON types, refusing non-finite floats.

    Frozen variants must be plain data; a NaN or infinity in an answer is a generator bug (masks are
    stored as booleans and rendered as 0/−∞ by the templates). Arrays take a fast path: one
    finiteness check and ``tolist()``, which already yields Python scalars.
    """
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("non-finite float in a frozen variant")
        return float(value)
    if hasattr(value, "tolist") and hasattr(value, "dtype"):
        return _array_to_jsonable(value)
    raise TypeError(f"cannot freeze {type(value).__name__} into a variant")


def _array_to_jsonable(array: Any) -> Any:
    """A numpy array or scalar as nested Python lists/scalars (bool, int and finite float only)."""
    kind = array.dtype.kind
    if kind == "f" and not bool((abs(array) < float("inf")).all()):
        raise ValueError("non-finite float in a frozen variant")
    if kind not in "biuf":
        raise TypeError(f"cannot freeze an array of dtype {array.dtype} into a variant")
    return array.tolist()


def _flatten(value: Any) -> tuple[tuple[int, ...], list[Any]]:
    """Return (shape, flat entries) of a nested list; raise ValueError when ragged.

    Vectors and matrices (nearly every answer) take a direct path; deeper nesting recurses.
    """
    if not isinstance(value, list):
        return (), [value]
    if not value:
        return (0,), []
    if not _holds_lists(value):
        return (len(value),), list(value)
    width, flat = len(value[0]) if isinstance(value[0], list) else -1, []
    for row in value:
        if not isinstance(row, list) or len(row) != width:
            break
        flat += row
    else:
        if not _holds_lists(flat):
            return (len(value), width), flat
    shapes, flat = set(), []
    for item in value:
        shape, entries = _flatten(item)
        shapes.add(shape)
        flat.extend(entries)
    if len(shapes) != 1:
        raise ValueError("ragged nested list")
    return (len(value), *shapes.pop()), flat


def _holds_lists(items: list) -> bool:
    """Whether any item is a list, from the set of the items' types (one pass in C rather than an
    ``isinstance`` call per entry: grading flattens every key, answer and known mistake)."""
    return any(issubclass(kind, list) for kind in set(map(type, items)))


def numbers_close(a: float, b: float, rtol: float, atol: float) -> bool:
    """True when ``a`` is within ``atol + rtol·|b|`` of the reference value ``b``."""
    return abs(float(a) - float(b)) <= atol + rtol * abs(float(b))


def misses(values: list, references: list, rtol: float, atol: float) -> list[int]:
    """Indices where ``values[i]`` is not :func:`numbers_close` to ``references[i]``: the same test, one
    pass over a whole matrix instead of a call per entry (a class grades thousands of entries)."""
    return [i for i, (a, b) in enumerate(zip(values, references))
            if not abs(float(a) - float(b)) <= atol + rtol * abs(float(b))]


def values_match(part: AnswerPart, candidate: Any, reference: Any | None = None) -> bool:
    """Whether an already-parsed value equals the reference value under the part's own rules.

    This compares values in the key's own form (floats, nested lists, names), which generation needs
    to refuse a mistake equal to the key; reading what a student wrote is the answer types' job.
    The comparison itself belongs to the part's answer type (its ``same`` method): this is only the
    type-agnostic hook, so adding an answer type never touches the model.

    Used by the variant self-check (a mistake must *not* match the key) and by the grader (an answer
    must match). ``reference`` defaults to the part's key value.
    """
    reference = part.value if reference is None else reference
    return answer_type(part.type).same(part, candidate, reference)


ANSWER_TYPE_PACKAGE = "problemgen.answers.types"
"""Where the answer types live. The model finds a type's module by this name at run time, as the kind
registry finds generators (``registry.GENERATORS``): ``answers`` sits above ``model`` in the layering,
so the model never imports it, and the data here (a package name and the file list) is all it knows."""


@functools.cache
def answer_type(name: str):
    """The ``TYPE`` object of the answer type ``name`` (imported on first use); KeyError when there is none."""
    if name not in ANSWER_TYPES:
        raise KeyError(f"unknown answer type {name!r}; expected one of {ANSWER_TYPES}")
    return importlib.import_module(f"{ANSWER_TYPE_PACKAGE}.{name}").TYPE
