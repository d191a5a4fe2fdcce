"""Code classes: grade every submission of a directory against the same hidden tests.

Each entry of the directory is looked at by ``classes.entries`` (a ``.py`` file or a directory is one
student, and so is a ``.ipynb`` notebook that can be read; links, special files, unreadable notebooks,
hidden and other entries are refused with the reason and
still get a row; a folder without a ``.py`` file beside another entry of the student is no second
submission and is left out). Accepted entries run in the sandbox; the rows go through the one class runner
(``classes.runner``), which writes the same gradebook, summaries, item statistics and reports as for
answer sheets. Deterministic: entries sorted by name, no timestamps. A platform's download (Canvas,
Moodle, GitHub Classroom) is read by ``classes.layouts`` against a roster CSV instead: rows are the
roster's students, a student without a submission is ``missing``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

from problemgen.classes import entries, layouts
from problemgen.classes.layouts import Layout
from problemgen.classes.rows import DUPLICATE, GRADED, MISSING, REFUSED, ClassRow
from problemgen.classes.runner import ClassRun, run_class
from problemgen.code.grade import Plan, grade_submission
from problemgen.code.notebook import read_notebook
from problemgen.code.sandbox import Sandbox
from problemgen.code.sandbox.staging import RejectedSubmission
from problemgen.model.core import ProblemgenError
from problemgen.outputs import check_output_apart


def class_entries(directory: str | Path) -> list[entries.Entry]:
    """Every entry of a code class directory, accepted or refused (see ``classes.entries``)."""
    found = entries.scan(directory, (".py", ".ipynb"), _holds_code)
    if not found:
        raise ProblemgenError(f"{directory}: no submissions (expected .py files or one sub-directory per student)")
    return found


def _holds_code(directory: Path) -> bool:
    """Whether a student folder has a ``.py`` file the sandbox would stage (not the ``._name.py`` macOS adds)."""
    with os.scandir(directory) as listing:
        return any(item.name.endswith(".py") and not entries.is_system_file(os.fsencode(item.name)) for item in listing)


def _refused_row(name: str, reason: str) -> ClassRow:
    status = DUPLICATE if reason.startswith(DUPLICATE) else f"{REFUSED}: {reason}"
    return ClassRow(name, status, message=reason)


def _unreadable_notebook(entry: entries.Entry) -> str:
    """Why a notebook entry cannot be read as a submission ('' for readable ones and other entries)."""
    if entry.is_dir or entry.path.suffix.lower() != ".ipynb":
        return ""
    try:
        read_notebook(entry.path)
    except RejectedSubmission as exc:
        return str(exc)
    return ""


def _grader(plan: Plan, sandbox: Sandbox) -> Callable[[entries.Entry], ClassRow]:
    """Grade one accepted entry in the sandbox, under its student name."""
    def work(entry: entries.Entry) -> ClassRow:
        unreadable = _unreadable_notebook(entry)
        if unreadable:
            return ClassRow(entry.name, f"{REFUSED}: {unreadable}", message=unreadable)
        report = grade_submission(plan, entry.path, sandbox, student=entry.name)
        return ClassRow(entry.name, GRADED, report)

    return work


def class_rows(plan: Plan, directory: str | Path, sandbox: Sandbox, layout: Layout | None = None,
               warnings: list[str] | None = None) -> tuple[int, Iterator[ClassRow]]:
    """(number of rows, the rows in name order): graded in the sandbox, or refused with the reason.

    With ``layout`` (a platform's download, see ``classes.layouts``) the rows are the roster's students in
    roster order, then the entries that are nobody's; what it notes for the summary goes to ``warnings``.
    """
    if layout is not None:
        return _download_rows(plan, directory, sandbox, layout, warnings)
    found = class_entries(directory)
    accepted = [e for e in found if e.accepted]

    def rows() -> Iterator[ClassRow]:
        graded = iter(sandbox.map(_grader(plan, sandbox), accepted))
        for entry in found:
            yield next(graded) if entry.accepted else _refused_row(entry.name, entry.refused)

    return len(found), rows()


def _download_rows(plan: Plan, directory: str | Path, sandbox: Sandbox, layout: Layout,
                   warnings: list[str] | None) -> tuple[int, Iterator[ClassRow]]:
    """The rows of a platform's download: one per roster student (graded, refused or missing), then strays."""
    students = layouts.roster_students(layout)
    known = layouts.identities(layout, students)
    download = layouts.sort_download(directory, layout.name, known, (".py", ".ipynb"), _holds_code)
    if warnings is not None:
        warnings.extend([*known.warnings, *download.notes()])

    def rows() -> Iterator[ClassRow]:
        graded = iter(sandbox.map(_grader(plan, sandbox), [download.found[s] for s in students if s in download.found]))
        for student in students:
            if student in download.found:
                yield next(graded)
            elif student in download.refused:
                yield _refused_row(student, download.refused[student])
            else:
                yield ClassRow(student, MISSING, message="no submission")
        yield from (_refused_row(entry.name, entry.refused) for entry in download.strays)

    return len(students) + len(download.strays), rows()


def grade_class(plan: Plan, directory: str | Path, sandbox: Sandbox, out_dir: str | Path, fmt: str = "json",
                progress: Callable[[int, int], None] | None = None, layout: Layout | None = None) -> ClassRun:
    """Grade a code class and write its outputs (gradebook, summaries, items.csv, reports); ``layout``
    reads a platform's download (see ``classes.layouts``)."""
    check_output_apart(out_dir, {"submissions directory": directory})
    warnings = entries.system_files_note(directory)
    total, rows = class_rows(plan, directory, sandbox, layout, warnings)
    return run_class(rows, out_dir, fmt, f"{plan.task.name}: class summary", total=total, progress=progress,
                     warnings=warnings)
