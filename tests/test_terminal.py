"""Terminal math: LaTeX fragments of rendered text become readable Unicode; colour only on a TTY."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problemgen.documents.terminal import math_to_unicode, style, to_unicode, use_colour


@pytest.mark.parametrize(
    "tex, expected",
    [
        (r"\sqrt{d_k}", "√dₖ"),
        (r"Q K^\top", "Q Kᵀ"),
        (r"Q K^T", "Q Kᵀ"),
        (r"d_{\text{model}} \times d_{\text{ff}}", "d_model × d_ff"),
        (r"-\infty", "-∞"),
        (r"\frac{1}{\sqrt{d_k}}", "1/√dₖ"),
        (r"\frac{Q K^\top}{\sqrt{d_k}}", "(Q Kᵀ)/√dₖ"),
        (r"\mathrm{softmax}(x)_i", "softmax(x)ᵢ"),
        (r"\mathbb{R}^{L \times d_k}", "ℝ^(L × dₖ)"),
        (r"\sigma^2 + \epsilon", "σ² + ε"),
        (r"10^{-3}", "10⁻³"),
        (r"W_O", "W_O"),  # no subscript capital O in Unicode: keep it readable as typed
        (r"q_i \cdot k_j", "qᵢ · kⱼ"),
        (r"\sum_j a_j v_j", "Σⱼ aⱼ vⱼ"),
        (r"\frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}", "(x - μ)/√(σ² + ε)"),
        (r"\hat{x} = \bar x", "x\u0302 = x\u0304"),
    ],
)
def test_common_math_becomes_unicode(tex, expected):
    assert math_to_unicode(tex) == expected


def test_prose_outside_math_is_kept_and_dollars_are_dropped():
    text = "Scale by $1/\\sqrt{d_k}$ where $d_k = 4$; the mask adds $-\\infty$.\n\nNext paragraph."
    assert to_unicode(text) == "Scale by 1/√dₖ where dₖ = 4; the mask adds -∞.\n\nNext paragraph."


def test_display_math_is_converted_too():
    assert to_unicode("$$A = \\mathrm{softmax}(S)$$") == "A = softmax(S)"


def test_a_hand_written_bmatrix_becomes_aligned_rows():
    out = math_to_unicode(r"\begin{bmatrix} 1 & -20 \\ 300 & 4 \end{bmatrix}")
    rows = [line for line in out.splitlines() if line.strip()]
    assert rows == ["  │   1  -20 │", "  │ 300    4 │"]


def test_matrices_from_the_text_filter_pass_through_untouched():
    from problemgen.documents.rendering import matrix_text

    block = matrix_text([[1, -2.5], [30, 4]])
    assert to_unicode(f"S = {block}") == f"S = {block}"


def test_matrices_of_one_formula_are_laid_out_side_by_side():
    from problemgen.documents.rendering import matrix_text

    out = to_unicode(f"$$Q = {matrix_text([[1, 2], [3, 4]])}, \\qquad K = {matrix_text([[5], [6], [7]])}$$")
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines == [
        "      ┌ 1  2 ┐       ┌ 5 ┐",
        "  Q = └ 3  4 ┘ , K = │ 6 │",
        "                     └ 7 ┘",
    ]


def test_formulas_too_wide_for_side_by_side_stay_stacked():
    from problemgen.documents.rendering import matrix_text

    wide = matrix_text([[123456.75] * 8, [1] * 8])
    out = to_unicode(f"$$A = {wide}, B = {wide}$$")
    assert out.count("┌") == 2 and all(line.count("┌") <= 1 for line in out.splitlines())


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_conversion_never_raises_on_arbitrary_text(text):
    to_unicode(text)
    math_to_unicode(text)


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize(
    "tty, env, expected",
    [
        (True, {}, True),
        (False, {}, False),
        (True, {"NO_COLOR": "1"}, False),
        (True, {"NO_COLOR": ""}, True),  # no-color.org: only a non-empty value disables colour
        (True, {"TERM": "dumb"}, False),
    ],
)
def test_colour_only_on_a_terminal_without_no_color(tty, env, expected):
    assert use_colour(_Stream(tty), env) is expected


def test_style_adds_ansi_codes_only_when_colour_is_on():
    assert style("ok", "good", False) == "ok"
    assert style("ok", "good", True) == "\x1b[32mok\x1b[0m"


def test_every_registered_kind_renders_to_the_terminal_without_leftover_latex():
    """The quiz shows prompts and solutions through this converter: no $, backslash or brace may remain."""
    from problemgen.model import registry
    from problemgen.documents.rendering import render_block

    leftovers = []
    for spec in registry.all_kinds():
        for difficulty in spec.difficulties:
            problem = registry.generate(spec.name, 1, difficulty)
            for block in ("prompt", "solution"):
                text = to_unicode(render_block(problem, block, "text"))
                found = sorted(set(re.findall(r"[$\\{}]", text)))
                if found:
                    leftovers.append(f"{problem.variant_id} {block}: {''.join(found)}")
    assert leftovers == []


def test_ascii_spelling_of_the_quiz_maths_never_raises():
    from problemgen.documents.terminal import to_ascii

    text = to_ascii("✓ Correct. √dₖ = 1.4142, Kᵀ, σ², −∞ ┌ 1 ┐ │ 2 │ └ 3 ┘ x̂ 😀")
    text.encode("ascii")  # every character has an ASCII spelling now
    assert "sqrt(d_k) = 1.4142" in text and "K^T" in text and "sigma^2" in text and "-inf" in text
    assert to_ascii("× · ±", "latin-1") == "× · ±"  # what latin-1 can show stays


def test_prose_wraps_but_matrices_keep_their_lines():
    from problemgen.documents.terminal import wrap

    prose = "Compute the attention weights along each row so that every row of the matrix sums to one."
    matrix = "  ┌ 1  2  3  4  5  6  7  8  9  10  11  12  13  14  15  16  17  18  19  20 ┐"
    out = wrap(prose + "\n" + matrix, 40).splitlines()
    assert all(len(line) <= 40 for line in out[:-1]) and out[-1] == matrix


def test_side_by_side_matrices_stack_when_the_terminal_is_narrow():
    from problemgen.documents.terminal import layout_width, math_to_unicode

    tex = r"Q = \begin{bmatrix} 1 & 2 & 3 \\ 4 & 5 & 6 \end{bmatrix}, K = \begin{bmatrix} 7 & 8 & 9 \\ 1 & 2 & 3 \end{bmatrix}"
    wide = math_to_unicode(tex)
    token = layout_width.set(24)
    try:
        narrow = math_to_unicode(tex)
    finally:
        layout_width.reset(token)
    assert max(len(line) for line in wide.splitlines()) > 24  # side by side on a wide terminal
    assert max(len(line) for line in narrow.splitlines()) <= 24  # stacked on a narrow one
