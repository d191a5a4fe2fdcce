"""Notebook submissions: the code a student wrote in a ``.ipynb``, as one Python module to grade.

A notebook is student-controlled JSON. It is read with nbformat (the Jupyter project's own reader and
validator) after a size check, and only the *source* of its code cells is kept — outputs, attachments
and metadata are never looked at beyond the one marker below. The code cells are joined in order, each
after a ``# --- cell N ---`` line, so a line number in a traceback points into a file the student can
reconstruct. What is not the student's Python is left out, with a note:

* IPython magics and shell escapes where a statement starts (``%matplotlib inline``, ``!pip install x``;
  :mod:`problemgen.code.magics` — the same characters inside a string or an expression are kept);
* the cells problemgen wrote into the starter notebook: the check cells that run the public checks and
  the cell that installs problemgen (metadata ``{"problemgen": {"role": "check"}}`` or ``"install"``,
  or a first line equal to :data:`CHECK_MARKER` or :data:`INSTALL_MARKER` when an editor lost the
  metadata). Run in the sandbox, the install cell would try ``pip`` — refused there — and every test
  would fail on import;
* in a notebook written before the install cell was marked, that cell's four lines
  (:data:`LEGACY_INSTALL_LINES`) where a cell begins with them; anything a student added below them
  stays, since that old cell never said it was not part of the submission.

Nothing from the notebook is executed here: the result is source text for the sandbox, exactly like a
``.py`` file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from problemgen.errors import ProblemgenError
from problemgen.userfiles import coding_problem, read_capped
from problemgen.wording import counted
from problemgen.code.magics import without_magics
from problemgen.code.sandbox.staging import MAX_TOTAL_BYTES, RejectedSubmission, module_file_name

MAX_NOTEBOOK_BYTES = 8 * 1024 * 1024
"""A notebook with images in its outputs is larger than its code; 8 MiB is far above any honest one."""
CHECK_MARKER = "# problemgen: public checks (not part of your submission)"
CHECK_METADATA = {"problemgen": {"role": "check"}}
INSTALL_MARKER = ("# problemgen: run once to install problemgen where it is missing, e.g. on Colab "
                  "(not part of your submission)")
INSTALL_METADATA = {"problemgen": {"role": "install"}}
LEGACY_INSTALL_LINES = (
    "# Run this cell once: it installs problemgen where it is missing (e.g. on Colab).",
    "import importlib.util, subprocess, sys",
    'if importlib.util.find_spec("problemgen") is None:',
    '    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "problemgen"], check=True)',
)
"""The install cell of starter notebooks written before it carried a role: recognised by its exact lines."""


@dataclass(frozen=True)
class NotebookCode:
    """The Python source extracted from a notebook, and what was left out of it."""

    source: str
    code_cells: int
    notes: tuple[str, ...]


def read_notebook(path: str | os.PathLike) -> NotebookCode:
    """The code of the notebook at ``path``; RejectedSubmission (one clear line) when it cannot be read."""
    path = Path(path)
    cells = _code_cells(path.name, _read_capped(path))
    students, left_out = _student_cells(cells)
    if sum(len(source) for _, source in students) > MAX_TOTAL_BYTES:  # before tokenizing: bounds its work
        raise RejectedSubmission(f"{path.name}: the code cells exceed {MAX_TOTAL_BYTES} bytes in total")
    pieces, dropped = [], 0
    for number, source in students:
        filtered = without_magics(source)
        dropped += filtered.dropped
        pieces.append(f"# --- cell {number} ---\n" + filtered.source.rstrip() + "\n")
    text = "\n".join(pieces)
    if not text.strip():
        raise RejectedSubmission(f"{path.name}: the notebook has no code cells")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:  # JSON may escape a lone surrogate (\ud800), which no source file can hold
        raise RejectedSubmission(f"{path.name}: a code cell holds a lone surrogate (a \\ud800 escape), "
                                 "which is not text") from None
    if size > MAX_TOTAL_BYTES:
        raise RejectedSubmission(f"{path.name}: the code cells exceed {MAX_TOTAL_BYTES} bytes in total")
    problem = coding_problem(text)  # the first cell's first line is the module's line 2, where one counts
    if problem:
        raise RejectedSubmission(f"{path.name}: the first code cell {problem}")
    return NotebookCode(text, len(cells), _notes(dropped, left_out))


def _student_cells(cells: list) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """(cell number, source) of the cells the student wrote, and how many of problemgen's own were left out."""
    students, left_out = [], {"check": 0, "install": 0}
    for number, cell in enumerate(cells, start=1):
        source = _cell_source(cell)
        role = _problemgen_role(cell, source)
        if role:
            left_out[role] += 1
            continue
        source, legacy_install = _without_legacy_install(source)
        left_out["install"] += legacy_install
        students.append((number, source))
    return students, left_out


def _notes(dropped: int, left_out: dict[str, int]) -> tuple[str, ...]:
    """One line for each kind of thing left out of the graded code, in the order a reader meets them."""
    notes = []
    if dropped:
        notes.append(f"{counted(dropped, 'IPython magic or shell line')} (%… or !…) {_were(dropped)} dropped: "
                     f"{'it is' if dropped == 1 else 'they are'} not Python")
    for role, what in (("install", "problemgen install cell"), ("check", "public-check cell")):
        if left_out[role]:
            notes.append(f"{counted(left_out[role], what)} {_were(left_out[role])} left out")
    return tuple(notes)


def _were(number: int) -> str:
    """The verb after ``counted(number, …)``: "1 cell was", "2 cells were"."""
    return "was" if number == 1 else "were"


def _read_capped(path: Path) -> bytes:
    """The notebook's bytes through the one size-capped reader of user files, as a submission rejection."""
    try:
        return read_capped(path, MAX_NOTEBOOK_BYTES, "notebook")
    except ProblemgenError as exc:
        raise RejectedSubmission(str(exc).replace(str(path), path.name, 1)) from exc


def _code_cells(name: str, raw: bytes) -> list:
    """nbformat reads and validates; any failure of a hostile file becomes one rejection line."""
    import nbformat  # imported here: only notebook submissions pay for it

    try:
        notebook = nbformat.reads(raw.decode("utf-8-sig"), as_version=4)  # a byte-order mark some editors add is dropped
        nbformat.validate(notebook)
    except UnicodeDecodeError as exc:
        raise RejectedSubmission(f"{name}: not a notebook (the file is not UTF-8 text)") from exc
    except RecursionError as exc:
        raise RejectedSubmission(f"{name}: not a readable notebook (nested too deeply)") from exc
    except Exception as exc:  # nbformat raises several types (NotJSONError, ValidationError, KeyError…)
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise RejectedSubmission(f"{name}: not a readable notebook ({first_line})") from exc
    return [cell for cell in notebook.cells if cell.get("cell_type") == "code"]


def _cell_source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _problemgen_role(cell, source: str) -> str | None:
    """"check" or "install" for a cell problemgen wrote (by its metadata, else its marker line), else None."""
    metadata = cell.get("metadata") or {}
    ours = metadata.get("problemgen")
    if isinstance(ours, dict) and ours.get("role") in ("check", "install"):
        return ours["role"]
    first_line = source.lstrip().partition("\n")[0].rstrip()
    return {CHECK_MARKER: "check", INSTALL_MARKER: "install"}.get(first_line)


def _without_legacy_install(source: str) -> tuple[str, int]:
    """``source`` without the old starter's install lines when the cell begins with them, and 1 if it did.

    The lines are compared without their line endings and trailing blanks (editors change those); the
    rest of the cell is returned as written.
    """
    lines = source.lstrip("\n").splitlines(keepends=True)
    head = [line.rstrip() for line in lines[:len(LEGACY_INSTALL_LINES)]]
    if tuple(head) != LEGACY_INSTALL_LINES:
        return source, 0
    return "".join(lines[len(LEGACY_INSTALL_LINES):]), 1


def collect_notebook(path: str | os.PathLike) -> tuple[dict[str, str], str, tuple[str, ...]]:
    """(file name -> source, entry file name, notes): the notebook as the one-file submission it stands for.

    The module is named after the notebook as a ``.py`` file of the same stem would be, so a notebook
    and the same code saved as a ``.py`` file are graded identically.
    """
    code = read_notebook(path)
    try:
        name = module_file_name(Path(path).stem + ".py")
    except RejectedSubmission:
        name = "submission.py"
    return {name: code.source}, name, code.notes
