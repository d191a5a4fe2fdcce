"""Grading answers: one part at a time (``grade_part``), a typed line (``grade_text``), a whole sheet.

**The principle.** An answer is *wrong* only when it was read unambiguously and its value is wrong.
Anything the grader cannot read unambiguously is *invalid*: it costs nothing (no points; in the quiz no
streak and no mastery effect), and the message says what was read, where reading stopped, and one way
to write it. The same reader serves the typed line of the quiz and the value in a TOML answer sheet,
so ``0.5`` in a sheet and ``.5`` typed at the prompt are read alike.

Each answer type is one module in :mod:`problemgen.answers.types` owning its reading, checking, key,
"expected format" text and self-check values; this module only dispatches on ``part.type`` and adds
up sheets. ``grade_part`` returns a :class:`PartResult` whose ``score`` is the fraction of the part's
points earned (class grading and credit policies build on it).

Rules, per answer type (these are the ones printed on the sheets; tests pin each one):

- **blank** (``""``, a missing key, or ``[]``): ``wrong``, score 0, feedback "no answer".
- **number**: a TOML number, or text: ``0.25``, ``.25``, ``1/4``, ``2.5×10^3``, ``1e-3``, ``−0.5``, ``√2/2``,
  ``exp(2)/(1+exp(2))``; correct within ``atol + rtol·|key|``, and an exact form equivalent to the part's
  ``exact`` is correct too. A trailing unit equal to the asked one is dropped; the other unit of the
  pair (MB/MiB, GB/GiB, bits/bytes) is converted and graded, naming the unit mix-up when it is one. A
  percent sign is read where a fraction is asked. ``0,5`` (decimal comma), booleans, ``nan`` and
  ``inf`` are invalid.
- **integer**: exact. ``124439808``, ``124,439,808`` / ``124_439_808`` / ``124 439 808`` (groups of three)
  and exact integer expressions (``2^20*4``) are read; a float only when it is integral and below 2^53
  (so it denotes exactly one integer: ``1.2e8`` is 120000000); ``3.5`` is invalid. A unit may follow the
  number only where it is the quantity the part asks (``spec["unit"]``): ``bytes`` or ``B`` (and ``bits``,
  ``KiB``, ``MB`` …, converted exactly) for bytes, ``params`` for parameters, ``FLOPs`` for FLOPs; another
  unit, a unit on a plain count, or ``b`` (bits or bytes?) is invalid, naming what the part asks.
- **matrix**: lists, tuples, numpy's printed form and ``array(...)``, MATLAB ``[1 -1; 2 0]``, rows on
  separate lines; entries may be fractions, ``.5``, ``−0.5`` or exact expressions. The shape must match
  exactly; a 1xN/Nx1/vector mix-up or a flat list of as many entries as a 2-D key is invalid with the
  layout to write; so are decimal commas (``0,5``) between entries separated by spaces or tabs, in a row
  of twice the key's entries (a bare ``[[0,5, 0,5]]`` in a sheet is valid TOML integers, and the sheet
  line is checked for them), or where reading them as decimal points gives the key's layout;
  any other shape is wrong once every entry is read (text that is no matrix at all, ``see attached``,
  is invalid). With the right shape, **partial credit = the fraction of
  entries within tolerance**; feedback names the wrong entries 1-based as (row, column).
- **shape**: dimensions in order: ``(B, h, L, d_k)``, ``[B, L, d]``, ``B x L x d``, ``B × L × d``,
  ``torch.Size([4, 12, 1024])`` or an array; a product as ``h*d_k``, ``d_k*h``, ``h·d_k`` or ``h×d_k``.
  Names match by name and are case-sensitive; products compare as products. A number is accepted for a
  name wherever the problem gave that name's value (``spec["dims"]``), alone or in a product: for
  ``h*d_k`` with h = 8 and d_k = 64 given, ``512``, ``8*64`` and ``8*d_k`` are all right. Names the problem
  defines as equal (``spec["equal"]``, e.g. d_model = h*d_k) are the same dimension, and a number may
  stand for a name such a definition brings in (with h = 3 given, ``d_model/3`` is ``d_k``) or for the
  defined name (with d_model = 192 given, ``192/h`` is ``d_k``); a different name is wrong even when its
  value is equal (``d_v`` for ``d_k``). All or nothing.
- **expression**: exact expressions are compared by value (``sqrt(2)/2`` = ``1/sqrt(2)`` = ``√2/2``); an
  answer containing a decimal is accepted within tolerance only when ``spec["allow_decimal"]``
  (otherwise it is invalid, unless it is exactly the key, like ``0.5`` for ``1/2``).
- **mask**: ``bool`` reads true/false, True/False, T/F and 1/0; ``01`` reads 1/0 and true/false;
  ``additive`` reads 0 and -inf (``-inf``, ``-∞``, ``−∞``); a large negative number such as ``-1e9`` is
  invalid with its own message (it is not −∞); text that is no mask at all is invalid, not a wrong shape.
  All or nothing; feedback names the wrong entries.
- **choice**: ``b``, ``B``, ``(b)``, ``b)``, ``b.``, ``option b``, ``b, d``, ``["b", "d"]``. Single: exactly one
  id, all or nothing. Multiple: **score = max(0, right picks − wrong picks) / number of correct options**.
- **term**: compared ignoring case, spaces, hyphens, underscores and a plural ``s``.

A wrong answer equal (under the part's own tolerance) to a listed Mistake's value names the
misconception (``mistake`` = its tag) and gives its hint as feedback. A number or matrix names one only
as evidence of it (:mod:`problemgen.answers.diagnosis`): the nearest such mistake, nearer than the key,
none on a tie; and none where the answer is only the key rounded or cut to 1–3 decimals or 2–3
significant figures (0.995 given as 1.0), unless it is exactly the mistake's value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from problemgen.sheets.credit import apply_credit
from problemgen.answers import types
from problemgen.answers.arrays import structure  # noqa: F401 - re-exported
from problemgen.answers.base import PartResult, grader_fault, invalid
from problemgen.answers.scalars import as_number  # noqa: F401 - re-exported
from problemgen.answers.text import InvalidAnswer  # noqa: F401 - re-exported
from problemgen.answers.types.integer import as_integer  # noqa: F401 - re-exported
from problemgen.model.core import AnswerPart, frozen_instance
from problemgen.sheets.answersheet import BadValue, key_value, parse_value, read_sheet  # noqa: F401 - key_value re-exported
from problemgen.model.variantfile import WorksheetVariant
from problemgen.sheets.reports import CheckResult, Report

__all__ = ["PartResult", "grade_part", "grade_text", "key_value", "grade_sheet"]


def _is_blank(raw: Any) -> bool:
    return raw is None or raw == [] or (isinstance(raw, str) and not raw.strip())


# ------------------------------------------------------------------------------------------ entry points


def grade_part(part: AnswerPart, raw: Any) -> PartResult:
    """Grade the raw TOML value ``raw`` (str, int, float, bool, list, NonFinite, BadValue) for ``part``.

    A reader's unexpected exception (a bug) is contained here: the answer is invalid with ``fault`` set
    (:func:`~problemgen.answers.base.grader_fault`) and every other answer is graded as usual."""
    if isinstance(raw, BadValue):
        return invalid(raw.message)
    if _is_blank(raw):
        return PartResult("wrong", 0.0, None, "no answer")
    try:
        return types.get(part.type).grade(part, raw)
    except Exception as exc:  # noqa: BLE001 - a bug must cost this answer alone (see grader_fault)
        return grader_fault(exc)


def canonical_answer(part: AnswerPart, raw: Any) -> str:
    """What a student's answer to ``part`` says, as text equal for equal values however written: the answer
    type's reading of it (:meth:`~problemgen.answers.base.AnswerType.canonical`), or, for an answer it cannot
    read, the answer's text with its spacing dropped. Class grading compares wrong answers between sheets
    by this, so ``99``, ``"99"`` and ``99.0`` are one answer."""
    answer_type = types.get(part.type)
    try:
        return answer_type.canonical(part, answer_type.plain_reading(part, raw) or answer_type.read(part, raw))
    except Exception:  # noqa: BLE001 - unreadable (or a reader's bug): the text itself is the evidence
        return "".join((raw if isinstance(raw, str) else repr(raw)).split())


def grade_text(part: AnswerPart, text: str) -> PartResult:
    """Grade one typed line (the quiz) with the same rules: TOML syntax when it is TOML, else text."""
    try:
        raw = parse_value(text)
    except ValueError as exc:
        return invalid(str(exc))
    if isinstance(raw, list) and types.get(part.type).reads_typed_arrays:
        raw = text.strip()  # the type's own reader sees what was typed ("0,5" is not two entries)
    return grade_part(part, raw)


# ------------------------------------------------------------------------------------------ sheets


def part_points(sheet_problem) -> list[float]:
    """Split a problem's points over its parts in proportion to their weights."""
    parts = sheet_problem.problem.parts
    total = sum(p.weight for p in parts) or 1.0
    return [sheet_problem.points * p.weight / total for p in parts]


def grade_sheet(variant, path: str | Path, *, student: str | None = None) -> Report:
    """Grade the answer sheet at ``path`` against a ``WorksheetVariant``.

    A file that cannot be read at all scores every part invalid and says why in ``meta["error"]``;
    a missing file raises ``ProblemgenError``. Warnings (unknown keys, another variant's sheet, a BOM)
    go to ``meta["warnings"]``.
    """
    answers = read_sheet(path)
    return grade_answers(variant, answers, student=student, source=Path(path).name)


def grade_file(answers: str | Path, variant_path: str | Path) -> Report:
    """Single mode of ``problemgen grade``: load the frozen variant, grade one sheet."""
    return grade_sheet(WorksheetVariant.load(variant_path), answers)


def grade_answers(variant, answers, *, student: str | None = None, source: str = "") -> Report:
    """Grade already-read :class:`SheetAnswers` (split out so tests and class mode can reuse it)."""
    warnings = [*answers.warnings, *answers.meta_problems]
    sheet_variant = answers.meta.get("variant")
    if answers.error is None and sheet_variant not in (None, "", variant.variant_id):
        warnings.append(f"the sheet is for variant {str(sheet_variant)[:80]!r}, graded against {variant.variant_id!r}")
    results, faults = [], []
    for sheet_problem in variant.problems:
        table = answers.tables.get(sheet_problem.id, {})
        known = {p.key for p in sheet_problem.problem.parts}
        for extra in sorted(set(table) - known):
            warnings.append(f"[{sheet_problem.id}] has no part {str(extra)[:40]!r} (ignored)")
        for part, points in zip(sheet_problem.problem.parts, part_points(sheet_problem)):
            if answers.error is not None:
                verdict = PartResult("invalid", 0.0, None, "the answer sheet could not be read")
            elif not isinstance(table, dict):
                verdict = PartResult("invalid", 0.0, None, f"[{sheet_problem.id}] is not a table")
            else:
                verdict = apply_credit(grade_part(part, table.get(part.key)), sheet_problem.credit,
                                       sheet_problem.mistake_credit)
                if verdict.fault:
                    faults.append(f"{sheet_problem.id}.{part.key}")
                    warnings.append(f"[{sheet_problem.id}] {part.key}: the grader failed ({verdict.fault}); "
                                    "regrade this answer with a fixed problemgen")
            results.append(_check_result(sheet_problem.id, part.key, points, verdict))
    for name in sorted(set(answers.tables) - {p.id for p in variant.problems}):
        warnings.append(f"table [{str(name)[:40]}] is not a problem of this worksheet (ignored)")
    meta = {"variant": variant.variant_id, "student": student or variant.student, "sheet": source,
            "warnings": _at_most(MAX_WARNINGS, warnings)}
    if answers.error is not None:
        meta["error"] = answers.error
    if faults:  # the parts a bug made invalid: class runs flag the student for a regrade
        meta["faults"] = faults
    if answers.meta_problems:  # class runs flag the sheet: its [meta] cannot say whose it is
        meta["meta_problems"] = list(answers.meta_problems)
    return Report(title=f"{variant.title} ({variant.variant_id})", results=tuple(results), meta=meta)


MAX_WARNINGS = 50
"""Warnings a report lists; a sheet of 20,000 stray keys would otherwise write a megabyte report per student."""


def _at_most(limit: int, warnings: list[str]) -> list[str]:
    """The first ``limit`` warnings, then one line counting the rest (``meta["faults"]`` keeps every fault)."""
    if len(warnings) <= limit:
        return warnings
    return [*warnings[:limit], f"... and {len(warnings) - limit} more warnings"]


def _check_result(group: str, key: str, points: float, verdict: PartResult) -> CheckResult:
    """The report row of one part. Built with every field named (``frozen_instance``): a class run makes
    one per part of every sheet, and the generated ``__init__`` was a third of the cost of a sheet's
    bookkeeping."""
    return frozen_instance(CheckResult, {
        "name": f"{group}.{key}", "status": verdict.status, "passed": verdict.passed, "score": points * verdict.score,
        "max_score": points, "mistake": verdict.mistake, "feedback": verdict.feedback, "visible": True, "group": group})
