"""The value of an allow-listed expression in Python floats, with an error bound, without SymPy.

The same text the SymPy-based :mod:`problemgen.answers.mathparse` reads (``exp(2)/(1+exp(2))``,
``80*1``, ``1/sqrt(2)``) is walked here against the same allow-list and the same caps (length,
bracket depth, tree depth, literal digits, exponent size, magnitude below 10^300), but evaluated with
``math`` in floats, so a quiz's first typed expression is graded without waiting for SymPy to import.
Nothing is evaluated with ``eval``; the text is only given to ``ast.parse``.

Every value carries an absolute error bound (first-order propagation of rounding, doubled for safety)
and, while the sub-expression is rational, its exact :class:`~fractions.Fraction`. Anything this
evaluator cannot decide safely - a name it does not know, a refused form, a cap reached, an overflow, an
underflow, a cancellation that leaves the value uncertain - gives ``None``, and the caller falls back to
SymPy, which decides it (and words the error message, once, in one place).

>>> round(float_value("exp(2)/(1+exp(2))"), 12)
0.880797077978
>>> exact_integer("62219904*2")
124439808
>>> float_value("2**10**10") is None   # deferred: mathparse refuses it with its message
True
"""

from __future__ import annotations

import ast
import decimal
import math
import re
from dataclasses import dataclass
from fractions import Fraction

from problemgen.answers.text import check_ascii
from problemgen.userfiles import syntax_tree

MAX_LENGTH = 500
"""Longest accepted expression, in characters (after trimming)."""
MAX_BRACKET_DEPTH = 30
MAX_TREE_DEPTH = 60
MAX_LITERAL_DIGITS = 60
MAX_EXPONENT = 1000
"""Largest |numerator| or |denominator| of a rational exponent (``2^1000`` is fine, ``9^(9^9)`` is not)."""
MAX_LOG10 = 300
"""Every intermediate value must stay below 10^300 in magnitude: beyond that it is not a sensible answer."""
MAX_EXP_ARGUMENT = 690.0
INT_LITERAL = re.compile(r"\d(_?\d)*")
FLOAT_LITERAL = re.compile(r"(\d(_?\d)*)?(\.(\d(_?\d)*)?)?([eE][+-]?\d+)?")

RELATIVE_ENOUGH = 1e-12
"""A float value is used only when its error bound is below this fraction of it (else SymPy decides)."""
_U = 2.0 ** -52
"""Two units of rounding per float operation (math's functions are accurate to about one)."""
_LARGEST = 10.0 ** MAX_LOG10
_SMALLEST = 1e-290
"""Below this a nonzero float may have lost digits to underflow, which mathparse's mpmath does not."""
_EXACT_BITS = 4096
"""Rational tracking stops (exact → None) beyond this many bits: the float still goes on."""
_FUNCTIONS = ("exp", "log", "ln", "sqrt", "sin", "cos")
_CONSTANTS = {"pi": math.pi, "e": math.e, "E": math.e}


class Defer(Exception):
    """This evaluator cannot decide the text safely; SymPy (mathparse) must."""


@dataclass(frozen=True)
class Value:
    """A float, an absolute bound on its error, and the exact rational when the expression is one."""

    value: float
    error: float
    exact: Fraction | None = None


def check_source(text: str) -> str:
    """The trimmed text with ``^`` as ``**``, or ValueError saying in one line why it is refused.

    Shared with mathparse so both readers refuse exactly the same texts, for the same reasons.
    """
    if not isinstance(text, str):
        raise ValueError("expected text")
    text = text.strip()
    if not text:
        raise ValueError("empty expression")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"expression longer than {MAX_LENGTH} characters")
    check_ascii(text, "expression")
    depth = deepest = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    if deepest > MAX_BRACKET_DEPTH:
        raise ValueError(f"brackets nested deeper than {MAX_BRACKET_DEPTH}")
    return text.replace("^", "**")


def parse_answer(source: str) -> ast.Expression:
    """The syntax tree of an answer's (checked) text, in ``eval`` mode; SyntaxError when it is not one.
    Both readers parse through here, silently (:func:`problemgen.userfiles.syntax_tree`)."""
    return syntax_tree(source, "eval")


def decimal_literal(segment: str) -> decimal.Decimal | None:
    """The exact value of a float literal as written (``1_000.5e-3``), or None when it is out of range:
    infinite, beyond 10^±MAX_LOG10, or with an exponent too long for :mod:`decimal` itself, which raises
    InvalidOperation for ``1e-99999999999999999999`` rather than giving a number."""
    try:
        number = decimal.Decimal(segment.replace("_", ""))
    except decimal.InvalidOperation:
        return None
    return number if number.is_finite() and abs(number.adjusted()) <= MAX_LOG10 else None


def evaluate(text: str) -> Value | None:
    """The value of a symbol-free expression with its error bound, or None when SymPy must decide."""
    try:
        source = check_source(text)
        tree = parse_answer(source)
        return _Evaluator(source).build(tree.body, 0)
    except (Defer, ValueError, SyntaxError, RecursionError, MemoryError, OverflowError, ZeroDivisionError):
        return None


def float_value(text: str) -> float | None:
    """The value as a float when it is known to about 12 digits or better, else None (ask SymPy)."""
    result = evaluate(text)
    if result is None:
        return None
    if result.exact is not None:
        return float(result.exact)
    if result.error <= RELATIVE_ENOUGH * abs(result.value):
        return result.value
    return None


def exact_integer(text: str) -> int | None:
    """The value when the expression is exactly a whole number (``80*1``, ``2^10``), else None."""
    result = evaluate(text)
    if result is None or result.exact is None or result.exact.denominator != 1:
        return None
    return result.exact.numerator


class _Evaluator:
    """Walks the ``ast`` against mathparse's allow-list (student functions only), in floats."""

    def __init__(self, source: str) -> None:
        self.source = source

    def build(self, node: ast.AST, depth: int) -> Value:
        if depth > MAX_TREE_DEPTH:
            raise Defer
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name) and node.id in _CONSTANTS:
            value = _CONSTANTS[node.id]
            return Value(value, _U * value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.build(node.operand, depth + 1)
            if isinstance(node.op, ast.UAdd):
                return operand
            return Value(-operand.value, operand.error, None if operand.exact is None else -operand.exact)
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.build(node.left, depth + 1), self.build(node.right, depth + 1))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
            arity = (1, 2) if node.func.id == "log" else (1,)
            if node.keywords or len(node.args) not in arity:
                raise Defer
            return self.function(node.func.id, [self.build(arg, depth + 1) for arg in node.args])
        raise Defer  # symbols, other names, attribute access, anything else: mathparse words the refusal

    def constant(self, node: ast.Constant) -> Value:
        value = node.value
        segment = self.source[node.col_offset:node.end_col_offset]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Defer
        if len(segment.replace("_", "").replace(".", "")) > MAX_LITERAL_DIGITS + 6:
            raise Defer
        if isinstance(value, int):
            if not INT_LITERAL.fullmatch(segment):
                raise Defer
            return _exact(Fraction(value))
        if not FLOAT_LITERAL.fullmatch(segment):
            raise Defer
        number = decimal_literal(segment)
        if number is None:
            raise Defer
        return _exact(Fraction(number))

    def binary(self, op: ast.operator, a: Value, b: Value) -> Value:
        if isinstance(op, (ast.Add, ast.Sub)):
            sign = 1.0 if isinstance(op, ast.Add) else -1.0
            if a.exact is not None and b.exact is not None:
                return _exact(a.exact + b.exact if sign > 0 else a.exact - b.exact)
            result = a.value + sign * b.value
            return _checked(result, a.error + b.error + _U * abs(result))
        if isinstance(op, ast.Mult):
            if a.exact is not None and b.exact is not None:
                return _exact(a.exact * b.exact)
            result = a.value * b.value
            if result == 0 and a.value != 0 and b.value != 0:
                raise Defer  # underflow
            error = abs(a.value) * b.error + abs(b.value) * a.error + a.error * b.error
            return _checked(result, error + _U * abs(result))
        if isinstance(op, ast.Div):
            if b.value == 0 or b.error >= abs(b.value) / 2:
                raise Defer  # zero, or a divisor too uncertain to divide by: mathparse decides
            if a.exact is not None and b.exact is not None:
                return _exact(a.exact / b.exact)
            result = a.value / b.value
            if result == 0 and a.value != 0:
                raise Defer
            error = (abs(a.value) * b.error + abs(b.value) * a.error) / (abs(b.value) * (abs(b.value) - b.error))
            return _checked(result, error + _U * abs(result))
        if isinstance(op, ast.Pow):
            return self.power(a, b)
        raise Defer

    def power(self, base: Value, exponent: Value) -> Value:
        """Only exact rational exponents within mathparse's caps; a fractional power of a positive base."""
        q = exponent.exact
        if q is None or abs(q.numerator) > MAX_EXPONENT or q.denominator > MAX_EXPONENT:
            raise Defer
        if base.value == 0:
            if base.error or q < 0:
                raise Defer
            return _exact(Fraction(0 if q > 0 else 1))
        if base.value < 0 and q.denominator != 1:
            raise Defer
        if abs(float(q) * math.log10(abs(base.value))) > MAX_LOG10:
            raise Defer
        if base.exact is not None and q.denominator == 1 and _bits(base.exact) * abs(q.numerator) <= _EXACT_BITS:
            return _exact(base.exact ** q.numerator)
        relative = abs(float(q)) * base.error / abs(base.value)
        if relative > 0.01:
            raise Defer
        result = math.pow(base.value, float(q))
        if result == 0:
            raise Defer
        spread = 1.1 * relative + abs(math.log(abs(base.value))) * abs(float(q)) * _U
        return _checked(result, abs(result) * (spread + _U))

    def function(self, name: str, args: list[Value]) -> Value:
        x = args[0]
        if name == "exp":
            if abs(x.value) > MAX_EXP_ARGUMENT or x.error > 0.01:
                raise Defer
            if x.exact == 0:
                return _exact(Fraction(1))
            result = math.exp(x.value)
            return _checked(result, result * (1.1 * x.error + _U))
        if name in ("log", "ln"):
            logs = [self.log(arg) for arg in args]
            return logs[0] if len(logs) == 1 else self.binary(ast.Div(), logs[0], logs[1])
        if name == "sqrt":
            if x.value < 0 or x.error >= x.value / 2 and x.value != 0:
                raise Defer
            if x.value == 0:
                if x.error:
                    raise Defer
                return _exact(Fraction(0))
            result = math.sqrt(x.value)
            return _checked(result, x.error / (2 * math.sqrt(x.value / 2)) + _U * result)
        if abs(x.value) > MAX_EXP_ARGUMENT:
            raise Defer
        if x.exact == 0:
            return _exact(Fraction(0 if name == "sin" else 1))
        result = math.sin(x.value) if name == "sin" else math.cos(x.value)
        return _checked(result, x.error + _U)

    @staticmethod
    def log(x: Value) -> Value:
        if x.value <= 0 or x.error >= x.value / 2:
            raise Defer
        if x.exact == 1:
            return _exact(Fraction(0))
        result = math.log(x.value)
        return _checked(result, 1.5 * x.error / x.value + _U * (abs(result) + 1))


def _bits(number: Fraction) -> int:
    return max(number.numerator.bit_length(), number.denominator.bit_length())


def _exact(number: Fraction) -> Value:
    """A rational value: exact while it stays small, a float with a rounding bound beyond that."""
    value = float(number)  # OverflowError beyond the float range: deferred by evaluate()
    if _bits(number) > _EXACT_BITS:
        return _checked(value, _U * abs(value))
    return Value(_checked(value, _U * abs(value)).value, _U * abs(value), number)


def _checked(value: float, error: float) -> Value:
    """Refuse (defer) what mathparse refuses or floats cannot hold: beyond 10^300, inf/nan, underflow."""
    if not math.isfinite(value) or not math.isfinite(error) or abs(value) > _LARGEST:
        raise Defer
    if value != 0 and abs(value) < _SMALLEST:
        raise Defer
    return Value(value, 2 * error)
