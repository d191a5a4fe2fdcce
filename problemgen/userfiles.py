"""Reading what users hand in: a file they named (a bank, a roster, a recipe), size-capped, every failure
one clear line; and Python syntax they wrote (an answer, a submission), parsed without a word on stderr
and read as Python would read it.

Such input comes from people who may err or cheat, so files are read whole into memory only up to a cap
(a huge or endless file must not exhaust the grader), only regular files are read (a named pipe with no
writer would block the run forever, ``/dev/zero`` never ends, a terminal waits for typing), and an
unreadable path is a ProblemgenError naming the file and what it was meant to be — never a traceback.
Every such file is read by :func:`read_regular`, the one place that opens one.
"""

from __future__ import annotations

import ast
import codecs
import errno
import io
import os
import re
import stat
import tokenize
import warnings
from pathlib import Path

from problemgen.errors import ProblemgenError

USER_SOURCE = "<untrusted>"
"""The file name the parser is given for text a user wrote, so its compiler warnings can be told apart."""
warnings.filterwarnings("ignore", category=SyntaxWarning, module=re.escape(USER_SOURCE) + r"\Z")
# Python's tokenizer warns on stderr about text such as ``1or 2`` ("invalid decimal literal") and parses on;
# a student's text must never write to the grader's output (the quiz's terminal, a CI log). The readers
# refuse or word those forms themselves, and a submission's sandboxed run shows the student the warning.


def syntax_tree(text: str, mode: str = "exec") -> ast.AST:
    """``ast.parse(text, mode=mode)`` for text a user wrote (SyntaxError when it is not Python); its
    compiler warnings stay silent (see :data:`USER_SOURCE`). Messages must name the user's file themselves."""
    return ast.parse(text, filename=USER_SOURCE, mode=mode)


def coding_problem(text: str) -> str | None:
    """Why Python would not run ``text``, saved as UTF-8, as this very text (one line); None when it would.

    A PEP 263 declaration on line 1 or 2 (``# coding: utf-7``) makes Python decode the file with that
    codec, while the grader's checks, the upload scan and a reviewer read the UTF-8 text. Under UTF-7
    ``+AAo-`` is a line break: a comment to them, a new line of code to Python, so code could run that
    no check saw. A declared codec is therefore let through only where it reads this file exactly as
    UTF-8 does (an ASCII file declared ``latin-1``, say); any other reading is refused, naming the codec.
    The declaration is found by the standard library's own reader of it (``tokenize.detect_encoding``).
    """
    data = text.encode("utf-8", "replace")  # a lone surrogate is no file's text: it must not hide a declaration
    try:  # a byte-order mark is looked past here; beside another codec's declaration it reads differently below
        declared, _ = tokenize.detect_encoding(io.BytesIO(data.removeprefix(codecs.BOM_UTF8)).readline)
    except SyntaxError as exc:  # an unknown codec: Python refuses the file too
        return f"declares a coding Python does not know ({exc.msg})"
    if codecs.lookup(declared).name in ("utf-8", "utf-8-sig"):
        return None
    try:
        same = data.decode(declared) == text
    except (UnicodeError, LookupError):  # LookupError: a codec that does not decode bytes (rot13)
        same = False
    return None if same else (f"declares coding {declared}: Python would decode it with that codec and run other "
                              "code than the UTF-8 text that is checked; save it as UTF-8 without the declaration")


SPECIAL_FILES = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                 (stat.S_ISBLK, "block device"))
"""The kinds of file that are neither regular files, directories nor links, as messages name them."""


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, for a message: ``a FIFO``, ``a directory``, ``a regular file``…"""
    for test, what in (*SPECIAL_FILES, (stat.S_ISDIR, "directory"), (stat.S_ISLNK, "symbolic link"),
                       (stat.S_ISREG, "regular file")):
        if test(mode):
            return f"a {what}"
    return "an unknown kind of file"


class Refused(ValueError):
    """A file :func:`read_regular` opened and refused; ``str()`` says why without naming it (callers do)."""


class TooLarge(Refused):
    """A regular file larger than the cap it was read with."""


class IsLink(Refused):
    """A symbolic link, where links are not followed."""


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: opening a FIFO that has no writer returns at once instead of waiting for one (a regular file
# reads the same with it). O_NOCTTY: a terminal named as a file never becomes this process's terminal.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_MORE = 1 << 16
"""Bytes asked for at a time once the size ``fstat`` gave is read (a file that grows while it is read)."""


def read_regular(path: str | Path, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    The file is opened without waiting (a FIFO with no writer, a terminal) and what was opened is checked
    with ``fstat`` on that descriptor, so a FIFO, socket, device or directory is refused even if it was put
    in the file's place after anyone looked; without ``follow_symlinks`` a symbolic link is refused
    (:class:`IsLink`) and never followed, with no look at the path before it is opened. At most ``limit + 1`` bytes are read, so a file that grows without end (or a huge
    sparse one) costs no more than the cap. Raises ``OSError`` when the file cannot be opened or read,
    :class:`TooLarge` beyond ``limit``, :class:`Refused` for anything that is not a regular file.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS if follow_symlinks else _OPEN_FLAGS | _NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ELOOP):  # say what is there: a socket (or a device without a
            _refuse_special(path, follow_symlinks)  # driver) is "no such device", a link not followed "a loop"
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"is {kind_of(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise TooLarge(f"larger than {limit} bytes")
        data = _read_to_end(fd, info.st_size, limit)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise TooLarge(f"larger than {limit} bytes")
    return data


def _read_to_end(fd: int, expected: int, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``fd``: the ``expected`` size and a byte more in one read (a short read,
    the rule, is then confirmed as the end by a read of one byte), then 64 KiB at a time while it grows."""
    chunks, size, want = [], 0, expected + 1
    while size <= limit:
        chunk = os.read(fd, min(want, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        want = _MORE if len(chunk) == want else 1
    return b"".join(chunks)


def _refuse_special(path: str | Path, follow_symlinks: bool) -> None:
    """Raise :class:`Refused` naming what ``path`` is when it is no regular file (used only to word a
    failed open: nothing is read after this look)."""
    try:
        mode = os.stat(path, follow_symlinks=follow_symlinks).st_mode
    except OSError:
        return
    if stat.S_ISLNK(mode):
        raise IsLink("is a symbolic link") from None
    if not stat.S_ISREG(mode):
        raise Refused(f"is {kind_of(mode)}, not a regular file") from None


def read_capped(path: str | Path, max_bytes: int, what: str) -> bytes:
    """The bytes of the regular file ``path`` (a link is followed), read by :func:`read_regular`;
    ProblemgenError when it cannot be read, is no regular file or is larger than ``max_bytes``.

    ``what`` names the file in messages ("bank", "roster"…): ``roster.csv: roster is a FIFO, not a regular file``.
    """
    try:
        return read_regular(path, max_bytes)
    except Refused as exc:
        raise ProblemgenError(f"{path}: {what} {exc}") from None
    except OSError as exc:
        raise ProblemgenError(f"{path}: cannot read {what} ({exc.strerror})") from exc


def read_text(path: str | Path, max_bytes: int, what: str) -> str:
    """The UTF-8 text of a file a user named, as :func:`read_capped` reads it, with a leading byte-order mark
    dropped: Windows editors write one, and a bank, roster, overrides file or recipe must read the same
    with it or without. ProblemgenError naming the first byte that is not UTF-8."""
    raw = read_capped(path, max_bytes, what)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ProblemgenError(f"{path}: {what} is not UTF-8 text (byte {exc.start} is not)") from None


def well_formed_text(text: str) -> str:
    """``text`` with every lone surrogate written out, so that any UTF-8 file or stream can carry it.

    Lone surrogates reach reports and the progress store from file names and terminal input that were
    not UTF-8 (Python keeps each such byte as
    U+DC80–U+DCFF; it is shown as ``\\xNN``, the byte it stands for) and from JSON escapes (``\\udNNN``).
    Writing them would raise UnicodeEncodeError: a platform would get no result, an answer would be lost.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else
                       f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)

