"""The little Markdown of the shared fragments as HTML, with the maths handed to a caller's renderer.

The fragments (``templates/problems/*.j2``, rendered in their Markdown form) use paragraphs, ``$…$``
and ``$$…$$`` maths, ``code``, **strong**, backslash escapes and, in keys, GitHub tables. Two front
ends show them as HTML and differ only in the maths: the practice page converts it to MathML, the LMS
exports keep LaTeX between ``\\( … \\)`` / ``\\[ … \\]`` for MathJax. So this module owns the prose
and takes ``math(latex, display) -> html`` from the caller. Everything that is not one of those few
constructs is HTML-escaped: nothing a template, a bank title or a student wrote can inject markup.
Plain one-line strings (labels, options, hints, titles) are not Markdown: :func:`text_html` keeps
everything but their maths literal.
"""

from __future__ import annotations

import re
from html import escape
from typing import Callable

MathRenderer = Callable[[str, bool], str]
"""``math(latex, display)``: one formula (without its dollars) as HTML."""

MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
_CODE = re.compile(r"`([^`\n]+)`")
_STRONG = re.compile(r"\*\*([^*\n]+)\*\*")
_MD_ESCAPE = re.compile(r"\\([\\`*_\[\]<>#|])")
_TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?")


def prose_html(text: str) -> str:
    """Escape prose, then the little Markdown the fragments use: ``code``, **strong**, backslash escapes."""
    html = escape(_MD_ESCAPE.sub(r"\1", text), quote=False)
    html = _CODE.sub(r"<code>\1</code>", html)
    return _STRONG.sub(r"<strong>\1</strong>", html)


def _with_math(text: str, math: MathRenderer, prose: Callable[[str], str]) -> str:
    out, last = [], 0
    for match in MATH.finditer(text):
        out.append(prose(text[last:match.start()]))
        display = match.group(1) is not None
        out.append(math((match.group(1) if display else match.group(2)).strip(), display))
        last = match.end()
    out.append(prose(text[last:]))
    return "".join(out)


def inline_html(text: str, math: MathRenderer) -> str:
    """One paragraph's content of a rendered fragment: the little Markdown and maths."""
    return _with_math(text, math, prose_html)


def text_html(text: str, math: MathRenderer) -> str:
    """One line of plain text with ``$…$`` maths (a label, an option, a hint, a title): everything but
    the maths literal. Why not :func:`inline_html`: these strings are not Markdown, and a hint such as
    ``exp(x), not 2**x or 10**x`` must not turn bold between its stars."""
    return _with_math(text, math, lambda prose: escape(prose, quote=False))


def _is_table(lines: list[str]) -> bool:
    return len(lines) >= 2 and all(line.lstrip().startswith("|") for line in lines) and bool(
        _TABLE_RULE.fullmatch(lines[1].strip()))


def _cells(line: str) -> list[str]:
    """The cells of one table row; ``\\|`` inside a cell is a literal bar, not a separator."""
    body = line.strip().removeprefix("|")
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", body)]


def table_html(lines: list[str], math: MathRenderer) -> str:
    """A GitHub table (header, rule, rows) as an HTML table; the first cell of each row heads it."""
    head = "".join(f'<th scope="col">{inline_html(c, math)}</th>' for c in _cells(lines[0]))
    rows = []
    for line in lines[2:]:
        first, *rest = _cells(line)
        cells = "".join(f"<td>{inline_html(c, math)}</td>" for c in rest)
        rows.append(f'<tr><th scope="row">{inline_html(first, math)}</th>{cells}</tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def markdown_html(markdown: str, math: MathRenderer) -> str:
    """Markdown-with-maths (one rendered block) as HTML paragraphs and tables, one per line."""
    blocks = [b.strip("\n") for b in re.split(r"\n\s*\n", markdown) if b.strip()]
    out = []
    for block in blocks:
        lines = block.strip().splitlines()
        out.append(table_html(lines, math) if _is_table(lines) else f"<p>{inline_html(block.strip(), math)}</p>")
    return "\n".join(out)
