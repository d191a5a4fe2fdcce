"""Reading a file a user named (a bank, a roster, a recipe): size-capped, every failure one clear line.

Such files come from people who may err or cheat, so they are read whole into memory only up to a cap
(a huge or endless file must not exhaust the grader), and an unreadable path is a ProblemgenError
naming the file and what it was meant to be — never a traceback.
"""

from __future__ import annotations

from pathlib import Path

from problemgen.errors import ProblemgenError


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
