"""Class mode: grade a directory of answer sheets, one per student, against each student's own variant.

The class directory is what ``problemgen worksheet --roster`` wrote (``manifest.json`` and one
``keys/<student>/variant.json`` each; a set written before handouts and keys were apart has
``<student>/variant.json``, which is read too); the submissions directory holds ``<student>.toml`` or
``<student>/answers.toml``. One student's unreadable file is reported for that student and the run goes
on; results come back in roster order whatever the number of worker processes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from problemgen.model.core import ProblemgenError
from problemgen.sheets.grading import grade_sheet
from problemgen.sheets.reports import Report

_SAFE_STUDENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True)
class StudentResult:
    """One student of a class run: ``graded`` (a report), ``missing`` (no sheet), ``malformed`` (a report
    whose sheet could not be read) or ``error`` (the student's variant could not be loaded)."""

    student: str
    status: str
    report: Report | None = None
    message: str = ""

    @property
    def score(self) -> float:
        return self.report.score if self.report is not None else 0.0


@dataclass(frozen=True)
class ClassResult:
    title: str
    students: tuple[StudentResult, ...]
    warnings: tuple[str, ...] = ()


def roster(class_dir: str | Path) -> tuple[str, list[str]]:
    """(title, student ids) of a class directory written by ``problemgen worksheet --roster``.

    The ids come from ``manifest.json`` (``students[].directory``); without a manifest, every
    sub-directory holding a ``variant.json`` is a student. Ids that are not safe names are refused.
    """
    class_dir = Path(class_dir)
    if not class_dir.is_dir():
        raise ProblemgenError(f"{class_dir}: class directory not found")
    manifest_path = class_dir / "manifest.json"
    title, ids = class_dir.name, []
    if manifest_path.is_file():
        import json

        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            title = str(manifest.get("title") or title)
            ids = [str(entry["student"]) for entry in manifest["students"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ProblemgenError(f"{manifest_path}: not a readable class manifest ({exc})") from None
    else:
        keys = class_dir / "keys" if (class_dir / "keys").is_dir() else class_dir
        ids = sorted(p.name for p in keys.iterdir() if (p / "variant.json").is_file())
    for student in ids:
        if not _SAFE_STUDENT.fullmatch(student):
            raise ProblemgenError(f"{manifest_path}: student directory {student[:40]!r} is not a safe name")
    if not ids:
        raise ProblemgenError(f"{class_dir}: no students (no manifest.json and no keys/*/variant.json)")
    return title, ids


def variant_path(class_dir: str | Path, student: str) -> Path:
    """Where a student's frozen variant lives: ``keys/<id>/variant.json`` (or the older ``<id>/variant.json``)."""
    class_dir = Path(class_dir)
    keyed = class_dir / "keys" / student / "variant.json"
    return keyed if keyed.exists() or not (class_dir / student / "variant.json").exists() else class_dir / student / "variant.json"


def find_submission(submissions_dir: Path, student: str) -> Path | None:
    """``<student>.toml`` or ``<student>/answers.toml``; both at once is an error (which one counts?)."""
    flat, nested = submissions_dir / f"{student}.toml", submissions_dir / student / "answers.toml"
    found = [p for p in (flat, nested) if p.is_file() or p.is_symlink()]
    if len(found) == 2:
        raise ProblemgenError(f"two submissions for {student}: {flat.name} and {student}/answers.toml; keep one")
    return found[0] if found else None


def grade_student(class_dir: str | Path, submissions_dir: str | Path, student: str) -> StudentResult:
    """Grade one student's submission against their own frozen variant; never raises for bad input."""
    from problemgen.model.variantfile import WorksheetVariant

    try:
        sheet = find_submission(Path(submissions_dir), student)
        variant = WorksheetVariant.load(variant_path(class_dir, student))
        if sheet is None:
            return StudentResult(student, "missing", message="no answer sheet submitted")
        report = grade_sheet(variant, sheet, student=student)
    except ProblemgenError as exc:
        return StudentResult(student, "error", message=str(exc))
    except Exception as exc:  # noqa: BLE001 - one student's file must never stop the class run
        return StudentResult(student, "error", message=f"internal grader error: {type(exc).__name__}: {exc}")
    status = "malformed" if report.meta.get("error") else "graded"
    return StudentResult(student, status, report, report.meta.get("error", ""))


def _grade_student_job(job: tuple[str, str, str]) -> StudentResult:
    return grade_student(*job)


def worker_count(jobs: int | None, students: int) -> int:
    """Processes for a class run: ``jobs`` when given, else up to 4 CPUs once the class is large.

    Below about a hundred sheets per worker, starting workers and sending reports back costs more
    than it saves (measured with bench/grading.py).
    """
    if jobs is not None:
        return max(1, min(jobs, students))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, cpus, students // 100))


def grade_class(submissions_dir: str | Path, class_dir: str | Path, *, jobs: int | None = 1,
                progress: Callable[[int, int], None] | None = None) -> ClassResult:
    """Grade every roster student's sheet in ``submissions_dir``; results in roster order.

    ``jobs > 1`` grades in that many worker processes; ``None`` chooses (see ``worker_count``).
    ``progress(done, total)`` is called as students finish.
    Sheets in ``submissions_dir`` that belong to no roster student are reported as warnings.
    """
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise ProblemgenError(f"{submissions_dir}: submissions directory not found")
    title, students = roster(class_dir)
    work = [(str(class_dir), str(submissions_dir), s) for s in students]
    results: list[StudentResult] = []
    jobs = worker_count(jobs, len(work))
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for result in pool.map(_grade_student_job, work, chunksize=max(1, len(work) // (jobs * 8))):
                results.append(result)
                if progress:
                    progress(len(results), len(work))
    else:
        for job in work:
            results.append(_grade_student_job(job))
            if progress:
                progress(len(results), len(work))
    return ClassResult(title, tuple(results), tuple(_stray_submissions(submissions_dir, set(students))))


def _stray_submissions(submissions_dir: Path, students: set[str]) -> list[str]:
    stray = []
    for entry in sorted(submissions_dir.iterdir()):
        name = entry.name[:-5] if entry.name.endswith(".toml") else entry.name
        if name not in students and (entry.suffix == ".toml" or (entry / "answers.toml").exists()):
            stray.append(f"{entry.name}: not a student of this class (ignored)")
    return stray
