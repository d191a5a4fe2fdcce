"""Answer types: how a student's answer is read, compared with the key and written back.

One module per answer type in ``problemgen.answers.types`` (its reading, checking, key, "expected
format" text and self-check values); the shared pieces beside it: ``text`` (the characters of typed
maths), ``scalars`` (one number, SymPy only for real expressions), ``arrays`` (matrices in any common
notation), ``base`` (the verdict and the type interface) and the safe maths parser ``mathparse`` (no
``eval``: SymPy objects are built from an allow-listed ``ast``). May import: ``problemgen.model`` and
``problemgen.errors`` (and numpy/sympy).
"""
