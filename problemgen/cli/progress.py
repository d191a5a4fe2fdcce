"""The progress shown by the long commands (``grade`` and ``grade-code`` on a class, ``worksheet --roster``).

One place decides how progress is shown, so every command behaves alike: a bar on stderr when it is a
terminal; nothing in a log unless asked for (``--progress``), and then one plain line per tenth of the
work, which a CI log keeps readable (a bar redrawn with carriage returns is not); never on stdout, which
carries the command's result.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click

PROGRESS_OPTION = click.option("--progress/--no-progress", default=None,
                               help="Progress on stderr (default: a bar when it is a terminal; "
                                    "--progress in a log writes a line per tenth).")

Progress = Callable[[int, int], None]
"""``progress(done, total)``, called as the work goes."""


@contextmanager
def class_progress(wanted: bool | None, label: str = "grading") -> Iterator[Progress]:
    """A progress callback: click's bar on a terminal, lines in a log when ``wanted`` is True, else nothing
    (``wanted`` None: a bar when stderr is a terminal)."""
    terminal = sys.stderr.isatty()
    if not (terminal if wanted is None else wanted):
        yield lambda done, total: None
    elif terminal:
        with click.progressbar(length=1, label=label, file=sys.stderr) as bar:
            yield _advance(bar)
    else:
        yield _log_lines(label)


def _advance(bar) -> Progress:
    def update(done: int, total: int) -> None:
        bar.length = total
        bar.update(done - bar.pos)

    return update


def _log_lines(label: str) -> Progress:
    """``label: done/total`` on stderr at each new tenth of the work and at its end."""
    shown = [-1]

    def update(done: int, total: int) -> None:
        tenth = 10 * done // max(total, 1)
        if tenth != shown[0] or done == total:
            shown[0] = tenth
            sys.stderr.write(f"{label}: {done}/{total}\n")
            sys.stderr.flush()

    return update
