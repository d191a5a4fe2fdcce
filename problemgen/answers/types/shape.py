"""An array shape: dimensions in order, each a name (``d_k``), a number, or a product (``h*d_k``).

Read: ``(B, L, d)``, ``[B, L, d]``, ``B x L x d``, ``B × L × d``, ``4x12x1024``, ``torch.Size([4, 12, 1024])``,
an array; a product inside a dimension as ``h*d_k``, ``d_k*h``, ``h·d_k`` or ``h×d_k`` (``×`` separates
dimensions only when there are no commas).

Checked: names match by name (case-sensitive) and products as products. A number may stand for a
name wherever the problem gave that name's value (``spec["dims"]``), alone or in a product. Names the
problem defines as equal (``spec["equal"]``, e.g. ``{"d_model": "h*d_k"}``) are the same dimension, and
a number may stand for a name such a definition brings in: with h = 3 given, ``d_model/3`` is ``d_k``
(as ``d_model/h`` and ``192/3`` are), provided the answer keeps one of the key's names; and for the
defined name itself: with d_model = 192 given, ``192/h`` is ``d_k`` too. A different name is wrong
even when its value is equal (``d_v`` for ``d_k``, ``d_model/96`` for a batch of 2, ``384/h``). All or
nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from problemgen.answers.base import AnswerType, PartResult, Reading, correct, echo, neutral_example, wrong
from problemgen.answers.products import product_size, same_product_dim
from problemgen.answers.scalars import mathparse
from problemgen.answers.text import InvalidAnswer, NonFinite, clean, kind_of
from problemgen.model.core import AnswerPart

MAX_DIMS = 16
EXAMPLE_SHAPES = ("(N, C, W)", "(N, H, W, C)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WRAPPER = re.compile(r"(?:torch\.)?Size\(\s*\[(.*)\]\s*\)|(?:np\.|numpy\.)?shape\((.*)\)", re.DOTALL)
_X_SEPARATOR = re.compile(r"(?:(?<=[\s\d)])|^)[xX](?=[\s\d(])")
_FUNCTIONS = {"exp", "log", "ln", "sqrt", "pi", "e", "sin", "cos"}
_NUMBER = re.compile(r"(?<![\w.])[0-9]+(?![\w.])")
"""A whole number standing alone in a dimension (not part of a name, a decimal or an exponent such as 1e9)."""


def dims_of(raw: Any) -> list[Any]:
    """The dimensions of a shape answer: a list of ints and names/products (strings)."""
    if isinstance(raw, bool) or isinstance(raw, NonFinite):
        raise InvalidAnswer(f"a shape lists its dimensions, e.g. \"{EXAMPLE_SHAPES[0]}\"")
    if isinstance(raw, int):
        return [raw]
    if isinstance(raw, str):
        raw = _split_text(raw)
    if not isinstance(raw, list):
        raise InvalidAnswer(f"a shape should be text like \"(B, L, d)\" or an array, not {kind_of(raw)}")
    if len(raw) > MAX_DIMS:
        raise InvalidAnswer(f"a shape with more than {MAX_DIMS} dimensions")
    dims = []
    for i, d in enumerate(raw, start=1):
        if isinstance(d, int) and not isinstance(d, bool) and d >= 0:
            dims.append(d)
        elif isinstance(d, str) and d.strip():
            text = " ".join(clean(d.replace("\u00d7", "*"), f"dimension {i}").split())
            text = re.sub(r"\s*\*\s*", "*", text)
            dims.append(int(text) if text.isdigit() and len(text) < 20 else text)
        else:
            raise InvalidAnswer(f"dimension {i} is {echo(d)}: write a name such as d_k or a whole number")
    return dims


def _split_text(raw: str) -> list[str]:
    """Split shape text into dimension texts (separators and brackets as in the module doc)."""
    text = raw.strip().replace("\u00b7", "*").replace("\u22c5", "*")
    commas = "," in text
    text = clean(text.replace("\u00d7", "*" if commas else " x "))
    wrapped = _WRAPPER.fullmatch(text.strip())
    if wrapped:
        text = wrapped.group(1) if wrapped.group(1) is not None else wrapped.group(2)
    text = text.strip()
    if text[:1] in "([" and text[-1:] == ")]"["([".index(text[0])] and _closes_at_end(text):
        text = text[1:-1]
    if commas or "," in text:
        parts = [p.strip() for p in text.split(",")]
        if len(parts) > 1 and parts[-1] == "":
            parts.pop()  # "(5,)"
        return parts
    pieces = [p.strip() for p in _X_SEPARATOR.split(text)]
    if len(pieces) > 1:
        return pieces
    words = text.split()
    if len(words) > 1 and all(_IDENTIFIER.fullmatch(w) or w.isdigit() for w in words):
        return words
    return [text]


def _closes_at_end(text: str) -> bool:
    """Whether the bracket opening ``text`` is closed by its last character (not ``(h)*(d_k)``)."""
    depth = 0
    for i, char in enumerate(text):
        depth += (char in "([") - (char in ")]")
        if depth == 0:
            return i == len(text) - 1
    return False


def _expression(dim: Any, equal: dict[str, str]):
    """A dimension as a SymPy expression, names the problem defines replaced by their definitions."""
    return _defined(_parsed(dim), equal)


def _parsed(dim: Any):
    """A dimension as a SymPy expression, as written."""
    mp = mathparse()
    text = str(dim)
    names = set(_IDENTIFIER.findall(text)) - _FUNCTIONS
    try:
        return mp.parse_expression(text, names).expr
    except mp.MathParseError as exc:
        raise InvalidAnswer(f"dimension {text!r}: {exc}") from None


def _defined(expr, equal: dict[str, str]):
    """``expr`` with the names the problem defines replaced by their definitions, in their order."""
    mp = mathparse()
    for name, definition in equal.items():
        symbol = next((s for s in expr.free_symbols if s.name == name), None)
        if symbol is not None:
            inner = set(_IDENTIFIER.findall(definition)) - _FUNCTIONS
            expr = expr.subs(symbol, mp.parse_expression(definition, inner, trusted=True).expr)
    return expr


def same_dim(answer: Any, key: Any, numbers: dict[str, int], equal: dict[str, str] | None = None) -> bool:
    """One rule for names, numbers and products of names (see the module doc); where it finds the answer
    wrong, it is asked again with the numbers written for defined names read as those names."""
    equal = equal or {}
    if _same_dim_as_written(answer, key, numbers, equal):
        return True
    named = _defined_names_for_numbers(answer, numbers, equal)
    return named != answer and _same_dim_as_written(named, key, numbers, equal)


def _defined_names_for_numbers(answer: Any, numbers: dict[str, int], equal: dict[str, str]) -> Any:
    """The answer with each number written for a name the problem defines read as that name: ``512/h`` as
    ``d_model/h`` where d_model = h*d_k is defined and 512 given for it.

    Why only defined names: their definitions are what make ``d_model/h`` the key ``d_k``, so the number
    stands for the same quantity; a number for any other given name is already taken as that name where
    the key holds it, and elsewhere would turn ``d_model/(3*d_k)*7`` (7 = L, written without L) into
    L. A value two defined names share stays a number. The text is only rewritten, never evaluated:
    the same parsers then read it.
    """
    if not isinstance(answer, str):
        return answer
    owners: dict[str, list[str]] = {}
    for name in equal:
        if name in numbers:
            owners.setdefault(str(numbers[name]), []).append(name)
    names = {value: found[0] for value, found in owners.items() if len(found) == 1}
    return _NUMBER.sub(lambda m: names.get(m.group(), m.group()), answer) if names else answer


def _same_dim_as_written(answer: Any, key: Any, numbers: dict[str, int], equal: dict[str, str]) -> bool:
    """The rule of the module doc for the answer as written."""
    if answer == key:
        return True
    simple = lambda d: isinstance(d, int) or _IDENTIFIER.fullmatch(d)  # noqa: E731
    if simple(answer) and simple(key) and answer not in equal and key not in equal:
        if isinstance(answer, str):
            return False  # a different name (or a name where the key is a number)
        return (key if isinstance(key, int) else numbers.get(key)) == answer
    decided = same_product_dim(answer, key, numbers, equal)  # no SymPy for products such as d_model/h
    return decided if decided is not None else same_dim_sympy(answer, key, numbers, equal)


def same_dim_sympy(answer: Any, key: Any, numbers: dict[str, int], equal: dict[str, str]) -> bool:
    """The rule for any dimensions, in SymPy: what :mod:`problemgen.answers.products` must agree with."""
    mp = mathparse()
    written = _parsed(answer)
    a, k = _defined(written, equal), _expression(key, equal)
    extra = a.free_symbols - k.free_symbols
    if extra:  # a name that is not the key's: wrong whatever its value, unless a definition brought it in
        if not a.free_symbols & k.free_symbols or extra & written.free_symbols \
                or any(s.name not in numbers for s in extra):
            return False
        a = a.subs({s: numbers[s.name] for s in extra})
    given = {s: numbers[s.name] for s in k.free_symbols - a.free_symbols if s.name in numbers}
    return mp.equivalent(a, k.subs(given))


def same_shape(answer: list[Any], key: list[Any], numbers: dict[str, int], equal: dict[str, str] | None = None) -> bool:
    return len(answer) == len(key) and all(same_dim(a, k, numbers, equal) for a, k in zip(answer, key))


def _same_size(answer: Any, key: Any, numbers: dict[str, int]) -> bool:
    """Whether two dimensions have the same size in this variant (every name in them has a given value)."""
    sizes = [product_size(dim, numbers) for dim in (answer, key)]
    if None not in sizes:
        return sizes[0] == sizes[1] and sizes[0] != "unknown"

    def size(dim: Any):
        expr = _expression(dim, {})
        return expr.subs({s: numbers[s.name] for s in expr.free_symbols if s.name in numbers})

    a, k = size(answer), size(key)
    return not a.free_symbols and not k.free_symbols and a == k


class ShapeType(AnswerType):
    name = "shape"

    def read(self, part: AnswerPart, raw: Any) -> Reading:
        dims = dims_of(raw)
        return Reading(dims, "(" + ", ".join(map(str, dims)) + ")" if isinstance(raw, str) else "")

    def check(self, part: AnswerPart, reading: Reading) -> PartResult:
        numbers = {str(k): int(v) for k, v in part.spec.get("dims", {}).items()}
        equal = {str(k): str(v) for k, v in part.spec.get("equal", {}).items()}
        answer, key = reading.value, list(part.value)
        matches = lambda m: same_shape(answer, dims_of(m), numbers, equal)  # noqa: E731
        if len(answer) != len(key):
            return wrong(part, f"the shape has {len(key)} dimensions; your answer has {len(answer)}", matches)
        bad = [i for i, (a, k) in enumerate(zip(answer, key)) if not same_dim(a, k, numbers, equal)]
        if not bad:
            return correct()
        if sorted(map(str, answer)) == sorted(map(str, key)):
            feedback = "the right dimensions in the wrong order"
        else:
            where = ", ".join(str(i + 1) for i in bad)
            feedback = f"wrong dimension at position {where}" if len(bad) == 1 else f"wrong dimensions at positions {where}"
            if any(isinstance(answer[i], str) and isinstance(key[i], str) and answer[i].lower() == key[i].lower()
                   for i in bad):
                feedback += " (names are case-sensitive)"
            elif any(_same_size(answer[i], key[i], numbers) for i in bad):
                feedback += " (a different dimension of the same size is still wrong: name the one that axis holds)"
        return wrong(part, feedback, matches)

    def canonical(self, part: AnswerPart, reading: Reading) -> str:
        """The dimensions in order, without spaces (``(B, h, S, L)``, ``B x h x S x L`` and ``[B,h,S,L]`` alike)."""
        return "(" + ",".join(str(d).replace(" ", "") for d in reading.value) + ")"

    def key_value(self, part: AnswerPart) -> Any:
        return "(" + ", ".join(str(d) for d in part.value) + ")"

    def describe(self, part: AnswerPart) -> str:
        numbers = ", or the numbers the problem gave" if part.spec.get("dims") else ""
        example = self.examples(part)
        return f"a shape, dimensions in order, as names{numbers} (a product as C*W)" + \
            (f", e.g. \"{example[0]}\"" if example else "")

    def examples(self, part: AnswerPart) -> tuple:
        """Names no problem uses (a test checks none is ever accepted)."""
        example = neutral_example(EXAMPLE_SHAPES, lambda text: self.grade(part, text).score > 0)
        return (example,) if example else ()

    def key_display(self, part: AnswerPart, kit: Any) -> str:
        dims = part.spec.get("dims", {})
        numeric = f" $= {kit.shape_latex([kit.dim_value(d, dims) for d in part.value])}$" if dims else ""
        return f"${kit.shape_latex(part.value)}$" + numeric

    def perturb(self, part: AnswerPart) -> AnswerPart:
        return replace(part, value=[*part.value, part.value[-1]])

    def garbage(self, part: AnswerPart) -> Any:
        return "(" + ", ".join(["@@"] * len(part.value)) + ")"


TYPE = ShapeType()
