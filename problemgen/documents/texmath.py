r"""Which TeX a bank may write inside ``$…$``: an allow-list of maths commands, nothing else.

Why: prose in a bank (titles, instructions) is escaped before it reaches pdflatex, but ``$…$`` math
passes through as written, so that a title can say "Scaling by $\sqrt{d_k}$". Without a check, a
bank's math could hold ``\input{/etc/passwd}`` (the file printed into every student's PDF),
``\write18``, ``\def`` or ``\catcode`` tricks. pdflatex also runs in paranoid file mode
(:mod:`problemgen.documents.latex`); this check rejects such a bank at ``bank validate`` time, with
the file, line and key, before any document is made.

Refused besides unknown commands: ``^^`` (TeX reads ``^^5c`` as a backslash), ``%`` and ``#``.
"""

from __future__ import annotations

import re

_GREEK = (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi rho varrho "
    "sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega"
)
_SYMBOLS = (
    "cdot times div pm mp ast star circ bullet odot otimes oplus le leq ge geq neq ne approx sim simeq equiv propto "
    "ll gg in notin subset subseteq cup cap to rightarrow leftarrow Rightarrow Leftarrow mapsto infty partial nabla "
    "forall exists neg land lor mid parallel perp top bot prime ldots cdots dots vdots ddots colon"
)
_OPERATORS = "sum prod int max min argmax argmin exp log ln sin cos tan sqrt frac dfrac tfrac binom lfloor rfloor lceil rceil langle rangle lVert rVert lvert rvert"  # noqa: E501
_FONTS = "text textrm textit mathrm mathbf mathit mathsf mathtt mathbb mathcal boldsymbol operatorname"
_DECOR = "hat tilde bar vec dot ddot overline underline widehat widetilde left right big Big bigg Bigg quad qquad"
MATH_COMMANDS = frozenset(" ".join((_GREEK, _SYMBOLS, _OPERATORS, _FONTS, _DECOR)).split())
CONTROL_SYMBOLS = frozenset(r"\, \; \: \! \{ \} \_ \| \  \% \#".split(" ")) | {"\\ "}

_MATH = re.compile(r"(\$\$.+?\$\$|\$[^$\n]+?\$)", re.S)
_TOKEN = re.compile(r"\\([A-Za-z@]+|.)|\^\^|[%#]", re.S)


def forbidden(text: str) -> list[str]:
    """The disallowed commands and characters inside the ``$…$`` segments of ``text``, in order, once each."""
    found: list[str] = []
    for segment in _MATH.findall(text):
        for token in _TOKEN.finditer(segment):
            word = token.group(0)
            allowed = (word[1:] in MATH_COMMANDS) if token.group(1) and word[1:2].isalpha() else word in CONTROL_SYMBOLS
            if not allowed and word not in found:
                found.append(word)
    return found


def problem(text: str) -> str:
    """A one-line explanation for a bank issue, or "" when the math is acceptable."""
    bad = forbidden(text)
    if not bad:
        return ""
    shown = ", ".join(bad[:5])
    return (f"{shown} not allowed inside $…$ (math may use maths commands only, such as \\sqrt, \\frac, "
            "\\text, Greek letters; no file, definition or token-list primitives)")  # fmt: skip
