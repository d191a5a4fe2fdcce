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
from problemgen.practice.rules import mistake_history
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


def skill_rows(skills: Iterable[dict], summaries: dict[str, str]) -> list[dict]:
    """The rules' per-skill rows (``rules.summary``) with the kind's one-line summary and a percentage."""
    return [{**skill, "summary": summaries.get(skill["kind"], ""),
             "percent": None if skill["accuracy"] is None else round(100 * skill["accuracy"])} for skill in skills]


def mistakes_over_time(answers: list[AnswerRecord], items: list[ItemRecord], days: int = 7) -> dict:
    """The rules' misconception history (``rules.mistake_history``: how often, overcome since) with
    the count per day over the last ``days`` days that had any."""
    per_day: dict[str, Counter] = defaultdict(Counter)
    for answer in answers:
        if answer.mistake:
            per_day[answer.mistake][answer.at.strftime("%Y-%m-%d")] += 1
    all_days = sorted({d for counts in per_day.values() for d in counts})[-days:]
    rows = [{"tag": row["mistake"], "title": text_html(describe(row["mistake"])), "total": row["count"],
             "per_day": [per_day[row["mistake"]].get(d, 0) for d in all_days], "overcome": row["overcome"]}
            for row in mistake_history(items, answers)]
    return {"days": all_days, "rows": rows}
