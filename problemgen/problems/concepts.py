"""Conceptual questions: multiple choice and short answers drawn from ``question_banks/concepts.toml``.

The bank holds the questions as data (prompt, options, a why-explanation for every option, and the
misconception a tempting wrong option stands for), so instructors can add questions without touching
code. The seed picks a question of the requested difficulty and shuffles its options; a bank id given
as the ``question`` override pins the question (the options are still shuffled by the seed).

This module also provides :func:`choice_part`, the one way every generator builds a multiple-choice
answer: options shuffled deterministically by the variant's rng, ids ``a``, ``b``, … in display order,
and each tagged wrong option turned into a named :class:`~problemgen.core.Mistake`.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from problemgen.core import AnswerPart, Draft, ProblemgenError
from problemgen.misconceptions import CATALOGUE, mistake
from problemgen.registry import register

OPTION_IDS = "abcdefgh"
BANK_FILE = "concepts.toml"
TOPICS = (
    "attention", "scaling", "masks", "multihead", "shapes", "params", "memory", "complexity",
    "norms", "ffn", "positional", "objective", "architecture", "training",
)
"""Topics a bank question may name (the product's topics plus model families and training vs inference)."""


@dataclass(frozen=True)
class Option:
    """One answer option: its text, why it is right or wrong, and the misconception it stands for."""

    text: str
    why: str
    correct: bool = False
    misconception: str | None = None


def choice_part(
    rng: np.random.Generator,
    options: Sequence[Option],
    *,
    key: str = "choice",
    label: str = "your choice",
    multiple: bool = False,
) -> AnswerPart:
    """A ``choice`` answer with the options in a seed-determined order.

    Wrong options that carry a misconception tag become Mistakes whose value is that option's id, so
    the grader can name the misconception when a student picks it.
    """
    if not any(o.correct for o in options):
        raise ValueError("a choice question needs at least one correct option")
    if not multiple and sum(o.correct for o in options) != 1:
        raise ValueError("a single-answer choice question needs exactly one correct option")
    order = rng.permutation(len(options))
    shown = [options[i] for i in order]
    ids = OPTION_IDS[: len(shown)]
    spec_options = [{"id": i, "text": o.text, "why": o.why} for i, o in zip(ids, shown)]
    correct = sorted(i for i, o in zip(ids, shown) if o.correct)
    mistakes = tuple(
        mistake(o.misconception, [i]) for i, o in zip(ids, shown) if o.misconception and not o.correct
    )
    return AnswerPart(
        key=key,
        type="choice",
        value=correct,
        label=label,
        spec={"options": spec_options, "multiple": multiple},
        mistakes=mistakes,
    )


def option_texts(part: AnswerPart) -> list[str]:
    """The option texts in display order: part of what the student sees, so part of the params."""
    return [o["text"] for o in part.spec["options"]]
