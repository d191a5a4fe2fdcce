"""Make a file or a directory impossible to write for the test that needs it, and writable again after.

``chattr +i`` holds for every user, root included (root ignores file modes); without the right to set
it, removing the write bits does the same for an ordinary user. Where neither holds, the test is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest


@contextmanager
def unwritable(path: Path) -> Iterator[Path]:
    """``path`` cannot be written (nor, for a directory, have files created in it) inside the block."""
    mode = path.stat().st_mode
    chattr = shutil.which("chattr")
    immutable = bool(chattr) and subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode == 0
    if not immutable:
        path.chmod(mode & ~0o222)
    try:
        if os.access(path, os.W_OK):
            pytest.skip("cannot make a path read-only here (root, and chattr +i refused)")
        yield path
    finally:
        if immutable:
            subprocess.run([chattr, "-i", str(path)], check=True)
        path.chmod(mode)
