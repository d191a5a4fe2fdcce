"""What a coding task is made of: a spec, a starter, test cases with expected values, properties.

A task draws its hidden cases from a ``numpy.random.Generator`` seeded by the grader's secret, so
the expected values and every buggy variant's output exist only in the grader process. Cases are
plain data; :mod:`problemgen.code.compare` turns a returned value into OK / WRONG / BAD_OUTPUT.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from problemgen.code.sandbox import Call
from problemgen.model.streams import stream

DEFAULT_RTOL, DEFAULT_ATOL = 1e-5, 1e-6


@dataclass(frozen=True)
class Variant:
    """The output a named misconception produces for one case's inputs.

    ``atol`` (when set) replaces the case's tolerance for recognising it: a float32 implementation is
    right to float32 precision only, and two float32 implementations differ from each other by more
    than the float64 tolerance, so it is recognised as "close, to float32 precision".
    """

    tag: str
    value: Any
    atol: float | None = None


@dataclass(frozen=True)
class Case:
    """One call of a required function with inputs the child sees and an expectation it never sees.

    ``parts`` names the items of a tuple result (``("output", "weights")``); a single result has one
    part. ``stages`` gives each part's pipeline stage, so a multi-stage task can name the first
    stage that diverges for one input (``input_id`` groups the cases built from that input).
    """

    name: str
    group: str  # "public" or "hidden"
    call: Call
    expected: Any
    about: str  # what the inputs look like (shapes, mask kind); safe to show
    parts: tuple[str, ...] = ("output",)
    stages: tuple[str, ...] = ()
    input_id: str = ""
    variants: tuple[Variant, ...] = ()
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    weight: float = 1.0

    @property
    def public(self) -> bool:
        return self.group == "public"


@dataclass(frozen=True)
class Property:
    """A law the submission's outputs must obey, checked from its own outputs (no expected value).

    ``check`` receives the decoded results of ``calls`` (in order) and returns a failure message or
    "" when the law holds; it must not trust the shape or type of what it receives.
    """

    name: str
    calls: tuple[Call, ...]
    check: Callable[[list[Any]], str]
    about: str
    weight: float = 1.0


@dataclass(frozen=True)
class BannedRule:
    """A shortcut that defeats the exercise, found statically in the source.

    ``names`` are dotted names as written or imported (``scipy.special.softmax``, ``torch``); a
    module prefix bans everything under it.
    """

    names: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Task:
    name: str
    title: str
    summary: str
    spec: str  # Markdown: signature, shapes, conventions, tolerance
    starter: str  # Python source handed to students
    functions: tuple[str, ...]  # every function the spec requires
    make_cases: Callable[[np.random.Generator, bool], list[Case]]  # (rng, hidden) -> cases
    make_properties: Callable[[np.random.Generator], list[Property]] = lambda rng: []
    banned: tuple[BannedRule, ...] = ()
    stage_order: tuple[str, ...] = ()
    topic: str = ""
    extra: dict = field(default_factory=dict)
    # Runs one call with the task's reference-quality solution, in the grader (set by the registry);
    # tells the grader the form (shapes, dtypes) a property's outputs must have before a law is checked.
    solve: Callable[[Call], Any] | None = None

    def public_cases(self) -> list[Case]:
        """Public examples: fixed, the same for everyone, shown by ``problemgen task show``."""
        return self.make_cases(stream(PUBLIC_SEED), False)

    def hidden_cases(self, rng: np.random.Generator) -> list[Case]:
        return self.make_cases(rng, True)


PUBLIC_SEED = 20240611


def fmt_shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"
