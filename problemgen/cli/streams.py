"""The standard streams as CI runners, cron jobs and containers hand them to the command.

Why a module of its own: every command writes through ``sys.stdout``/``sys.stderr``, and what a process
is given there varies far more than on a laptop. Three cases used to end in a traceback, or worse:

* a closed stream (``>&-``, ``2>&-``, a daemon with no descriptors): Python leaves ``sys.stdout`` or
  ``sys.stderr`` as None, and the first progress line or message raised ``AttributeError``: a class run
  with stderr closed wrote nothing at all. A closed stream now discards what is written to it, as
  click's ``echo`` already did for stdout.
* an encoding that cannot show the maths (``PYTHONIOENCODING=latin-1``, cp1252): ``√``, ``≤`` or ``ₖ``
  raised ``UnicodeEncodeError``. Such a stream now spells what it cannot write in ASCII (``sqrt(d_k)``,
  ``<=``), as the quiz does. click writes UTF-8 to a stream that claims plain ASCII, so ``ascii`` itself
  is left to it. Files are never affected: every file is written as UTF-8 whatever the locale.
* a reader that went away (``problemgen grade ... | head -1``): the next write raised
  ``BrokenPipeError``. The command now stops quietly with exit code 141, as a shell reports a command
  ended by SIGPIPE; SIGPIPE itself stays ignored, since a socket or a sandbox pipe closing must not kill
  the server or the grader.

Only ``os`` and ``sys`` are imported here: this runs before the fast ``--help``/``list`` path.
"""

from __future__ import annotations

import os
import sys

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell shows for a writer whose reader went away
_MATHS_SAMPLE = "√dₖ ≤ × ✓"
_SPELL_ERRORS = "problemgen-spell"


class ReaderGone(Exception):
    """A ``BrokenPipeError`` carried past click, which would turn it into exit code 1 (not an OSError)."""


def prepare() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` safe to write to, whatever the process was given."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - open for the whole run
        elif not _can_write(stream, _MATHS_SAMPLE) and _can_write(stream, "x") and hasattr(stream, "reconfigure"):
            _register_spelling()
            stream.reconfigure(errors=_SPELL_ERRORS)


def _can_write(stream, text: str) -> bool:
    try:
        text.encode(stream.encoding or "ascii")
    except (UnicodeEncodeError, LookupError, TypeError):
        return False
    return True


def _register_spelling() -> None:
    """An encoding error handler that writes each unencodable character in ASCII (never raises)."""
    import codecs

    from problemgen.documents.terminal import spell_from  # lazy: only a narrow encoding needs it

    def spell(error: UnicodeEncodeError) -> tuple[str, int]:
        return spell_from(error.object, error.start, error.end, error.encoding)

    codecs.register_error(_SPELL_ERRORS, spell)


def stdout_is_broken() -> bool:
    """True when stdout's reader has gone (a pipe whose read end is closed), so output can never arrive."""
    import select

    try:
        poller = select.poll()
        poller.register(1, 0)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def quit_broken_pipe() -> int:
    """Silence the buffered output the interpreter would try to flush at exit; the exit code to use."""
    _silence_stdout()
    return EXIT_BROKEN_PIPE


def stdout_full(exc: OSError) -> bool:
    """Whether ``exc`` is standard output refused for want of room or of a writable disk (``> file`` on a
    full disk or over a quota, ``> /dev/full``; the errors :func:`~problemgen.safewrite.out_of_room` names
    for every output): the run's failure, said in one line, never the interpreter's traceback.

    Only a standard output that can be full is taken for the culprit: a file or a device, never a pipe or
    a terminal. The error itself carries no name, so a full staging folder (``/dev/shm``) under a command
    piped into ``less`` was reported as a standard output cut short."""
    import stat

    from problemgen.safewrite import out_of_room  # here, on failure only: the fast --help path stays light

    if not out_of_room(exc):
        return False
    try:
        descriptor = sys.stdout.fileno()
        mode = os.fstat(descriptor).st_mode
        return (stat.S_ISREG(mode) or stat.S_ISCHR(mode)) and not os.isatty(descriptor)
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both: a stream with no file
        return False


def quit_stdout_full(exc: OSError) -> int:
    """Say in one line that the output was cut short, silence what is still buffered (the interpreter would
    try again at exit and print its own message), and return the exit code of a failed write (4)."""
    from problemgen.cli import EXIT_WRITE

    _silence_stdout()
    sys.stderr.write(f"error: cannot write the standard output ({exc.strerror}); what it shows is incomplete\n")
    return EXIT_WRITE


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
