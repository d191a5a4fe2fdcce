"""The answer types, one module each: the module's name is the type's name and it defines ``TYPE``.

The list of types is the list of modules in this package (read from the directory, nothing
imported), so adding an answer type is adding one file here (plus its tests); a type's module is
imported the first time an answer of that type is graded or shown.
"""

from __future__ import annotations

from problemgen.model.core import ANSWER_TYPES, answer_type


def names() -> tuple[str, ...]:
    """Every answer type's name, sorted (the model lists this package's modules: one list, no copy)."""
    return ANSWER_TYPES


def get(name: str):
    """The :class:`~problemgen.answers.base.AnswerType` named ``name``; KeyError when there is none.

    One lookup for the whole project: the model's comparison hook (``values_match``) finds types the same way.
    """
    return answer_type(name)
