"""Class mode: grade every submission in a directory against the same hidden tests.

Each entry of the directory (a ``.py`` file or a sub-directory) is one student. Outputs: a CSV
gradebook, one report per student in the chosen format, and a class summary (score distribution,
pass rate of every check, how many students showed each misconception). Deterministic: students
are sorted by name, no timestamps.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from problemgen.model.core import ProblemgenError
from problemgen.sheets.reports import Report, render
from problemgen.code.sandbox import Sandbox
from problemgen.code.grade import Plan, grade_submission
from problemgen.misconceptions.catalogue import describe

EXTENSIONS = {"text": "txt", "json": "json", "junit": "xml", "gradescope": "json", "md": "md"}


@dataclass(frozen=True)
class ClassResult:
    reports: tuple[tuple[str, Report], ...]  # (student, report), sorted by student
    summary: str  # Markdown


def students(directory: Path) -> list[tuple[str, Path]]:
    """(student name, submission path) for every entry; hidden files and caches are skipped."""
    if not directory.is_dir():
        raise ProblemgenError(f"{directory}: not a directory")
    entries = []
    for item in sorted(directory.iterdir()):
        if item.name.startswith((".", "__")) or item.is_symlink():
            continue
        if item.is_dir() or item.suffix == ".py":
            entries.append((_safe_name(item.stem if item.is_file() else item.name), item))
    if not entries:
        raise ProblemgenError(f"{directory}: no submissions (expected .py files or one sub-directory per student)")
    names = [name for name, _ in entries]
    if len(set(names)) != len(names):
        raise ProblemgenError(f"{directory}: two submissions map to the same student name")
    return entries


def _safe_name(name: str) -> str:
    """File-system and spreadsheet safe: letters, digits, '.', '_' and '-' only."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".-") or "student"
    return cleaned[:80]


def grade_class(plan: Plan, directory: Path, sandbox: Sandbox, progress: Callable[[int, int], None] | None = None) -> ClassResult:
    entries = students(directory)
    done = 0

    def work(entry: tuple[str, Path]) -> tuple[str, Report]:
        name, path = entry
        return name, grade_submission(plan, path, sandbox, student=name)

    reports = []
    for result in sandbox.map(work, entries):
        reports.append(result)
        done += 1
        if progress:
            progress(done, len(entries))
    return ClassResult(tuple(reports), summarise(plan, reports))


def write_outputs(result: ClassResult, out_dir: Path, fmt: str) -> None:
    """gradebook.csv, summary.md and reports/<student>.<ext> under ``out_dir``."""
    reports_dir = out_dir / "reports"
    reports_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "gradebook.csv").write_text(gradebook(result.reports), encoding="utf-8")
    (out_dir / "summary.md").write_text(result.summary, encoding="utf-8")
    for name, report in result.reports:
        (reports_dir / f"{name}.{EXTENSIONS[fmt]}").write_text(render(report, fmt), encoding="utf-8")


def gradebook(reports: tuple[tuple[str, Report], ...] | list) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "score", "points", "max_points", "passed", "failed", "misconceptions", "isolation"])
    for name, report in reports:
        passed = sum(r.passed for r in report.results)
        writer.writerow([_cell(name), f"{report.score:.4f}", f"{report.points:g}", f"{report.max_points:g}", passed,
                         len(report.results) - passed, ";".join(report.meta.get("misconceptions", [])),
                         report.meta.get("isolation", "")])  # fmt: skip
    return buffer.getvalue()


def _cell(text: str) -> str:
    """Neutralise spreadsheet formulas (a student name starting with '=' stays text)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def summarise(plan: Plan, reports: list[tuple[str, Report]]) -> str:
    n = len(reports)
    scores = [report.score for _, report in reports]
    lines = [f"# {plan.task.name}: class summary", "", f"Students: {n}"]
    if scores:
        lines.append(f"Score: mean {statistics.fmean(scores):.1%}, median {statistics.median(scores):.1%}, "
                     f"min {min(scores):.1%}, max {max(scores):.1%}")  # fmt: skip
    lines += ["", "## Score distribution", "", "| score | students |", "|---|---|"]
    for low in range(0, 100, 10):
        count = sum(1 for s in scores if low <= s * 100 < low + 10 or (low == 90 and s == 1.0))
        lines.append(f"| {low}–{low + 10}% | {count} |")
    lines += ["", "## Checks", "", "| check | passed |", "|---|---|"]
    names = [r.name for r in reports[0][1].results] if reports else []
    for i, name in enumerate(names):
        passed = sum(1 for _, report in reports if i < len(report.results) and report.results[i].passed)
        lines.append(f"| {name} | {passed} of {n} |")
    lines += ["", "## Misconceptions", ""]
    counts: dict[str, int] = {}
    for _, report in reports:
        for tag in report.meta.get("misconceptions", []):
            counts[tag] = counts.get(tag, 0) + 1
    if not counts:
        lines.append("No known misconception was recognised.")
    for tag, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"- {count} of {n}: {describe(tag)} (`{tag}`)")
    return "\n".join(lines) + "\n"


def progress_bar(stream: TextIO = sys.stderr, width: int = 30) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        filled = width * done // max(total, 1)
        stream.write(f"\rgrading [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done == total:
            stream.write("\n")
        stream.flush()

    return show
