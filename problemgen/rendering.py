"""Render problems through jinja2 templates into Markdown, LaTeX or plain terminal text.

Each kind has one fragment ``templates/problems/<kind>.j2`` with a ``prompt`` and a ``solution`` block,
written in the subset shared by Markdown and LaTeX: prose plus ``$…$`` math and the filters below.
The filters are format-aware, so the same fragment yields a KaTeX-friendly ``bmatrix`` in Markdown and
LaTeX, and an aligned Unicode matrix in the terminal. A user directory of templates, when given,
overrides the built-in ones file by file. ``StrictUndefined`` turns a typo into an error, not a blank.

Rendering never imports the reference: every value shown is already in the Problem.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import jinja2

from problemgen.core import Problem, ProblemgenError

FORMATS = ("md", "tex", "text")


def format_number(x: Any, digits: int = 4) -> str:
    """Show integers exactly and other reals rounded to ``digits`` decimals, trailing zeros trimmed."""
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, int):
        return str(x)
    x = float(x)
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _rows(value: Any) -> list[list[Any]]:
    """View a scalar, vector or matrix as a list of rows (a vector is one row)."""
    if not isinstance(value, list):
        return [[value]]
    if value and isinstance(value[0], list):
        return value
    return [value]


def _latex_number(x: Any, digits: int) -> str:
    text = format_number(x, digits)
    return {"-inf": r"-\infty", "inf": r"\infty"}.get(text, text)


def matrix_latex(value: Any, digits: int = 4) -> str:
    r"""A ``bmatrix`` for use inside ``$…$`` (renders in LaTeX, KaTeX and MathJax alike)."""
    body = r" \\ ".join(" & ".join(_latex_number(x, digits) for x in row) for row in _rows(value))
    return rf"\begin{{bmatrix}} {body} \end{{bmatrix}}"


def matrix_text(value: Any, digits: int = 4) -> str:
    """An aligned Unicode matrix for the terminal, one row per line."""
    rows = [[format_number(x, digits) for x in row] for row in _rows(value)]
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    lines = ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in rows]
    if len(lines) == 1:
        return f"[ {lines[0]} ]"
    edges = [("┌", "┐")] + [("│", "│")] * (len(lines) - 2) + [("└", "┘")]
    return "\n" + "\n".join(f"  {l} {line} {r}" for (l, r), line in zip(edges, lines)) + "\n"


def mask_values(mask: Any, representation: str = "bool") -> list:
    """Convert a boolean mask (True = may attend) to the representation a problem asks for."""
    convert = {
        "bool": lambda b: "T" if b else "F",
        "01": lambda b: 1 if b else 0,
        "additive": lambda b: 0 if b else float("-inf"),
    }[representation]
    return [[convert(b) for b in row] for row in _rows(mask)]


_LATEX_SYMBOLS = {
    "d_model": r"d_{\text{model}}",
    "d_ff": r"d_{\text{ff}}",
    "d_k": "d_k",
    "d_v": "d_v",
    "n_heads": "h",
    "vocab": r"|V|",
}


def symbol_latex(name: Any) -> str:
    """LaTeX for a dimension symbol such as ``d_model`` (numbers pass through)."""
    if isinstance(name, int):
        return str(name)
    if name in _LATEX_SYMBOLS:
        return _LATEX_SYMBOLS[name]
    head, _, tail = str(name).partition("_")
    return f"{head}_{{{tail}}}" if tail else head


def shape_latex(dims: Any) -> str:
    """A shape tuple like ``(B, h, L, d_k)`` for use inside ``$…$``."""
    return "(" + ", ".join(symbol_latex(d) for d in dims) + ")"


def shape_text(dims: Any) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ")"


def _filters(fmt: str) -> dict:
    if fmt == "text":
        return {
            "matrix": matrix_text,
            "shape": shape_text,
            "sym": str,
            "num": format_number,
            "mask": lambda m, rep="bool", digits=4: matrix_text(mask_values(m, rep), digits),
        }
    return {
        "matrix": matrix_latex,
        "shape": shape_latex,
        "sym": symbol_latex,
        "num": format_number,
        "mask": lambda m, rep="bool", digits=4: matrix_latex(mask_values(m, rep), digits),
    }


def builtin_templates_dir() -> Path:
    """Directory of the templates shipped with the package (works for non-editable installs)."""
    from problemgen.resources import templates_dir

    return templates_dir()


@functools.lru_cache(maxsize=16)
def environment(fmt: str, user_dir: str | None = None) -> jinja2.Environment:
    """The jinja environment for one output format; ``user_dir`` templates take precedence."""
    if fmt not in FORMATS:
        raise ProblemgenError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    search = [user_dir] if user_dir else []
    loader = jinja2.FileSystemLoader([*search, str(builtin_templates_dir())])
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(_filters(fmt))
    env.globals["fmt"] = fmt
    return env


def problem_context(problem: Problem) -> dict:
    """Names a fragment may use: the problem, its params, parts by key, and solution values."""
    return {
        "problem": problem,
        "params": problem.params,
        "parts": {p.key: p for p in problem.parts},
        "sol": problem.solution,
    }


def render_block(problem: Problem, block: str, fmt: str = "md", user_dir: str | None = None) -> str:
    """Render the ``prompt`` or ``solution`` block of the problem's fragment."""
    env = environment(fmt, user_dir)
    try:
        template = env.get_template(f"problems/{problem.kind}.j2")
    except jinja2.TemplateNotFound as exc:
        raise ProblemgenError(f"no template fragment for kind {problem.kind!r} ({exc.name})") from exc
    if block not in template.blocks:
        raise ProblemgenError(f"template for {problem.kind!r} has no {block!r} block")
    context = template.new_context(problem_context(problem))
    return "".join(template.blocks[block](context)).strip() + "\n"


def render_problem(problem: Problem, fmt: str = "md", *, solution: bool = False, user_dir: str | None = None) -> str:
    """Prompt (and optionally the worked solution) of one problem, for ``problemgen show``."""
    text = render_block(problem, "prompt", fmt, user_dir)
    if solution:
        heading = {"md": "**Solution.**", "tex": r"\paragraph{Solution.}", "text": "Solution:"}[fmt]
        text += f"\n{heading}\n\n" + render_block(problem, "solution", fmt, user_dir)
    return text
