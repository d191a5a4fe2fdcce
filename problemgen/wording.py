"""How messages count, list and correct names: one wording for every command.

Pieces written apart each counted their own way, so one run could say "1 student worksheet", "2
student(s)" and "3 students", or end a list with "…" in one line and "and 3 more" in the next; and two
did-you-mean helpers could disagree on what is close. Here: :func:`counted` ("1 file", "5 files"),
:func:`listed` (the first few names, then how many more), :func:`closest` and :func:`suggest` (the
closest name, or nothing).

Standard library only, so any layer may use it.
"""

from __future__ import annotations

from collections.abc import Sequence

LISTED = 5
"""Names a message shows before it says how many more there are."""


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """``1 file``, ``0 files``, ``12 files`` (``plural``: for a noun not made plural by an ``s``)."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def listed(names: Sequence[str], most: int = LISTED) -> str:
    """The first ``most`` of ``names`` joined by commas, then ``and N more`` for the rest."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")



def closest(word: str, choices: Sequence[str]) -> str | None:
    """The choice closest to ``word`` (a misspelling of it), or None when none is close enough."""
    import difflib  # only when a name is wrong: listing and showing stay fast

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def suggest(word: str, choices: Sequence[str]) -> str:
    """`` — did you mean 'x'?`` for the closest choice, to end a message with; "" when nothing is close."""
    near = closest(word, choices)
    return f" — did you mean {near!r}?" if near is not None else ""
