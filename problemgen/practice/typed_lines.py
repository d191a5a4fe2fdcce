"""How the lines a student types at the quiz prompt become a command or one answer.

The answer readers take an answer on one line. At a terminal a matrix arrives over several: typed one row
per line (``1 2`` then ``3 4``), or pasted from numpy, Python or MATLAB with its line breaks
(``[[ 2 -1]`` / `` [ 2 -1]]``). These functions decide what a line is and join such lines into the
one-line forms the readers take; ``problemgen.practice.quiz`` does the reading and the asking.
"""

from __future__ import annotations

from typing import Callable

from problemgen.model.core import AnswerPart

COMMAND_WORDS = frozenset({"hint", "solution", "show", "skip", "another", "help", "quit", "exit"})
MAX_ANSWER_LINES = 32
"""An answer whose brackets are still open after this many lines is read as it is (the reader then says
what is wrong with it): a stray bracket must not swallow everything typed after it."""
_CLOSING = {"[": "]", "(": ")"}


def command_of(line: str, reads_right: Callable[[str], bool]) -> str | None:
    """The command a line asks for, or None when it is an answer.

    A line whose first word is a command word is that command (``hint please``, ``quit now``), unless it
    has more words and the part reads the whole line as its right answer: ``skip connection`` is a right
    answer to "what is a residual connection also called", ``skip`` alone still skips."""
    words = line.strip().lower().split()
    if not words or words[0] not in COMMAND_WORDS:
        return None
    if len(words) > 1 and reads_right(line):
        return None
    return words[0]


def matrix_rows(part: AnswerPart) -> int:
    """Rows of a matrix or mask answer (0 for other answers)."""
    value = part.value
    if part.type not in ("matrix", "mask") or not isinstance(value, list) or not value:
        return 0
    return len(value) if isinstance(value[0], list) else 0


def one_row(line: str, columns: int) -> bool:
    """True when a typed line is exactly one row of ``columns`` (≥ 2) entries (``1 2 3``, ``1, 2, 3``,
    ``[1, 2, 3]``), not a whole matrix and not a single number."""
    text = line.strip()
    if columns < 2 or ";" in text or text.startswith(("[[", "((", "array", "np.", "numpy.", "torch.")):
        return False
    text = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if "[" in text or "]" in text:
        return False
    depth, entries, current = 0, [], ""
    for char in text + " ":
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ", \t":
            if current.strip():
                entries.append(current)
            current = ""
        else:
            current += char
    return len(entries) == columns


def row_prompt(typed: list[str], rows: int) -> str | None:
    """The prompt for the next row of a matrix typed one row per line, None once every row is in."""
    return f"row {len(typed) + 1} of {rows}> " if len(typed) < rows else None


def continuation_prompt(typed: list[str]) -> str | None:
    """The prompt for the next line of an answer whose brackets are still open, None once they are
    closed (or after :data:`MAX_ANSWER_LINES` lines)."""
    return "...> " if open_brackets(join_lines(typed)) and len(typed) < MAX_ANSWER_LINES else None


def rows_as_one_line(rows: list[str]) -> str:
    """Rows typed one per line as one MATLAB-style line, which the matrix reader takes."""
    texts = [row.strip()[1:-1] if row.strip().startswith("[") else row.strip() for row in rows]
    return "[" + "; ".join(texts) + "]"


def open_brackets(text: str) -> list[int]:
    """Where the brackets ``(`` and ``[`` still open at the end of ``text`` are, innermost last (a stray
    closing bracket closes nothing: the reader reports it)."""
    stack: list[int] = []
    for at, char in enumerate(text):
        if char in _CLOSING:
            stack.append(at)
        elif stack and char == _CLOSING[text[stack[-1]]]:
            stack.pop()
    return stack


def join_lines(lines: list[str]) -> str:
    """Lines of one pasted answer as one line. Inside a single ``[`` holding no bracket of its own, a line
    break separates rows, as in MATLAB (``[2 -1`` / `` 2 -1]`` is ``[2 -1; 2 -1]``), unless a comma or
    semicolon already ends the line; anywhere else (numpy's ``[[ 2 -1]`` / `` [ 2 -1]]``, Python lists,
    ``array([...])``) it is a space."""
    joined = lines[0].strip()
    for line in lines[1:]:
        text = line.strip()
        opened = open_brackets(joined)
        flat = (len(opened) == 1 and joined[opened[0]] == "["
                and not any(c in joined[opened[0] + 1:] for c in "[]()"))
        row_break = flat and not joined.endswith((",", ";", "[")) and not text.startswith("]")
        joined += ("; " if row_break else " ") + text
    return joined
