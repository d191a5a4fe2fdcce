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
import os
import re
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterator

import jinja2

from problemgen.model.core import AnswerPart, Problem, ProblemgenError
from problemgen.answers import types
from problemgen.answers.formatting import format_number, tolerance_text  # noqa: F401 - re-exported
from problemgen.resources import templates_dir
from problemgen.userfiles import read_text
from problemgen.documents import FORMATS  # noqa: F401 - re-exported; kept in the cheap package __init__
from problemgen.documents.terminal import to_unicode


def _rows(value: Any) -> list[list[Any]]:
    """View a scalar, vector or matrix as a list of rows (a vector is one row)."""
    if not isinstance(value, list):
        return [[value]]
    if value and isinstance(value[0], list):
        return value
    return [value]


def _latex_number(x: Any, digits: int) -> str:
    """One matrix cell for math mode: numbers as they are, ±∞ as symbols, words (the T/F of a boolean
    mask) upright, so they read as values and not as the product of italic variables."""
    text = format_number(x, digits)
    if isinstance(x, str) and text.isalpha():
        return rf"\mathrm{{{text}}}"
    return {"-inf": r"-\infty", "inf": r"\infty"}.get(text, text)


def matrix_latex(value: Any, digits: int = 4) -> str:
    r"""A ``bmatrix`` for use inside ``$…$`` (renders in LaTeX, KaTeX and MathJax alike).

    A matrix holding any fraction prints every real entry with one number of decimals (the most any
    entry needs, at most ``digits``): 0.5570 beside 0.2746, 1.0000 beside 0.0329, so columns line up
    and no entry looks more or less precise than its neighbours.
    """
    rows = _rows(value)
    cells = list(chain.from_iterable(rows))
    kinds = set(map(type, cells))
    if kinds == _INTS:
        body = _int_body(rows, cells)
    elif kinds == _FLOATS and math.isfinite(sum(cells)):  # finite only when every cell is (an overflow: general)
        body = _float_body(rows, cells, digits)
    else:
        body = _any_body(rows, digits)
    return rf"\begin{{bmatrix}} {body} \end{{bmatrix}}"


_INTS, _FLOATS = {int}, {float}
"""The cell types of the two fast paths (exactly these types: a bool is a mask cell, a float subclass may print
itself otherwise)."""


def _any_body(rows: list, digits: int) -> str:
    """The cells of any matrix: reals, ±∞ and words (mask cells)."""
    decimals = _shared_decimals(rows, digits)
    cell = (lambda x: _latex_number(x, digits)) if decimals is None else (lambda x: _fixed(x, decimals, digits))
    return r" \\ ".join(" & ".join(cell(x) for x in row) for row in rows)


# A worksheet draws thousands of small matrices, and per-cell Python was most of its rendering time, so the
# two commonest kinds take direct paths to the same text as _any_body (property tests compare them).


def _int_body(rows: list, cells: list) -> str:
    """The cells of a matrix of ints (``cells``: row after row), each as ``str`` writes it (as ``%d`` does),
    printed by C in one layout."""
    return _layout(tuple(map(len, rows)), "%d") % tuple(cells)


def _float_body(rows: list, cells: list, digits: int) -> str:
    """The cells of a matrix of finite floats (``cells``: row after row), printed by C in one layout to
    ``digits`` places.

    Each cell is followed by a space (the separators start with one, and one is added at the end), so
    ``"0" * k + " "`` counts the cells ending in k zeros. The places every cell ends with a zero in are the
    ones no cell needs: dropping them gives each cell rounded to fewer places (the value is within half a
    unit of the last place printed), and with no decimals left the point goes too. Only a whole cell can
    read ``-0`` or ``-0.00``, so the negative zero is one replace."""
    layout, endings, zeros = _float_layout(tuple(map(len, rows)), digits)
    text = layout % tuple(cells)
    drop = 0
    while drop < digits and text.count(endings[drop]) == len(cells):
        drop += 1
    if drop:
        text = text.replace(("." if drop == digits else "") + endings[drop - 1], " ")
    negative, zero = zeros[drop]
    return text.replace(negative, zero)[:-1]


@functools.lru_cache(maxsize=256)
def _layout(widths: tuple[int, ...], cell: str) -> str:
    """The %-format of a matrix with rows of these widths, each cell written by the format ``cell``: a class
    set draws the same few shapes thousands of times."""
    return r" \\ ".join(" & ".join([cell] * width) for width in widths)


@functools.lru_cache(maxsize=256)
def _float_layout(widths: tuple[int, ...], digits: int) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """What :func:`_float_body` needs for a float matrix with rows of these widths: its %-format (each cell
    followed by a space), the endings ``"0" * k + " "`` for k = 1..digits, and for each number of places
    dropped the negative zero cell and the zero it reads as (``"-0.00 "``, ``"0.00 "``)."""
    zeros = tuple((f"-{0:.{digits - drop}f} ", f"{0:.{digits - drop}f} ") for drop in range(digits + 1))
    return _layout(widths, f"%.{digits}f") + " ", tuple("0" * k + " " for k in range(1, digits + 1)), zeros


def _is_real(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _shared_decimals(rows: list, digits: int) -> int | None:
    """Decimals every real entry of a matrix gets, or None when all entries are whole numbers."""
    needed = [len(text.split(".")[1]) for row in rows for x in row if _is_real(x)
              for text in [format_number(x, digits)] if "." in text]
    return max(needed) if needed else None


def _fixed(x: Any, decimals: int, digits: int) -> str:
    if not _is_real(x):
        return _latex_number(x, digits)
    text = f"{float(x):.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


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


_MASK_CELLS = {"bool": (r"\mathrm{F}", r"\mathrm{T}"), "01": ("0", "1"), "additive": (r"-\infty", "0")}
"""(blocked, allowed) cells of a mask in each representation, as :func:`matrix_latex` prints
:func:`mask_values`: the words upright, 0/1 as integers, a blocked additive cell as minus infinity."""


def mask_latex(mask: Any, representation: str = "bool", digits: int = 4) -> str:
    """``matrix_latex(mask_values(mask, representation), digits)``, each cell looked up rather than formatted
    (a property test compares the two; a worksheet draws a few dozen masks). ``digits`` has no effect:
    every cell is a word or a whole number."""
    blocked, allowed = _MASK_CELLS[representation]
    body = r" \\ ".join(" & ".join([allowed if b else blocked for b in row]) for row in _rows(mask))
    return rf"\begin{{bmatrix}} {body} \end{{bmatrix}}"


_LATEX_SYMBOLS = {
    "d_model": r"d_{\text{model}}",
    "d_ff": r"d_{\text{ff}}",
    "d_k": "d_k",
    "d_v": "d_v",
    "n_heads": "h",
    "vocab": r"|V|",
}


def symbol_latex(name: Any) -> str:
    """LaTeX for a dimension symbol such as ``d_model`` (numbers pass through).

    A product of symbols such as ``h*d_k`` is written as a product, ``h\\,d_k``.
    """
    if isinstance(name, int):
        return str(name)
    if "*" in str(name):
        return r"\,".join(symbol_latex(factor.strip()) for factor in str(name).split("*"))
    if name in _LATEX_SYMBOLS:
        return _LATEX_SYMBOLS[name]
    head, _, tail = str(name).partition("_")
    return f"{head}_{{{tail}}}" if tail else head


def shape_latex(dims: Any) -> str:
    """A shape tuple like ``(B, h, L, d_k)`` for use inside ``$…$``."""
    return "(" + ", ".join(symbol_latex(d) for d in dims) + ")"


def shape_text(dims: Any) -> str:
    """A shape tuple for the terminal; products of symbols use a middle dot (``h·d_k``)."""
    return "(" + ", ".join(str(d).replace("*", "·") for d in dims) + ")"


def _filters(fmt: str) -> dict:
    if fmt == "text":
        return {
            "matrix": matrix_text,
            "shape": shape_text,
            "sym": str,
            "num": format_number,
            "mask": lambda m, rep="bool", digits=4: matrix_text(mask_values(m, rep), digits),
            "heatmap": heatmap_text,
        }
    return {
        "matrix": matrix_latex,
        "shape": shape_latex,
        "sym": symbol_latex,
        "num": format_number,
        "mask": mask_latex,
        "heatmap": heatmap_md if fmt == "md" else heatmap_tex,
    }


def builtin_templates_dir() -> Path:
    """Directory of the templates shipped with the package (works for non-editable installs)."""
    return templates_dir()


def environment(fmt: str, user_dir: str | None = None) -> jinja2.Environment:
    """The jinja environment for one output format; ``user_dir`` templates take precedence. One per
    (format, folder), however it is asked for: ``environment("md")`` and ``environment("md", None)`` are the
    same object, so its compiled templates are shared."""
    return _environment(fmt, user_dir)


@functools.lru_cache(maxsize=16)
def _environment(fmt: str, user_dir: str | None) -> jinja2.Environment:
    if fmt not in FORMATS:
        raise ProblemgenError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return _new_environment(fmt, user_dir)


_DICT_ATTRIBUTES = frozenset(dir(dict))
"""Every attribute a plain dict instance has (its methods and dunders): jinja's ``d.items`` is the method."""


class DataEnvironment(jinja2.Environment):
    """A jinja environment tuned for rendering many small fragments of plain data, with jinja's results.

    * ``getattr``: jinja resolves ``obj.name`` by trying ``getattr(obj, name)`` first and ``obj[name]``
      second. Templates read dicts this way a thousand times per worksheet (``params.Q``, ``sol.S``,
      ``p.title``), and on a dict the first try raises and catches an AttributeError each time. For a plain
      dict holding the key under a name that no dict attribute has, the key is what jinja would return, so
      it is returned at once; every other case goes to jinja unchanged (a test compares the two).
    * ``make_globals``: jinja gives each template a ChainMap over the environment's globals and iterates it
      twice for every render (a quarter of rendering a prompt). Our environments set every global before
      loading a template (jinja's documentation asks for that), so a plain dict holds the same names.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute in obj and attribute not in _DICT_ATTRIBUTES:
            return obj[attribute]
        return super().getattr(obj, attribute)

    def make_globals(self, d: dict | None) -> dict:
        return {**self.globals, **(d or {})}


MAX_TEMPLATE_BYTES = 1024 * 1024
"""Largest template file read; the built-in ones are a few kilobytes each."""


class TemplateFolders(jinja2.BaseLoader):
    """Templates from folders searched in order (the user's ``--templates``, then the built-in ones).

    Each file is read by ``userfiles.read_text``: jinja's own loader read any file whole, so a huge (or
    sparse) template filled the memory, and it skipped a name that was not a regular file, so a FIFO or a
    folder in the user's folder silently gave the built-in template instead. Here the first folder holding
    the name in any form owns it, and anything there that is no regular file is refused, saying what it is.
    """

    def __init__(self, folders: list[str]) -> None:
        self.folders = [Path(folder) for folder in folders]

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = jinja2.loaders.split_template_path(template)  # refuses ``..`` and the like, as jinja does
        for folder in self.folders:
            path = folder.joinpath(*pieces)
            if os.path.lexists(path):
                return read_text(path, MAX_TEMPLATE_BYTES, "template"), str(path), _never_reloaded
        raise jinja2.TemplateNotFound(template)

    def list_templates(self) -> list[str]:
        """Every name a folder holds a file under (``problems/attention.weights.j2``…), sorted, once each."""
        found = set()
        for folder in self.folders:
            for root, _, files in os.walk(folder):
                found.update(Path(root, name).relative_to(folder).as_posix() for name in files)
        return sorted(found)


def _never_reloaded() -> bool:
    """A template's "still up to date" check: these environments never reload one (``auto_reload=False``)."""
    return True


def _new_environment(fmt: str, user_dir: str | None, **delimiters: str) -> jinja2.Environment:
    """A strict environment over the user's templates, then the built-in ones, with the format's filters."""
    search = [user_dir] if user_dir else []
    env = DataEnvironment(
        loader=TemplateFolders([*search, str(builtin_templates_dir())]),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        auto_reload=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        **delimiters,
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
    return next(render_blocks(problem, (block,), fmt, user_dir))


def render_blocks(
    problem: Problem, blocks: tuple[str, ...], fmt: str = "md", user_dir: str | None = None
) -> Iterator[str]:
    """The text of each of ``blocks`` of the problem's fragment, each rendered when it is taken, all from
    one context: a block only reads the context (names it sets stay inside the block), so a worksheet's
    prompt and solution need not build one each. Template errors are ProblemgenErrors naming the file."""
    env = environment(fmt, user_dir)
    name = f"problems/{problem.kind}.j2"
    try:
        template = env.get_template(name)
    except jinja2.TemplateNotFound as exc:
        raise ProblemgenError(f"no template fragment for kind {problem.kind!r} ({exc.name})") from exc
    except jinja2.TemplateError as exc:
        raise template_error(exc, name) from exc
    context = template.new_context(problem_context(problem))
    for block in blocks:
        if block not in template.blocks:
            raise ProblemgenError(f"template for {problem.kind!r} has no {block!r} block")
        try:
            text = "".join(template.blocks[block](context)).strip() + "\n"
        except Exception as exc:
            if not isinstance(exc, jinja2.TemplateError) and not is_users(template, user_dir):
                raise  # a built-in fragment failing is a bug, not the user's template
            raise template_error(exc, name, block) from exc
        yield to_unicode(text) if fmt == "text" else text  # text: the fragments' $…$ math as readable Unicode


def is_users(template: jinja2.Template, user_dir: str | None) -> bool:
    """Whether ``template`` was loaded from the user's ``--templates`` directory."""
    if not user_dir or not template.filename:
        return False
    return Path(template.filename).resolve().is_relative_to(Path(user_dir).resolve())


def template_error(exc: Exception, name: str, block: str | None = None) -> ProblemgenError:
    """One line for a template that failed: its file and line, and what went wrong (a syntax error, an
    undefined name, or any error a user's template raised, such as a division by zero)."""
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return ProblemgenError(f"template {exc.filename or exc.name}, line {exc.lineno}: {exc.message}")
    file, line = _template_location(exc)
    where = f"template {file or name}" + (f", line {line}" if line else "") + (f" ({block})" if block else "")
    what = exc.message if isinstance(exc, jinja2.TemplateError) else f"{type(exc).__name__}: {exc}"
    return ProblemgenError(f"{where}: {what}")


def _template_location(exc: Exception) -> tuple[str | None, int | None]:
    """The template file and line the error was raised from: the innermost frame of compiled template code
    (its module knows its template), or of the frames jinja writes in their place when ``render`` fails."""
    file, line, tb = None, None, exc.__traceback__
    while tb is not None:
        template = tb.tb_frame.f_globals.get("__jinja_template__")
        if template is not None and template.filename:
            file, line = template.filename, template.get_corresponding_lineno(tb.tb_lineno)
        elif tb.tb_frame.f_globals.get("__jinja_exception__") is exc:
            file, line = tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next
    return file, line


def user_template_problems(user_dir: str) -> dict[str, str]:
    """Name -> message for each template of a ``--templates`` directory that does not compile (its file and
    line), each compiled as it will be used: ``documents/*.tex.j2`` with the LaTeX delimiters, the rest as
    fragments."""
    root, problems = Path(user_dir), {}
    for path in sorted([*root.glob("problems/*.j2"), *root.glob("documents/*.j2")]):
        name = path.relative_to(root).as_posix()
        fmt = "tex" if name.endswith(".tex.j2") else "md"
        env = document_environment(fmt, user_dir) if re.fullmatch(r"documents/.+\.(md|tex)\.j2", name) else \
            environment("md", user_dir)
        try:
            env.get_template(name)
        except jinja2.TemplateError as exc:
            problems[name] = str(template_error(exc, name))
        except ProblemgenError as exc:  # not a regular file, too large, not UTF-8 (TemplateFolders)
            problems[name] = str(exc)
    return problems


def render_problem(problem: Problem, fmt: str = "md", *, solution: bool = False, user_dir: str | None = None) -> str:
    """Prompt (and optionally the worked solution) of one problem, for ``problemgen show``."""
    text = render_block(problem, "prompt", fmt, user_dir)
    if solution:
        heading = {"md": "**Solution.**", "tex": r"\paragraph{Solution.}", "text": "Solution:"}[fmt]
        text += f"\n{heading}\n\n" + render_block(problem, "solution", fmt, user_dir)
    return text


# --------------------------------------------------------------------------------------------------
# Heatmaps: attention weights drawn as shaded cells (LaTeX colortbl, SVG), shade glyphs (Markdown, text).
# --------------------------------------------------------------------------------------------------

SHADES = "·░▒▓█"
"""Five shade glyphs, lightest first; a Markdown or terminal heatmap cell shows one next to its value."""


def _unit_intensities(rows: list[list[Any]]) -> list[list[float]]:
    """Map entries to [0, 1]: weights (already in [0, 1]) as they are, other matrices by min–max."""
    flat = [float(x) for row in rows for x in row]
    low, high = min(flat), max(flat)
    if 0.0 <= low and high <= 1.0:
        return [[float(x) for x in row] for row in rows]
    span = (high - low) or 1.0
    return [[(float(x) - low) / span for x in row] for row in rows]


def _shade(intensity: float) -> str:
    return SHADES[min(len(SHADES) - 1, int(intensity * len(SHADES)))]


@functools.cache
def shade_legend() -> str:
    """Which glyph stands for which range of a heatmap cell (for Markdown and the terminal); a constant,
    made once."""
    step = 1 / len(SHADES)
    ranges = [f"{g} {i * step:.1f}–{(i + 1) * step:.1f}" for i, g in enumerate(SHADES)]
    return ", ".join(ranges)


def heatmap_md(value: Any, digits: int = 2) -> str:
    """A GitHub-flavoured Markdown table: rows are queries, columns keys, each cell a shade and its value."""
    rows = _rows(value)
    heat = _unit_intensities(rows)
    header = "| query \\ key | " + " | ".join(str(j + 1) for j in range(len(rows[0]))) + " |"
    rule = "|---|" + "---:|" * len(rows[0])
    body = [
        f"| {i + 1} | " + " | ".join(f"{_shade(h)} {format_number(x, digits)}" for x, h in zip(row, hrow)) + " |"
        for i, (row, hrow) in enumerate(zip(rows, heat))
    ]
    return "\n".join([header, rule, *body, "", f"Shading: {shade_legend()}"]) + "\n"


def heatmap_tex(value: Any, digits: int = 2) -> str:
    r"""A tabular of ``\cellcolor``-shaded cells (needs ``\usepackage[table]{xcolor}``); dark cells get white text."""
    rows = _rows(value)
    heat = _unit_intensities(rows)
    cols = len(rows[0])
    lines = [
        rf"\begin{{tabular}}{{r|*{{{cols}}}{{c}}}}",
        r"\multicolumn{1}{r}{\footnotesize query\,\textbackslash\,key} & "
        + " & ".join(str(j + 1) for j in range(cols)) + r" \\ \hline",
    ]
    for i, (row, hrow) in enumerate(zip(rows, heat)):
        cells = []
        for x, h in zip(row, hrow):
            percent = round(70 * h)
            text = format_number(x, digits)
            text = rf"\textcolor{{white}}{{{text}}}" if percent >= 45 else text
            cells.append(rf"\cellcolor{{blue!{percent}}}{text}")
        lines.append(f"{i + 1} & " + " & ".join(cells) + r" \\")
    lines.append(r"\end{tabular}")
    return "\n".join(lines) + "\n"


def heatmap_text(value: Any, digits: int = 2) -> str:
    """The terminal version: one row per query, each cell a shade glyph and the value."""
    rows = _rows(value)
    heat = _unit_intensities(rows)
    cells = [[f"{_shade(h)} {format_number(x, digits)}" for x, h in zip(row, hrow)] for row, hrow in zip(rows, heat)]
    width = max(len(c) for row in cells for c in row)
    return "\n".join("  " + "  ".join(c.ljust(width) for c in row) for row in cells) + "\n"


def heatmap_svg(value: Any, digits: int = 2) -> str:
    """A standalone SVG: one square per weight, darker for more, its value printed on it (for HTML
    exports that cannot rely on a style sheet; white text on dark cells, like the LaTeX version)."""
    rows = _rows(value)
    heat = _unit_intensities(rows)
    size, head = 44, 24
    width, height = head + size * len(rows[0]), head + size * len(rows)
    cells = [f'<text x="{head + size * j + size // 2}" y="16" text-anchor="middle">{j + 1}</text>'
             for j in range(len(rows[0]))]
    for i, (row, hrow) in enumerate(zip(rows, heat)):
        y = head + size * i
        cells.append(f'<text x="12" y="{y + size // 2 + 4}" text-anchor="middle">{i + 1}</text>')
        for j, (x, h) in enumerate(zip(row, hrow)):
            ink = "#fff" if h >= 0.65 else "#000"
            cells.append(f'<rect x="{head + size * j}" y="{y}" width="{size}" height="{size}" '
                         f'fill="rgb(0,0,255)" fill-opacity="{0.7 * h:.3f}" stroke="#888"/>'
                         f'<text x="{head + size * j + size // 2}" y="{y + size // 2 + 4}" text-anchor="middle" '
                         f'fill="{ink}">{format_number(x, digits)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="12">{"".join(cells)}</svg>')


# --------------------------------------------------------------------------------------------------
# Escaping plain text (titles, labels, student ids) — math segments ($…$) pass through untouched.
# --------------------------------------------------------------------------------------------------

_TEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\^{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_TEX_TABLE = str.maketrans(_TEX_SPECIALS)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|])")
_MATH = re.compile(r"(\$\$.+?\$\$|\$[^$\n]+?\$)", re.S)


def tex_escape(text: Any) -> str:
    """Escape every LaTeX-special character: for text that must print literally (ids, file names)."""
    return str(text).translate(_TEX_TABLE)


def _outside_math(text: str, escape) -> str:
    parts = _MATH.split(str(text))
    return "".join(part if i % 2 else escape(part) for i, part in enumerate(parts))


_SUBSCRIPTED = re.compile(
    r"(?<![\w\\])(?P<root>√)?(?P<base>[A-Za-z])_(?P<sub>[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*)(?![A-Za-z0-9_])(?P<top>ᵀ)?"
    r"|(?<=\))_(?P<after>[A-Za-z0-9])(?![A-Za-z0-9_])"
)
"""A symbol with a subscript written in plain prose: ``d_k``, ``d_model``, ``n_kv_heads``, ``√d_k``,
``W_Qᵀ``, or a subscript after a bracket as in ``softmax(z)_y``."""


def _symbol_math(match: re.Match) -> str:
    r"""The math for one plain-text symbol: ``√d_k`` -> ``$\sqrt{d_{k}}$``, ``d_model`` -> ``$d_{\text{model}}$``."""
    if match["after"]:
        return f"${{}}_{{{match['after']}}}$"
    sub = match["sub"]
    sub = sub if len(sub) == 1 else rf"\text{{{tex_escape(sub)}}}"
    symbol = f"{match['base']}_{{{sub}}}" + (r"^{\top}" if match["top"] else "")
    return f"$\\sqrt{{{symbol}}}$" if match["root"] else f"${symbol}$"


def _tex_prose(text: str) -> str:
    r"""Escape prose, typesetting plain-text symbols such as d_model as math (``$d_{\text{model}}$``).

    The misconception catalogue is written for terminals and Markdown ("1/√d_k", "W_Qᵀ"); escaping its
    underscores would print them literally, so symbols become math and the rest is escaped.
    """
    out, last = [], 0
    for match in _SUBSCRIPTED.finditer(text):
        out.append(_powers(text[last:match.start()]))
        out.append(_symbol_math(match))
        last = match.end()
    out.append(_powers(text[last:]))
    return "".join(out)


_POWER = re.compile(r"(?<![\w.])(\d+)\^(-?\d+)(?![\w.])")
"""A power written in plain prose, ``10^9`` or ``2^30``: escaped, the caret would print as an accent."""


def _powers(text: str) -> str:
    """Escape prose, setting ``10^9`` as the math ``$10^{9}$``."""
    out, last = [], 0
    for match in _POWER.finditer(text):
        out.append(tex_escape(text[last:match.start()]))
        out.append(f"${match[1]}^{{{match[2]}}}$")
        last = match.end()
    out.append(tex_escape(text[last:]))
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def tex_text(text: Any) -> str:
    """Escape prose for LaTeX but keep ``$…$`` math, so a title may say "Scaling by $\\sqrt{d_k}$".

    Symbols written in plain text (misconception hints say "d_k") are set as math rather than
    printing a literal underscore.
    """
    return _outside_math(str(text), _tex_prose)


@functools.lru_cache(maxsize=4096)
def md_text(text: Any) -> str:
    """Escape Markdown emphasis and markup characters in prose, keeping ``$…$`` math intact."""
    return _outside_math(str(text), lambda s: _MD_SPECIAL.sub(r"\\\1", s))


TEX_UNICODE = {
    "−": r"\ensuremath{-}", "×": r"\ensuremath{\times}", "√": r"\ensuremath{\surd}",
    "∞": r"\ensuremath{\infty}", "…": r"\ldots{}", "·": r"\ensuremath{\cdot}", "≈": r"\ensuremath{\approx}",
    "≤": r"\ensuremath{\le}", "≥": r"\ensuremath{\ge}", "≠": r"\ensuremath{\neq}", "→": r"\ensuremath{\to}",
    "←": r"\ensuremath{\leftarrow}", "±": r"\ensuremath{\pm}", "′": r"\ensuremath{'}", "ᵀ": r"\ensuremath{^{\top}}",
    "⊙": r"\ensuremath{\odot}", "⊗": r"\ensuremath{\otimes}", "∈": r"\ensuremath{\in}", "∑": r"\ensuremath{\sum}",
    "Σ": r"\ensuremath{\Sigma}", "Φ": r"\ensuremath{\Phi}", "α": r"\ensuremath{\alpha}", "β": r"\ensuremath{\beta}",
    "γ": r"\ensuremath{\gamma}", "δ": r"\ensuremath{\delta}", "ε": r"\ensuremath{\varepsilon}",
    "θ": r"\ensuremath{\theta}", "λ": r"\ensuremath{\lambda}", "μ": r"\ensuremath{\mu}", "π": r"\ensuremath{\pi}",
    "σ": r"\ensuremath{\sigma}", "τ": r"\ensuremath{\tau}", "φ": r"\ensuremath{\varphi}", "ω": r"\ensuremath{\omega}",
    "ℝ": r"\ensuremath{\mathbb{R}}", "⁰": r"\ensuremath{^{0}}", "¹": r"\ensuremath{^{1}}", "²": r"\ensuremath{^{2}}",
    "³": r"\ensuremath{^{3}}", "⁴": r"\ensuremath{^{4}}", "⁵": r"\ensuremath{^{5}}", "⁶": r"\ensuremath{^{6}}",
    "⁷": r"\ensuremath{^{7}}", "⁸": r"\ensuremath{^{8}}", "⁹": r"\ensuremath{^{9}}", "⁻": r"\ensuremath{^{-}}",
    "ₖ": r"\ensuremath{_{k}}", "∘": r"\ensuremath{\circ}", "⌈": r"\ensuremath{\lceil}", "⌉": r"\ensuremath{\rceil}",
    "⌊": r"\ensuremath{\lfloor}", "⌋": r"\ensuremath{\rfloor}", "✓": r"\ensuremath{\checkmark}",
}
"""Unicode that prose may contain, declared in the LaTeX preamble so pdflatex (no unicode-math) prints it."""


def tex_unicode_declarations() -> str:
    """``\\DeclareUnicodeCharacter`` lines for TEX_UNICODE, sorted for stable output."""
    return "\n".join(
        rf"\DeclareUnicodeCharacter{{{ord(c):04X}}}{{{TEX_UNICODE[c]}}}" for c in sorted(TEX_UNICODE)
    ) + "\n"


# --------------------------------------------------------------------------------------------------
# Answers in the key: the value a part expects, shown by type, with its tolerance.
# --------------------------------------------------------------------------------------------------


def answer_digits(part: AnswerPart) -> int:
    """Decimals worth showing for a part: one more than its absolute tolerance resolves (4 by default)."""
    if part.atol > 0:
        return max(1, min(8, math.ceil(-math.log10(part.atol)) + 1))
    return 4


def is_heatmap(part: AnswerPart) -> bool:
    """Whether the key draws this matrix part as a heatmap: ``spec["heatmap"]`` or the ``weights`` key."""
    if part.type != "matrix" or not isinstance(part.value, list) or not part.value:
        return False
    return bool(part.spec.get("heatmap", part.key == "weights"))


def _display_math(latex: str, fmt: str) -> str:
    return f"$$\n{latex}\n$$" if fmt == "md" else f"\\[\n{latex}\n\\]"


CODE_BREAK = r"\penalty50{}"
"""A discouraged line break. Typewriter text cannot hyphenate or stretch, so long exact answers may
also break after an operator or a comma; the penalty makes TeX prefer the spaces around `` + ``."""

_CODE_BREAKS = str.maketrans({c: c + CODE_BREAK for c in "+*/,"})


def _code(text: str, fmt: str) -> str:
    return f"`{text}`" if fmt == "md" else rf"\texttt{{{tex_escape(text).translate(_CODE_BREAKS)}}}"


def _prose(text: Any, fmt: str) -> str:
    return md_text(text) if fmt == "md" else tex_text(text)


def group_digits(value: int) -> str:
    r"""An integer for math mode with thin spaces between thousands (``2\,097\,152``) so big counts read easily."""
    return f"{int(value):,}".replace(",", r"\,")


def dim_value(dim: Any, dims: dict) -> Any:
    """A shape dimension with the problem's numbers put in: ``h*d_k`` is 512 when h = 8 and d_k = 64;
    factors without a given number stay symbolic (``8*d_k``)."""
    if isinstance(dim, int):
        return dim
    factors = [f.strip() for f in str(dim).split("*")]
    known = [int(dims[f]) for f in factors if f in dims]
    unknown = [f for f in factors if f not in dims]
    if not known:
        return dim
    product = math.prod(known)
    return "*".join([str(product), *unknown]) if unknown else product


@dataclass(frozen=True)
class KeyKit:
    """The renderer's helpers an answer type uses to show its key (the type decides what to show)."""

    fmt: str
    digits: int
    matrix_latex: Callable = None  # type: ignore[assignment]
    mask_values: Callable = None  # type: ignore[assignment]
    shape_latex: Callable = None  # type: ignore[assignment]
    dim_value: Callable = None  # type: ignore[assignment]
    group_digits: Callable = None  # type: ignore[assignment]
    mask_latex: Callable = None  # type: ignore[assignment]

    def code(self, text: str) -> str:
        return _code(text, self.fmt)

    def prose(self, text: Any) -> str:
        return _prose(text, self.fmt)

    def display_math(self, latex: str) -> str:
        return _display_math(latex, self.fmt)


@functools.lru_cache(maxsize=64)
def _key_kit(fmt: str, digits: int) -> KeyKit:
    """One kit per format and precision: it holds only module functions, so every part can share it."""
    return KeyKit(fmt, digits, matrix_latex, mask_values, shape_latex, dim_value, group_digits, mask_latex)


def answer_display(part: AnswerPart, fmt: str) -> str:
    """The expected answer of one part as Markdown or LaTeX (display math for matrices)."""
    return types.get(part.type).key_display(part, _key_kit(fmt, answer_digits(part)))


# --------------------------------------------------------------------------------------------------
# Document wrappers: templates/documents/<name>.<fmt>.j2
# --------------------------------------------------------------------------------------------------

TEX_DELIMITERS = {
    "block_start_string": "((*", "block_end_string": "*))",
    "variable_start_string": "(((", "variable_end_string": ")))",
    "comment_start_string": "((=", "comment_end_string": "=))",
}
"""LaTeX wrappers use these so ``{``, ``}`` and ``{#`` of TeX never clash with jinja."""


def document_environment(fmt: str, user_dir: str | None = None) -> jinja2.Environment:
    """Jinja environment for whole documents; ``tex`` uses the ``((* *))`` family of delimiters. One per
    (format, folder), like :func:`environment`."""
    return _document_environment(fmt, user_dir)


@functools.lru_cache(maxsize=16)
def _document_environment(fmt: str, user_dir: str | None) -> jinja2.Environment:
    if fmt not in ("md", "tex"):
        raise ProblemgenError(f"documents are rendered as md or tex, not {fmt!r}")
    env = _new_environment(fmt, user_dir, **(TEX_DELIMITERS if fmt == "tex" else {}))
    env.filters.update(
        {"tex": tex_text, "tex_literal": tex_escape, "md": md_text, "num": format_number}
    )
    env.globals.update({"tex_unicode_declarations": tex_unicode_declarations, "shade_legend": shade_legend})
    return env


_BLANK_RUN = re.compile("\n\n\n+")
"""Three newlines or more: more than one blank line in a row."""


def _collapse_blank_lines(text: str) -> str:
    """At most one blank line in a row (template loops leave runs of them): each run of three newlines or
    more becomes two, as repeating ``replace("\\n\\n\\n", "\\n\\n")`` until none is left does (a test
    compares the two on any text). One pass of the regular-expression engine, which looks for the run as a
    literal, takes half the time of ``str.replace`` on an answer key (tens of kilobytes, its heatmap glyphs
    make it a two-byte string, and ``replace`` scans it twice)."""
    return _BLANK_RUN.sub("\n\n", text)


def render_document(name: str, fmt: str, context: dict, user_dir: str | None = None) -> str:
    """Render ``documents/<name>.<fmt>.j2`` with ``context``; a missing or failing template is a clear error."""
    env = document_environment(fmt, user_dir)
    path = f"documents/{name}.{fmt}.j2"
    try:
        template = env.get_template(path)
    except jinja2.TemplateNotFound as exc:
        raise ProblemgenError(f"no document template {exc.name!r}") from exc
    except jinja2.TemplateError as exc:
        raise template_error(exc, path) from exc
    try:
        return _collapse_blank_lines(template.render(context))
    except jinja2.TemplateNotFound as exc:  # an include or import of a file that is not there
        raise ProblemgenError(f"template {path}: no template {exc.name!r}") from exc
    except Exception as exc:
        if not isinstance(exc, jinja2.TemplateError) and not is_users(template, user_dir):
            raise
        raise template_error(exc, path) from exc
