"""The overrides a generator offers, discovered by watching it draw (never listed twice).

Every generator validates its keyword overrides through one helper (``problems._common.override``),
which reports each (name, allowed values, value used) here. Watching a few draws therefore tells
``problemgen list --json`` every override of a kind with its allowed values, and tells a class set which
values one draw chose, so they can be pinned for every student (fair variants).
"""

from __future__ import annotations

import re

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from problemgen.model.core import ProblemgenError


class OverrideValueError(ProblemgenError):
    """An override value a kind refuses; ``name`` says which, so a bank's message can point at its line."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name

    def __reduce__(self):  # a class set's worker processes send errors back pickled
        return type(self), (str(self), self.name)


MAX_LISTED = 24
"""Allowed sets larger than this are described by their range instead of listed."""


@dataclass
class Watch:
    """What the draws under :func:`watching` asked for: every override's allowed values, and the values
    chosen by the attempt that succeeded."""

    allowed: dict = field(default_factory=dict)
    attempt: dict = field(default_factory=dict)
    chosen: dict = field(default_factory=dict)


_WATCH: ContextVar[Watch | None] = ContextVar("problemgen_override_watch", default=None)


def note(name: str, allowed, value) -> None:
    """Called by the override helper for every override it resolves (cheap when nobody watches)."""
    watch = _WATCH.get()
    if watch is not None:
        watch.allowed[name] = merge_allowed(watch.allowed.get(name), describe_allowed(allowed))
        watch.attempt[name] = value


def new_attempt() -> None:
    """A fresh draw starts (the generator may redraw several times)."""
    watch = _WATCH.get()
    if watch is not None:
        watch.attempt = {}


def attempt_succeeded() -> None:
    """The current draw is the one kept: its values are the chosen ones."""
    watch = _WATCH.get()
    if watch is not None:
        watch.chosen = dict(watch.attempt)


@contextmanager
def watching():
    """Collect override notes from the draws made inside the block."""
    token = _WATCH.set(Watch())
    try:
        yield _WATCH.get()
    finally:
        _WATCH.reset(token)


def merge_allowed(seen: list | str | None, new: list | str) -> list | str:
    """Allowed values gathered over several draws (each difficulty may allow others): lists are united in
    first-seen order; a range description, once seen, stands."""
    if seen is None:
        return new
    if isinstance(seen, list) and isinstance(new, list) and "…" not in seen:
        return seen + [v for v in new if v not in seen]
    return seen


def describe_allowed(allowed) -> list | str:
    """A JSON-ready description: the list of values, or ``"2..8"`` for a range, or a summary."""
    if isinstance(allowed, range) and len(allowed) > MAX_LISTED:
        return f"{allowed.start}..{allowed.stop - 1}" + (f" step {allowed.step}" if allowed.step != 1 else "")
    values = list(allowed)
    if len(values) <= MAX_LISTED:
        return [v if isinstance(v, (int, float, str, bool)) else str(v) for v in values]
    if all(isinstance(v, int) for v in values):
        return f"{min(values)}..{max(values)} ({len(values)} values)"
    return [str(v) for v in values[:MAX_LISTED]] + ["…"]


def parse_settings(settings: tuple[str, ...] | list[str]) -> dict:
    """``["L=5", "representation=additive"]`` -> ``{"L": 5, "representation": "additive"}``: integers,
    decimals and true/false are read as such, anything else stays text (the generator validates it)."""
    result = {}
    for setting in settings:
        name, sep, text = setting.partition("=")
        if not sep or not name.strip().isidentifier():
            raise ProblemgenError(f"--set {setting!r}: expected NAME=VALUE, e.g. --set L=4")
        result[name.strip()] = _value(text.strip())
    return result


def _value(text: str):
    """True/false, an integer written as Python prints it, a decimal with a point or an exponent, else
    the text itself: ``01`` (the 0/1 mask form) stays text rather than the number 1, as do ``+3`` and
    ``1_000``."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        return int(text)
    if re.fullmatch(r"-?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?|-?[0-9]+\.", text) and not text.lstrip("-").isdigit():
        return float(text)
    return text
