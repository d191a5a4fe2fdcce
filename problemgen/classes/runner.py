"""The one class runner and gradebook writer, for answer-sheet classes and code classes alike.

A class grader (``sheet_class``, ``code_class``) only turns entries into :class:`ClassRow` objects; this
module does the rest the same way for both: each row's report is written to ``reports/`` the moment it
arrives, its item statistics are added to running sums, and only a compact :class:`Record` is kept, then ``gradebook.csv`` (status, flags and overrides
columns), ``summary.txt``/``summary.md``/``summary.json`` and ``items.csv`` are written at the end.
Memory therefore grows by a record (well under a kilobyte) per student, not by a report.

Only these names are (re)written under the output directory. One more file may go: a report in this run's
format left in ``reports/`` by an earlier run into the same directory, for an entry this run wrote no report
for (a student now missing or refused, a submission since removed). Left there, it would contradict the new
gradebook and be handed out with the current reports; it is removed and named in the summary's warnings.
Nothing else there is touched (reports in other formats are other outputs the user asked for). A run holds
the output directory from start to end, so two runs never write into one at once (:mod:`problemgen.outputlock`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from problemgen.classes.rows import ClassRow, Record, record_of
from problemgen.classes.statistics import ItemStatistics
from problemgen.classes.summary import class_summary, flag_copies, items_csv, render_summary
from problemgen.model.core import ProblemgenError
from problemgen.outputlock import holding
from problemgen.outputs import remove_stale
from problemgen.sheets.reports import extension, render, render_json

@dataclass(frozen=True)
class ClassRun:
    """What a class run leaves in memory: the records (in row order) and the summary dict."""

    records: tuple[Record, ...]
    summary: dict
    written: tuple[Path, ...]  # the top-level files
    reports: int  # reports written under reports/

    @property
    def scores(self) -> list[float]:
        return [r.score for r in self.records if r.counted]


def prepare(out_dir: str | Path) -> Path:
    """Create the output directory (and ``reports/``), or one clear error."""
    out = Path(out_dir)
    for parent in (out, *out.parents):
        if parent.exists() and not parent.is_dir():
            raise ProblemgenError(f"{out}: cannot be the output directory ({parent} is a file)")
    try:
        (out / "reports").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProblemgenError(f"{out}: cannot create the output directory ({exc.strerror})") from None
    return out


def run_class(rows: Iterable[ClassRow], out_dir: str | Path, fmt: str, title: str, *, total: int = 0,
              warnings: list[str] = (), progress: Callable[[int, int], None] | None = None) -> ClassRun:
    """Write every row's report as it comes, then the gradebook, summaries and item statistics, holding the
    output directory for the whole run (:mod:`problemgen.outputlock`: a second run into it stops at once)."""
    out = prepare(out_dir)
    with holding(out, writing=True):
        return _run_class(rows, out, fmt, title, total, warnings, progress)


def _run_class(rows: Iterable[ClassRow], out: Path, fmt: str, title: str, total: int, warnings: list[str],
               progress: Callable[[int, int], None] | None) -> ClassRun:
    records: list[Record] = []
    written: list[Path] = []
    items, shared, reports = ItemStatistics(), {}, 0
    ext, report_names = extension(fmt), set()
    for row in rows:
        if row.report is not None:
            name = f"{row.student}.{ext}"
            _write(out / "reports" / name, _render(row, fmt))
            report_names.add(name)
            reports += 1
        records.append(record_of(row, shared))
        if records[-1].counted:
            items.add(row.student, row.report, row.structures)
        if progress:
            progress(len(records), max(total, len(records)))
    copies = flag_copies(records)
    warnings = [*warnings, *_remove_stale_reports(out / "reports", ext, report_names)]
    summary = class_summary(title, records, items.items(), copies, warnings)
    written.append(_write(out / "gradebook.csv", records))
    for name, text in (("summary.txt", render_summary(summary, "text")), ("summary.md", render_summary(summary, "md")),
                       ("summary.json", render_summary(summary, "json")), ("items.csv", items_csv(summary))):
        written.append(_write(out / name, text))
    return ClassRun(tuple(records), summary, tuple(sorted(written)), reports)


def _remove_stale_reports(folder: Path, ext: str, written: set[str]) -> list[str]:
    """Remove the reports of this run's format that this run did not write, once every new report is
    written (a run that fails earlier loses nothing); one warning line each."""
    removal = remove_stale(folder, [f"*.{ext}"], written, shown_as="reports/")
    return [*(f"removed reports/{name}, left by an earlier run: this run wrote no report for it"
              for name in removal.removed), *removal.failed]


def _render(row: ClassRow, fmt: str) -> str:
    return render_json(row.report, compact=True) if fmt == "json" else render(row.report, fmt)


def _write(path: Path, content: str | list[Record]) -> Path:
    """Write text, or the gradebook of a list of records row by row (never the whole CSV in memory)."""
    if path.is_symlink():
        raise ProblemgenError(f"refusing to write {path}: it is a symbolic link")
    try:
        with path.open("w", encoding="utf-8", errors="backslashreplace", newline="") as stream:
            if isinstance(content, str):
                stream.write(content)
            else:
                write_gradebook(content, stream)
    except OSError as exc:
        raise ProblemgenError(f"cannot write {path} ({exc.strerror})") from None
    return path


def _cell(text: str) -> str:
    """Neutralise spreadsheet formulas (a name starting with '=' stays text)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _pts(x: float) -> str:
    x = round(float(x), 2)
    return str(int(x)) if x == int(x) else f"{x:g}"


def gradebook_csv(records: list[Record]) -> str:
    """The gradebook as one string (see :func:`write_gradebook`)."""
    buffer = io.StringIO()
    write_gradebook(records, buffer)
    return buffer.getvalue()


def write_gradebook(records: list[Record], stream) -> None:
    """One row per entry: status, score (fraction), points, flags, overrides and points per problem."""
    groups: dict[str, None] = {}
    for names in {id(r.group_names): r.group_names for r in records}.values():
        groups.update(dict.fromkeys(names))
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["student", "status", "score", "points", "max_points", "variant", "flags", "overrides",
                     "message", *groups])
    for r in records:
        writer.writerow([_cell(r.student), r.status, f"{r.score:.4f}", _pts(r.points),
                         _pts(r.max_points) if r.max_points else "", r.variant, _cell("; ".join(r.flags)),
                         _cell("; ".join((*r.overrides, *r.unapplied_overrides))), _cell(r.message),
                         *_group_cells(r, groups)])


def _group_cells(record: Record, groups: dict[str, None]) -> list[str]:
    points = record.groups
    return [_pts(points[g]) if g in points else "" for g in groups]
