"""Running the command line in the test process for its exit code (what scripts and CI read)."""

from __future__ import annotations

import pytest

from problemgen.cli import main


def run(argv: list[str]) -> int:
    """The exit code ``problemgen ARGV`` ends with (``main`` always exits, also on success)."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return exit_info.value.code
