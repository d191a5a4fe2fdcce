"""Answer sheets: reading a student's sheet safely, grading it against a frozen variant, writing reports.

May import: ``problemgen.model`` (with the frozen variant file), ``problemgen.answers``,
``problemgen.misconceptions`` and ``problemgen.errors`` — never ``documents`` or ``reference``.
"""
