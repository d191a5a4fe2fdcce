"""The two ways an answer reaches the grader, for the answer-type tests: the typed quiz line and a sheet.

``verdicts(part, text)`` grades ``text`` through every channel that can carry it: typed at the quiz
prompt (one line only), as a quoted TOML string in a sheet, and written bare after ``key =`` in a
sheet (as students do: ``w = [[.5 .5], [.25 .75]]``). The answer types promise the same verdict in all.
"""

from __future__ import annotations

from problemgen.model.core import AnswerPart
from problemgen.sheets.answersheet import parse_sheet_text, toml_value
from problemgen.sheets.grading import PartResult, grade_part, grade_text


def from_sheet(part: AnswerPart, value_text: str) -> PartResult:
    sheet = parse_sheet_text(f"[p1]\n{part.key} = {value_text}\n")
    return grade_part(part, sheet.tables["p1"].get(part.key))


def verdicts(part: AnswerPart, text: str) -> dict[str, PartResult]:
    """Channel name -> result for ``text`` (channels that cannot carry it are left out)."""
    results = {"sheet quoted": from_sheet(part, toml_value(text)), "sheet bare": from_sheet(part, text)}
    if "\n" not in text:
        results["typed"] = grade_text(part, text)
    return results


def statuses(part: AnswerPart, text: str) -> set[str]:
    return {result.status for result in verdicts(part, text).values()}
