"""Class mode: grade a directory of answer sheets, one per student, against each student's own variant.

The class directory is what ``problemgen worksheet --roster`` wrote (``manifest.json`` and one
``keys/<student>/variant.json`` each; a set written before handouts and keys were apart has
``<student>/variant.json``, which is read too); the submissions directory holds ``<student>.toml`` or
``<student>/answers.toml``, matched ignoring case (``Carol.toml`` and ``carol/Answers.toml`` are carol's;
rows keep the roster's spelling), or a course platform's download as it comes (``classes.layouts``). Every
roster student and every entry of the submissions directory gets one row in the status vocabulary of
``classes.rows``; one student's bad file never stops the run; rows come back in roster order whatever the
number of worker processes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from problemgen.classes import entries, layouts
from problemgen.classes.layouts import Layout
from problemgen.classes.manifest import has_manifest, manifest_path, read_manifest
from problemgen.classes.overrides import apply_overrides, for_roster, not_applied, read_overrides
from problemgen.classes.rows import DUPLICATE, GRADED, MISMATCH, MISSING, REFUSED, UNREADABLE, ClassRow
from problemgen.classes.runner import ClassRun, run_class
from problemgen.classes.workers import ordered_map, worker_count
from problemgen.model.core import ProblemgenError
from problemgen.sheets.grading import canonical_answer, grade_answers
from problemgen.model.variantfile import WorksheetVariant
from problemgen.sheets.answersheet import read_sheet
from problemgen.outputlock import holding
from problemgen.outputs import check_output_apart, check_output_file
from problemgen.userfiles import kind_of

try:  # the C BLAKE2 that hashlib itself serves, without hashlib loading OpenSSL (10 ms and 4 MB) beside it
    from _blake2 import blake2b
except ImportError:  # an interpreter without that module
    from hashlib import blake2b

_SAFE_STUDENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def roster(class_dir: str | Path) -> tuple[str, list[str]]:
    """(title, student ids) of a class directory written by ``problemgen worksheet --roster``.

    The ids come from ``manifest.json`` (``students[].directory``), which a class set writes last: a class
    set (``handouts/`` beside the keys) without it is an interrupted run, refused, since grading it would
    leave out the students it never reached. Without a manifest or handouts (keys put together by hand, or
    the older layout), every folder of ``keys/`` (else of the class folder) holding a ``variant.json`` is a
    student. Ids that are not safe names are refused.
    """
    class_dir = Path(class_dir)
    if not class_dir.is_dir():
        raise ProblemgenError(f"{class_dir}: class directory not found")
    where = manifest_path(class_dir)
    title, ids = class_dir.name, []
    if has_manifest(class_dir):
        manifest = read_manifest(class_dir)
        try:
            title = str(manifest.get("title") or title)
            ids = [str(entry["student"]) for entry in manifest["students"]]
        except (KeyError, TypeError) as exc:
            raise ProblemgenError(f"{where}: not a readable class manifest ({exc})") from None
    elif (class_dir / "handouts").is_dir():  # a class set writes its manifest last: this one did not finish
        raise ProblemgenError(f"{class_dir}: no manifest.json, so this class set did not finish writing (some "
                              "students may be missing); run the same `problemgen worksheet BANK --roster ...` "
                              "again with --force")
    else:  # keys put together by hand, or the older layout (<id>/variant.json in the class folder itself)
        keys = class_dir / "keys" if (class_dir / "keys").is_dir() else class_dir
        ids = sorted(p.name for p in keys.iterdir() if (p / "variant.json").is_file())
    seen: dict[str, str] = {}
    for student in ids:
        if not _SAFE_STUDENT.fullmatch(student):
            raise ProblemgenError(f"{where}: student directory {student[:40]!r} is not a safe name")
        other = seen.setdefault(entries.student_key(student), student)
        if other != student:  # submissions are matched ignoring case: which of the two would Ana.toml be?
            raise ProblemgenError(f"{class_dir}: students {other!r} and {student!r} differ only in case")
    if not ids:
        raise ProblemgenError(f"{class_dir}: no students (no manifest.json and no keys/*/variant.json)")
    return title, ids


def variant_path(class_dir: str | Path, student: str) -> Path:
    """Where a student's frozen variant lives: ``keys/<id>/variant.json`` (or the older ``<id>/variant.json``)."""
    class_dir = Path(class_dir)
    keyed = class_dir / "keys" / student / "variant.json"
    return keyed if keyed.exists() or not (class_dir / student / "variant.json").exists() else class_dir / student / "variant.json"


def variant_owners(class_dir: str | Path) -> dict[str, str]:
    """variant id -> student id, from ``manifest.json`` (empty without one, or with one that cannot be read)."""
    try:
        manifest = read_manifest(class_dir)
        return {str(e["variant_id"]): str(e["student"]) for e in manifest["students"] if "variant_id" in e}
    except (ProblemgenError, KeyError, TypeError):
        return {}


def structure_label(problem) -> str:
    """The structural variant of a problem, for per-variant item means: sizes, mask representation and
    convention (what fair variants keep equal for every student), e.g. ``4x4 additive column``."""
    labels = []
    for part in problem.parts:
        if isinstance(part.value, list) and part.value and isinstance(part.value[0], list):
            labels.append(f"{len(part.value)}x{len(part.value[0])}")
        if part.spec.get("representation"):
            labels.append(str(part.spec["representation"]))
    convention = problem.params.get("convention") if isinstance(problem.params, dict) else None
    if convention:
        labels.append(str(convention))
    return " ".join(dict.fromkeys(labels)) or "-"


@dataclass(frozen=True)
class SheetJob:
    """One roster student to grade: where their variant and their (already vetted) submission are."""

    class_dir: str
    student: str
    sheet: str | None  # the answers file, None when missing
    overrides: tuple = ()


@dataclass(frozen=True)
class ClassIndex:
    """Whose a sheet says it is, looked up the same for every student: made once per class run and sent to
    each worker once (in every job it would be pickled again with each batch), and keyed so that a sheet
    naming someone else costs one look-up, not a walk over the roster."""

    owners: dict[str, str]  # variant id -> student id, from the manifest
    ids: dict[str, str]  # a student id as ``entries.student_key`` folds it -> the id as the manifest spells it

    @classmethod
    def of(cls, owners: dict[str, str]) -> ClassIndex:
        ids: dict[str, str] = {}
        for student in owners.values():
            ids.setdefault(entries.student_key(student), student)
        return cls(owners, ids)


NO_INDEX = ClassIndex({}, {})
"""A class without a manifest: no sheet can be recognised as another student's."""


def grade_student(job: SheetJob, index: ClassIndex = NO_INDEX) -> ClassRow:
    """Grade one student's submission against their own frozen variant; never raises for bad input."""
    try:
        variant = WorksheetVariant.load(variant_path(job.class_dir, job.student))
    except ProblemgenError as exc:
        return ungraded_row(job.student, f"{REFUSED}: the variant cannot be loaded", str(exc), job.overrides)
    structures = {p.id: structure_label(p.problem) for p in variant.problems}
    if job.sheet is None:
        return ungraded_row(job.student, MISSING, "no answer sheet submitted", job.overrides, structures)
    try:
        answers = read_sheet(job.sheet)
        report = grade_answers(variant, answers, student=job.student, source=Path(job.sheet).name)
    except ProblemgenError as exc:
        return ungraded_row(job.student, UNREADABLE, str(exc), job.overrides, structures)
    except Exception as exc:  # noqa: BLE001 - one student's file must never stop the class run
        return ungraded_row(job.student, UNREADABLE, f"internal grader error: {type(exc).__name__}: {exc}",
                            job.overrides)
    wrong = _wrong_answers(report, answers, variant)  # the evidence for copies is what was written, before any regrade
    report, applied, skipped = apply_overrides(report, job.overrides)
    return ClassRow(job.student, _status(job, index, answers, report), report, report.meta.get("error", ""),
                    structures, wrong, applied, skipped)


def ungraded_row(student: str, status: str, message: str, overrides: tuple = (), structures: dict | None = None
                 ) -> ClassRow:
    """The row of a roster student with no graded sheet: their overrides are listed as not applied."""
    return ClassRow(student, status, message=message, structures=structures or {},
                    unapplied_overrides=not_applied(overrides, status))


def _status(job: SheetJob, index: ClassIndex, answers, report) -> str:
    """Graded, or another student's sheet: named by its variant id, else by its ``student`` line, which
    matches a roster id ignoring case as submission names do (``ALICE`` is alice)."""
    if report.meta.get("error"):
        return UNREADABLE
    owner = index.owners.get(str(answers.meta.get("variant", "")))
    if owner is None:
        owner = _roster_id(job, index, str(answers.meta.get("student", "")))
    if owner is not None and owner != job.student:
        return f"{MISMATCH}: belongs to {owner}"
    return GRADED


def _roster_id(job: SheetJob, index: ClassIndex, named: str) -> str | None:
    """The roster id a sheet's ``student`` line names, ignoring case; None when it names nobody on it."""
    key = entries.student_key(named)
    if not key or key == entries.student_key(job.student):
        return job.student if key else None
    return index.ids.get(key)


def _wrong_answers(report, answers, variant) -> tuple[int, ...]:
    """A fingerprint of (part, the value read) for every non-blank wrong answer: the evidence for copies.

    The value as its answer type reads it (``canonical_answer``), not the text: ``99``, ``"99"`` and ``99.0``,
    or ``(B, h, S, L)`` and ``(B,h,S,L)``, are one wrong answer, as the sheet says quotes are optional."""
    found, parts = [], None
    for result in report.results:
        if result.status != "wrong" or result.feedback == "no answer":
            continue
        group, _, key = result.name.partition(".")
        table = answers.tables.get(group)
        if isinstance(table, dict):
            parts = parts or {f"{p.id}.{part.key}": part for p in variant.problems for part in p.problem.parts}
            try:
                found.append(_fingerprint(result.name, canonical_answer(parts[result.name], table.get(key))))
            except RecursionError:  # nested too deeply to write out: evidence lost, never the class run
                continue
    return tuple(found)


def _fingerprint(part: str, text: str) -> int:
    """56 bits of a hash of one wrong answer, the same in every process (unlike ``hash``), so workers agree.

    Copy detection only asks which sheets share an answer, and a class run keeps this for every wrong
    answer of every sheet until its end: kept as text, it made a sheet of wrong answers hold 9 KB.
    Two different answers share a fingerprint with odds of about 1 in 7·10^16 per pair.
    """
    data = f"{part}\0{text}".encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(data, digest_size=7).digest(), "big")


def class_rows(submissions_dir: str | Path, class_dir: str | Path, *, jobs: int | None = 1,
               overrides: dict | None = None, layout: Layout | None = None,
               warnings: list[str] | None = None) -> tuple[str, int, Iterator[ClassRow]]:
    """(title, number of rows, the rows): one per roster student in roster order, then one per entry of
    ``submissions_dir`` that belongs to nobody on the roster (refused, with the reason).

    ``overrides`` (student -> overrides, as ``read_overrides`` gives them) go to roster ids ignoring
    case; one naming a student not on the roster is a ProblemgenError before anything is graded.
    ``layout`` reads a platform's download (see ``classes.layouts``; None: entries named by roster id);
    what it notes for the summary (late submissions, students it cannot match) is added to ``warnings``.
    """
    submissions_dir = Path(submissions_dir)
    if not submissions_dir.is_dir():
        raise ProblemgenError(f"{submissions_dir}: submissions directory not found")
    title, students = roster(class_dir)
    index = ClassIndex.of(variant_owners(class_dir))
    if layout is None:
        found, refused, strays = _match_entries(submissions_dir, students)
    else:
        found, refused, strays = _match_download(submissions_dir, students, layout, warnings)
    overrides = for_roster(overrides or {}, students, str(class_dir))
    work = [SheetJob(str(class_dir), s, found.get(s), tuple(overrides.get(s, ()))) for s in students if s not in refused]
    total = len(students) + len(strays)

    def rows() -> Iterator[ClassRow]:
        graded = iter(ordered_map(grade_student, work, worker_count(jobs, len(work)), index))
        for student in students:
            if student in refused:
                status, message = refused[student]
                yield ungraded_row(student, status, message, tuple(overrides.get(student, ())))
            else:
                yield next(graded)
        yield from strays

    return title, total, rows()


def _match_entries(submissions_dir: Path, students: list[str]):
    """Sort the entries: a vetted sheet per student, refusals per student, rows for strays. Entry names
    match roster ids ignoring case; the results are keyed by the roster's spelling."""
    roster_ids = {entries.student_key(s): s for s in students}
    found: dict[str, str] = {}
    refused: dict[str, tuple[str, str]] = {}
    strays: list[ClassRow] = []
    for entry in entries.scan(submissions_dir, (".toml",), _holds_sheet):
        owner = roster_ids.get(entries.student_key(entry.name if entry.accepted else _owner_of(entry)))
        if owner is None:
            reason = entry.refused or "not a student of this class"
            strays.append(ClassRow(entry.name if not entry.accepted else entry.path.name, _refusal(reason), message=reason))
            continue
        if not entry.accepted:
            refused[owner] = (_refusal(entry.refused), entry.refused)
        elif entry.is_dir:
            sheet, problem = _sheet_in(entry.path)
            if problem:
                refused[owner] = (_refusal(problem), problem)
            elif sheet is not None:
                found[owner] = str(sheet)
        else:
            found[owner] = str(entry.path)
    return found, refused, strays


def _match_download(submissions_dir: Path, students: list[str], layout: Layout, warnings: list[str] | None):
    """:func:`_match_entries` for a platform's download: whose each entry is comes from its name as the
    platform writes it (``classes.layouts``), never from a plain file name."""
    known = layouts.identities(layout, students)
    download = layouts.sort_download(submissions_dir, layout.name, known, (".toml",), _holds_any_sheet)
    if warnings is not None:
        warnings.extend([*known.warnings, *download.notes()])
    found: dict[str, str] = {}
    refused = {student: (_refusal(reason), reason) for student, reason in download.refused.items()}
    for student, entry in download.found.items():
        sheet, problem = _sheet_in(entry.path, any_toml=True) if entry.is_dir else (entry.path, "")
        if problem:
            refused[student] = (_refusal(problem), problem)
        elif sheet is not None:
            found[student] = str(sheet)
    strays = [ClassRow(e.name, _refusal(e.refused), message=e.refused) for e in download.strays]
    return found, refused, strays


def _owner_of(entry: entries.Entry) -> str:
    """The student a refused entry would have stood for (``ana.toml`` or ``ana.TOML`` -> ``ana``)."""
    name = entry.path.name
    return name[:-5] if name.lower().endswith(".toml") else name


def _refusal(reason: str) -> str:
    return DUPLICATE if reason.startswith(DUPLICATE) else f"{REFUSED}: {reason}"


ANSWER_FILE = "answers.toml"


def _answer_files(directory: Path, any_toml: bool = False) -> list[str]:
    """The names in ``directory`` that are ``answers.toml`` ignoring case (ASCII only: no look-alikes);
    with ``any_toml``, where there is none, every ``.toml`` file (a platform's folder keeps the name the
    student gave the upload, such as ``answers (1).toml``).

    Every name is looked at, since a second spelling makes the folder ambiguous; streamed, so a folder
    of a million files costs time, never memory (of other ``.toml`` files two are kept: two are too many).
    """
    answers, tomls = [], []
    with os.scandir(directory) as listing:
        for item in listing:
            if item.name.isascii() and item.name.lower() == ANSWER_FILE:
                answers.append(item.name)
            elif any_toml and len(tomls) < 2 and item.name.lower().endswith(".toml") and not item.name.startswith("."):
                tomls.append(item.name)
    return sorted(answers or tomls)


def _holds_sheet(directory: Path) -> bool:
    """Whether a student folder has an answer file at all."""
    return bool(_answer_files(directory))


def _holds_any_sheet(directory: Path) -> bool:
    """Whether a platform's student folder has an answer file, under any name ending in ``.toml``."""
    return bool(_answer_files(directory, any_toml=True))


def _sheet_in(directory: Path, any_toml: bool = False) -> tuple[Path | None, str]:
    """``<student>/answers.toml`` (any case; with ``any_toml``, else the folder's one ``.toml`` file) when
    it is one regular file; (None, reason) for a link, a special file or two of them; (None, "") for none."""
    import stat

    try:
        names = _answer_files(directory, any_toml)
    except OSError as exc:
        return None, f"{directory.name}/ cannot be listed ({exc.strerror})"
    if not names:
        return None, ""
    if len(names) > 1:
        count = f"{len(names)}" if any(n.lower() == ANSWER_FILE for n in names) else "several"
        return None, f"{DUPLICATE}: {count} answer files in {directory.name}/ ({', '.join(names)})"
    sheet = directory / names[0]
    try:
        mode = os.lstat(sheet).st_mode
    except OSError as exc:
        return None, f"{sheet.name} cannot be examined ({exc.strerror})"
    if stat.S_ISLNK(mode):
        return None, f"{sheet.name} is a symbolic link"
    if not stat.S_ISREG(mode):
        return None, f"{sheet.name} is {kind_of(mode)}, not a regular file"
    return sheet, ""


def check_grade_paths(answers: Path, variant: Path | None, class_dir: Path | None, output: Path | None,
                      class_only: object = None) -> None:
    """Refuse every misuse of ``grade``'s paths with one clear message (the CLI prints one ``error:`` line)."""
    if (variant is None) == (class_dir is None):
        raise ProblemgenError("give either --variant VARIANT.json (one sheet) or --variants CLASS_DIR (a class)")
    if variant is not None:
        if class_only:
            raise ProblemgenError("--overrides applies to a class run (--variants CLASS_DIR)")
        if variant.is_dir():
            raise ProblemgenError(f"--variant {variant}: is a directory; for a class directory use --variants {variant}")
        if answers.is_dir():
            raise ProblemgenError(f"{answers}: is a directory; to grade a directory of sheets use --variants CLASS_DIR")
        if output is not None:
            check_output_apart(output, {"answer sheet": answers, "variant file": variant})
            check_output_file(output)
        return
    if class_dir.exists() and not class_dir.is_dir():
        raise ProblemgenError(f"--variants {class_dir}: is a file; for one sheet's variant.json use --variant {class_dir}")
    if answers.exists() and not answers.is_dir():
        raise ProblemgenError(f"{answers}: is a file; to grade one sheet use --variant VARIANT.json")


def grade_class(submissions_dir: str | Path, class_dir: str | Path, out_dir: str | Path, fmt: str = "json", *,
                jobs: int | None = 1, overrides_file: str | Path | None = None,
                progress: Callable[[int, int], None] | None = None, layout: Layout | None = None) -> ClassRun:
    """Grade every roster student's sheet and write the class outputs (see ``classes.runner``);
    ``layout`` reads a platform's download (see ``classes.layouts``)."""
    check_output_apart(out_dir, {"submissions directory": submissions_dir, "class directory": class_dir})
    overrides = read_overrides(overrides_file) if overrides_file else {}
    warnings = entries.system_files_note(submissions_dir)
    with holding(class_dir, writing=False):  # no class set rewritten under the run: every key of one set
        title, total, rows = class_rows(submissions_dir, class_dir, jobs=jobs, overrides=overrides, layout=layout,
                                        warnings=warnings)
        return run_class(rows, out_dir, fmt, title, total=total, progress=progress, warnings=warnings)
