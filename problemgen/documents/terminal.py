"""Readable math in a terminal: turn the text render of a fragment into plain Unicode.

Fragments are written for Markdown and LaTeX (prose plus ``$…$`` math). Rendered with ``fmt="text"``
the filters already give aligned Unicode matrices and plain shapes; what is left is the inline LaTeX of
the prose. ``to_unicode`` rewrites the common part of it — ``$`` delimiters dropped, ``d_k`` -> ``dₖ``,
``\\sqrt{d_k}`` -> ``√dₖ``, ``\\times`` -> ``×``, ``\\infty`` -> ``∞``, ``K^\\top`` -> ``Kᵀ``, Greek
letters, ``\\frac{a}{b}`` -> ``a/b`` — and leaves anything it does not know readable as it was.

Colour is used only when the output is a terminal and ``NO_COLOR`` is unset (https://no-color.org).

Layout follows the terminal: ``layout_width`` (a context variable the quiz sets from the terminal's
columns) decides when side-by-side matrices are stacked instead, and ``wrap`` folds prose to it. When
the output encoding cannot show the Unicode maths (``PYTHONIOENCODING=ascii``, latin-1), ``to_ascii``
writes it in ASCII (``sqrt(d_k)``, ``K^T``, ``[ … ]`` brackets) instead of failing.
"""

from __future__ import annotations

import contextvars
import functools
import os
import re
import textwrap
import unicodedata
from typing import Mapping, TextIO

_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_SUP = dict(zip("0123456789+-=()inT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀ"))

_SYMBOLS = {
    "times": "×", "cdot": "·", "infty": "∞", "top": "ᵀ", "intercal": "ᵀ", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "in": "∈", "sum": "Σ", "prod": "Π", "pm": "±", "odot": "⊙", "otimes": "⊗",
    "ldots": "…", "dots": "…", "cdots": "⋯", "mid": "|", "sim": "~", "propto": "∝", "partial": "∂",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "theta": "θ", "lambda": "λ", "mu": "μ", "sigma": "σ", "tau": "τ", "phi": "φ", "pi": "π",
    "omega": "ω", "Phi": "Φ", "Sigma": "Σ", "Delta": "Δ", "log": "log", "exp": "exp", "ln": "ln",
    "max": "max", "min": "min", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "arg": "arg",
    "argmax": "argmax", "erf": "erf", "Pr": "Pr", "det": "det", "quad": "  ", "qquad": "    ",
    "cup": "∪", "cap": "∩", "forall": "∀", "exists": "∃", "neg": "¬", "land": "∧", "lor": "∨",
    "Rightarrow": "⇒", "Leftrightarrow": "⇔", "mapsto": "↦", "ell": "ℓ", "nabla": "∇", "circ": "∘",
    "star": "⋆", "ast": "∗", "setminus": "∖", "subset": "⊂", "subseteq": "⊆", "notin": "∉",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
    "displaystyle": "", "textstyle": "", "big": "", "Big": "", "bigg": "", "Bigg": "", "limits": "",
    "eta": "η", "zeta": "ζ", "kappa": "κ", "rho": "ρ", "psi": "ψ", "chi": "χ", "xi": "ξ", "nu": "ν",
    "Gamma": "Γ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Omega": "Ω", "Psi": "Ψ", "varphi": "φ",
    "lbrace": "{", "rbrace": "}", "{": "{", "}": "}", "%": "%", "_": "_", "&": "&", "#": "#",
    "$": "$", ",": " ", ";": " ", ":": " ", "!": "", " ": " ", "left": "", "right": "",
    "bigl": "", "bigr": "", "Bigl": "", "Bigr": "", "lVert": "‖", "rVert": "‖", "|": "‖",
}
_FONTS = ("text", "mathrm", "mathbf", "mathit", "operatorname", "mathsf", "boldsymbol", "mathcal", "mathtt",
          "texttt", "textbf", "textit", "textrm", "emph", "mathnormal", "mbox")
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ"}
_ACCENTS = {"hat": "\u0302", "bar": "\u0304", "tilde": "\u0303", "vec": "\u20d7"}  # combining marks

_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def to_unicode(text: str) -> str:
    """Rewrite the ``$…$`` math of rendered text into plain Unicode; prose outside math is kept."""
    out = _MATH.sub(lambda m: math_to_unicode(m.group(1) if m.group(1) is not None else m.group(2)), text)
    return re.sub(r"\n{3,}", "\n\n", out)  # display blocks bring their own blank lines


def math_to_unicode(tex: str) -> str:
    """Unicode for one LaTeX math snippet (best effort, never raises)."""
    tex = re.sub(r"\\begin\{[bp]?matrix\}(.*?)\\end\{[bp]?matrix\}", lambda m: _matrix(m.group(1)), tex, flags=re.S)
    out = _convert(tex)
    if "\n" not in out:
        return re.sub(r"[ \t]{2,}", " ", out).strip()
    return side_by_side(out)


def _convert(tex: str) -> str:
    """Recursive descent over commands, brace groups and scripts (arguments are converted first)."""
    out: list[str] = []
    i = 0
    while i < len(tex):
        char = tex[i]
        if char == "\\":
            text, i = _command(tex, i)
            out.append(text)
        elif char in "^_":
            arg, i = _argument(tex, i + 1, run=char == "_")
            out.append(_script(_convert(arg), _SUP if char == "^" else _SUB, char))
        elif char == "{":
            arg, i = _argument(tex, i)
            out.append(_convert(arg))
        else:
            out.append("" if char == "}" else char)
            i += 1
    return "".join(out)


def _command(tex: str, i: int) -> tuple[str, int]:
    """Convert the command starting at ``tex[i] == "\\"``; return its text and the index after it."""
    match = re.match(r"\\([A-Za-z]+|.?)", tex[i:])
    name, i = match.group(1), i + match.end()
    if name in _FONTS:
        arg, i = _argument(tex, i)
        return _convert(arg), i
    if name == "frac":
        top, i = _argument(tex, i)
        bottom, i = _argument(tex, i)
        return f"{_group(_convert(top))}/{_group(_convert(bottom))}", i
    if name == "sqrt":
        arg, i = _argument(tex, i)
        return "√" + _group(_convert(arg)), i
    if name == "mathbb":
        arg, i = _argument(tex, i)
        return _BLACKBOARD.get(arg, arg), i
    if name in _ACCENTS:
        arg, i = _argument(tex, i)
        return _convert(arg) + _ACCENTS[name], i
    return _SYMBOLS.get(name, "\\" + name), i  # unknown: left as typed, so it is visible (and tested)


def _argument(tex: str, i: int, run: bool = False) -> tuple[str, int]:
    """One argument at ``tex[i]``: a balanced ``{…}`` group (returned without braces), a command, or a
    single character — or, for ``_``, a run of letters and digits (the text filters print ``d_model``)."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1:j], j + 1
        return tex[i + 1:], len(tex)
    if tex[i] == "\\":
        match = re.match(r"\\([A-Za-z]+|.?)", tex[i:])
        return match.group(0), i + match.end()
    match = re.match(r"[A-Za-z0-9]+|." if run else r".", tex[i:], re.S)
    return match.group(0), i + match.end()


_BLOCK = re.compile(r"\n?((?:[ \t]*[┌│└][^\n]*(?:\n|$))+)")
MAX_WIDTH = 100
layout_width: contextvars.ContextVar[int] = contextvars.ContextVar("layout_width", default=MAX_WIDTH)
"""Columns available for laying matrices side by side (the quiz sets it to the terminal's width)."""


def side_by_side(text: str) -> str:
    """Lay out the multi-line matrix blocks of one formula next to each other (``Q = ┌…┐, K = ┌…┐``),
    text vertically centred between them; stacked as they are when that would be too wide."""
    pieces: list[list[str]] = []
    pos = 0
    for match in _BLOCK.finditer(text):
        _add_text(pieces, text[pos:match.start()])
        pieces.append([line[2:] if line.startswith("  ") else line
                       for line in match.group(1).rstrip("\n").split("\n")])
        pos = match.end()
    _add_text(pieces, text[pos:])
    if len(pieces) < 2:
        return text
    height = max(len(p) for p in pieces)
    widths = [max(len(line) for line in p) for p in pieces]
    if sum(widths) + len(pieces) + 2 > layout_width.get():
        return text
    rows = [[" " * w for w in widths] for _ in range(height)]
    for column, (piece, width) in enumerate(zip(pieces, widths)):
        top = (height - len(piece)) // 2
        for offset, line in enumerate(piece):
            rows[top + offset][column] = line.ljust(width)
    return "\n" + "\n".join(("  " + " ".join(row)).rstrip() for row in rows) + "\n"


def _add_text(pieces: list[list[str]], text: str) -> None:
    text = re.sub(r"\s+", " ", text).strip()
    if text:
        pieces.append([text])


def _group(text: str) -> str:
    """Parenthesise a fraction/root argument only when it has more than one term."""
    text = text.strip()
    if text.startswith("√(") and text.endswith(")") and text.count("(") == 1:
        return text  # √(σ² + ε) is already one term
    return f"({text})" if re.search(r"[\s+\-−*/]", text) and not text.startswith("(") else text


def _script(body: str, table: dict[str, str], marker: str) -> str:
    """Unicode sub/superscript when every character has one; else keep ``d_model`` / ``^(…)`` style."""
    body = body.strip().replace("ᵀ", "T")
    if body and all(c in table for c in body):
        return "".join(table[c] for c in body)
    return f"{marker}{body}" if len(body) == 1 or body.isalnum() else f"{marker}({body})"


def _matrix(body: str) -> str:
    """A hand-written bmatrix as an aligned block (the ``matrix`` filter already does this)."""
    rows = [[math_to_unicode(cell) for cell in row.split("&")] for row in re.split(r"\\\\", body) if row.strip()]
    widths = [max(len(r[j]) for r in rows if j < len(r)) for j in range(max(len(r) for r in rows))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    if len(lines) == 1:
        return "[ " + lines[0] + " ]"
    return "\n" + "\n".join(f"  │ {line} │" for line in lines) + "\n"


# ------------------------------------------------------------------------------------------ colour

_STYLES = {"good": "32", "bad": "31", "warn": "33", "dim": "2", "bold": "1", "accent": "36"}


def use_colour(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Colour only on a real terminal, and never when NO_COLOR is set (non-empty) or TERM=dumb."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def style(text: str, role: str, colour: bool) -> str:
    """Wrap ``text`` in the ANSI code of ``role`` when ``colour`` is on; plain text otherwise."""
    if not colour or role not in _STYLES:
        return text
    return f"\x1b[{_STYLES[role]}m{text}\x1b[0m"


# ------------------------------------------------------------------------------------------ layout


_MATRIX_LINE = re.compile(r"[┌┐└┘│]|^\s*\[[^\[\]]*\]\s*$")
"""A line of an aligned block: a matrix drawn with box characters, or a one-row vector ``[ 1  2 ]``."""


def wrap(text: str, width: int) -> str:
    """Fold prose lines longer than ``width`` at spaces, keeping their indentation; lines of matrices,
    tables and other aligned blocks (box characters, leading runs of spaces) are left as they are."""
    lines = []
    for line in text.split("\n"):
        if len(line) <= width or _MATRIX_LINE.search(line):
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        lines.append(textwrap.fill(line.strip(), width, initial_indent=indent, subsequent_indent=indent + "  ",
                                   break_long_words=False, break_on_hyphens=False))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- ASCII


_ASCII = {
    "✓": "OK", "✗": "X", "★": "*", "─": "-", "━": "-", "┌": "[", "┐": "]", "└": "[", "┘": "]", "│": "|",
    "·": ".", "—": "--", "–": "-", "−": "-", "×": "x", "√": "sqrt", "ᵀ": "^T", "≤": "<=", "≥": ">=",
    "≠": "!=", "≈": "~", "→": "->", "←": "<-", "⇒": "=>", "⇔": "<=>", "∞": "inf", "…": "...", "⋯": "...",
    "“": '"', "”": '"', "‘": "'", "’": "'", "±": "+/-", "‖": "||", "⊙": "(.)", "⊗": "(x)", "∈": " in ",
    "ℝ": "R", "ℕ": "N", "ℤ": "Z", "•": "*", "Σ": "sum", "Π": "prod", "∂": "d", "∇": "grad", "∘": "o",
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "eps", "θ": "theta", "λ": "lambda",
    "μ": "mu", "σ": "sigma", "τ": "tau", "φ": "phi", "Φ": "Phi", "π": "pi", "ω": "omega", "η": "eta",
    "ρ": "rho", "ψ": "psi", "χ": "chi", "ξ": "xi", "ν": "nu", "ζ": "zeta", "κ": "kappa", "Δ": "Delta",
    "Γ": "Gamma", "Θ": "Theta", "Λ": "Lambda", "Ω": "Omega", "Ψ": "Psi", "ℓ": "l", "⟨": "<", "⟩": ">",
    "⌊": "floor(", "⌋": ")", "⌈": "ceil(", "⌉": ")", "∪": " u ", "∩": " n ", "∀": "for all ", "∃": "exists ",
    "¬": "not ", "∧": " and ", "∨": " or ", "↦": "|->", "∝": "~", "█": "#", "▓": "#", "▒": "+", "░": ".",
    "‹": "<", "›": ">", "«": "<<", "»": ">>", "\u00a0": " ", "\u2009": " ",
}
_ASCII.update({sub: "_" + plain for plain, sub in _SUB.items()})
_ASCII.update({sup: "^" + plain for plain, sup in _SUP.items() if sup != "ᵀ"})


def can_encode(encoding: str | None, sample: str = "✓ √dₖ ┌ │ └ ×") -> bool:
    """True when ``encoding`` can write the Unicode maths the quiz prints."""
    try:
        sample.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def to_ascii(text: str, encoding: str = "ascii") -> str:
    """``text`` with every character ``encoding`` cannot write replaced by an ASCII spelling (never raises)."""
    return spell_from(text, 0, len(text), encoding)[0]


def spell_from(text: str, start: int, end: int, encoding: str) -> tuple[str, int]:
    """The spelling of ``text[start:end]`` in ``encoding``, and the index where the text goes on.

    A root the encoding cannot write takes its argument with it (``√dₖ`` -> ``sqrt(d_k)``, so the index
    may lie beyond ``end``): spelt one character at a time it would read ``sqrtd_k``. One rule for the
    quiz, which spells whole lines, and for the standard streams' error handler, which gets one run of
    unwritable characters at a time.
    """
    pieces = []
    position = start
    while position < end:
        root = _ROOT.match(text, position) if text[position] == "√" and not can_encode(encoding, "√") else None
        if root:
            argument = root.group(1).strip("()")
            pieces.append("sqrt(" + "".join(spell_in(char, encoding) for char in argument) + ")")
            position = root.end()
        else:
            pieces.append(spell_in(text[position], encoding))
            position += 1
    return "".join(pieces), position


_ROOT = re.compile(r"√(\([^()]*\)|[\w.\u2080-\u209c\u1d62-\u1d6a\u2090-\u209c]+)")


@functools.lru_cache(maxsize=4096)
def spell_in(char: str, encoding: str) -> str:
    """``char`` itself when ``encoding`` can write it, else an ASCII spelling (``≤`` -> ``<=``, ``ₖ`` -> ``_k``)."""
    try:
        char.encode(encoding)
        return char
    except (UnicodeEncodeError, LookupError):
        pass
    if char in _ASCII:
        return _ASCII[char]
    if unicodedata.combining(char):
        return ""
    plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode("ascii")
    return plain or "?"
