"""Answer sheets: reading a student's sheet safely, grading it against a frozen variant, writing reports.

May import: ``problemgen.model``, ``problemgen.answers``, ``problemgen.documents`` (variant files) and
``problemgen.errors`` — never ``reference``.
"""
