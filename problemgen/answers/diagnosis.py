"""Which listed mistake a wrong numeric answer shows, if any: the grader's diagnosis of numbers and matrices.

A wrong diagnosis is worse than none: it tells a student they made a mistake they did not make, and the
class summary counts them under it. A tolerance is how far an honest answer may stray from the value it
stands for, so an answer within tolerance of a mistake's value could be that mistake; it is named only
when the answer is evidence of it rather than of something else:

- **Not the key too coarsely rounded.** An answer whose every entry is the key's, or the key's rounded or
  cut to 1–3 decimals or 2–3 significant figures, shows too few decimals, not a misconception, unless it
  is exactly a mistake's value: a sinusoidal value 0.995 given as 1.0 lies within ±0.0005 of the value
  with positions counted from 1 (0.9996), but says nothing about how positions were counted, while 1.0 GB
  for 1.074 GB is exactly 1 GiB read as GB, and 0, 2 for GELU's -0.0455, 1.9545 exactly ReLU's values.
  Rounding to whole numbers is not counted: GELU's values written 0, 1, 3 are ReLU's (0.8413 to one
  decimal is 0.8).
- **The nearest mistake, and nearer than the key.** Two listed mistakes may lie within two tolerances
  of each other (the registry redraws only those within one), so an answer may be within tolerance of
  both: the nearer is named, none on a tie. And none when the answer is at least as near the key. The
  distance counts each entry's deviation in tolerances at the value it is compared with, summed in
  squares over the entries.

Whole numbers, masks, shapes, choices and terms are compared exactly, so their matchers stay in their
types (:func:`problemgen.answers.base.wrong`).
"""

from __future__ import annotations

import math
from typing import Any

from problemgen.model.core import AnswerPart, Mistake, _flatten

DECIMALS = (1, 2, 3)
"""The decimals an answer may be rounded or cut to and still count as the key too coarsely written."""
SIGNIFICANT = (2, 3)
"""The same in significant figures (sizes in GB, ratios: parts whose tolerance is relative)."""
TIE = 1e-9
"""Distances closer than this (relative) are one distance: neither of two such mistakes is named."""
NOISE = 1e-9
"""Entries this close (relative, or absolute below 1) are equal: a value the answer gives exactly."""
EXACT = 0.0
"""The distance of an answer that gives a mistake's value exactly (see :func:`distance`)."""


def shown_mistake(part: AnswerPart, values: list[float], shape: tuple[int, ...]) -> Mistake | None:
    """The listed mistake the wrong answer ``values`` (flat entries, in ``shape``) shows, or None."""
    ranked = sorted(_matching(part, values, shape), key=lambda pair: pair[0])
    if not ranked:
        return None
    key_shape, key_flat = part.layout
    same_shape = shape == key_shape
    if ranked[0][0] > EXACT and same_shape and key_coarsely_written(values, key_flat, part.rtol, part.atol):
        return None  # the key too coarsely written, and no mistake's value exactly
    (nearest, mistake), rest = ranked[0], ranked[1:]
    if same_shape and nearest >= distance(values, key_flat, part.rtol, part.atol):
        return None
    if rest and rest[0][1].name != mistake.name and rest[0][0] - nearest <= TIE * max(1.0, nearest):
        return None
    return mistake


def _matching(part: AnswerPart, values: list[float], shape: tuple[int, ...]) -> list[tuple[float, Mistake]]:
    """(distance, mistake) for every listed mistake of the answer's shape that the answer is within tolerance
    of (or equal to, where the tolerance is zero)."""
    found, rtol, atol = [], part.rtol, part.atol
    for mistake in part.mistakes:
        try:
            mistake_shape, flat = _flatten(mistake.value)
            if mistake_shape == shape and all(abs(float(v) - float(m)) <= atol + rtol * abs(float(m))
                                              for v, m in zip(values, flat)):
                found.append((distance(values, flat, rtol, atol, exact=True), mistake))
        except (ValueError, TypeError, ArithmeticError):  # a malformed value in an old variant file names nothing
            continue
    return found


def distance(values: list[float], references: list[Any], rtol: float, atol: float, *, exact: bool = False) -> float:
    """How far ``values`` are from ``references``: each entry's deviation in tolerances at its reference,
    root of the sum of squares (an entry that differs where the tolerance is zero is infinitely far). With
    ``exact``, 0 when every entry equals its reference up to float noise (:data:`EXACT`)."""
    if exact and all(abs(float(v) - float(r)) <= NOISE * max(1.0, abs(float(r))) for v, r in zip(values, references)):
        return 0.0
    total = 0.0
    for value, reference in zip(values, references):
        deviation = abs(float(value) - float(reference))
        allowed = atol + rtol * abs(float(reference))
        if allowed > 0:
            total += (deviation / allowed) ** 2
        elif deviation:
            return math.inf
    return math.sqrt(total)


def key_coarsely_written(values: list[float], key: list[Any], rtol: float, atol: float) -> bool:
    """Whether every entry is the key's (within tolerance) or the key's rounded or cut to
    :data:`DECIMALS` decimals or :data:`SIGNIFICANT` significant figures (see the module doc)."""
    return all(abs(float(v) - float(k)) <= atol + rtol * abs(float(k)) or _coarse(float(v), float(k))
               for v, k in zip(values, key))


def _coarse(value: float, exact: float) -> bool:
    """Whether ``value`` is ``exact`` written with fewer digits, d of :data:`DECIMALS` decimals or the decimals
    that leave :data:`SIGNIFICANT` significant figures."""
    digits = list(DECIMALS)
    if exact:
        lead = math.floor(math.log10(abs(exact)))
        digits += [figures - 1 - lead for figures in SIGNIFICANT]
    return any(_written_with(value, exact, d) for d in digits)


def _written_with(value: float, exact: float, decimals: int) -> bool:
    """Whether ``value`` is ``exact`` rounded (half a unit of the last place either way) or cut (towards zero,
    less than a unit) to ``decimals`` decimals (a negative count leaves that many zeros before the point)."""
    scaled = value * 10.0**decimals
    if not math.isfinite(scaled) or abs(scaled - round(scaled)) > 1e-9 * max(1.0, abs(scaled)):
        return False  # more decimals than that
    unit, gap = 10.0**-decimals, abs(value - exact)
    rounded = gap <= unit / 2 * (1 + 1e-9)
    cut = gap < unit and abs(value) <= abs(exact) and value * exact >= 0
    return rounded or cut
