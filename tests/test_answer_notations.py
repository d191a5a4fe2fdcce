"""Property: any notation of the key is correct, and the same notation of a perturbed key is wrong,
through the typed quiz line and the answer sheet (quoted and bare).

The formatters here write a value the ways people do (Python lists, numpy's print, MATLAB rows,
tuples, fractions, a Unicode minus, ``×10^``); the grader must never call a right value wrong because
of its spelling, nor accept a wrong value because of it.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.model.core import AnswerPart  # noqa: E402

EIGHTHS = st.integers(min_value=-32, max_value=32).map(lambda k: k / 8)


def entry_decimal(x: float) -> str:
    return repr(x)


def entry_short(x: float) -> str:  # ".5", "-.25"
    text = f"{x:g}"
    return text.replace("0.", ".", 1) if text.lstrip("-").startswith("0.") else text


def entry_fraction(x: float) -> str:
    f = Fraction(x).limit_denominator(64)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


ENTRY_FORMATS = [entry_decimal, entry_short, entry_fraction]


def python_list(m, e):
    return "[" + ", ".join("[" + ", ".join(e(x) for x in row) + "]" for row in m) + "]"


def numpy_print(m, e):
    return "[" + "\n ".join("[" + " ".join(e(x) for x in row) + "]" for row in m) + "]"


def numpy_array(m, e):
    return "array(" + python_list(m, e) + ")"


def matlab(m, e):
    """MATLAB rows; one row is written [[a b]] (a bare [a b] is a vector: a 1xN mix-up, invalid by rule)."""
    if len(m) == 1:
        return numpy_print(m, e)
    return "[" + "; ".join(" ".join(e(x) for x in row) for row in m) + "]"


def tuples(m, e):
    rows = ["(" + ", ".join(e(x) for x in row) + ("," if len(row) == 1 else "") + ")" for row in m]
    return "(" + ", ".join(rows) + ("," if len(rows) == 1 else "") + ")"


def trailing_commas(m, e):
    return "[" + "".join("[" + "".join(e(x) + ", " for x in row) + "], " for row in m) + "]"


MATRIX_FORMATS = [python_list, numpy_print, numpy_array, matlab, tuples, trailing_commas]
MATRICES = st.integers(1, 3).flatmap(
    lambda rows: st.integers(1, 4).flatmap(
        lambda cols: st.lists(st.lists(EIGHTHS, min_size=cols, max_size=cols), min_size=rows, max_size=rows)))


def verdict_set(part: AnswerPart, text: str) -> set[str]:
    return {result.status for result in verdicts(part, text).values()}


@settings(max_examples=60, deadline=None)
@given(MATRICES, st.sampled_from(MATRIX_FORMATS), st.sampled_from(ENTRY_FORMATS), st.booleans(), st.data())
def test_any_notation_of_a_matrix_key_is_correct_and_of_a_perturbed_key_wrong(m, layout, entry, unicode_minus, data):
    part = AnswerPart(key="w", type="matrix", value=m, atol=0.005)
    text = layout(m, entry)
    if unicode_minus:
        text = text.replace("-", "\u2212")
    assert verdict_set(part, text) == {"correct"}, text
    row = data.draw(st.integers(0, len(m) - 1))
    col = data.draw(st.integers(0, len(m[0]) - 1))
    moved = [list(r) for r in m]
    moved[row][col] += 1.0
    assert verdict_set(part, layout(moved, entry)) == {"wrong"}, layout(moved, entry)


def tab_rows(m, e):
    """Rows on separate lines, entries separated by tabs: a paste from a spreadsheet."""
    return "\n".join("\t".join(e(x) for x in row) for row in m)


@settings(max_examples=80, deadline=None)
@given(MATRICES, st.sampled_from([*MATRIX_FORMATS, tab_rows]))
def test_any_notation_of_a_matrix_with_decimal_commas_is_invalid(m, layout):
    """``0,5`` never splits into entries that make a false shape error (or a wrong value): in every
    notation and channel the answer is unreadable, and the message says so."""
    part = AnswerPart(key="w", type="matrix", value=m, atol=0.005)
    text = layout(m, lambda x: repr(x).replace(".", ","))
    assert verdict_set(part, text) == {"invalid"}, text


def number_plain(x: float) -> str:
    return repr(x)


def number_e(x: float) -> str:
    return f"{x:e}"


def number_times_ten(x: float) -> str:
    mantissa, exponent = f"{x:e}".split("e")
    return f"{mantissa}\u00d710^{int(exponent)}"


def number_fraction(x: float) -> str:
    return entry_fraction(x)


@settings(max_examples=80, deadline=None)
@given(EIGHTHS.filter(lambda x: x != 0), st.integers(-3, 3),
       st.sampled_from([number_plain, number_e, number_times_ten, number_fraction, entry_short]), st.booleans())
def test_any_notation_of_a_number_key_is_correct_and_of_a_perturbed_key_wrong(x, exponent, fmt, unicode_minus):
    value = x * 10.0**exponent
    if fmt is number_fraction and exponent < 0:
        fmt = number_plain  # 10^-k is not an eighth: its fraction is not exact
    part = AnswerPart(key="x", type="number", value=value, rtol=1e-6)
    text = fmt(value)
    text = text.replace("-", "\u2212") if unicode_minus else text
    assert verdict_set(part, text) == {"correct"}, text
    moved = fmt(value + max(1.0, abs(value) / 2))
    assert verdict_set(part, moved) == {"wrong"}, moved


SHAPE_NAMES = ["B", "L", "h", "d_k", "S", "d_ff"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(SHAPE_NAMES), min_size=2, max_size=4, unique=True),
       st.sampled_from(["({})", "[{}]", "{}", "torch.Size([{}])"]), st.sampled_from([", ", ",", " x ", " \u00d7 "]),
       st.data())
def test_any_notation_of_a_shape_key_is_correct_and_of_a_perturbed_key_wrong(names, bracket, separator, data):
    dims = {name: 2 + i * 3 for i, name in enumerate(SHAPE_NAMES)}
    numeric = data.draw(st.booleans()) or bracket.startswith("torch")
    part = AnswerPart(key="s", type="shape", value=names, spec={"dims": dims})
    if separator.strip() in ("x", "\u00d7") and bracket == "torch.Size([{}])":
        separator = ", "
    written = [str(dims[n]) for n in names] if numeric else names
    assert verdict_set(part, bracket.format(separator.join(written))) == {"correct"}
    moved = list(reversed(written)) if len(set(written)) > 1 else written + written
    assert verdict_set(part, bracket.format(separator.join(moved))) == {"wrong"}


MASK_SPELLINGS = {
    "bool": [("true", "false"), ("True", "False"), ("T", "F"), ("1", "0")],
    "01": [("1", "0"), ("true", "false")],
    "additive": [("0", "-inf"), ("0", "-\u221e"), ("0", "\u2212\u221e")],
}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(MASK_SPELLINGS)), MATRICES.map(lambda m: [[x > 0 for x in row] for row in m]),
       st.sampled_from([python_list, numpy_print, matlab]), st.data())
def test_any_spelling_of_a_mask_key_is_correct_and_of_a_flipped_entry_wrong(representation, mask, layout, data):
    allowed, blocked = data.draw(st.sampled_from(MASK_SPELLINGS[representation]))
    part = AnswerPart(key="m", type="mask", value=mask, spec={"representation": representation})
    spell = lambda v: allowed if v else blocked  # noqa: E731
    assert verdict_set(part, layout(mask, spell)) == {"correct"}
    flipped = [list(r) for r in mask]
    flipped[0][0] = not flipped[0][0]
    assert verdict_set(part, layout(flipped, spell)) == {"wrong"}


def everyday_notations(part: AnswerPart):
    """How a student might write the key of a real generated part (one or two notations per type)."""
    value, kind = part.value, part.type
    if kind == "matrix":
        rows = value if value and isinstance(value[0], list) else [value]
        yield numpy_print(rows, entry_decimal) if rows is value else "(" + ", ".join(map(repr, value)) + ")"
        if rows is value and len(rows) > 1:
            yield matlab(rows, entry_decimal)
    elif kind == "number":
        yield repr(value).replace("-", "\u2212")
        yield number_times_ten(value)
        if part.spec.get("unit"):
            yield f"{value!r} {part.spec['unit']}"
    elif kind == "integer":
        yield f"{value:,}"
        if part.spec.get("unit"):
            yield f"{value} {part.spec['unit']}"
    elif kind == "shape":
        yield " x ".join(map(str, value))
    elif kind == "choice":
        yield f"option {value[0].upper()}" if len(value) == 1 else " and ".join(f"({x})" for x in value)
    elif kind == "mask":
        allowed, blocked = MASK_SPELLINGS[part.spec.get("representation", "bool")][-1]
        yield numpy_print(value, lambda v: allowed if v else blocked)
    elif kind == "term":
        yield value[0].upper().replace(" ", "-")


@pytest.mark.slow
def test_everyday_notations_of_every_kinds_keys_are_correct_in_every_channel():
    from problemgen.model import registry

    misread = []
    for spec in registry.all_kinds():
        for difficulty in spec.difficulties:
            problem = registry.generate(spec.name, 0, difficulty)
            for part in problem.parts:
                for text in everyday_notations(part):
                    if verdict_set(part, text) != {"correct"}:
                        misread.append(f"{problem.variant_id} {part.key}: {text!r}")
    assert not misread, "\n".join(misread[:20])
