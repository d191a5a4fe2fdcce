"""Where the shipped data lives: templates/ and question_banks/.

In the repository they sit at the top level (the house plan's layout); an installed package carries
them as ``problemgen.templates`` and ``problemgen.question_banks`` (see pyproject's package-dir). When
the source tree shadows the installed package (running tests from a checkout), the package lookup
fails and the top-level directories next to ``problemgen/`` are used instead.

A leaf module (imports nothing of the project): generators, documents and practice all read shipped data.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[1]


def _data_dir(package: str, repo_name: str) -> Path:
    try:
        path = Path(str(resources.files(package)))
        if path.is_dir():
            return path
    except ModuleNotFoundError:
        pass
    return _REPO_ROOT / repo_name


def templates_dir() -> Path:
    """Directory of the built-in jinja templates (problems/ fragments and documents/ wrappers)."""
    return _data_dir("problemgen.templates", "templates")


def banks_dir() -> Path:
    """Directory of the shipped question banks (recipes, curriculum, conceptual questions)."""
    return _data_dir("problemgen.question_banks", "question_banks")
