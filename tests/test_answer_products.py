"""Shape dimensions decided without SymPy agree with the SymPy rule, and need no SymPy import."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problemgen.answers.products import product_size, read_product, same_product_dim
from problemgen.answers.types.shape import same_dim_sympy

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
])
def test_the_forms_students_write(answer, key, verdict):
    assert same_product_dim(answer, key, NUMBERS, EQUAL) is verdict
    assert same_dim_sympy(answer, key, NUMBERS, EQUAL) is verdict


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
