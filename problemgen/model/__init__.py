"""The problem model: what a variant is, how kinds are registered, and the frozen variant file.

Owns ``Problem``, ``AnswerPart`` and ``Mistake`` (core), the ``@register`` registry and ``generate``,
``variant.json`` (variantfile), and the seeded random streams variants and coding-task cases are drawn
from (streams). The self-check contract that renders and grades every kind sits above
the stages it checks, in :mod:`problemgen.selfcheck`. May import: ``problemgen.errors``, the catalogue's
entries and ``problemgen.wording`` (the did-you-mean of an unknown kind or override).
"""
