"""Writing an output whole or not at all: the one way problemgen puts a file in place.

A run may fail while it writes: the disk fills up, a file-size limit or a quota is reached, the folder is
made read-only or removed. Written in place (open with truncation, then write), the file it replaces is
gone at the first byte, and what stays is a truncated gradebook, key, manifest or export zip, which a
later command reads as if it were whole. So every output is first written to a temporary file in the same
folder and then renamed over the final name (``os.replace``, atomic on one file system): a failure
before the rename leaves the earlier file as it was, and the temporary file is removed.

A group of files that only make sense together (a worksheet and its key and variant, an export and its
preview, a gradebook and its summaries) is :class:`Staged`: every file is written to its temporary first,
and only then are they all renamed, so a full disk leaves the earlier group whole.

Temporary names are hidden and end in ``.partial`` (``.gradebook.csv.1a2b3c4d.partial``): no output
pattern of problemgen matches them (``*.json``, ``handouts/*/worksheet.md``), so a file left behind by a
killed run is never graded or taken for an output; the next run that holds the folder removes those of
its own names (:func:`problemgen.outputs.remove_leftovers`), so none is shipped with an export folder. A replaced file keeps the permissions of the
one it replaces (a key made private stays private); a new one gets the umask's, never writable by group or
others (``umask 000`` in a container). ``durable`` files are
flushed to the disk (``fsync``) before the rename: the few files that say a run finished or that are
handed on (a manifest, a gradebook, an export). A class set's many per-student files are not: that would
cost more than generating them, and the manifest, written last and flushed, is what says the set is whole.
"""

from __future__ import annotations

import errno
import io
import os
import re
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

from problemgen.errors import ProblemgenError, WriteFailed

_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
GROUP_OTHER_WRITE = stat.S_IWGRP | stat.S_IWOTH
"""The bits no new output gets, whatever the umask (see :func:`_set_mode`)."""
_MAX_NAME = 200
"""Characters of the final name kept in the temporary one (a name of 255 bytes must still get a temporary)."""
_TOKEN_HEX = 8
_TEMPORARY = re.compile(rf"\.(.+)\.[0-9a-f]{{{_TOKEN_HEX}}}\.partial", re.DOTALL)


def final_name(name: str) -> str | None:
    """The final name a temporary of this module stands for (``.key.toml.1a2b3c4d.partial`` -> ``key.toml``),
    or None for any other name: how a later run knows the unfinished files a killed one left."""
    match = _TEMPORARY.fullmatch(name)
    return match[1] if match else None


def reason(exc: OSError, path: str | Path) -> str:
    """Why writing ``path`` failed, in words: the system's (``No space left on device``, ``Disk quota
    exceeded``, ``File too large``), or that its folder is gone."""
    folder = os.path.dirname(os.fspath(path)) or "."
    if exc.errno == errno.ENOENT and not os.path.isdir(folder):
        return f"the folder {folder} is gone"
    return exc.strerror or str(exc)


def out_of_room(exc: OSError) -> bool:
    """A write refused for want of room or of a writable disk (full, quota, file-size limit, read-only file
    system): the run's failure (exit 4), where a path that is a file or a folder the user may not write is
    the user's input (exit 2)."""
    return exc.errno in {errno.ENOSPC, errno.EFBIG, errno.EROFS, getattr(errno, "EDQUOT", errno.ENOSPC)}


class Staged:
    """Files written to temporaries in their own folders, then put in place together by :meth:`commit`.

    Use it as a context manager: leaving the block without a commit (an error) removes every temporary,
    and the final names keep what they held before. Errors are :class:`WriteFailed` (one line naming the
    file), or ProblemgenError for a final name that is a symbolic link (never written through)."""

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable
        self._pending: list[tuple[str, str]] = []  # (temporary, final)

    def __enter__(self) -> "Staged":
        return self

    def __exit__(self, *exc) -> None:
        self.discard()

    def add(self, path: str | Path, data: bytes | str, *, mode: int | None = None,
            new_mode: int | None = None) -> None:
        """Stage ``data`` (text is written as UTF-8) for ``path`` (``mode``, ``new_mode``: see :meth:`open`).

        The bytes go straight to the temporary's descriptor, with no stream around it: a class set stages
        five small files per student, and a buffered stream and its context manager for each cost about as
        much as the write itself."""
        final = os.fspath(path)
        status = _own_status(final)
        temp, descriptor = _create_temporary(final)
        try:
            try:
                _set_mode(descriptor, status, mode, new_mode)
                _write_all(descriptor, data.encode("utf-8") if isinstance(data, str) else data)
                if self.durable:
                    os.fsync(descriptor)
            finally:
                os.close(descriptor)
        except OSError as exc:  # the write, the fsync or the close (where NFS reports a quota)
            raise _failed(temp, final, exc) from None
        except BaseException:
            _remove(temp)
            raise
        self._pending.append((temp, final))

    @contextmanager
    def open(self, path: str | Path, *, text: bool = False, mode: int | None = None,
             new_mode: int | None = None) -> Iterator[IO]:
        """A stream onto the temporary of ``path`` (binary, or UTF-8 text with ``text``) for content written
        piece by piece (a gradebook row by row, a zip); staged when the block ends without an error.
        ``mode``: the file's permissions; by default those of the file replaced, else ``new_mode``, else the
        umask's less group and other write (:func:`_set_mode`)."""
        final = os.fspath(path)
        status = _own_status(final)
        temp, descriptor = _create_temporary(final)
        try:
            with open(descriptor, "wb", closefd=True) as raw:
                _set_mode(raw.fileno(), status, mode, new_mode)
                stream = io.TextIOWrapper(raw, "utf-8", "backslashreplace", newline="") if text else raw
                yield stream
                stream.flush()
                if self.durable:
                    os.fsync(raw.fileno())
                if text:
                    stream.detach()
        except OSError as exc:  # the write, the flush, the fsync or the close (where NFS reports a quota)
            raise _failed(temp, final, exc) from None
        except BaseException:
            _remove(temp)
            raise
        self._pending.append((temp, final))

    def commit(self) -> list[str]:
        """Rename every staged temporary over its final name; returns the final paths."""
        done = []
        try:
            for temp, final in self._pending:
                try:
                    os.replace(temp, final)
                except OSError as exc:
                    raise WriteFailed(f"cannot write {final} ({reason(exc, final)})") from None
                done.append(final)
        finally:
            self._pending = self._pending[len(done):]
            self.discard()
        if self.durable:
            for folder in sorted({os.path.dirname(path) or "." for path in done}):
                _sync_folder(folder)
        return done

    def discard(self) -> None:
        """Remove the temporaries not yet committed."""
        for temp, _ in self._pending:
            _remove(temp)
        self._pending = []


def write_file(path: str | Path, data: bytes | str, *, durable: bool = False, mode: int | None = None) -> None:
    """Write one file whole or not at all (see the module's notes)."""
    with Staged(durable=durable) as staged:
        staged.add(path, data, mode=mode)
        staged.commit()


@contextmanager
def replacing(path: str | Path, *, text: bool = True, durable: bool = False) -> Iterator[IO]:
    """A stream whose content replaces ``path`` when the block ends without an error (see :meth:`Staged.open`)."""
    with Staged(durable=durable) as staged:
        with staged.open(path, text=text) as stream:
            yield stream
        staged.commit()


def _failed(temp: str, final: str, exc: OSError) -> WriteFailed:
    """A write of ``final`` that failed: its temporary removed, the error as one line naming the file."""
    _remove(temp)
    return WriteFailed(f"cannot write {final} ({reason(exc, final)})")


def _create_temporary(final: str) -> tuple[str, int]:
    folder, name = os.path.split(final)
    for _ in range(100):
        temp = os.path.join(folder, f".{name[:_MAX_NAME]}.{secrets.token_hex(_TOKEN_HEX // 2)}.partial")
        try:
            return temp, os.open(temp, _FLAGS, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            raise WriteFailed(f"cannot write {final} ({reason(exc, final)})") from None
    raise WriteFailed(f"cannot write {final} (no free temporary name beside it)")


def _own_status(final: str) -> os.stat_result | None:
    """The status of the file ``final`` names (not followed; None when there is none, or it cannot be
    looked at), refusing a symbolic link: it is never written through. One look serves both the refusal
    and the permissions the replacement keeps (:func:`_set_mode`)."""
    try:
        status = os.stat(final, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    if stat.S_ISLNK(status.st_mode):
        raise ProblemgenError(f"refusing to write {final}: it is a symbolic link")
    return status


def _set_mode(descriptor: int, status: os.stat_result | None, mode: int | None, new_mode: int | None = None) -> None:
    """Give the temporary ``mode``, or the permissions of the regular file it will replace (``status``, from
    :func:`_own_status`), or ``new_mode`` where there is none, else the umask's less any write bit for group
    or others.

    Why that last part: containers often run with ``umask 000``, which made every new gradebook, report,
    export and starter file writable by anyone on the host (a gradebook changed before it is uploaded is
    a grade changed). Who may read a new file is still the umask's to say."""
    if mode is None:
        if status is not None and stat.S_ISREG(status.st_mode):
            mode = stat.S_IMODE(status.st_mode)
        elif new_mode is not None:
            mode = new_mode
        else:
            created = stat.S_IMODE(os.fstat(descriptor).st_mode)  # 0o666 less the umask
            if not created & GROUP_OTHER_WRITE:
                return
            mode = created & ~GROUP_OTHER_WRITE
    os.fchmod(descriptor, mode) if hasattr(os, "fchmod") else None


def _write_all(descriptor: int, data: bytes) -> None:
    """Write every byte of ``data``: ``os.write`` may take fewer than it is given."""
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        if not written:  # a regular file takes at least one byte or fails; never loop on nothing
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _sync_folder(folder: str) -> None:
    """Flush a folder's entries (the renames) where the system allows it; some file systems refuse."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
