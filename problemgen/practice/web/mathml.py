"""The shared problem fragments (Markdown prose with ``$…$`` maths) as HTML with MathML.

Why server-side MathML: Chromium, Firefox and Safari display MathML natively and screen readers read
it, so the page needs no script, no font download and no network. The LaTeX of the fragments is
converted by latex2mathml (pure Python); the prose around it is ``documents.markdown_html``, shared
with the LMS exports and HTML-escaped, so nothing a template or a student wrote can inject markup. The
fragments are rendered in their Markdown form (``rendering.render_block(..., "md")``) — the same text
the worksheets print.
"""

from __future__ import annotations

import functools
from html import escape

from latex2mathml.converter import convert
from markupsafe import Markup

from problemgen.documents import markdown_html as md


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


@functools.lru_cache(maxsize=1024)
def fragment_html(markdown: str) -> Markup:
    """Markdown-with-maths (one rendered block) as HTML paragraphs; display maths get their own block."""
    return Markup(md.markdown_html(markdown, latex_to_mathml))


def text_html(text: str) -> Markup:
    """One line of plain text that may hold ``$…$`` maths (labels, options, titles): only the maths rendered."""
    return Markup(md.text_html(str(text), latex_to_mathml))
