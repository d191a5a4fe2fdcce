"""What the pages show, as plain data: problems with their inputs, heatmaps, skills and mistakes over time.

Kept apart from the routes so the page data can be tested without a server, and from the templates so
they hold no logic beyond loops.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable

from markupsafe import Markup

from problemgen.answers.formatting import format_number
from problemgen.documents.rendering import answer_display, is_heatmap, render_block
from problemgen.misconceptions.catalogue import describe
from problemgen.model.core import AnswerPart, Problem
from problemgen.practice.progress import AnswerRecord, ItemRecord
from problemgen.practice.rules import grade_of
from problemgen.practice.web.inputs import cell_hint, widget_for
from problemgen.practice.web.mathml import fragment_html, text_html

SHADES = 10
"""Heatmap cells use one of ten CSS shade classes (``heat-0`` … ``heat-9``): no inline styles, which
the page's Content-Security-Policy forbids."""


def problem_html(problem: Problem, block: str) -> Markup:
    """The prompt or worked solution of a problem as HTML with MathML."""
    return fragment_html(render_block(problem, block, "md"))


def part_view(part: AnswerPart, describe) -> dict[str, Any]:
    """One part as the template draws it: label, input widget, what a cell accepts, expected format."""
    return {"key": part.key, "type": part.type, "label": text_html(part.label or part.key),
            "widget": widget_for(part), "cell_hint": cell_hint(part), "format": describe(part),
            "options": [{"id": o["id"], "html": text_html(o["text"])} for o in part.spec.get("options", ())]}


def key_view(part: AnswerPart) -> dict[str, Any]:
    """The expected answer of a part (for the key and the solution): maths, and a heatmap for weights."""
    return {"label": text_html(part.label or part.key), "html": fragment_html(answer_display(part, "md")),
            "heatmap": heatmap(part.value) if is_heatmap(part) else None}


def heatmap(value: Any) -> dict[str, Any]:
    """Rows of (value text, shade class) for an attention-weight matrix: rows are queries, columns keys."""
    rows = value if value and isinstance(value[0], list) else [value]
    flat = [float(x) for row in rows for x in row]
    low, high = min(flat), max(flat)
    if 0.0 <= low and high <= 1.0:
        low, high = 0.0, 1.0  # weights: shade on the absolute scale so rows compare
    span = (high - low) or 1.0
    cells = [[(format_number(x, 2), f"heat-{min(SHADES - 1, int((float(x) - low) / span * SHADES))}")
              for x in row] for row in rows]
    return {"rows": cells, "cols": len(rows[0])}


def skill_rows(kinds: Iterable[str], items: Iterable[ItemRecord], summaries: dict[str, str]) -> list[dict]:
    """Per skill (kind): how often shown, answered (counted), right unaided, and the accuracy."""
    kinds = list(kinds)
    shown, answered, correct = Counter(), Counter(), Counter()
    for item in items:
        if item.kind not in kinds:
            continue
        shown[item.kind] += 1
        grade = grade_of(item)
        answered[item.kind] += grade is not None
        correct[item.kind] += grade == "success"
    return [{"kind": k, "summary": summaries.get(k, ""), "shown": shown[k], "answered": answered[k],
             "correct": correct[k],
             "accuracy": round(100 * correct[k] / answered[k]) if answered[k] else None} for k in kinds]


def mistakes_over_time(answers: Iterable[AnswerRecord], items: Iterable[ItemRecord], days: int = 7) -> dict:
    """Named misconceptions matched in the student's answers, counted per day (the last ``days`` days
    with any), with whether each was overcome: the same skill answered right unaided afterwards."""
    kind_of = {i.id: i.kind for i in items}
    per: dict[str, Counter] = defaultdict(Counter)
    last_at: dict[str, tuple] = {}
    for answer in answers:
        if answer.mistake:
            day = answer.at.strftime("%Y-%m-%d")
            per[answer.mistake][day] += 1
            last_at[answer.mistake] = (answer.at, kind_of.get(answer.item_id))
    wins = [(i.finished_at or i.started_at, i.kind) for i in items if grade_of(i) == "success"]
    all_days = sorted({d for c in per.values() for d in c})[-days:]
    rows = []
    for tag, counts in sorted(per.items(), key=lambda kv: -sum(kv[1].values())):
        when, kind = last_at[tag]
        overcome = any(at > when and k == kind for at, k in wins)
        rows.append({"tag": tag, "title": text_html(describe(tag)), "total": sum(counts.values()),
                     "per_day": [counts.get(d, 0) for d in all_days], "overcome": overcome})
    return {"days": all_days, "rows": rows}
