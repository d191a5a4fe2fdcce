"""Documents: rendering problems to Markdown, LaTeX/PDF and terminal text; worksheets, banks, class sets.

Owns the jinja environments and filters, the LaTeX compile, bank recipes, worksheet and class-set
writing. May import: ``problemgen.model``,
``problemgen.answers``, ``problemgen.misconceptions``, ``problemgen.sheets`` (blank and key answer sheets),
``problemgen.resources`` and ``problemgen.errors`` — never ``reference`` (answers are already frozen).
"""

FORMATS = ("md", "tex", "text")
"""The formats a problem renders to (the one list: rendering, the self-check and ``problemgen show``)."""
