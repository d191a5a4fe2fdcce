"""Shape dimensions decided without SymPy agree with the SymPy rule, and need no SymPy import."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from problemgen.answers.products import product_size, read_product, same_product_dim
from problemgen.answers.types.shape import same_dim, same_dim_sympy

NAMES = ["B", "L", "S", "h", "d_k", "d_v", "d_model", "d_ff"]
NUMBERS = {"B": 4, "L": 12, "S": 40, "h": 6, "d_k": 16, "d_v": 16, "d_model": 96}  # d_ff has no value
EQUAL = {"d_v": "d_k", "d_model": "h*d_k"}

factor = st.one_of(st.sampled_from(NAMES), st.integers(1, 200).map(str))
product = st.builds(lambda first, rest: first + "".join(op + f for op, f in rest), factor,
                    st.lists(st.tuples(st.sampled_from("*/"), factor), max_size=3))


@settings(max_examples=400, deadline=None)
@given(answer=product, key=product, equal=st.sampled_from([{}, EQUAL, {"d_model": "h*d_k"}]))
def test_products_agree_with_the_sympy_rule(answer, key, equal):
    assert same_product_dim(answer, key, NUMBERS, equal) == same_dim_sympy(answer, key, NUMBERS, equal)


@pytest.mark.parametrize("answer,key,verdict", [
    ("d_model/h", "d_k", True), ("d_model/h", "d_v", True), ("h*d_k", "d_model", True), ("d_k*h", "d_model", True),
    ("96", "d_model", True), ("6*d_k", "h*d_k", True), ("d_model/4", "d_k", False), ("16", "d_k", True),
    ("d_model", "d_k", False), ("L", "S", False), ("d_ff/h", "d_k", False), ("2*d_model", "d_ff", False),
    ("d_k*d_k/d_k", "d_v", True), ("h*h*d_k/h", "d_model", True), ("d_model / h", "d_k", True),
    (" h * d_k ", "d_model", True),
    ("d_model/6", "d_k", True), ("d_model/6", "d_v", True), ("d_model/16", "h", True),  # h = 6, d_k = 16 given
    ("d_model/6*B", "B*d_k", True), ("d_model/8", "L", False), ("d_model/24", "B", False),  # same size, no L or B
    ("d_model/B", "d_k", False), ("d_k*h/6", "d_k", False),  # a name written that the key does not hold
])
def test_the_forms_students_write(answer, key, verdict):
    assert same_product_dim(answer, key, NUMBERS, EQUAL) is verdict
    assert same_dim_sympy(answer, key, NUMBERS, EQUAL) is verdict


@settings(max_examples=400, deadline=None)
@given(answer=product, key=product, equal=st.sampled_from([{}, EQUAL, {"d_model": "h*d_k"}]))
def test_a_dimension_accepted_has_the_size_of_the_key(answer, key, equal):
    """Whatever the notation, a dimension is never right when its size in this variant differs from the key's."""
    sizes = product_size(answer, NUMBERS), product_size(key, NUMBERS)
    if "unknown" not in sizes and (same_product_dim(answer, key, NUMBERS, equal) or same_dim(answer, key, NUMBERS, equal)):
        assert sizes[0] == sizes[1]  # same_dim: also with a number read as the defined name it is given for


SAME_SIZE = {"B": 4, "N": 4, "L": 12, "S": 12, "h": 4, "d_k": 16, "d_v": 16, "d_ff": 16, "d_model": 64}
PARTNER = {"B": "N", "N": "B", "L": "S", "S": "L", "d_v": "d_ff", "d_ff": "d_v"}
"""Pairs of names of one size and different meanings (no definition makes them equal)."""


@st.composite
def same_size_other_meaning(draw):
    """(answer, key): the key, a product of distinct names, with one name swapped for its partner of the same
    size, and perhaps other names written as their numbers."""
    names = draw(st.lists(st.sampled_from(sorted(SAME_SIZE)), min_size=1, max_size=3, unique=True))
    swappable = [n for n in names if n in PARTNER and PARTNER[n] not in names]
    assume(swappable)
    swapped = draw(st.sampled_from(swappable))
    ops = draw(st.lists(st.sampled_from("*/"), min_size=len(names) - 1, max_size=len(names) - 1))
    numeric = draw(st.sets(st.sampled_from(names)))

    def written(name):
        if name == swapped:
            return PARTNER[name]
        return str(SAME_SIZE[name]) if name in numeric else name

    join = lambda factors: factors[0] + "".join(op + f for op, f in zip(ops, factors[1:]))  # noqa: E731
    return join([written(n) for n in names]), join(names)


@settings(max_examples=400, deadline=None)
@given(pair=same_size_other_meaning(), equal=st.sampled_from([{}, {"d_model": "h*d_k"}]))
def test_a_dimension_of_the_same_size_and_another_meaning_stays_wrong(pair, equal):
    """L for S, B for N, d_v for d_ff (equal sizes, no definition between them), alone or in a product with
    names or numbers: wrong in both readers, whatever the definitions of other names bring in."""
    answer, key = pair
    assert same_product_dim(answer, key, SAME_SIZE, equal) is False
    assert same_dim_sympy(answer, key, SAME_SIZE, equal) is False
    assert not same_dim(answer, key, SAME_SIZE, equal)  # 64 may be read as d_model: still wrong


@pytest.mark.parametrize("text", ["d_k^2", "(h*d_k)", "2 d_k", "d_k * * h", "/d_k", "d_k+1", "sqrt(d_k)", "e*d_k", "0*d_k", "07", "d_k**2", ""])
def test_anything_but_a_plain_product_is_left_to_sympy(text):
    assert read_product(text) is None
    assert same_product_dim(text, "d_k", NUMBERS, EQUAL) is None


def test_sizes_are_exact_and_unknown_without_a_value():
    assert product_size("d_model/h", NUMBERS) == 16
    assert product_size("d_ff", NUMBERS) == "unknown"
    assert product_size("d_k^2", NUMBERS) is None


def test_a_first_shape_answer_in_another_form_is_graded_without_importing_sympy():
    script = ("import sys\n"
              "from problemgen import generate, grade_part\n"
              "p = generate('shapes.cross', seed=3, difficulty=3)\n"
              "part = p.parts[0]\n"
              "text = '(B, h, L, d_model/h)'\n"
              "print(grade_part(part, text).status == 'correct', 'sympy' in sys.modules)\n")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=120)
    assert done.stdout.split() == ["True", "False"], done.stderr
