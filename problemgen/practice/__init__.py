"""Practice: mastery and spacing rules, the SQLite progress store and the quiz front end.

May import: ``problemgen.model``, ``problemgen.answers``, ``problemgen.misconceptions``,
``problemgen.problems`` (the kind index), ``problemgen.documents``, ``problemgen.sheets``,
``problemgen.resources`` and ``problemgen.errors`` — never ``reference``.
"""
