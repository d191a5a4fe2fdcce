"""IPython magics and shell escapes in a notebook cell: the lines that are not Python, found soundly.

IPython reads a line as a magic (``%timeit f()``) or a shell escape (``!pip install x``) only where a
*statement* starts. The same characters elsewhere are Python: a ``%s`` or ``!important`` line inside a
triple-quoted string is part of the string, and a continuation line such as ``!= 2)`` or ``% 3`` inside
brackets or after a backslash is part of an expression. Dropping those would change the program.

So a cell is walked one logical line at a time: a physical line that starts a logical line and begins
(after its indentation) with ``%`` or ``!`` is dropped; any other line is handed to the standard
``tokenize`` module from that point, which reports where the logical line ends (its NEWLINE, or the NL
of a blank or comment line outside brackets) — every line up to there is kept, however it begins.
Tokenizing reads the text and never executes it.

A dropped line may have been the only statement of a block (``if missing:`` over ``    !pip install x``).
IPython runs it in place, at its indentation; with the line gone, the block would be empty and the
whole submission a syntax error. There, and only there, a ``pass`` at the magic's indentation stands in
for it, so the graded code has the block structure IPython read: a block that goes on with a statement
of its own is left as it was.

Only a cell with a line that begins with ``%`` or ``!`` is tokenized, and only up to its last such
line, each logical line once: time in proportion to that text (the pure-Python tokenizer of 3.11 takes
about a second for 1 MiB of code, the most the notebook reader lets through). Kept lines are copied
verbatim; lines are split at line feeds only, as Python splits them (``str.splitlines`` would also
split inside a string at a form feed or U+2028).
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass

MAGIC_STARTS = ("%", "!")
# Cell magics whose body IPython runs as Python in the notebook's own namespace, so what it defines is
# the student's code. Any other cell magic (%%bash, %%writefile, %%html, %%timeit, whose body runs in a
# scope of its own …) takes a body that is not the notebook's Python, and the whole cell is left out.
PYTHON_BODY_CELL_MAGICS = frozenset({"time", "capture", "prun"})
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")
_NOT_CODE = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT})


@dataclass(frozen=True)
class FilteredCell:
    """A cell's source without its magic and shell lines, and how many physical lines were dropped."""

    source: str
    dropped: int


def without_magics(source: str) -> FilteredCell:
    """``source`` with every statement-level ``%…``/``!…`` line removed (a ``pass`` where one was a block's
    only statement); all other lines kept verbatim.

    A cell magic (``%%`` on the cell's first line that is not blank) governs the whole cell: its line is
    dropped and its body kept only when IPython runs that body as the notebook's Python.
    """
    lines = io.StringIO(source).readlines()
    first = next((number for number, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):  # IPython strips its indentation too
        words = lines[first].lstrip()[2:].split(maxsplit=1)
        if not words or words[0] not in PYTHON_BODY_CELL_MAGICS:
            return FilteredCell("", len(lines) - first)
        body = without_magics("".join(lines[first + 1 :]))
        return FilteredCell(body.source, body.dropped + 1)
    candidates = [number for number, line in enumerate(lines) if line.lstrip().startswith(MAGIC_STARTS)]
    if not candidates:
        return FilteredCell(source, 0)  # nothing to decide: most cells are never tokenized
    kept, dropped, index = [], 0, 0
    header = None  # the indentation column of the block header just kept, while its block has no statement
    while index < len(lines) and index <= candidates[-1]:  # past the last candidate every line is kept
        if lines[index].lstrip().startswith(MAGIC_STARTS):
            end = _continued_end(lines, index)  # `!pip install \` goes on to the next line, as in IPython
            if header is not None and not _block_goes_on(lines, end, header):
                kept.append(_indentation(lines[index]) + "pass\n")  # the block's only statement was this
            header = None
            dropped += end - index
            index = end
            continue
        end, opens_block = _logical_line_end(lines, index)
        if opens_block is not None:  # a blank or comment line leaves a header's block still to come
            header = _column(lines[index]) if opens_block else None
        kept.extend(lines[index:end])
        index = end
    return FilteredCell("".join(kept + lines[index:]), dropped)


def _continued_end(lines: list[str], start: int) -> int:
    """The index just past a magic line and the lines its trailing backslashes carry on to."""
    end = start + 1
    while lines[end - 1].rstrip("\r\n").endswith("\\") and end < len(lines):
        end += 1
    return end


def _block_goes_on(lines: list[str], start: int, header: int) -> bool:
    """Whether the first statement from ``lines[start]`` on is indented past ``header``, the header's column.

    ``start`` begins a logical line (a magic ends one), so the lines up to that statement are blank or
    comment lines, or magics dropped as well: none of them is tokenized to be skipped.
    """
    index = start
    while index < len(lines):
        stripped = lines[index].strip()
        if stripped.startswith(MAGIC_STARTS):
            index = _continued_end(lines, index)
        elif not stripped or stripped.startswith("#"):
            index += 1
        else:
            return _column(lines[index]) > header
    return False


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t\f"))]


def _column(line: str) -> int:
    """The indentation column of ``line`` as Python measures it (a tab goes on to the next multiple of 8)."""
    return len(_indentation(line).expandtabs(8))


def _logical_line_end(lines: list[str], start: int) -> tuple[int, bool | None]:
    """The index just past the last physical line of the logical line that starts at ``lines[start]``,
    and whether that line opens a block (ends with a ``:``); None for a blank or comment line.

    Text the tokenizer refuses (an unterminated string or bracket, a stray character on newer
    Pythons) is not valid Python: from there on the cell is kept as written, so the sandbox reports the
    student's own syntax error rather than one made by dropping lines.
    """
    remaining = map(lines.__getitem__, range(start, len(lines)))  # a slice or islice would cost n² in all
    depth, last = 0, None
    try:
        for token in tokenize.generate_tokens(lambda: next(remaining, "")):
            if token.type == tokenize.OP and token.string in _OPENING:
                depth += 1
            elif token.type == tokenize.OP and token.string in _CLOSING:
                depth = max(depth - 1, 0)
            if token.type == tokenize.NEWLINE:
                return start + token.end[0], last is not None and last.string == ":"
            if token.type == tokenize.NL and depth == 0:
                return start + token.end[0], None
            if token.type not in _NOT_CODE:
                last = token
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    return len(lines), None
