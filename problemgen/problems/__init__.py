"""Problem generators, one module per topic: pure ``make(rng, **overrides)`` functions that call ``reference``.

May import: ``reference``, ``problemgen.model``, ``problemgen.misconceptions``, ``problemgen.answers``,
``problemgen.resources`` and ``problemgen.errors``.
"""
