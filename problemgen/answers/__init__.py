"""Answer types: how a student's answer is read, compared with the key and written back.

Owns the safe maths parser (no ``eval``: SymPy objects are built from an allow-listed ``ast``) and the
formatting of tolerances and values. May import: ``problemgen.model`` and ``problemgen.errors`` (and numpy/sympy).
"""
