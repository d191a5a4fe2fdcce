"""Shape dimensions written as products and quotients of names and whole numbers, compared without SymPy.

Nearly every dimension a student types is such a product: ``d_k``, ``h*d_k``, ``d_model / h``, ``2*d``.
Importing SymPy takes one to two seconds, and the quiz promises feedback at once from the first answer,
so :func:`same_product_dim` decides these exactly with fractions and returns ``None`` for anything
else (powers, brackets, sums, spaces, function names), which the SymPy path then decides.

It follows the SymPy rule of :func:`problemgen.answers.types.shape.same_dim` step by step, so both
paths give the same verdict (``tests/test_answer_products.py`` compares them on generated dimensions):
the problem's definitions (``equal``, e.g. ``d_model = h*d_k``) are substituted in their order; a name
in the answer that the key does not hold makes the answer wrong, unless the student did not write it (a
definition brought it in: ``h`` in ``d_model/3`` for ``d_k``), the problem gave its value, and the answer
keeps one of the key's names: then it is that number; the key's other names may be given as the numbers
the problem stated; then the two must be the same product.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

_FACTOR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[1-9][0-9]{0,29}")
_NOT_NAMES = {"exp", "log", "ln", "sqrt", "pi", "e", "sin", "cos"}  # what the SymPy reader takes as maths


@dataclass(frozen=True)
class Product:
    """``coefficient × Π name**power``; powers are never 0 (a name that cancels out is dropped)."""

    coefficient: Fraction
    powers: tuple[tuple[str, int], ...]  # sorted by name

    @property
    def names(self) -> set[str]:
        return {name for name, _ in self.powers}

    def times(self, other: "Product", sign: int = 1) -> "Product":
        """This product multiplied by ``other`` (``sign=1``) or divided by it (``sign=-1``)."""
        powers = dict(self.powers)
        for name, power in other.powers:
            powers[name] = powers.get(name, 0) + sign * power
        coefficient = self.coefficient * other.coefficient if sign == 1 else self.coefficient / other.coefficient
        return Product(coefficient, tuple(sorted((n, p) for n, p in powers.items() if p)))

    def substitute(self, name: str, value: "Product") -> "Product":
        """``name`` replaced by ``value`` wherever it occurs (to whatever power)."""
        power = dict(self.powers).get(name, 0)
        rest = Product(self.coefficient, tuple((n, p) for n, p in self.powers if n != name))
        for _ in range(abs(power)):
            rest = rest.times(value, 1 if power > 0 else -1)
        return rest


def read_product(text: str) -> Product | None:
    """``a*b/c*2`` as a :class:`Product`; ``None`` when the text is anything else."""
    tokens = re.split(r"\s*([*/])\s*", str(text).strip())  # spaces around an operator are layout
    result, sign = Product(Fraction(1), ()), 1
    for i, token in enumerate(tokens):
        if i % 2:
            sign = 1 if token == "*" else -1
            continue
        if not _FACTOR.fullmatch(token) or token in _NOT_NAMES:
            return None
        factor = Product(Fraction(int(token)), ()) if token[0].isdigit() else Product(Fraction(1), ((token, 1),))
        result = result.times(factor, sign)
    return result


def same_product_dim(answer: Any, key: Any, numbers: dict[str, int], equal: dict[str, str]) -> bool | None:
    """The shape rule for two dimensions that are both products; ``None`` when either is not one."""
    a, k = read_product(str(answer)), read_product(str(key))
    if a is None or k is None:
        return None
    written = a.names
    for name, definition in equal.items():
        value = read_product(definition)
        if value is None and (name in a.names or name in k.names):
            return None
        if value is not None:
            a = a.substitute(name, value) if name in a.names else a
            k = k.substitute(name, value) if name in k.names else k
    extra = a.names - k.names
    if extra:  # a name the key does not hold: wrong whatever its value, unless a definition brought it in
        if not a.names & k.names or extra & written or not extra <= numbers.keys():
            return False
        for name in sorted(extra):
            a = a.substitute(name, Product(Fraction(int(numbers[name])), ()))
    for name in sorted(k.names - a.names):
        if name in numbers:
            k = k.substitute(name, Product(Fraction(int(numbers[name])), ()))
    return a == k


def product_size(dim: Any, numbers: dict[str, int]) -> Fraction | str | None:
    """The size of a product dimension in this variant, ``"unknown"`` when a name in it has no given
    value, ``None`` when the dimension is not a product."""
    product = read_product(str(dim))
    if product is None:
        return None
    for name in sorted(product.names):
        if name not in numbers:
            return "unknown"
        product = product.substitute(name, Product(Fraction(int(numbers[name])), ()))
    return product.coefficient
