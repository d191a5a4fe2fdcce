"""The class summary: integrity first, then scores, item statistics and misconceptions.

Built from compact records (never from reports), rendered for people (``text``, ``md``) and for
machines (``json``). The list at the top — every row that is not plainly ``graded``, every possible
copy and every regrade override that could not be applied — is what the gradebook's status, flags and
overrides columns hold, so nothing needing a look hides inside one student's report.
"""

from __future__ import annotations

import json

from problemgen.classes.rows import GRADED, STATUSES, Record, status_head
from problemgen.classes.statistics import possible_copies
from problemgen.misconceptions.catalogue import describe
from problemgen.wording import counted as counted_noun


def _round(x: float) -> float:
    return round(float(x), 6) + 0.0


def flag_copies(records: list[Record]) -> list[dict]:
    """Mark possible copies on both records' flags; returns the pairs for the summary."""
    by_name = {r.student: r for r in records}
    pairs = []
    for a, b, shared in possible_copies(records):
        by_name[a].flags.append(f"possible copy: shares {shared} wrong answers only with {b}")
        by_name[b].flags.append(f"possible copy: shares {shared} wrong answers only with {a}")
        pairs.append({"students": [a, b], "shared_wrong_answers": shared})
    return pairs


def class_summary(title: str, records: list[Record], items: list[dict], copies: list[dict],
                  warnings: list[str] = ()) -> dict:
    """Everything the summary shows, as one JSON-ready dict (``items`` from ``ItemStatistics.items``)."""
    counted = [r for r in records if r.counted]
    scores = sorted(r.score for r in counted)
    students_by_tag: dict[str, set[str]] = {}
    for record in counted:
        for tag in record.misconceptions:
            students_by_tag.setdefault(tag, set()).add(record.student)
    return {
        "title": title,
        "students": len(records),
        "counted": len(counted),
        "status_counts": {head: sum(status_head(r.status) == head for r in records) for head in STATUSES},
        "attention": [{"student": r.student, "status": r.status,
                       "message": r.message or r.attention_note}
                      for r in records if r.status != GRADED or r.attention_note],
        "possible_copies": copies,
        "scores": _scores(scores),
        "items": items,
        "hardest": [i["part"] for i in sorted(items, key=lambda i: i["mean"])],
        "misconceptions": [
            {"tag": tag, "students": sorted(who), "text": f"{len(who)} of {len(counted)} students: {describe(tag)}"}
            for tag, who in sorted(students_by_tag.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        ],
        "overrides": [f"{r.student}: {o}" for r in records for o in r.overrides],
        "overrides_not_applied": [f"{r.student}: {o}" for r in records for o in r.unapplied_overrides],
        "warnings": list(warnings),
    }


def _scores(scores: list[float]) -> dict:
    mid = len(scores) // 2
    median = (scores[mid] if len(scores) % 2 else (scores[mid - 1] + scores[mid]) / 2) if scores else 0.0
    bins = [0] * 10
    for s in scores:
        bins[min(9, int(s * 10 + 1e-9))] += 1
    return {
        "mean": _round(sum(scores) / len(scores)) if scores else 0.0, "median": _round(median),
        "min": _round(scores[0]) if scores else 0.0, "max": _round(scores[-1]) if scores else 0.0,
        "histogram": [{"range": f"{10 * i}-{10 * i + 10}%", "students": n} for i, n in enumerate(bins)],
    }


def _printable(text: str) -> str:
    text = str(text)
    return text if text.isprintable() else "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def render_summary(summary: dict, fmt: str = "text") -> str:
    """The summary as ``text``, ``md`` (Markdown) or ``json``."""
    if fmt == "json":
        return json.dumps(summary, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    bullet = "- " if fmt == "md" else "  "
    s = summary["scores"]
    counts = ", ".join(f"{n} {k}" for k, n in summary["status_counts"].items() if n)
    entries = counted_noun(summary["students"], "entry", "entries")
    lines = [("## " if fmt == "md" else "") + _printable(summary["title"]), "",
             f"{entries} ({counts}); over the {summary['counted']} graded: mean {s['mean']:.0%}, "
             f"median {s['median']:.0%}, range {s['min']:.0%} to {s['max']:.0%}"]
    lines += _attention(summary, bullet)
    lines += ["", "Score distribution:", ""]
    width = max([h["students"] for h in s["histogram"]] + [1])
    lines += [f"{bullet}{h['range']:>8} {h['students']:>4} {'#' * round(30 * h['students'] / width)}" for h in s["histogram"]]
    lines += ["", "Items, hardest first (mean score, discrimination, blank, invalid):", ""]
    items = {i["part"]: i for i in summary["items"]}
    for name in summary["hardest"]:
        lines += _item_lines(items[name], bullet)
    if summary["misconceptions"]:
        lines += ["", "Misconceptions:", ""]
        lines += [f"{bullet}{m['text']} ({m['tag']}): {', '.join(m['students'])}" for m in summary["misconceptions"]]
    for title, key in (("Regrade overrides:", "overrides"), ("Warnings:", "warnings")):
        if summary[key]:
            lines += ["", title, ""] + [f"{bullet}{_printable(x)}" for x in summary[key]]
    return "\n".join(lines) + "\n"


def _attention(summary: dict, bullet: str) -> list[str]:
    rows = [f"{bullet}{_printable(a['student'])}: {_printable(a['status'])}"
            + (f" ({_printable(a['message'])})" if a["message"] and a["message"] not in a["status"] else "")
            for a in summary["attention"]]
    rows += [f"{bullet}possible copy: {c['students'][0]} and {c['students'][1]} share {c['shared_wrong_answers']} "
             f"wrong answers nobody else gave" for c in summary["possible_copies"]]
    rows += [f"{bullet}override for {_printable(line)}" for line in summary["overrides_not_applied"]]
    return ["", "Needs attention:", "", *rows] if rows else ["", "Needs attention: nothing (every entry graded, no copies)."]


def _item_lines(item: dict, bullet: str) -> list[str]:
    d = item["discrimination"]
    lines = [f"{bullet}{item['part']}: {item['mean']:.0%} mean, discrimination {'n/a' if d is None else f'{d:+.2f}'}, "
             f"{item['blank_rate']:.0%} blank, {item['invalid_rate']:.0%} invalid ({item['answers']} answers)"]
    for label, v in item["variants"].items():
        lines.append(f"{bullet}    variant {label}: {v['mean']:.0%} mean ({v['students']} students)")
    for tag, who in item["misconceptions"].items():
        lines.append(f"{bullet}    {tag}: {', '.join(who)}")
    return lines


def items_csv(summary: dict) -> str:
    """The item statistics as CSV, one row per part, in sheet order."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["part", "answers", "mean", "discrimination", "blank_rate", "invalid_rate", "misconceptions",
                     "variant_means"])
    for i in summary["items"]:
        writer.writerow([i["part"], i["answers"], f"{i['mean']:.4f}",
                         "" if i["discrimination"] is None else f"{i['discrimination']:.4f}",
                         f"{i['blank_rate']:.4f}", f"{i['invalid_rate']:.4f}",
                         "; ".join(f"{t}: {' '.join(w)}" for t, w in i["misconceptions"].items()),
                         "; ".join(f"{label}: {v['mean']:.4f}" for label, v in i["variants"].items())])
    return buffer.getvalue()
