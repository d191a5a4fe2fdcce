"""Problem generators, one module per topic: pure ``make(rng, **overrides)`` functions that call ``reference``.

Topics and kinds are discovered from this package (``index.py`` reads the ``@register`` lines); adding a
kind touches a generator here, its template, a test and a curriculum line: README.md, "Adding a problem kind".

May import: ``reference``, ``problemgen.model``, ``problemgen.misconceptions``, ``problemgen.answers``,
``problemgen.resources`` and ``problemgen.errors``.
"""
