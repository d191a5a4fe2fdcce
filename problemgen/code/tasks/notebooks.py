"""Starter notebooks for coding tasks: the spec, the starter cell, the public examples and a check cell.

Courses hand out coding work as notebooks (Jupyter, Colab). One notebook holds one or more tasks; for
each task it has, in order:

1. the task's spec as Markdown (signature, shapes, conventions, tolerance — the maths in ``$…$``);
2. the starter code cell with the required signature (the cell the student edits);
3. the public examples as Markdown (inputs and expected outputs — the same ones ``task show`` prints);
4. a check cell that runs the task's *public* checks on the code above through problemgen's own confined
   runner and prints the feedback ``grade-code --public-only`` gives (never a hidden value).

The notebook is written through nbformat, the Jupyter project's writer, and starts with a cell that
installs problemgen where it is missing (Colab). problemgen's own cells carry their role in their
metadata (``{"problemgen": {"role": "install"}}`` or ``"check"``) and a marker first line, so a
submitted notebook is graded without them: the install cell would try ``pip`` in the sandbox, which
refuses it, and fail every test on import.
"""

from __future__ import annotations

from pathlib import Path

from problemgen.errors import ProblemgenError
from problemgen.code.notebook import (
    CHECK_MARKER, CHECK_METADATA, INSTALL_MARKER, INSTALL_METADATA, LEGACY_INSTALL_LINES,
)
from problemgen.code.tasks import get_task
from problemgen.userfiles import read_text
from problemgen.safewrite import write_file
from problemgen.wording import counted
from problemgen.code.tasks.listing import public_examples

INSTALL_CELL = "\n".join([INSTALL_MARKER, *LEGACY_INSTALL_LINES[1:]])
"""The marker line, then the install code of the earlier starter notebooks, unchanged."""


def check_cell_source(task_name: str) -> str:
    """The check cell: the marker line, then one call that grades the code above on the public examples."""
    return f"{CHECK_MARKER}\nfrom problemgen import check_in_notebook\ncheck_in_notebook({task_name!r})"


def build_notebook(task_names: list[str], title: str | None = None):
    """An nbformat v4 notebook with every named task (in the order given), under ``title``."""
    import nbformat.v4 as v4  # imported here: only this command pays for nbformat

    if not task_names:
        raise ProblemgenError("name at least one task; run `problemgen task list`")
    tasks = [get_task(name) for name in task_names]
    title = title or (tasks[0].title if len(tasks) == 1 else "Coding tasks: " + ", ".join(t.name for t in tasks))
    cells = [v4.new_markdown_cell(f"# {title}\n\nFill in each starter cell, run it, then run the check cell "
                                  "below it. The checks use the public examples only; your grade comes from "
                                  "hidden tests as well."),
             v4.new_code_cell(INSTALL_CELL, metadata=dict(INSTALL_METADATA))]
    for task in tasks:
        cells += [
            v4.new_markdown_cell(task.spec.rstrip()),
            v4.new_code_cell(task.starter.rstrip()),
            v4.new_markdown_cell(public_examples(task.name).rstrip()),
            v4.new_code_cell(check_cell_source(task.name), metadata=dict(CHECK_METADATA)),
        ]
    for number, cell in enumerate(cells):
        cell["id"] = f"problemgen-{number:03d}"  # fixed ids: the same tasks give the same bytes
    notebook = v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.metadata["problemgen"] = {"tasks": [task.name for task in tasks]}
    return notebook


def write_notebook(task_names: list[str], path: Path, title: str | None = None) -> str:
    """Write the starter notebook to ``path`` (never over an existing file); returns a one-line report."""
    import nbformat

    notebook = build_notebook(task_names, title)
    nbformat.validate(notebook)
    if path.exists():
        raise ProblemgenError(f"{path}: already exists; choose another file name")
    write_file(path, nbformat.writes(notebook))  # whole or not at all: a truncated one would block the next try
    return f"wrote {path} ({counted(len(task_names), 'task')})\n"


MAX_RECIPE_BYTES = 64 * 1024
RECIPE_KEYS = {"title", "tasks"}


def read_recipe(path: Path) -> tuple[str | None, list[str]]:
    """(title, task names) of a notebook recipe: a small TOML file such as::

        title = "Week 3: normalisation and feed-forward layers"
        tasks = ["layer_norm", "rms_norm", "feed_forward"]

    Like a bank it holds no code and no answers; every problem with it is one ``error:`` line.
    """
    import tomllib

    text = read_text(path, MAX_RECIPE_BYTES, "the recipe")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProblemgenError(f"{path}: not a readable TOML recipe ({exc})") from exc
    unknown = sorted(set(data) - RECIPE_KEYS)
    if unknown:
        raise ProblemgenError(f"{path}: unknown key {unknown[0]!r}; a recipe has `title` and `tasks`")
    tasks, title = data.get("tasks"), data.get("title")
    if not isinstance(tasks, list) or not tasks or not all(isinstance(name, str) for name in tasks):
        raise ProblemgenError(f"{path}: `tasks` must be a non-empty list of task names, e.g. tasks = [\"softmax\"]")
    if title is not None and (not isinstance(title, str) or len(title) > 200):
        raise ProblemgenError(f"{path}: `title` must be a line of text (at most 200 characters)")
    return title, tasks
