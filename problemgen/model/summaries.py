"""A kind's one-line summary, made from its generator's docstring.

``problemgen list --json`` shows it, read two ways that must agree: from the registry (the imported
generator's ``__doc__``) and, for a fast start, from the source text (``problems.index``). Both call
this. The first paragraph is taken whole, since a first line alone can stop mid-sentence, and reST's
double backquotes are dropped: they mean nothing in a listing.
"""

from __future__ import annotations


def docstring_summary(docstring: str | None) -> str:
    """The first paragraph of ``docstring`` on one line, without reST's double backquotes."""
    paragraph = (docstring or "").strip().split("\n\n")[0]
    return " ".join(paragraph.split()).replace("``", "")
