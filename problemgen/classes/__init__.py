"""Classes: grading a whole class of answer sheets or code submissions into gradebooks and summaries.

Also ``grade_code``, the library behind ``problemgen grade-code`` (one file is a class of one).
May import: ``problemgen.sheets``, ``problemgen.code`` (engine, tasks, sandbox), ``problemgen.documents``,
``problemgen.model``, ``problemgen.answers``, ``problemgen.misconceptions`` and ``problemgen.errors`` —
never ``reference``.
"""
