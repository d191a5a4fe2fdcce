"""A class set's ``manifest.json``, read the one way every command that reads a class reads it.

``problemgen worksheet --roster`` writes the manifest last, so it marks a whole class set; grading, exports
and ``whose`` read its students from it. It is read by ``userfiles.read_capped``: a FIFO put in its place
once blocked a class run forever, and a link to ``/dev/zero`` or a huge file filled the memory (a
MemoryError traceback, the run lost), so it is read only when it is a regular file, up to a cap.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from problemgen.errors import ProblemgenError
from problemgen.userfiles import read_capped

MANIFEST_FILE = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
"""A manifest holds a few hundred bytes per student: this is room for a hundred thousand and more."""


def manifest_path(class_dir: str | Path) -> Path:
    return Path(class_dir) / MANIFEST_FILE


def has_manifest(class_dir: str | Path) -> bool:
    """Whether anything at all is at the manifest's name (a broken link, a FIFO, a folder too): such a thing
    is read, and refused saying what it is, rather than taken for a class set that never finished."""
    return os.path.lexists(manifest_path(class_dir))


def read_manifest(class_dir: str | Path) -> dict:
    """The manifest's JSON object; ProblemgenError naming the file when it cannot be read or is not one."""
    path = manifest_path(class_dir)
    raw = read_capped(path, MAX_MANIFEST_BYTES, "class manifest")
    try:
        data = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        raise ProblemgenError(f"{path}: not a readable class manifest ({exc})") from None
    if not isinstance(data, dict):
        raise ProblemgenError(f"{path}: not a readable class manifest (not a JSON object)")
    return data
