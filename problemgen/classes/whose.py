"""Whose is this? A leaked question, a sheet found in the wrong place, or a variant id, traced to a student.

Looks, in order, for: a variant id given as text; the ``[meta] variant`` of an answer sheet; a variant id
printed in a worksheet or key (``<bank>-<12 hex digits>``); and finally the file's exact bytes among the
class's handouts and keys. Only the class directory's own ``manifest.json`` and files are read.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from problemgen.classes.manifest import read_manifest
from problemgen.model.core import ProblemgenError
from problemgen.outputlock import holding
from problemgen.userfiles import Refused, read_capped, read_regular

_VARIANT_ID = re.compile(rb"[A-Za-z0-9][A-Za-z0-9._-]{0,63}-[0-9a-f]{12}")
MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Owner:
    student: str
    name: str
    variant_id: str
    how: str  # how it was recognised

    def __str__(self) -> str:
        who = f"{self.student} ({self.name})" if self.name else self.student
        return f"{who}: variant {self.variant_id} ({self.how})"


def _manifest(class_dir: Path) -> list[dict]:
    try:
        data = read_manifest(class_dir)
        return [e for e in data["students"] if isinstance(e, dict) and "student" in e]
    except (KeyError, TypeError) as exc:
        raise ProblemgenError(f"{class_dir}: no readable manifest.json ({exc})") from None


def whose(what: str, class_dir: str | Path) -> Owner | None:
    """The student a file or variant id belongs to, or None when nothing in the class matches.

    The class set is held for reading (:mod:`problemgen.outputlock`) while it is looked through: a class set
    being made again under it would answer from a mix of its old and new files, or "nobody"."""
    class_dir = Path(class_dir)
    with holding(class_dir, writing=False):
        return _whose(what, class_dir)


def _whose(what: str, class_dir: Path) -> Owner | None:
    entries = _manifest(class_dir)
    by_variant = {str(e.get("variant_id")): e for e in entries}
    path = Path(what)
    if not os.path.lexists(path):  # whatever is there is read below, and refused saying what it is
        variant = _unescaped(what.strip().encode()).decode(errors="replace")
        if not _VARIANT_ID.fullmatch(variant.encode()):  # a mistyped path, not "no student"
            raise ProblemgenError(f"{what}: no such file, and not a variant id (like masking-1a2b3c4d5e6f)")
        return _owner(by_variant[variant], "variant id") if variant in by_variant else None
    data = read_capped(path, MAX_FILE_BYTES, "file")
    for found in dict.fromkeys(m.group().decode() for m in _VARIANT_ID.finditer(_unescaped(data))):
        if found in by_variant:
            return _owner(by_variant[found], f"variant id {found} printed in {path.name}")
    digest = hashlib.sha256(data).digest()
    for entry in entries:
        for folder in (entry.get("handout"), entry.get("key")):
            match = _same_file(class_dir, folder, len(data), digest) if folder else None
            if match:
                return _owner(entry, f"same bytes as {match}")
    return None


def _unescaped(data: bytes) -> bytes:
    """LaTeX's ``\\_`` back to ``_``: a .tex worksheet prints ``mixed\\_exam-82ed362bbdb0``, and an id
    copied from it keeps the backslash."""
    return data.replace(b"\\_", b"_")


def _same_file(class_dir: Path, folder: str, size: int, digest: bytes) -> str | None:
    directory = (class_dir / folder).resolve()
    if not directory.is_relative_to(class_dir.resolve()) or not directory.is_dir():
        return None
    for file in sorted(directory.iterdir()):
        if _same_bytes(file, size, digest):
            return f"{folder}/{file.name}"
    return None


def _same_bytes(file: Path, size: int, digest: bytes) -> bool:
    """Whether ``file`` is a regular file (not a link) of ``size`` bytes with this SHA-256: only a file of the
    same size is read, so nothing else in the class folder (a FIFO, a huge file) is waited on or read whole."""
    try:
        if file.lstat().st_size != size:
            return False
        return hashlib.sha256(read_regular(file, size, follow_symlinks=False)).digest() == digest
    except (OSError, Refused):
        return False


def _owner(entry: dict, how: str) -> Owner:
    return Owner(str(entry["student"]), str(entry.get("name", "")), str(entry.get("variant_id", "")), how)
