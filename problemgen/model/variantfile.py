"""The frozen worksheet variant (``variant.json``): what grading reads instead of regenerating problems.

Writing the problems' answers, tolerances and mistakes to JSON next to the worksheet means a grade
never depends on the numpy build (or problemgen version) that generated the worksheet.

Layout::

    {"schema": "problemgen.variant/1", "variant_id": "...", "title": "...", "bank": "...",
     "seed": 7, "student": null,
     "problems": [{"id": "p1", "points": 2.0, "problem": {<Problem.to_dict()>}}, ...]}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from problemgen.model.core import Problem, ProblemgenError, frozen_instance
from problemgen.userfiles import read_capped

SCHEMA = "problemgen.variant/1"
MAX_VARIANT_BYTES = 64 * 1024 * 1024


def parse_variant_json(data: bytes) -> object:
    """The JSON data of a variant file, parsed by orjson: grading reads one per student, and orjson parses
    them in about half the standard library's time. It refuses ``NaN``, ``Infinity`` and bytes that are not
    UTF-8, which the standard parser lets through and a frozen variant never holds, raising a
    :class:`json.JSONDecodeError` like it. An integer beyond 64 bits comes back as a float; writing a variant
    refuses such integers (:meth:`WorksheetVariant.to_json_bytes`), so only a hand-made file can hold one."""
    import orjson  # lazy: only readers of variant files pay for the import

    return orjson.loads(data)


@dataclass(frozen=True)
class SheetProblem:
    """A problem placed on a worksheet: its id on the sheet (``p1``…), its points and its credit policy
    (``credit``: ``entries`` or ``all-or-nothing``; ``mistake_credit``: what a named mistake earns)."""

    id: str
    points: float
    problem: Problem
    credit: str = "entries"
    mistake_credit: float = 0.0

    def to_dict(self) -> dict:
        data = {"id": self.id, "points": self.points, "problem": self.problem.to_dict()}
        if (self.credit, self.mistake_credit) != ("entries", 0.0):  # default policy: the file stays as it was
            data.update(credit=self.credit, mistake_credit=self.mistake_credit)
        return data


@dataclass(frozen=True)
class WorksheetVariant:
    variant_id: str
    title: str
    bank: str
    seed: int
    problems: tuple[SheetProblem, ...]
    student: str | None = None

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "variant_id": self.variant_id,
            "title": self.title,
            "bank": self.bank,
            "seed": self.seed,
            "student": self.student,
            "problems": [p.to_dict() for p in self.problems],
        }

    def to_json(self) -> str:
        """Deterministic, compact JSON (sorted keys, trailing newline): :meth:`to_json_bytes` as text."""
        return self.to_json_bytes().decode("utf-8")

    def to_json_bytes(self) -> bytes:
        """Deterministic, compact UTF-8 JSON (sorted keys, trailing newline), as written to ``variant.json``.

        orjson writes it: a class set writes one of these per student, and the standard library's encoder
        took about 7 % of a class set's CPU for them, six times orjson's time (``bench/classset.py``). Floats
        come out as their shortest round-trip form (``1e-05`` is written ``0.00001``), which any JSON reader
        reads back to the same float. Every value was made plain and finite when the problem was frozen
        (:func:`problemgen.model.core.to_jsonable`); ``python -m json.tool variant.json`` pretty-prints one.
        """
        import orjson  # lazy: only writers of variant files pay for the import

        try:
            return orjson.dumps(self.to_dict(), option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError as exc:  # an integer beyond 64 bits: a library caller's seed, say
            raise ProblemgenError(f"cannot write the variant file: {exc}") from exc

    @classmethod
    def from_dict(cls, data: dict) -> "WorksheetVariant":
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ProblemgenError(f"not a problemgen variant file (expected schema {SCHEMA!r})")
        try:
            problems = tuple(frozen_instance(SheetProblem, {  # every field: see frozen_instance
                "id": p["id"], "points": float(p["points"]), "problem": Problem.from_dict(p["problem"]),
                "credit": str(p.get("credit", "entries")), "mistake_credit": float(p.get("mistake_credit", 0.0))})
                for p in data["problems"])
            return cls(
                variant_id=data["variant_id"],
                title=data["title"],
                bank=data["bank"],
                seed=int(data["seed"]),
                problems=problems,
                student=data.get("student"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ProblemgenError(f"malformed variant file: {exc}") from exc

    @classmethod
    def load(cls, path: str | Path) -> "WorksheetVariant":
        path = Path(path)
        try:  # read_capped: a FIFO or /dev/zero in its place is refused, never waited on or read without end
            data = parse_variant_json(read_capped(path, MAX_VARIANT_BYTES, "variant file"))
        except json.JSONDecodeError as exc:  # orjson's error is one, for bytes that are not UTF-8 too
            raise ProblemgenError(f"{path}: variant file is not valid JSON ({exc})") from exc
        return cls.from_dict(data)
