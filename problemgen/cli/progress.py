"""The progress bar of the class commands (``grade`` and ``grade-code`` on a directory).

One place decides when a bar is drawn, so both commands behave alike: on stderr when it is a terminal,
never in a CI log unless asked for (``--progress``), and never on stdout, which carries the summary.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

PROGRESS_OPTION = click.option("--progress/--no-progress", default=None,
                               help="Progress bar on stderr (default: when it is a terminal).")


@contextmanager
def class_progress(wanted: bool | None) -> Iterator[Callable[[int, int], None]]:
    """A ``progress(done, total)`` callback for a class run, drawn as click's bar when ``wanted`` (None:
    when stderr is a terminal) and swallowed otherwise; the bar is closed when the block ends."""
    show = sys.stderr.isatty() if wanted is None else wanted
    with click.progressbar(length=1, label="grading", file=sys.stderr if show else _Null()) as bar:
        yield _advance(bar)


def _advance(bar) -> Callable[[int, int], None]:
    def update(done: int, total: int) -> None:
        bar.length = total
        bar.update(done - bar.pos)

    return update


class _Null:
    """A sink for the progress bar when it is switched off."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
