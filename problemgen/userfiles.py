"""Reading what users hand in: a file they named (a bank, a roster, a recipe), size-capped, every failure
one clear line; and Python syntax they wrote (an answer, a submission), parsed without a word on stderr
and read as Python would read it.

Such input comes from people who may err or cheat, so files are read whole into memory only up to a cap
(a huge or endless file must not exhaust the grader), and an unreadable path is a ProblemgenError
naming the file and what it was meant to be — never a traceback.
"""

from __future__ import annotations

import ast
import codecs
import io
import re
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


def read_capped(path: str | Path, max_bytes: int, what: str) -> bytes:
    """The bytes of ``path``; ProblemgenError when it cannot be read or is larger than ``max_bytes``.

    ``what`` names the file in messages ("bank", "roster"…). At most ``max_bytes + 1`` bytes are read.
    """
    try:
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise ProblemgenError(f"{path}: cannot read {what} ({exc.strerror})") from exc
    if len(raw) > max_bytes:
        raise ProblemgenError(f"{path}: {what} larger than {max_bytes} bytes")
    return raw


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

