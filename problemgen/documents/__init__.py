"""Documents: rendering problems to Markdown, LaTeX/PDF and terminal text; worksheets, banks, class sets.

Owns the jinja environments and filters, the LaTeX compile, bank recipes, worksheet and class-set
writing, the frozen ``variant.json`` and where shipped data lives. May import: ``problemgen.model``,
``problemgen.answers`` and ``problemgen.errors`` — never ``reference`` (answers are already frozen).
"""
