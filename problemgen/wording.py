"""How messages count and list things: one wording for every command.

Pieces written apart each counted their own way, so one run could say "1 student worksheet", "2
student(s)" and "3 students", or end a list with "…" in one line and "and 3 more" in the next. Here:
:func:`counted` ("1 file", "5 files") and :func:`listed` (the first few names, then how many more).

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

