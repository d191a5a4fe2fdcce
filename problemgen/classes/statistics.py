"""Item statistics and copy detection over the compact records of a class run.

Accumulated row by row as reports arrive (running sums, never the reports). Per question part, over
the counted rows (``graded``; another student's sheet is left out):

- **mean** — the mean fraction of the part's points (the classical difficulty index);
- **discrimination** — the point-biserial (Pearson) correlation between the part's fraction and the
  student's score on the *rest* of the sheet (corrected item-total), ``None`` when either is constant.
  Near 0 or negative: the part does not separate strong from weak students (check it);
- **blank rate**, **invalid rate**, the misconceptions seen with the students who showed each, and for a
  structurally varied item the mean per structural variant.

Copies. Students whose variants differ almost never write the same *wrong* value by chance; two sheets
that share at least :data:`COPY_MIN_SHARED` wrong answers that nobody else in the class gave are flagged
as a possible copy (a common mistake shared by three or more students is not evidence).
"""

from __future__ import annotations

import math
from collections import defaultdict

from problemgen.classes.rows import Record

COPY_MIN_SHARED = 2


def _round(x: float) -> float:
    return round(float(x), 4) + 0.0


class _Part:
    """Running sums of one part: enough for its mean, blank and invalid rates, and the Pearson correlation
    of its fraction ``x`` with the rest of the sheet ``y`` — without keeping any student's answers."""

    __slots__ = ("n", "sx", "sy", "sxx", "syy", "sxy", "blank", "invalid", "mistakes", "variants")

    def __init__(self) -> None:
        self.n = 0
        self.sx = self.sy = self.sxx = self.syy = self.sxy = 0.0
        self.blank = self.invalid = 0
        self.mistakes: dict[str, list[str]] = {}
        self.variants: dict[str, list[float]] = {}  # label -> [students, sum of fractions]

    def add(self, x: float, y: float) -> None:
        self.n += 1
        self.sx, self.sy, self.sxx, self.syy, self.sxy = (
            self.sx + x, self.sy + y, self.sxx + x * x, self.syy + y * y, self.sxy + x * y)

    def discrimination(self) -> float | None:
        if self.n < 3:
            return None
        vx = self.sxx - self.sx * self.sx / self.n
        vy = self.syy - self.sy * self.sy / self.n
        if vx <= 1e-12 or vy <= 1e-12:
            return None
        return (self.sxy - self.sx * self.sy / self.n) / math.sqrt(vx * vy)


class ItemStatistics:
    """Item statistics accumulated row by row (memory: one :class:`_Part` per question part)."""

    def __init__(self) -> None:
        self.parts: dict[str, _Part] = {}

    def add(self, student: str, report, structures: dict) -> None:
        """Count one graded report; ``structures`` maps a problem id to its structural variant label."""
        total, possible = report.points, report.max_points
        for r in report.results:
            part = self.parts.setdefault(r.name, _Part())
            x = r.score / r.max_score if r.max_score else 0.0
            rest = (total - r.score) / (possible - r.max_score) if possible - r.max_score > 1e-12 else 0.0
            part.add(x, rest)
            part.blank += r.feedback == "no answer" and not r.passed
            part.invalid += r.outcome == "invalid"  # an unreadable answer or crashed code alike
            if r.mistake:
                part.mistakes.setdefault(r.mistake, []).append(student)
            if r.group in structures:
                tally = part.variants.setdefault(structures[r.group], [0, 0.0])
                tally[0] += 1
                tally[1] += x

    def items(self) -> list[dict]:
        """One dict per part name, in sheet order (see the module docstring for each field)."""
        return [self._item(name, part) for name, part in self.parts.items()]

    @staticmethod
    def _item(name: str, part: _Part) -> dict:
        d = part.discrimination()
        return {
            "part": name, "answers": part.n, "mean": _round(part.sx / part.n),
            "discrimination": None if d is None else _round(d),
            "blank_rate": _round(part.blank / part.n), "invalid_rate": _round(part.invalid / part.n),
            "misconceptions": {tag: sorted(set(who)) for tag, who in sorted(part.mistakes.items())},
            "variants": ({label: {"students": n, "mean": _round(total / n)} for label, (n, total) in sorted(part.variants.items())}
                         if len(part.variants) > 1 else {}),
        }


def possible_copies(records: list[Record]) -> list[tuple[str, str, int]]:
    """(student, other, shared rare wrong answers) for every flagged pair, sorted."""
    holders: dict[tuple, list[str]] = defaultdict(list)
    for record in records:
        if record.counted:
            for answer in record.wrong_answers:
                holders[answer].append(record.student)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    for students in holders.values():
        if len(students) == 2:
            shared[tuple(sorted(students))] += 1
    return sorted((a, b, n) for (a, b), n in shared.items() if n >= COPY_MIN_SHARED)
