"""The one class runner and gradebook writer, for answer-sheet classes and code classes alike.

A class grader (``sheet_class``, ``code_class``) only turns entries into :class:`ClassRow` objects; this
module does the rest the same way for both: each row's report is written (to a hidden temporary beside its
place in ``reports/``) the moment it arrives, its item statistics are added to running sums, and only a
compact :class:`Record` is kept, then ``gradebook.csv`` (status, flags and overrides columns),
``summary.txt``/``summary.md``/``summary.json`` and ``items.csv`` are written at the end, and the reports
and those five files are renamed into place together. Memory therefore grows by a record (well under a
kilobyte) and a pending rename per student, not by a report. Every file is written whole or not at all
(``problemgen.safewrite``): a run that fills the disk or is stopped leaves an earlier run's reports,
gradebook and summaries as they were, never a truncated file nor new reports beside an old gradebook.

Only these names are (re)written under the output directory. One more file may go: a report in this run's
format left in ``reports/`` by an earlier run into the same directory, for an entry this run wrote no report
for (a student now missing or refused, a submission since removed). Left there, it would contradict the new
gradebook and be handed out with the current reports; it is removed and named in the summary's warnings,
after the gradebook and summaries are written (a run that fails before removes nothing).
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
from problemgen.errors import WriteFailed
from problemgen.outputlock import holding
from problemgen.outputs import make_folder, remove_files, remove_leftovers, stale_files, why_unwritable
from problemgen.safewrite import Staged
from problemgen.sheets.reports import REPORT_FORMATS, extension, render, render_json

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
        make_folder(out / "reports")  # never group- or world-writable, whatever the umask
    except OSError as exc:
        raise ProblemgenError(f"{out}: cannot create the output directory ({exc.strerror})") from None
    for folder in (out, out / "reports"):  # before any grading, as an output file that cannot be written
        if reason := why_unwritable(folder):
            raise ProblemgenError(f"{folder}: cannot be written ({reason})")
    return out


def run_class(rows: Iterable[ClassRow], out_dir: str | Path, fmt: str, title: str, *, total: int = 0,
              warnings: list[str] = (), progress: Callable[[int, int], None] | None = None) -> ClassRun:
    """Write every row's report as it comes, then the gradebook, summaries and item statistics together,
    and only then remove the reports an earlier run left for entries this run has none for; the output
    directory is held for the whole run (:mod:`problemgen.outputlock`: a second run into it stops at once)."""
    out = prepare(out_dir)
    with holding(out, writing=True):
        return _run_class(rows, out, fmt, title, total, warnings, progress)


def _run_class(rows: Iterable[ClassRow], out: Path, fmt: str, title: str, total: int, warnings: list[str],
               progress: Callable[[int, int], None] | None) -> ClassRun:
    remove_leftovers(out, RESULTS)  # what a killed run left unfinished (problemgen.outputs)
    remove_leftovers(out / "reports", [f"*.{f.extension}" for f in REPORT_FORMATS.values()])  # the folder stays
    records: list[Record] = []
    items, shared = ItemStatistics(), {}
    ext, report_names = extension(fmt), set()
    try:
        with Staged() as reports:  # each report whole in a temporary now, all renamed into place at the end
            for row in rows:
                if row.report is not None:
                    name = f"{row.student}.{ext}"
                    reports.add(out / "reports" / name, _render(row, fmt))
                    report_names.add(name)
                records.append(record_of(row, shared))
                if records[-1].counted:
                    items.add(row.student, row.report, row.structures)
                if progress:
                    progress(len(records), max(total, len(records)))
            stale = stale_files(out / "reports", [f"*.{ext}"], report_names)
            summary = class_summary(title, records, items.items(), flag_copies(records),
                                    [*warnings, *map(_removed, stale)])
            written = _write_results(out, records, summary, reports)
    except WriteFailed as exc:  # a full disk or quota midway: nothing of this run is in place, the earlier run whole
        raise WriteFailed(f"{exc}; the class run stopped before its reports, {out / 'gradebook.csv'} and the "
                          "summaries were put in place (an earlier run's are kept); run it again once there is "
                          "room") from None
    removal = remove_files(out / "reports", stale, shown_as="reports/")
    if removal.failed:  # the summary named them removed: say which stayed instead
        kept = [*warnings, *map(_removed, removal.removed), *removal.failed]
        summary = class_summary(title, records, items.items(), flag_copies(records), kept)
        _write_summaries(out, summary)
    return ClassRun(tuple(records), summary, written, len(report_names))


RESULTS = ("gradebook.csv", "summary.txt", "summary.md", "summary.json", "items.csv")
"""The top-level files of a class run, written together at its end."""


def _removed(name: str) -> str:
    return f"removed reports/{name}, left by an earlier run: this run wrote no report for it"


def _write_results(out: Path, records: list[Record], summary: dict, reports: Staged) -> tuple[Path, ...]:
    """``gradebook.csv`` (row by row, never the whole CSV in memory), the summaries and ``items.csv``, put in
    place together with the staged ``reports`` once all are written: a full disk leaves an earlier run's
    gradebook, summaries and reports as they were, never new reports beside an old gradebook."""
    with Staged(durable=True) as staged:
        with staged.open(out / "gradebook.csv", text=True) as stream:
            write_gradebook(records, stream)
        _stage_summaries(staged, out, summary)
        staged.add(out / "items.csv", items_csv(summary))
        reports.commit()  # renames only: nothing is left that needs room
        return tuple(sorted(Path(path) for path in staged.commit()))


def _write_summaries(out: Path, summary: dict) -> None:
    with Staged(durable=True) as staged:
        _stage_summaries(staged, out, summary)
        staged.commit()


def _stage_summaries(staged: Staged, out: Path, summary: dict) -> None:
    for name, fmt in (("summary.txt", "text"), ("summary.md", "md"), ("summary.json", "json")):
        staged.add(out / name, render_summary(summary, fmt))


def _render(row: ClassRow, fmt: str) -> str:
    return render_json(row.report, compact=True) if fmt == "json" else render(row.report, fmt)


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
