"""Documents: rendering problems to Markdown, LaTeX/PDF and terminal text; worksheets, banks, class sets.

Owns the jinja environments and filters, the LaTeX compile, bank recipes, worksheet and class-set
writing and the frozen ``variant.json``. May import: ``problemgen.model``,
``problemgen.answers`` and ``problemgen.errors`` — never ``reference`` (answers are already frozen).
"""
