"""Exports: package problemgen's graders for the platforms courses already grade on.

Owns one module per platform (``gradescope``, ``github_classroom``, ``prairielearn``…) and the helpers
they share: packing the running problemgen into a wheel (``wheel``), writing zips and directories
byte for byte the same for the same inputs (``bundle``), matching platform users to roster ids
(``roster``), the grading that runs *on* the platform for one submission (``autograde``) and, for a
coding task, the choice of the uploaded file it grades (``uploads``).

May import ``problemgen.documents``, ``sheets``, ``classes``, ``code``, ``model`` and ``errors``;
never ``reference`` (answers are frozen in the variants) and never the CLI.

One list of everything: every module of this package that defines ``EXPORT`` (an :class:`Export`) is
an export, found by :func:`all_exports`; ``problemgen export`` builds its subcommands from that list.
Adding a platform is one module here (its ``EXPORT``) plus its tests.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable



@dataclass(frozen=True)
class Option:
    """One command-line option of an export, described without click (the CLI turns it into one).

    ``kind`` is ``text``, ``path`` (any path), ``file`` (an existing file), ``dir`` (an existing
    directory), ``choice`` (one of ``choices``), ``float`` (seconds, 0.1 to 600) or ``flag`` (a boolean).
    """

    name: str  # the long option, e.g. "--class"
    dest: str  # the keyword the export's build function receives
    help: str
    kind: str = "text"
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    short: str | None = None


@dataclass(frozen=True)
class Export:
    """An export: its subcommand name, help (with an ``Example:`` block), options and build function.

    ``build(**options)`` writes the export and returns a short text for the terminal; user errors are
    :class:`ProblemgenError`. Callers use :meth:`run`, which first checks the outputs against the inputs.
    """

    name: str
    summary: str
    help: str
    options: tuple[Option, ...]
    build: Callable[..., str]

    def run(self, **options) -> str:
        """``build(**options)`` once no output path (``-o``, ``--preview``) is an input file or folder the
        export reads (``--roster``, ``--class``, ``--wheel``) or lies inside an input folder: written
        there, the export would replace what it reads, or be packed into the next export of that class."""
        from problemgen.outputs import check_output_apart  # lazy: listing the exports stays light

        inputs = {o.name: options.get(o.dest) for o in self.options if o.kind in ("file", "dir")}
        for option in self.options:
            if option.kind == "path" and options.get(option.dest) is not None:
                check_output_apart(options[option.dest], inputs, option.name)
        return self.build(**options)


def all_exports() -> dict[str, Export]:
    """Every export of this package, by name, in module order (modules without ``EXPORT`` are helpers)."""
    found: dict[str, Export] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        export = getattr(module, "EXPORT", None)
        if isinstance(export, Export):
            found[export.name] = export
    return found

