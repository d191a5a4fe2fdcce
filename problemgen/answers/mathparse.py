"""A small, allow-listed math parser for answers typed by students: text in, SymPy object out, nothing run.

Student text is data. It is never given to ``eval``, ``sympify``, ``parse_expr`` or ``S()``: those
evaluate Python and can be talked into running code or into computing ``9**9**9``. Instead the text
is checked (printable ASCII, length, bracket depth), parsed with ``ast.parse(mode="eval")`` (which
only builds a syntax tree), and the tree is walked against an allow-list, building SymPy objects
directly: numbers, ``+ - * / ** ^``, unary minus, parentheses, the functions ``exp log ln sqrt sin cos``,
the constants ``pi`` and ``e``, and the symbols the caller names. ``^`` means power (as on paper).

Every operation is bounded *before* SymPy sees it: literal digits, exponent size, the magnitude of
every intermediate number (tracked with a cheap mpmath estimate), nesting depth. Equivalence is
decided numerically at high precision, so there is no open-ended ``simplify`` on the hot path.

>>> parse_expression("sqrt(2)/2").expr
sqrt(2)/2
>>> equivalent(parse_expression("exp(2)/(exp(2)+exp(6)+exp(-2))").expr,
...            parse_expression("1/(1+exp(4)+exp(-4))").expr)
True
>>> parse_expression("__import__('os').system('x')")
Traceback (most recent call last):
...
problemgen.answers.mathparse.MathParseError: only the named functions may be called (no attribute access)
"""

from __future__ import annotations

import ast
import functools
import re
import signal
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable

import mpmath
import sympy

from problemgen.answers.fastmath import (  # noqa: F401 - one set of caps for both readers, re-exported
    FLOAT_LITERAL as _FLOAT_LITERAL,
    INT_LITERAL as _INT_LITERAL,
    MAX_BRACKET_DEPTH,
    MAX_EXP_ARGUMENT,
    MAX_EXPONENT,
    MAX_LENGTH,
    MAX_LITERAL_DIGITS,
    MAX_LOG10,
    MAX_TREE_DEPTH,
    check_source,
    decimal_literal,
    parse_answer,
)
from problemgen.wording import counted

EQUIVALENCE_DIGITS = 50
SIMPLIFY_SECONDS = 0.5

_STUDENT_FUNCTIONS: dict[str, Callable] = {
    "exp": sympy.exp,
    "log": sympy.log,
    "ln": sympy.log,
    "sqrt": sympy.sqrt,
    "sin": sympy.sin,
    "cos": sympy.cos,
}
_TRUSTED_EXTRA_FUNCTIONS: dict[str, Callable] = {
    "tanh": sympy.tanh,
    "erf": sympy.erf,
    "Abs": sympy.Abs,
}
"""Extra functions allowed in key expressions written by generators (still no eval)."""
_CONSTANTS = {"pi": sympy.pi, "e": sympy.E, "E": sympy.E}

_NODE_NAMES = {
    ast.Attribute: "attribute access", ast.Subscript: "indexing", ast.Lambda: "lambda",
    ast.Compare: "comparisons", ast.BoolOp: "and/or", ast.IfExp: "if-expressions",
    ast.List: "lists", ast.Tuple: "tuples (a comma outside a function call?)", ast.Dict: "dicts",
    ast.Set: "sets", ast.ListComp: "comprehensions", ast.GeneratorExp: "comprehensions",
    ast.DictComp: "comprehensions", ast.SetComp: "comprehensions", ast.Starred: "starred arguments",
    ast.JoinedStr: "f-strings", ast.NamedExpr: "assignments", ast.Await: "await", ast.Slice: "slices",
}
_OP_NAMES = {
    ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitXor: "^", ast.Invert: "~", ast.Not: "not",
}
_PLAIN_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?")


class MathParseError(ValueError):
    """The text is not an allowed expression; the message says why in one line, for the student."""


@dataclass(frozen=True)
class Expression:
    """A parsed expression: the SymPy object and whether the student wrote a decimal literal in it."""

    expr: sympy.Expr
    decimal: bool

    @property
    def is_number(self) -> bool:
        return not self.expr.free_symbols

    def value(self) -> float:
        """The value as a float (only for expressions without symbols)."""
        return to_float(self.expr)


@dataclass(frozen=True)
class _Node:
    """A built sub-expression and a cheap 53-bit estimate of its value (None when it has symbols)."""

    expr: sympy.Expr
    approx: mpmath.mpf | None


# ------------------------------------------------------------------------------------------ text checks


def _check_text(text: str) -> str:
    """The text checks shared with the float evaluator, refusals worded as MathParseError."""
    try:
        return check_source(text)
    except ValueError as exc:
        raise MathParseError(str(exc)) from None


# ------------------------------------------------------------------------------------------ the parser


def parse_expression(text: str, symbols: Iterable[str] = (), *, trusted: bool = False) -> Expression:
    """Parse ``text`` into an :class:`Expression`, or raise :class:`MathParseError`.

    ``symbols`` are the names the answer may use (e.g. ``("d_k", "L")``); ``trusted`` (key expressions
    written by generators) adds a few more functions but the same caps and the same no-eval parser.
    """
    return _parse_cached(text, tuple(sorted(set(symbols))), trusted)


@functools.lru_cache(maxsize=8192)
def _parse_cached(text: str, symbols: tuple[str, ...], trusted: bool) -> Expression:
    source = _check_text(text)
    try:
        tree = parse_answer(source)
    except SyntaxError as exc:
        raise MathParseError(f"not a valid expression ({_syntax_hint(source, exc)})") from None
    except (ValueError, RecursionError, MemoryError, OverflowError):
        raise MathParseError("not a valid expression (too large or too deeply nested)") from None
    builder = _Builder(source, symbols, trusted)
    node = builder.build(tree.body, depth=0)
    if node.expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo, sympy.I):
        raise MathParseError("the expression is undefined or not a real number")
    return Expression(node.expr, builder.decimal)


def _syntax_hint(source: str, exc: SyntaxError) -> str:
    if re.search(r"\d\s*[A-Za-z(]|\)\s*[\w(]", source):
        return "write '*' between factors, e.g. 2*sqrt(2)"
    if source.count("(") != source.count(")"):
        return "unbalanced parentheses"
    return f"syntax error at position {exc.offset or 0}"


class _Builder:
    """Walks an ``ast`` expression against the allow-list and builds SymPy objects with bounds."""

    def __init__(self, source: str, symbols: tuple[str, ...], trusted: bool) -> None:
        self.source = source
        self.functions = dict(_STUDENT_FUNCTIONS, **(_TRUSTED_EXTRA_FUNCTIONS if trusted else {}))
        self.symbols = {name: sympy.Symbol(name, positive=True) for name in symbols if name.isidentifier()}
        self.decimal = False

    def allowed_names(self) -> str:
        return ", ".join(sorted({"pi", "e", *self.functions, *self.symbols}))

    def build(self, node: ast.AST, depth: int) -> _Node:
        if depth > MAX_TREE_DEPTH:
            raise MathParseError(f"expression nested deeper than {MAX_TREE_DEPTH} operations")
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp):
            operand = self.build(node.operand, depth + 1)
            if isinstance(node.op, ast.USub):
                return _Node(-operand.expr, None if operand.approx is None else -operand.approx)
            if isinstance(node.op, ast.UAdd):
                return operand
            raise MathParseError(f"operator {_OP_NAMES.get(type(node.op), '?')!r} is not allowed")
        if isinstance(node, ast.BinOp):
            left = self.build(node.left, depth + 1)
            right = self.build(node.right, depth + 1)
            return self.binary(node.op, left, right)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        what = _NODE_NAMES.get(type(node), type(node).__name__)
        raise MathParseError(f"{what} not allowed in an expression")

    def constant(self, node: ast.Constant) -> _Node:
        value = node.value
        segment = self.source[node.col_offset:node.end_col_offset]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MathParseError(f"{type(value).__name__} literals are not allowed in an expression")
        if len(segment.replace("_", "").replace(".", "")) > MAX_LITERAL_DIGITS + 6:
            raise MathParseError(f"number with more than {MAX_LITERAL_DIGITS} digits")
        if isinstance(value, int):
            if not _INT_LITERAL.fullmatch(segment):
                raise MathParseError(f"only decimal numbers are allowed, not {segment!r}")
            return self.checked(_Node(sympy.Integer(value), mpmath.mpf(value)))
        if not _FLOAT_LITERAL.fullmatch(segment):
            raise MathParseError(f"only decimal numbers are allowed, not {segment!r}")
        number = decimal_literal(segment)
        if number is None:
            raise MathParseError(f"number {segment!r} is out of range")
        self.decimal = True
        numerator, denominator = number.as_integer_ratio()
        return self.checked(_Node(sympy.Rational(numerator, denominator), mpmath.mpf(numerator) / denominator))

    def name(self, name: str) -> _Node:
        if name in _CONSTANTS:
            return _Node(_CONSTANTS[name], mpmath.mpf(float(_CONSTANTS[name])))
        if name in self.symbols:
            return _Node(self.symbols[name], None)
        if name in self.functions:
            raise MathParseError(f"{name} is a function: write {name}(...)")
        raise MathParseError(f"unknown name {name!r} (allowed: {self.allowed_names()})")

    def binary(self, op: ast.operator, left: _Node, right: _Node) -> _Node:
        a, b = left.approx, right.approx
        known = a is not None and b is not None
        if isinstance(op, ast.Add):
            return self.checked(_Node(left.expr + right.expr, a + b if known else None))
        if isinstance(op, ast.Sub):
            return self.checked(_Node(left.expr - right.expr, a - b if known else None))
        if isinstance(op, ast.Mult):
            return self.checked(_Node(left.expr * right.expr, a * b if known else None))
        if isinstance(op, ast.Div):
            if right.expr.is_zero or (b is not None and b == 0):
                raise MathParseError("division by zero")
            return self.checked(_Node(left.expr / right.expr, a / b if known else None))
        if isinstance(op, ast.Pow):
            return self.power(left, right)
        raise MathParseError(f"operator {_OP_NAMES.get(type(op), '?')!r} is not allowed")

    def power(self, base: _Node, exponent: _Node) -> _Node:
        """Bound a power before building it: small rational exponents, results below 10^MAX_LOG10."""
        if exponent.approx is None:
            raise MathParseError("exponents must be numbers, not symbols")
        e = exponent.expr
        if e.is_Rational and (abs(e.p) > MAX_EXPONENT or e.q > MAX_EXPONENT):
            shown = str(e) if len(str(e)) <= 24 else f"{str(e)[:12]}... ({len(str(e))} characters)"
            raise MathParseError(f"exponent {shown} is too large or too finely divided (limit {MAX_EXPONENT})")
        if abs(exponent.approx) > MAX_EXPONENT:
            raise MathParseError(f"exponent is too large (limit {MAX_EXPONENT})")
        approx = None
        if base.approx is not None:
            if base.approx == 0 and exponent.approx < 0:
                raise MathParseError("division by zero (0 to a negative power)")
            if base.approx < 0 and not e.is_integer:
                raise MathParseError("a negative number to a fractional power is not a real number")
            if base.approx != 0:
                size = exponent.approx * mpmath.log10(abs(base.approx))
                if size > MAX_LOG10:
                    raise MathParseError(f"number too large (beyond 10^{MAX_LOG10})")
                if size < -MAX_LOG10:
                    raise MathParseError(f"number too small (below 10^-{MAX_LOG10})")
                approx = mpmath.power(base.approx, exponent.approx) if base.approx > 0 else base.approx ** int(e)
            else:
                approx = mpmath.mpf(0) if exponent.approx > 0 else mpmath.mpf(1)
        return self.checked(_Node(sympy.Pow(base.expr, e), approx))

    def call(self, node: ast.Call, depth: int) -> _Node:
        if not isinstance(node.func, ast.Name):
            raise MathParseError("only the named functions may be called (no attribute access)")
        name = node.func.id
        if name not in self.functions:
            raise MathParseError(f"unknown function {name!r} (allowed: {', '.join(sorted(self.functions))})")
        if node.keywords:
            raise MathParseError(f"{name}() takes no keyword arguments")
        arity = (1, 2) if name == "log" else (1,)
        if len(node.args) not in arity:
            wanted = " or ".join([*map(str, arity[:-1]), counted(arity[-1], "argument")])  # "1 or 2 arguments"
            raise MathParseError(f"{name}() takes {wanted}")
        args = [self.build(arg, depth + 1) for arg in node.args]
        return self.function(name, args)

    def function(self, name: str, args: list[_Node]) -> _Node:
        x = args[0].approx
        if any(arg.approx is None for arg in args) and name in ("exp", "log", "ln"):
            raise MathParseError(f"{name}() of a symbol is not supported")
        if name == "exp":
            if abs(x) > MAX_EXP_ARGUMENT:
                raise MathParseError(f"exp() argument too large (limit {MAX_EXP_ARGUMENT:g})")
            return self.checked(_Node(sympy.exp(args[0].expr), mpmath.exp(x)))
        if name in ("log", "ln"):
            if any(arg.approx <= 0 for arg in args):
                raise MathParseError("log() of zero or a negative number")
            if len(args) == 2 and args[1].approx == 1:
                raise MathParseError("log() to base 1")
            approx = mpmath.log(x) if len(args) == 1 else mpmath.log(x) / mpmath.log(args[1].approx)
            return self.checked(_Node(sympy.log(*(a.expr for a in args)), approx))
        if name == "sqrt":
            if x is not None and x < 0:
                raise MathParseError("sqrt() of a negative number")
            return self.checked(_Node(sympy.sqrt(args[0].expr), None if x is None else mpmath.sqrt(x)))
        if x is not None and abs(x) > MAX_EXP_ARGUMENT:
            raise MathParseError(f"{name}() argument too large")
        approx = None if x is None else mpmath.mpf(float(self.functions[name](sympy.Float(float(x))).evalf(15)))
        return self.checked(_Node(self.functions[name](args[0].expr), approx))

    @staticmethod
    def checked(node: _Node) -> _Node:
        if node.approx is not None and node.approx != 0 and mpmath.log10(abs(node.approx)) > MAX_LOG10:
            raise MathParseError(f"number too large (beyond 10^{MAX_LOG10})")
        return node


# ------------------------------------------------------------------------------------------ evaluation


def to_float(expr: sympy.Expr) -> float:
    """Numeric value of a symbol-free expression as a float (30 significant digits computed first)."""
    if expr.is_Rational:  # integers too
        try:  # Python divides two ints with one correct rounding, however long they are (2.41/3e-300)
            return int(expr.p) / int(expr.q)
        except OverflowError:
            raise MathParseError(f"number too large (beyond 10^{MAX_LOG10})") from None
    value = expr.evalf(30)
    if not value.is_Number:
        raise MathParseError("the expression has no numeric value")
    return float(value)


def plain_decimal(text: str) -> float | None:
    """Fast path for the common case: ``"0.25"``, ``"-3"``, ``"1e-3"`` → float, else None."""
    text = text.strip()
    if len(text) > MAX_LITERAL_DIGITS or not _PLAIN_DECIMAL.fullmatch(text):
        return None
    return float(text)


def number_value(text: str) -> float:
    """Value of a symbol-free numeric answer (``"0.25"``, ``"1/4"``, ``"exp(2)/(1+exp(2))"``)."""
    fast = plain_decimal(text)
    if fast is not None:
        return fast
    return parse_expression(text).value()


def _sample_points(symbols: Iterable[sympy.Symbol]) -> list[dict]:
    """A few deterministic, unremarkable positive values for each symbol (for identity testing)."""
    names = sorted(symbols, key=lambda s: s.name)
    bases = [(7, 3), (11, 5), (13, 17)]
    return [{s: sympy.Rational(p + 2 * i, q) for i, s in enumerate(names)} for p, q in bases]


def equivalent(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Whether two parsed expressions are the same value (identically, for expressions with symbols).

    Decided numerically: the difference is evaluated at 50 significant digits (at a few sample points
    when there are symbols) and must vanish to 40 digits relative to the values' size. For the closed
    forms here (rationals, exp, log, sqrt, pi) an accidental agreement to 40 digits does not happen,
    and unlike ``simplify`` the cost is bounded. Only when evaluation itself fails is a time-boxed
    ``simplify`` tried.
    """
    difference = a - b
    if difference == 0:
        return True
    points = _sample_points(difference.free_symbols) if difference.free_symbols else [{}]
    try:
        for point in points:
            d = difference.subs(point).evalf(EQUIVALENCE_DIGITS) if point else difference.evalf(EQUIVALENCE_DIGITS)
            scale = abs(a.subs(point).evalf(EQUIVALENCE_DIGITS)) + 1 if point else abs(a.evalf(EQUIVALENCE_DIGITS)) + 1
            if not d.is_Number or not scale.is_Number:
                raise ValueError("no numeric value")
            if abs(d) > scale * sympy.Float(10) ** (10 - EQUIVALENCE_DIGITS):
                return False
        return True
    except (ValueError, TypeError, ArithmeticError):
        simplified = run_bounded(lambda: sympy.simplify(difference), SIMPLIFY_SECONDS)
        return simplified is not None and simplified == 0


class _Timeout(Exception):
    pass


def run_bounded(fn: Callable[[], object], seconds: float) -> object | None:
    """Run ``fn`` with a wall-clock bound (SIGALRM, main thread only); None when it ran out of time.

    Outside the main thread no alarm can be set, so the work is skipped (None) rather than risked.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return None

    def on_alarm(signum, frame):
        raise _Timeout

    outer_remaining, _ = signal.getitimer(signal.ITIMER_REAL)
    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    except _Timeout:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_remaining:  # an alarm set by the caller keeps running (minus the time spent here)
            signal.setitimer(signal.ITIMER_REAL, max(outer_remaining - (time.monotonic() - started), 0.001))
