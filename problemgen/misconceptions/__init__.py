"""The one catalogue of named mistakes: tag, title, hint and the buggy computation behind each value.

Used by problem generators (sheet mistakes) and coding tasks (buggy variants) alike. May import:
``reference`` and ``problemgen.errors``.
"""
