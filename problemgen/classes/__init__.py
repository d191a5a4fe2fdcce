"""Classes: grading a whole class of answer sheets or code submissions into gradebooks and summaries.

May import: ``problemgen.sheets``, ``problemgen.code``, ``problemgen.documents``, ``problemgen.model`` and
``problemgen.errors`` — never ``reference``.
"""
