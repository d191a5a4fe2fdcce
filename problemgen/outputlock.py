"""One run at a time per folder: a class run holds the folder it writes, and the class set it reads, for as
long as it uses them.

Why: course hosts run several jobs at once (CI runners, a second run started before the first ended).
Two runs writing into one folder left a mix of both under one gradebook, and the second run's removal of
files "left by an earlier run" (:mod:`problemgen.outputs`) deleted the first run's fresh reports. Grading
a class set while ``worksheet --roster`` rewrote it read some students' old keys and others' new ones.

The rule: a command writing a folder holds an exclusive lock on it, one reading a class set a shared lock;
a run that cannot have its lock at once stops before doing anything, with one line naming the run in the
way (its process id and command line, where the system says). Nothing waits: the other run may take
hours, and a refusal the instructor sees beats a job that silently queues.

The lock is the kernel's ``flock`` on the folder itself, so it leaves no file behind, is shared by every
name of the folder (a link, ``./grades``), and goes with the process that held it, however it ended: a
killed run never leaves a stale lock. Where the system has no ``flock`` (Windows), or the file system
refuses it on a folder (some network file systems), runs are not kept apart.
"""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from problemgen.errors import ProblemgenError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

_BUSY = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)


class FolderBusy(ProblemgenError):
    """Another run holds the folder: the message names it and says what to do."""


@contextmanager
def holding(folder: str | Path, *, writing: bool) -> Iterator[None]:
    """Hold ``folder`` (which must exist) for the block: exclusively when ``writing``, else shared with other
    readers. FolderBusy at once when another run holds it the other way (or, writing, at all)."""
    fd = _open(Path(folder))
    try:
        if fd is not None:
            _lock(fd, Path(folder), writing)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing the last descriptor releases the lock


def _open(folder: Path) -> int | None:
    if fcntl is None:
        return None
    try:
        return os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None  # nothing to hold: the command says in its own words that the folder is missing
    except OSError as exc:
        raise ProblemgenError(f"{folder}: cannot open the folder ({exc.strerror})") from None


def _lock(fd: int, folder: Path, writing: bool) -> None:
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if writing else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno not in _BUSY:
            return  # a file system without flock on folders: nothing to hold
        status = os.fstat(fd)
        doing = "writing into" if _held_exclusively(status) else "reading"
        raise FolderBusy(f"{folder}: another problemgen run is {doing} this folder ({holder(status)}); "
                         "wait until it ends, or choose another folder") from None


def _lock_lines(status: os.stat_result) -> list[list[str]]:
    """The FLOCK lines of ``/proc/locks`` held on the file of ``status`` (Linux; empty elsewhere)."""
    wanted = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = [line.split() for line in handle]
    except OSError:
        return []
    return [f for f in lines if len(f) >= 6 and f[1] == "FLOCK" and f[5] == wanted]


def _held_exclusively(status: os.stat_result) -> bool:
    lines = _lock_lines(status)
    return not lines or any(f[3] == "WRITE" for f in lines)


def holder(status: os.stat_result) -> str:
    """Who holds the lock on the file of ``status``: ``pid N: <command line>``, or what is known."""
    for fields in _lock_lines(status):
        pid = fields[4]
        if pid.isdigit() and int(pid) > 0:
            return f"pid {pid}: {_command_line(int(pid))}"
    return "its process is not visible from here"


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().rstrip(b"\0").split(b"\0")
    except OSError:
        return "command line unknown"
    text = " ".join(w.decode("utf-8", "backslashreplace") for w in words)
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= 200 else text[:197] + "..."
