"""The problem model: what a variant is, how kinds are registered and how every kind checks itself.

Owns ``Problem``, ``AnswerPart`` and ``Mistake`` (core), the ``@register`` registry and ``generate``, and
the self-check contract run by ``problemgen check``. May import: ``problemgen.errors``,
``problemgen.answers`` and ``problemgen.misconceptions`` (never documents, sheets, code, practice or the CLI).
"""
