"""grade_part / grade_text per answer type: correct, wrong, invalid, equivalent forms and named mistakes."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "grading"))
import grading_fixture as fx  # noqa: E402

from problemgen.sheets.answersheet import BadValue, NonFinite, key_value  # noqa: E402
from problemgen.model.core import AnswerPart, Mistake  # noqa: E402
from problemgen.sheets.grading import grade_part, grade_text  # noqa: E402

ATTENTION = fx.attention_problem()
EXPRESSIONS = fx.expression_problem()
COUNTING = fx.counting_problem()
MASKS = fx.mask_problem()
CONCEPTS = fx.concept_problem()
ALL_PARTS = [p for problem in (ATTENTION, EXPRESSIONS, COUNTING, MASKS, CONCEPTS) for p in problem.parts]


def status(part, raw):
    return grade_part(part, raw).status


@pytest.mark.parametrize("part", ALL_PARTS, ids=lambda p: p.key)
def test_the_key_value_of_every_part_is_correct(part):
    result = grade_part(part, key_value(part))
    assert (result.status, result.score) == ("correct", 1.0)


@pytest.mark.parametrize("part", ALL_PARTS, ids=lambda p: p.key)
@pytest.mark.parametrize("blank", ["", "   ", None, []])
def test_blank_answers_are_wrong_with_no_answer_feedback(part, blank):
    assert grade_part(part, blank) == grade_part(part, "")
    result = grade_part(part, blank)
    assert (result.status, result.score, result.feedback) == ("wrong", 0.0, "no answer")


WRITABLE_MISTAKES = [p for p in ALL_PARTS
                     if p.mistakes and not (p.type == "expression" and not p.spec.get("allow_decimal"))]


@pytest.mark.parametrize("part", WRITABLE_MISTAKES, ids=lambda p: p.key)
def test_every_listed_mistake_is_named_with_its_hint(part):
    """Mistake values are what a student would write, except for exact-only expressions (decimals there
    are invalid; their naming is tested with an exact wrong expression below)."""
    for mistake in part.mistakes:
        raw = mistake.value if part.type != "shape" else "(" + ", ".join(mistake.value) + ")"
        result = grade_part(part, raw)
        assert result.status == "wrong"
        assert result.mistake == mistake.name
        assert result.feedback == mistake.hint


def test_a_bad_value_from_the_file_is_invalid_with_its_message():
    result = grade_part(ATTENTION.part("top"), BadValue("answered more than once (lines 3 and 5)"))
    assert result.status == "invalid" and "more than once" in result.feedback


# ------------------------------------------------------------------------------------------ numbers


def test_numbers_use_the_part_tolerance():
    top = ATTENTION.part("top")
    assert status(top, top.value + 0.0049) == "correct"
    assert status(top, top.value - 0.0049) == "correct"
    assert status(top, top.value + 0.0051) == "wrong"


def test_a_number_part_with_an_exact_form_accepts_equivalent_expressions():
    top = ATTENTION.part("top")
    for text in ("exp(3/2)/(exp(1/2) + exp(3/2))", "1/(1+exp(-1))", "exp(1)/(1+e)"):
        assert status(top, text) == "correct", text
    assert status(top, "1/(1+exp(1))") == "wrong"


def test_an_exact_form_is_accepted_even_when_the_tolerance_is_zero():
    part = AnswerPart(key="x", type="number", value=1 / 3, exact="1/3")
    assert status(part, "1/3") == "correct"
    assert status(part, 0.3333) == "wrong"


@pytest.mark.parametrize("raw, message", [
    (True, "boolean"),
    (NonFinite("nan"), "not a finite number"),
    (NonFinite("inf"), "not a finite number"),
    (float("nan"), "not a finite number"),
    ([0.7], "not a list"),
    ("seven", "unknown name"),
    ("0,73", "decimal point"),
    ("\uff10.73", "FULLWIDTH DIGIT ZERO"),
])
def test_unreadable_numbers_are_invalid_with_a_message(raw, message):
    result = grade_part(ATTENTION.part("top"), raw)
    assert result.status == "invalid"
    assert message in result.feedback.replace("should be a number, not a list", "not a list")


# ------------------------------------------------------------------------------------------ integers


@pytest.mark.parametrize("raw", [1050624, "1050624", "1,050,624", "1_050_624", 1050624.0, "1.050624e6",
                                 "4*(512^2 + 512)", " 1050624 "])
def test_integer_forms_that_denote_the_key_are_correct(raw):
    assert status(COUNTING.part("params"), raw) == "correct"


@pytest.mark.parametrize("raw, message", [
    (1050624.5, "exact whole number"),
    ("1050624.5", "whole number"),
    (2.0**60, "exact whole number"),      # an integral float beyond 2^53 stands for many integers
    ("10,50,624", "groups of three"),
    (True, "boolean"),
    ("1/3", "whole number"),
    ("\uff11050624", "FULLWIDTH DIGIT ONE"),
])
def test_non_integers_are_invalid(raw, message):
    result = grade_part(COUNTING.part("params"), raw)
    assert result.status == "invalid" and message in result.feedback


def test_a_wrong_integer_is_wrong_and_exact():
    assert status(COUNTING.part("params"), 1049601) == "wrong"


# ------------------------------------------------------------------------------------------ matrices


def test_matrix_entries_may_be_exact_expressions():
    weights = ATTENTION.part("weights")
    raw = [["1/(1+exp(-1))", "1/(1+exp(1))"], ["exp(-1)/(1+exp(-1))", "1/(1+exp(-1))"]]
    assert status(weights, raw) == "correct"


def test_matrix_partial_credit_is_the_fraction_of_entries_within_tolerance():
    weights = ATTENTION.part("weights")
    raw = [row[:] for row in weights.value]
    raw[0][1] += 0.1
    raw[1][0] -= 0.1
    result = grade_part(weights, raw)
    assert result.status == "wrong"
    assert result.score == pytest.approx(0.5)
    assert "2 of 4 entries" in result.feedback and "(1, 2), (2, 1)" in result.feedback


def test_a_transposed_matrix_is_a_shape_error_for_non_square_keys():
    part = AnswerPart(key="m", type="matrix", value=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], atol=0.01)
    result = grade_part(part, [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
    assert (result.status, result.score) == ("wrong", 0.0)
    assert "2x3" in result.feedback and "3x2" in result.feedback


def test_a_wrong_shaped_answer_still_names_a_mistake_with_that_shape():
    key = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    transposed = [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    part = AnswerPart(key="m", type="matrix", value=key, atol=0.01,
                      mistakes=(Mistake("transpose_scores", transposed, "Rows belong to queries."),))
    assert grade_part(part, transposed).mistake == "transpose_scores"


def test_no_broadcasting_a_vector_against_a_matrix_is_a_shape_error():
    weights = ATTENTION.part("weights")
    result = grade_part(weights, weights.value[0])
    assert result.status == "wrong" and "shape error" in result.feedback
    assert status(weights, [weights.value[0]]) == "wrong"  # 1x2 against 2x2


def test_a_vector_for_a_one_row_key_is_invalid_with_the_bracket_fix():
    row = MASKS.part("row")
    result = grade_part(row, [0.25, 0.25, 0.5])
    assert result.status == "invalid"
    assert "1x3" in result.feedback and "double brackets" in result.feedback
    assert status(row, [[0.25, 0.25, 0.5]]) == "correct"


@pytest.mark.parametrize("raw, message", [
    ([[0.73, 0.27], [0.27]], "different lengths"),
    ([[0.73, True], [0.27, 0.73]], "entry (1, 2) is true"),
    ([[0.73, NonFinite("nan")], [0.27, 0.73]], "entry (1, 2) is nan"),
    ([[[0.73]]], "nested"),
])
def test_malformed_matrices_are_invalid(raw, message):
    result = grade_part(ATTENTION.part("weights"), raw)
    if message == "nested":
        assert result.status in ("wrong", "invalid")
        return
    assert result.status == "invalid" and message in result.feedback


def test_the_wrong_entries_list_is_capped():
    part = AnswerPart(key="m", type="matrix", value=[[0.0] * 5] * 4, atol=0.01)
    result = grade_part(part, [[1.0] * 5] * 4)
    assert "20 of 20" in result.feedback and "and 14 more" in result.feedback


# ------------------------------------------------------------------------------------------ shapes


@pytest.mark.parametrize("raw", ["(B, h, L, L)", "[B, h, L, L]", "B, h, L, L", ["B", "h", "L", "L"],
                                 "(2, 8, 10, 10)", [2, "h", 10, "L"], "(B,h,L,L)"])
def test_shapes_accept_names_or_the_given_numbers(raw):
    assert status(COUNTING.part("scores_shape"), raw) == "correct"


@pytest.mark.parametrize("raw, message", [
    ("(B, L, h, L)", None),                       # the named mistake
    ("(B, h, L, d_k)", "position 4"),
    ("(b, h, L, L)", "case-sensitive"),
    ("(B, h, L)", "4 dimensions"),
    ("(L, h, B, L)", "wrong order"),
    ("(2, 8, 10, 64)", "position 4"),
])
def test_wrong_shapes(raw, message):
    result = grade_part(COUNTING.part("scores_shape"), raw)
    assert result.status == "wrong"
    if message:
        assert message in result.feedback


def test_shape_products_match_by_their_names_or_by_numbers_never_by_other_names():
    """One rule for single names and products: the key's names (in any order of factors) or numbers."""
    part = AnswerPart(key="s", type="shape", value=["B", "L", "h*d_k"],
                      spec={"dims": {"B": 2, "L": 5, "d_model": 512, "h": 8, "d_k": 64, "d_v": 64}})
    assert status(part, "(B, L, h*d_k)") == "correct"
    assert status(part, "(B, L, d_k*h)") == "correct"
    assert status(part, "(2, 5, 512)") == "correct"
    assert status(part, "(B, L, 8*64)") == "correct"
    assert status(part, "(B, L, h*d_v)") == "wrong"
    assert status(part, "(B, L, d_model)") == "wrong"
    assert status(part, "(B, L, h*L)") == "wrong"


def test_a_symbol_never_matches_a_different_symbol_with_the_same_number():
    part = AnswerPart(key="s", type="shape", value=["L", "S"], spec={"dims": {"L": 4, "S": 4}})
    assert status(part, "(L, L)") == "wrong"
    assert status(part, "(4, 4)") == "correct"


def test_numbers_may_replace_given_factors_inside_a_product_but_names_must_be_the_keys():
    """A product is judged factor by factor: the key's names, or numbers for names the problem gave."""
    part = AnswerPart(key="s", type="shape", value=["B", "h*d_k"], spec={"dims": {"B": 2, "h": 2, "d_k": 4, "d_v": 4}})
    assert status(part, "(B, 2*d_k)") == "correct"
    assert status(part, "(B, h*4)") == "correct"
    assert status(part, "(B, 4*2)") == "correct"
    assert status(part, "(B, h*h)") == "wrong"  # h is 2, d_k is 4: the wrong factor, and a different size
    assert status(part, "(B, 2*d_v)") == "wrong"  # d_v is not a factor of the key, although d_v = d_k = 4
    assert status(part, "(B, 9)") == "wrong"


def test_numbers_are_accepted_only_for_names_whose_values_the_problem_gave():
    part = AnswerPart(key="s", type="shape", value=["B", "h*d_k"], spec={"dims": {"h": 8}})
    assert status(part, "(B, 8*d_k)") == "correct"
    assert status(part, "(B, 512)") == "wrong"  # d_k was not given, so no number can stand for it
    assert status(AnswerPart(key="s", type="shape", value=["B", "d_k"]), "(B, 64)") == "wrong"


def test_a_different_dimension_of_equal_size_is_wrong_with_a_feedback_that_says_why():
    part = AnswerPart(key="s", type="shape", value=["B", "d_v"], spec={"dims": {"B": 2, "d_k": 64, "d_v": 64}})
    result = grade_part(part, "(B, d_k)")
    assert result.status == "wrong" and "same size" in result.feedback
    assert "same size" not in grade_part(part, "(B, 3)").feedback


@pytest.mark.parametrize("raw", [True, "(B, __import__('os'), L, L)", "(B, h, L, L\uff09", [1.5, 2, 3, 4]])
def test_unreadable_shapes_are_invalid(raw):
    assert status(COUNTING.part("scores_shape"), raw) == "invalid"


# ------------------------------------------------------------------------------------------ expressions


@pytest.mark.parametrize("text", ["exp(2)/(exp(2)+exp(6)+exp(-2))", "1/(1+exp(4)+exp(-4))",
                                  "exp(-2)/(exp(-2)+exp(2)+exp(-6))", "1/(1 + e^4 + e^-4)"])
def test_equivalent_exact_expressions_are_correct(text):
    assert status(EXPRESSIONS.part("w1"), text) == "correct"


def test_decimals_are_invalid_where_the_problem_asks_for_an_exact_form():
    w1 = EXPRESSIONS.part("w1")
    result = grade_part(w1, "0.0177")
    assert result.status == "invalid" and "exact expression" in result.feedback
    assert status(w1, w1.spec["decimal"]) == "invalid"


def test_decimals_within_tolerance_are_accepted_where_allowed():
    half = EXPRESSIONS.part("half")
    assert status(half, "1/sqrt(2)") == "correct"
    assert status(half, 0.7071) == "correct"
    assert status(half, "0.7071") == "correct"
    assert status(half, 0.7081) == "wrong"


def test_an_exact_decimal_equal_to_a_rational_key_is_correct_even_without_decimals():
    part = AnswerPart(key="x", type="expression", value="1/2", spec={"decimal": 0.5, "allow_decimal": False})
    assert status(part, "0.5") == "correct"
    assert status(part, "0.25") == "invalid"


def test_a_wrong_exact_expression_names_the_mistake_it_equals():
    result = grade_part(EXPRESSIONS.part("w1"), "1/3")
    assert (result.status, result.mistake) == ("wrong", "no_softmax")


@pytest.mark.parametrize("raw", ["__import__('os').system('echo x')", "9**9**9", "lambda: 0", True, [1], "x"])
def test_unreadable_expressions_are_invalid(raw):
    assert status(EXPRESSIONS.part("w1"), raw) == "invalid"


# ------------------------------------------------------------------------------------------ masks


CAUSAL = [[True, False, False], [True, True, False], [True, True, True]]


@pytest.mark.parametrize("key, raw", [
    ("bool_mask", [[True, False, False], [True, True, False], [True, True, True]]),
    ("bool_mask", [["T", "F", "F"], ["T", "T", "F"], ["t", "true", "False"][:0] + ["T", "T", "T"]]),
    ("zero_one", [[1, 0, 0], [1, 1, 0], [1, 1, 1]]),
    ("zero_one", [["1", "0", "0"], ["1", "1", "0"], ["1", "1", "1"]]),
    ("additive", [[0, NonFinite("-inf"), NonFinite("-inf")], [0, 0, NonFinite("-inf")], [0, 0, 0]]),
    ("additive", [[0, "-inf", "-\u221e"], [0.0, 0, "\u2212\u221e"], ["0", 0, 0]]),
])
def test_masks_in_the_asked_representation_are_correct(key, raw):
    assert status(MASKS.part(key), raw) == "correct"


@pytest.mark.parametrize("key, raw, message", [
    ("bool_mask", [[2, 0, 0], [1, 1, 0], [1, 1, 1]], "boolean mask"),
    ("zero_one", [["yes", 0, 0], [1, 1, 0], [1, 1, 1]], "0/1 mask"),
    ("zero_one", [[1, 0, 0], [1, 1, 0], [1, 1, 2]], "0/1 mask"),
    ("additive", [[1, 0, 0], [1, 1, 0], [1, 1, 1]], "additive mask"),
    ("additive", [[0, -1e9, -1e9], [0, 0, -1e9], [0, 0, 0]], "additive mask"),
    ("additive", [[0, NonFinite("inf"), 0], [0, 0, 0], [0, 0, 0]], "additive mask"),
    ("additive", [[0, NonFinite("nan"), 0], [0, 0, 0], [0, 0, 0]], "additive mask"),
])
def test_other_representations_are_invalid_naming_the_expected_one(key, raw, message):
    result = grade_part(MASKS.part(key), raw)
    assert result.status == "invalid" and message in result.feedback


def test_wrong_masks_name_the_wrong_entries_with_no_partial_credit():
    raw = [row[:] for row in CAUSAL]
    raw[0][2] = True
    result = grade_part(MASKS.part("bool_mask"), raw)
    assert (result.status, result.score) == ("wrong", 0.0)
    assert "(1, 3)" in result.feedback


def test_a_wrong_shaped_mask_is_wrong():
    assert status(MASKS.part("bool_mask"), [[True, False], [True, True]]) == "wrong"


# ------------------------------------------------------------------------------------------ choices and terms


def test_multiple_choice_partial_credit_is_right_minus_wrong_over_correct():
    part = CONCEPTS.part("why_scale")
    cases = {("a", "c"): 1.0, ("a",): 0.5, ("a", "b"): 0.0, ("a", "c", "d"): 0.5, ("b", "d"): 0.0, ("c",): 0.5}
    for chosen, score in cases.items():
        assert grade_part(part, list(chosen)).score == pytest.approx(score), chosen


def test_choice_text_forms_and_case_are_accepted():
    part = CONCEPTS.part("why_scale")
    for raw in ("a, c", "c a", ["C", "a"], ["a", "c", "a"]):
        assert status(part, raw) == "correct", raw


def test_a_wrong_pick_explains_itself_with_the_option_why():
    result = grade_part(CONCEPTS.part("single"), "d")
    assert result.status == "wrong" and "unrelated" in result.feedback


@pytest.mark.parametrize("raw, message", [("z", "no option"), (["a", "b"], "exactly one"), (1, "option ids"),
                                          ("\uff42", "FULLWIDTH")])
def test_unreadable_single_choices_are_invalid(raw, message):
    result = grade_part(CONCEPTS.part("single"), raw)
    assert result.status == "invalid" and message in result.feedback


@pytest.mark.parametrize("raw", ["layer norm", "LayerNorm", "Layer-Norm", "  layer_normalization "])
def test_terms_ignore_case_spaces_and_hyphens(raw):
    assert status(CONCEPTS.part("name"), raw) == "correct"


def test_wrong_and_invalid_terms():
    assert status(CONCEPTS.part("name"), "batch norm") == "wrong"
    assert status(CONCEPTS.part("name"), 3) == "invalid"
    assert status(CONCEPTS.part("name"), "l\u0430yer norm") == "invalid"  # Cyrillic a


# ------------------------------------------------------------------------------------------ typed answers


@pytest.mark.parametrize("part, text", [
    (ATTENTION.part("top"), "0.731"),
    (ATTENTION.part("top"), "1/(1+exp(-1))"),
    (COUNTING.part("params"), "1,050,624"),
    (COUNTING.part("scores_shape"), "(B, h, L, L)"),
    (MASKS.part("bool_mask"), "[[true, false, false], [true, true, false], [true, true, true]]"),
    (MASKS.part("additive"), '[[0, -inf, "-inf"], [0, 0, -inf], [0, 0, 0]]'),
    (CONCEPTS.part("why_scale"), "a, c"),
    (CONCEPTS.part("single"), '"b"'),
    (CONCEPTS.part("name"), "LayerNorm"),
])
def test_grade_text_reads_a_typed_line_like_a_sheet_value(part, text):
    assert grade_text(part, text).status == "correct"


def test_grade_text_refuses_more_than_one_line():
    result = grade_text(ATTENTION.part("top"), "0.731\nx = 1")
    assert result.status == "invalid" and "one line" in result.feedback


def test_grade_text_treats_nan_and_inf_as_invalid_numbers():
    for text in ("nan", "inf", "-inf"):
        assert grade_text(ATTENTION.part("top"), text).status == "invalid"


def test_grade_text_of_a_blank_line_is_no_answer():
    assert grade_text(ATTENTION.part("top"), "   ").feedback == "no answer"


def test_scores_stay_in_the_unit_interval():
    for part in ALL_PARTS:
        for raw in ("", key_value(part), "junk", 0, [[0]]):
            result = grade_part(part, raw)
            assert 0.0 <= result.score <= 1.0 and not math.isnan(result.score)
            assert result.status in ("correct", "wrong", "invalid")


# ------------------------------------------------------------------------------------------ fuzzing

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**299, max_value=10**320),
    st.floats(), st.floats(min_value=-1e-300, max_value=1e-300),
    st.text(max_size=30), st.sampled_from(["-inf", "T", "1/0", "9^9^9", "a, b", "(B, L)", "exp(2)", "\u2212\u221e"]),
    st.sampled_from([NonFinite("nan"), NonFinite("-inf"), BadValue("bad")]),
)
RAW = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4), max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(part=st.sampled_from(ALL_PARTS), raw=RAW)
def test_fuzz_any_raw_value_gets_a_clean_verdict(part, raw):
    """Whatever a TOML file can hold, grading returns a verdict (no exception) within a generous bound."""
    import signal

    def on_alarm(signum, frame):
        raise AssertionError("grading did not return within 10 s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(10)
    try:
        result = grade_part(part, raw)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert result.status in ("correct", "wrong", "invalid")
    assert 0.0 <= result.score <= 1.0
    assert result.status != "invalid" or (result.feedback and "\n" not in result.feedback)


@pytest.mark.grader_fault
def test_a_readers_unexpected_exception_is_an_invalid_answer_not_a_crash(monkeypatch):
    """The quiz and the web page grade a typed line through grade_text: a bug in a reader must end that one
    answer (invalid, saying the grader failed, the exception kept for the instructor), not the session."""
    from problemgen.answers import types
    from problemgen.answers.base import GRADER_FAULT
    from problemgen.model.core import AnswerPart
    from problemgen.sheets.grading import grade_text

    def read(self, part, raw):
        raise KeyError("a bug in a reader")

    monkeypatch.setattr(type(types.get("number")), "read", read)
    result = grade_text(AnswerPart(key="x", type="number", value=0.5), "1/2 + 0")
    assert (result.status, result.score, result.feedback) == ("invalid", 0.0, GRADER_FAULT)
    assert result.fault == "KeyError: 'a bug in a reader'"


@pytest.mark.grader_fault
def test_the_self_check_names_a_readers_exception_that_grading_contained(monkeypatch):
    """The self-check grades garbage and expects "invalid": a reader crashing on it would be invalid too,
    so the self-check reports the fault itself."""
    from problemgen.answers import types
    from problemgen.selfcheck import check_part

    kind = type(types.get("number"))
    original = kind.read

    def read(self, part, raw):
        if raw == "@@":
            raise ZeroDivisionError("a bug in a reader")
        return original(self, part, raw)

    monkeypatch.setattr(kind, "read", read)
    problems = check_part(AnswerPart(key="x", type="number", value=0.5, atol=0.01))
    assert problems == ["the grader failed on '@@': ZeroDivisionError: a bug in a reader"]


@pytest.mark.parametrize("part", [
    AnswerPart(key="x", type="shape", value=["B", "L"]), AnswerPart(key="x", type="matrix", value=[[1.0, 2.0]]),
    AnswerPart(key="x", type="mask", value=[[True]]), AnswerPart(key="x", type="integer", value=3),
    AnswerPart(key="x", type="number", value=0.5), AnswerPart(key="x", type="term", value=["norm"]),
    AnswerPart(key="x", type="choice", value=["a"], spec={"options": [{"id": i, "text": i, "why": i} for i in "ab"]}),
])  # fmt: skip
def test_a_list_nested_hundreds_deep_gets_a_verdict_in_every_type(part):
    """A sheet may hold ``[[[[...1...]]]]`` 400 levels deep (valid TOML); the message that echoes it used to
    recurse past Python's limit. (A reader's exception fails this test: see tests/conftest.py.)"""
    deep = 1
    for _ in range(400):
        deep = [deep]
    for result in (grade_part(part, deep), grade_text(part, "[" * 400 + "1" + "]" * 400)):
        assert result.status in ("invalid", "wrong") and len(result.feedback) < 300
