"""Whose is this? A leaked question, a sheet found in the wrong place, or a variant id, traced to a student.

Looks, in order, for: a variant id given as text; the ``[meta] variant`` of an answer sheet; a variant id
printed in a worksheet or key (``<bank>-<12 hex digits>``); and finally the file's exact bytes among the
class's handouts and keys. Only the class directory's own ``manifest.json`` and files are read.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from problemgen.model.core import ProblemgenError
from problemgen.outputlock import holding

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
        data = json.loads((class_dir / "manifest.json").read_text(encoding="utf-8"))
        return [e for e in data["students"] if isinstance(e, dict) and "student" in e]
    except (OSError, ValueError, KeyError, TypeError) as exc:
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
    if not path.is_file():
        variant = _unescaped(what.strip().encode()).decode(errors="replace")
        if not _VARIANT_ID.fullmatch(variant.encode()):  # a mistyped path, not "no student"
            raise ProblemgenError(f"{what}: no such file, and not a variant id (like masking-1a2b3c4d5e6f)")
        return _owner(by_variant[variant], "variant id") if variant in by_variant else None
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ProblemgenError(f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB")
    data = path.read_bytes()
    for found in dict.fromkeys(m.group().decode() for m in _VARIANT_ID.finditer(_unescaped(data))):
        if found in by_variant:
            return _owner(by_variant[found], f"variant id {found} printed in {path.name}")
    digest = hashlib.sha256(data).digest()
    for entry in entries:
        for folder in (entry.get("handout"), entry.get("key")):
            match = _same_file(class_dir, folder, digest) if folder else None
            if match:
                return _owner(entry, f"same bytes as {match}")
    return None


def _unescaped(data: bytes) -> bytes:
    """LaTeX's ``\\_`` back to ``_``: a .tex worksheet prints ``mixed\\_exam-82ed362bbdb0``, and an id
    copied from it keeps the backslash."""
    return data.replace(b"\\_", b"_")


def _same_file(class_dir: Path, folder: str, digest: bytes) -> str | None:
    directory = (class_dir / folder).resolve()
    if not directory.is_relative_to(class_dir.resolve()) or not directory.is_dir():
        return None
    for file in sorted(directory.iterdir()):
        if file.is_file() and not file.is_symlink() and hashlib.sha256(file.read_bytes()).digest() == digest:
            return f"{folder}/{file.name}"
    return None


def _owner(entry: dict, how: str) -> Owner:
    return Owner(str(entry["student"]), str(entry.get("name", "")), str(entry.get("variant_id", "")), how)
