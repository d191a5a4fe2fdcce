"""Matrix answers: every common notation of the right matrix is correct, in every channel."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.model.core import AnswerPart  # noqa: E402

KEY = AnswerPart(key="w", type="matrix", value=[[0.5, 0.5], [0.25, 0.75]], atol=0.005)
ROW = AnswerPart(key="r", type="matrix", value=[[0.1, 0.2, 0.7]], atol=0.005)
WIDE = AnswerPart(key="m", type="matrix", value=[[1, -1, 0], [2, 0, 3]], atol=0.0)
VECTOR = AnswerPart(key="v", type="matrix", value=[0.5, 0.25], atol=0.005)
SOFT = AnswerPart(key="s", type="matrix", value=[[0.8807970779778823, 0.11920292202211755]], atol=0.005)

ACCEPTED = [
    (KEY, "[[0.5, 0.5], [0.25, 0.75]]"),
    (KEY, "[[1/2, 1/2], [1/4, 3/4]]"),
    (KEY, "[[.5, .5], [.25, .75]]"),
    (KEY, "[[0.5 0.5]\n [0.25 0.75]]"),             # numpy's printed form
    (KEY, "[[0.5 0.5] [0.25 0.75]]"),
    (KEY, "array([[0.5, 0.5], [0.25, 0.75]])"),
    (KEY, "np.array([[0.5, 0.5],\n [0.25, 0.75]])"),
    (KEY, "[0.5 0.5; 0.25 0.75]"),                   # MATLAB
    (KEY, "((0.5, 0.5), (0.25, 0.75))"),             # tuples
    (KEY, "[[0.5, 0.5,], [0.25, 0.75,],]"),          # trailing commas
    (KEY, "0.5 0.5\n0.25 0.75"),                     # rows on separate lines
    (KEY, "[[1/sqrt(4), exp(0)/2], [1/4, 3/4]]"),    # exact expressions
    (KEY, "[[½, 0.5], [0.25, 0.75]]".replace("½", "1/2")),
    (WIDE, "[1 -1 0; 2 0 3]"),                       # a space before a sign starts an entry
    (WIDE, "[[1, \u22121, 0], [2, 0, 3]]"),          # Unicode minus
    (WIDE, "[[1, 1 - 2, 0], [2, 0, 3]]"),            # spaced operators stay inside the entry
    (SOFT, "[[exp(2)/(1+exp(2)), 1/(1+exp(2))]]"),
    (ROW, "[[0.1 0.2 0.7]]"),
]

INVALID = [
    (KEY, "[0.5, 0.5, 0.25, 0.75]", "write 2 rows of 2"),  # a flat list of the right length
    (ROW, "[0.1, 0.2, 0.7]", "one row inside double brackets"),
    (ROW, "[[0.1], [0.2], [0.7]]", "one row inside double brackets"),
    (KEY, "[[0.5, 0.5], [0.25, 0.75]", "never closed"),
    (KEY, "[[0.5, 0.5], [0.25, 0.75, 1]]", "different lengths"),
    (KEY, "[[0.5, x], [0.25, 0.75]]", "entry (1, 2)"),
    (KEY, "[[0,5, 0,5], [0,25, 0,75]]", "decimal point"),  # decimal commas would make more entries
    (KEY, "see attached", "not read as a 2x2 matrix"),      # words are no matrix, not a shape error
    (KEY, "tril(ones(2))", "not read as a 2x2 matrix"),
    (VECTOR, "hello", "not read as a vector of 2"),
    (KEY, "[[0.5, 0.5, 0.5], [0.25, 0.75, x]]", "entry (2, 3)"),  # a wrong shape with an unreadable entry
]

WRONG = [
    (KEY, "[[0.5, 0.25], [0.5, 0.75]]", "(1, 2), (2, 1)"),   # transposed
    (KEY, "[[0.5 0.5] [0.25 0.7]]", "(2, 2)"),
    (WIDE, "[1 - 1 0; 2 0 3]", "shape error"),               # 1 - 1 is one entry (0): a 2-entry first row
]


@pytest.mark.parametrize("part, text", ACCEPTED)
def test_notations_of_the_key_are_correct_in_every_channel(part, text):
    results = verdicts(part, text)
    assert {r.status for r in results.values()} == {"correct"}, {k: r.feedback for k, r in results.items()}


@pytest.mark.parametrize("part, text, message", INVALID)
def test_ambiguous_layouts_are_invalid_and_say_how_to_write_them(part, text, message):
    results = verdicts(part, text)
    if message == "shape error":
        assert {r.status for r in results.values()} <= {"invalid", "wrong"}
        return
    for channel, result in results.items():
        assert result.status == "invalid" and message in result.feedback, (channel, result)
        assert "without quotes" not in result.feedback


@pytest.mark.parametrize("part, text, where", WRONG)
def test_wrong_values_read_unambiguously_are_wrong(part, text, where):
    for channel, result in verdicts(part, text).items():
        assert result.status in ("wrong", "invalid") if where == "shape error" else result.status == "wrong"
        assert where in result.feedback or result.status == "invalid", (channel, result)


def test_the_quiz_says_how_it_read_a_notation_that_was_not_plain():
    result = verdicts(KEY, "[[.5 .5] [.25 .75]]")["typed"]
    assert result.read_as == "[[.5, .5], [.25, .75]]"
    assert verdicts(KEY, "[[0.5, 0.5], [0.25, 0.75]]")["typed"].read_as == ""


def test_matrices_of_plain_numbers_are_read_without_sympy():
    import subprocess

    code = ("import sys; from problemgen.model.core import AnswerPart; from problemgen.sheets.grading import grade_text;"
            "p = AnswerPart(key='w', type='matrix', value=[[0.5, 0.5], [0.25, 0.75]], atol=0.005);"
            "assert grade_text(p, '[[1/2 .5]; [0.25 3/4]]'.replace(';', '')).status == 'correct';"
            "assert grade_text(p, '[0.5 0.5; 0.25 0.75]').status == 'correct';"
            "print('sympy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert out.stdout.strip() == "False", out.stderr


IDENTITY = AnswerPart(key="i", type="matrix", value=[[1, 0], [0, 1]], atol=0.0)

DECIMAL_COMMAS = [  # (part, text, status): one verdict and one message in every channel
    (KEY, "[[0,5, 0,5], [0,25, 0,75]]", "invalid"),      # TOML reads the bare sheet value as 2x4 integers
    (KEY, "[[0,5, 0,5],\n [0,25, 0,75]]", "invalid"),    # over two lines (the sheet's tomllib path)
    (KEY, "[[0,5, 0,5,], [0,25, 0,75,],]", "invalid"),   # trailing commas
    (VECTOR, "[0,5, 0,25]", "invalid"),
    (KEY, "0,5\t0,5\n0,25\t0,75", "invalid"),            # a tab-separated paste from a decimal-comma spreadsheet
    (KEY, "0,5 0,5\n0,25 0,75", "invalid"),
    (KEY, "[0,5 0,5; 0,25 0,75]", "invalid"),            # MATLAB rows
    (KEY, "[[0,5 0,5] [0,25 0,75]]", "invalid"),         # numpy's printed form
    (VECTOR, "0,5; 0,25", "invalid"),                    # MATLAB's rule reads two rows of two integers
    (VECTOR, "-0,5\n0,25", "invalid"),
    (KEY, "[[1,0,1], [0,1,0]]", "wrong"),                # 3 per row is not twice 2: a shape error
    (KEY, "[[0, 5, 0, 5], [0, 25, 0, 75]]", "wrong"),    # spaced commas separate entries
    (KEY, "[1, 2; 3, 4]", "wrong"),                      # MATLAB rows with commas between entries
    (IDENTITY, "[[1,0],[0,1]]", "correct"),              # commas without spaces between integers are fine
    (IDENTITY, "[1,0;0,1]", "correct"),
]


@pytest.mark.parametrize("part, text, status", DECIMAL_COMMAS)
def test_decimal_commas_are_invalid_in_every_channel(part, text, status):
    results = verdicts(part, text)
    assert {r.status for r in results.values()} == {status}, {k: (r.status, r.feedback) for k, r in results.items()}
    assert len({r.feedback for r in results.values()}) == 1, {k: r.feedback for k, r in results.items()}
    if status == "invalid":
        assert "write the decimal point as '.'" in results["sheet bare"].feedback
    if status == "wrong":
        assert "decimal" not in results["sheet bare"].feedback


def test_a_comment_with_commas_does_not_make_a_sheet_array_look_like_decimal_commas():
    from answer_channels import from_sheet

    assert from_sheet(KEY, "[[0, 5, 0, 5], [0, 25, 0, 75]]  # 0,5 0,5").status == "wrong"
    assert from_sheet(KEY, '[[0,5, 0,5], [0,25, 0,75]]  # "x"').status == "invalid"


def test_a_64_kib_run_of_digits_is_read_in_linear_time():
    """The decimal-comma check searched ``\\d+,\\d+`` through the answer, retrying every position of a digit
    run: 64 KiB of ``9`` took 8 s of CPU per answer. The bound leaves a hundredfold margin over the fix."""
    import time

    from problemgen.sheets.answersheet import MAX_TEXT_ANSWER
    from problemgen.sheets.grading import grade_text

    part = AnswerPart(key="w", type="matrix", value=[[1.0, 2.0], [3.0, 4.0]])
    start = time.process_time()
    result = grade_text(part, "9" * (MAX_TEXT_ANSWER - 10))
    assert time.process_time() - start < 2.0 and result.status in ("wrong", "invalid")


def test_a_lone_carriage_return_in_a_sheet_string_ends_a_row():
    """``"0.5 0.5\\r0.25 0.75"`` (an old Mac line end, escaped in the sheet) glued the rows into ``0.50.25``."""
    from answer_channels import from_sheet

    assert from_sheet(KEY, '"0.5 0.5\\r0.25 0.75"').status == "correct"
    assert from_sheet(KEY, '"0.5 0.5\\r\\n0.25 0.75"').status == "correct"
