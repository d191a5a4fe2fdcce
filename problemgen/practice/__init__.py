"""Practice: mastery and spacing rules, the SQLite progress store and the quiz front end.

May import: ``problemgen.model``, ``problemgen.answers``, ``problemgen.documents``, ``problemgen.sheets``
and ``problemgen.errors`` — never ``reference``.
"""
