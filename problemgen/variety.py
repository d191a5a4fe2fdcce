"""Variety: how many different answer keys a kind gives, so a student cannot learn the answers by heart.

Measured over ``SEEDS`` seeds at ``DIFFICULTY`` (the kind's nearest offered difficulty when it has no
level 2). A key is every part's name with its key value, so asking about a different tensor counts as
a different key even when the shape written is the same. Thresholds by the kind of answer:

- numeric (a number, an integer, a matrix or a mask in any part): at least ``NUMERIC_MIN`` keys;
- a kind whose answer space is inherently small says why in its generator's docstring, in a paragraph
  starting with ``SMALL_MARK`` (e.g. a causal mask is fixed by its length), and needs ``SMALL_MIN``;
- shapes (symbolic, so the numbers do not change the key): at least ``SHAPE_MIN``;
- choices and terms (a handful of options or terms by nature): at least ``CHOICE_MIN``.

``problemgen check`` prints the count of every kind and fails when one is below its threshold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from problemgen.model import registry
from problemgen.sheets.answersheet import key_value
from problemgen.wording import counted

SEEDS = 100
DIFFICULTY = 2
NUMERIC_MIN, SMALL_MIN, SHAPE_MIN, CHOICE_MIN = 30, 10, 5, 5
SMALL_MARK = "Small answer space:"
_NUMERIC = {"number", "integer", "matrix", "mask"}


@dataclass(frozen=True)
class Variety:
    """The measured variety of one kind and the threshold it must reach."""

    kind: str
    distinct: int
    needed: int
    category: str
    difficulty: int
    seeds: int

    @property
    def ok(self) -> bool:
        return self.distinct >= self.needed

    def __str__(self) -> str:
        return (f"{self.kind}: {self.distinct} distinct keys in {self.seeds} seeds at d{self.difficulty} "
                f"({self.category}, needs {self.needed})")


def answer_key(problem) -> str:
    """One variant's key as text: every part's name with its key value."""
    return json.dumps([[part.key, key_value(part)] for part in problem.parts], sort_keys=True, default=str)


def category(problem, docstring: str) -> tuple[str, int]:
    """The answer category of a variant and its threshold (see the module docstring)."""
    types = {part.type for part in problem.parts}
    if types & _NUMERIC:
        return ("numeric (small answer space)", SMALL_MIN) if SMALL_MARK in docstring else ("numeric", NUMERIC_MIN)
    if "shape" in types:
        return "shape", SHAPE_MIN
    return "choice", CHOICE_MIN


def measure(kind: str, seeds: int = SEEDS) -> Variety:
    """Generate ``seeds`` variants of ``kind`` and count their distinct answer keys."""
    spec = registry.get_kind(kind)
    difficulty = min(spec.difficulties, key=lambda d: (abs(d - DIFFICULTY), d))
    problems = [registry.generate(kind, seed, difficulty) for seed in range(seeds)]
    name, needed = category(problems[0], spec.make.__doc__ or "")
    return Variety(kind, len({answer_key(p) for p in problems}), needed, name, difficulty, seeds)


def report(measured: list[Variety]) -> str:
    """The per-kind counts, one line each, then how many kinds fell below their threshold."""
    lines = [("ok    " if v.ok else "FAIL  ") + str(v) for v in measured]
    below = sum(not v.ok for v in measured)
    lines.append(f"variety: {below} of {counted(len(measured), 'kind')} below the threshold")
    return "\n".join(lines)
