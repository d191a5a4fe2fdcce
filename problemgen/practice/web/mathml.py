"""The shared problem fragments (Markdown prose with ``$…$`` maths) as HTML with MathML.

Why server-side MathML: Chromium, Firefox and Safari display MathML natively and screen readers read
it, so the page needs no script, no font download and no network. The LaTeX of the fragments is
converted by latex2mathml (pure Python); the prose around it is HTML-escaped, so nothing a template or
a student wrote can inject markup. The fragments are rendered in their Markdown form
(``rendering.render_block(..., "md")``) — the same text the worksheets print.
"""

from __future__ import annotations

import functools
import re
from html import escape

from latex2mathml.converter import convert
from markupsafe import Markup

_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
_CODE = re.compile(r"`([^`\n]+)`")
_STRONG = re.compile(r"\*\*([^*\n]+)\*\*")
_MD_ESCAPE = re.compile(r"\\([\\`*_\[\]<>#|])")


@functools.lru_cache(maxsize=4096)
def latex_to_mathml(latex: str, display: bool = False) -> str:
    """One LaTeX formula as a ``<math>`` element.

    A formula the converter cannot read is shown as its source in ``<code>`` rather than failing the page."""
    latex = latex.strip()
    try:
        mathml = convert(latex, display="block" if display else "inline")
    except Exception:  # the converter raises many exception types on unknown commands
        return f'<code class="tex">{escape(latex)}</code>'
    return mathml


def _prose(text: str) -> str:
    """Escape prose, then the little Markdown the fragments use: ``code``, **strong**, backslash escapes."""
    html = escape(_MD_ESCAPE.sub(r"\1", text), quote=False)
    html = _CODE.sub(r"<code>\1</code>", html)
    return _STRONG.sub(r"<strong>\1</strong>", html)


def _inline(text: str) -> str:
    """A paragraph's content: prose and maths, single newlines kept as line breaks only before maths."""
    out, last = [], 0
    for match in _MATH.finditer(text):
        out.append(_prose(text[last:match.start()]))
        display = match.group(1) is not None
        out.append(latex_to_mathml(match.group(1) if display else match.group(2), display))
        last = match.end()
    out.append(_prose(text[last:]))
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def fragment_html(markdown: str) -> Markup:
    """Markdown-with-maths (one rendered block) as HTML paragraphs; display maths get their own block."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", markdown) if p.strip()]
    return Markup("\n".join(f"<p>{_inline(p)}</p>" for p in paragraphs))


def text_html(text: str) -> Markup:
    """One line of prose that may hold ``$…$`` maths (titles, hints, feedback)."""
    return Markup(_inline(str(text)))
