"""The one catalogue of named mistakes, as sheets and coding tasks use it.

A misconception is written once: its tag, title and hint in :mod:`~problemgen.misconceptions.entries`,
and the buggy computation that produces its value in the topic module beside it (``attention``,
``multihead``, ``norms``, ``layers``, ``masks``, ``positional``). Sheet generators wrap a value as
``mistake(tag, value)`` (a :class:`~problemgen.model.core.Mistake`); coding tasks as
``Variant(tag, value)``. Both are named by the same tag, so feedback can say "your answer equals
attention without the 1/√d_k scaling" instead of just "wrong".

This module imports no numpy: reports and the quiz import it to describe tags.
"""

from __future__ import annotations

from typing import Any, Callable

from problemgen.misconceptions.entries import CATALOGUE, DEFAULT_HINTS, Misconception, describe, title_and_hint, titled
from problemgen.model.core import Mistake

__all__ = ["CATALOGUE", "DEFAULT_HINTS", "Misconception", "describe", "known", "mistake", "safely", "title_and_hint",
           "titled"]


def known(tag: str) -> bool:
    return tag in CATALOGUE


def mistake(tag: str, value, hint: str | None = None) -> Mistake:
    """A Mistake for this variant, with the catalogue hint unless a more specific one is given."""
    return Mistake(name=tag, value=value, hint=hint or DEFAULT_HINTS[tag])


def safely(makers: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Evaluate buggy computations by tag, dropping those that do not apply (shape errors and the like).

    A buggy computation may not make sense for an input (heads split on a width that does not divide):
    the mistake then simply cannot be made there. Floating-point warnings are the bug's own business.
    """
    import numpy as np

    out = {}
    for tag, make in makers.items():
        try:
            with np.errstate(all="ignore"):
                out[tag] = make()
        except (ValueError, IndexError, TypeError, ZeroDivisionError):
            continue
    return out
