"""Rendering helpers: filters, escaping, answer display, heatmaps and the document environments."""

from __future__ import annotations

import re

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problemgen.documents import rendering
from problemgen.model.core import AnswerPart, Problem, ProblemgenError

TEX_SPECIALS = "\\{}$&#^_%~<>|"


def weights_part(**spec) -> AnswerPart:
    return AnswerPart(key="weights", type="matrix", value=[[0.1, 0.9], [0.55, 0.45]], atol=0.005, spec=spec)


# --- numbers and matrices -------------------------------------------------------------------------


def test_format_number_keeps_integers_exact_and_trims_trailing_zeros():
    assert rendering.format_number(12) == "12"
    assert rendering.format_number(2.0) == "2"
    assert rendering.format_number(0.25) == "0.25"
    assert rendering.format_number(1 / 3, 3) == "0.333"
    assert rendering.format_number(-0.00001, 3) == "0"
    assert rendering.format_number(float("-inf")) == "-inf"


def test_matrix_latex_is_a_bmatrix_with_rows_separated_by_double_backslash():
    assert rendering.matrix_latex([[1, 2], [3, 4]]) == r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}"


def test_a_matrix_prints_every_entry_with_one_number_of_decimals():
    assert rendering.matrix_latex([[1, 2], [3, 4.5]]) == r"\begin{bmatrix} 1.0 & 2.0 \\ 3.0 & 4.5 \end{bmatrix}"
    shown = rendering.matrix_latex([[0.2746455, 0.5570127], [1.0, -0.00001]])
    assert shown == r"\begin{bmatrix} 0.2746 & 0.5570 \\ 1.0000 & 0.0000 \end{bmatrix}"
    assert rendering.matrix_latex([[0, float("-inf")]]) == r"\begin{bmatrix} 0 & -\infty \end{bmatrix}"


def test_mask_values_follow_the_requested_representation():
    mask = [[True, False], [True, True]]
    assert rendering.mask_values(mask, "01") == [[1, 0], [1, 1]]
    assert rendering.mask_values(mask, "bool") == [["T", "F"], ["T", "T"]]
    assert rendering.mask_values(mask, "additive") == [[0, float("-inf")], [0, 0]]


def test_boolean_mask_cells_are_upright_words_in_latex_not_italic_variables():
    latex = rendering.matrix_latex(rendering.mask_values([[True, False]], "bool"))
    assert latex == r"\begin{bmatrix} \mathrm{T} & \mathrm{F} \end{bmatrix}"
    assert rendering.matrix_latex(rendering.mask_values([[True, False]], "additive")) == r"\begin{bmatrix} 0 & -\infty \end{bmatrix}"


# --- escaping -------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=TEX_SPECIALS + "ab 1", max_size=30))
def test_tex_escape_leaves_no_unescaped_special_character(text):
    escaped = rendering.tex_escape(text)
    # remove every escape sequence the function may emit; nothing special may remain
    stripped = re.sub(r"\\(textbackslash|textasciitilde|textless|textgreater|textbar)\{\}|\\\^\{\}|\\[{}$&#_%]", "", escaped)
    assert not set(stripped) & set(TEX_SPECIALS)


def test_tex_text_escapes_prose_but_keeps_math_segments():
    text = r"Scale by $\sqrt{d_k}$: 50% of d_model & more"
    assert rendering.tex_text(text) == r"Scale by $\sqrt{d_k}$: 50\% of $d_{\text{model}}$ \& more"


def test_md_text_escapes_emphasis_outside_math_only():
    assert rendering.md_text("a*b and d_model, $x_1 * y$") == r"a\*b and d\_model, $x_1 * y$"


def test_every_declared_unicode_character_gets_a_preamble_line():
    declarations = rendering.tex_unicode_declarations()
    for char in rendering.TEX_UNICODE:
        assert f"{{{ord(char):04X}}}" in declarations


# --- answers --------------------------------------------------------------------------------------


def test_tolerance_text_states_absolute_and_relative_bounds_or_exact():
    assert rendering.tolerance_text(AnswerPart("x", "number", 1.0, atol=0.005)) == "within ±0.005"
    assert rendering.tolerance_text(AnswerPart("x", "number", 1.0, rtol=0.01)) == "within ±1% of the value"
    assert rendering.tolerance_text(AnswerPart("x", "integer", 12)) == "exact"
    assert rendering.tolerance_text(AnswerPart("x", "number", 1.0)) == "exact"


def test_answer_digits_resolve_the_tolerance():
    assert rendering.answer_digits(AnswerPart("x", "number", 1.0, atol=0.005)) == 4
    assert rendering.answer_digits(AnswerPart("x", "number", 1.0, atol=0.5)) == 2
    assert rendering.answer_digits(AnswerPart("x", "number", 1.0)) == 4


@pytest.mark.parametrize("fmt, opener", [("md", "$$"), ("tex", r"\[")])
def test_matrix_answers_are_display_math_in_both_formats(fmt, opener):
    shown = rendering.answer_display(weights_part(), fmt)
    assert shown.startswith(opener) and r"\begin{bmatrix} 0.10 & 0.90 \\ 0.55 & 0.45 \end{bmatrix}" in shown


def test_answer_display_covers_every_answer_type():
    parts = {
        "number": AnswerPart("n", "number", 0.5, atol=0.01, exact="1/2"),
        "integer": AnswerPart("i", "integer", 4096),
        "expression": AnswerPart("e", "expression", "exp(2)/(1 + exp(2))", spec={"decimal": 0.8808}),
        "shape": AnswerPart("s", "shape", ["B", "L", "d_model"], spec={"dims": {"B": 2, "L": 5, "d_model": 8}}),
        "choice": AnswerPart("c", "choice", ["b"], spec={"options": [{"id": "b", "text": "scale by $\\sqrt{d_k}$", "why": ""}]}),
        "mask": AnswerPart("m", "mask", [[True, False], [True, True]], spec={"representation": "01"}),
        "term": AnswerPart("t", "term", ["softmax", "soft-max"]),
    }
    shown = {kind: rendering.answer_display(part, "tex") for kind, part in parts.items()}
    assert shown["number"] == r"$0.5$ (exactly \texttt{1/\penalty50{}2})"
    assert shown["integer"] == r"$4\,096$"
    assert r"\texttt{exp(2)/\penalty50{}(1 +\penalty50{} exp(2))}" in shown["expression"] and "0.8808" in shown["expression"]
    assert shown["shape"] == r"$(B, L, d_{\text{model}})$ $= (2, 5, 8)$"
    assert shown["choice"] == r"(b) scale by $\sqrt{d_k}$"
    assert r"\begin{bmatrix} 1 & 0 \\ 1 & 1 \end{bmatrix}" in shown["mask"]
    assert shown["term"].startswith(r"\texttt{softmax}") and "soft-max" in shown["term"]


# --- heatmaps -------------------------------------------------------------------------------------


def test_weights_parts_are_heatmaps_unless_the_spec_says_otherwise():
    assert rendering.is_heatmap(weights_part())
    assert not rendering.is_heatmap(weights_part(heatmap=False))
    other = AnswerPart("output", "matrix", [[1.0, 2.0]], spec={"heatmap": True})
    assert rendering.is_heatmap(other)
    assert not rendering.is_heatmap(AnswerPart("output", "matrix", [[1.0, 2.0]]))


def test_markdown_heatmap_is_a_table_whose_cells_carry_a_shade_growing_with_the_weight():
    table = rendering.heatmap_md([[0.1, 0.9], [0.55, 0.45]])
    lines = table.splitlines()
    assert lines[0].startswith("|") and lines[1].startswith("|---")
    assert lines[2] == "| 1 | · 0.1 | █ 0.9 |"
    assert lines[3] == "| 2 | ▒ 0.55 | ▒ 0.45 |"
    assert "Shading:" in table


def test_latex_heatmap_shades_cells_in_proportion_and_whitens_text_on_dark_cells():
    table = rendering.heatmap_tex([[0.1, 0.9]])
    assert r"\cellcolor{blue!7}0.1" in table
    assert r"\cellcolor{blue!63}\textcolor{white}{0.9}" in table
    assert table.startswith(r"\begin{tabular}{r|*{2}{c}}")


def test_heatmap_of_values_outside_zero_one_is_scaled_min_to_max():
    table = rendering.heatmap_text([[-2.0, 0.0, 2.0]])
    assert table.split() == ["·", "-2", "▒", "0", "█", "2"]


# --- environments ---------------------------------------------------------------------------------


def test_tex_document_environment_uses_parenthesis_delimiters_so_braces_stay_literal():
    env = rendering.document_environment("tex")
    template = env.from_string(r"\textbf{((( name | tex )))}((* if flag *)) {#x}((* endif *))((= note =))")
    assert template.render(name="a&b", flag=True) == r"\textbf{a\&b} {#x}"


def test_document_environment_is_strict_about_undefined_names(tmp_path):
    (tmp_path / "documents").mkdir()
    (tmp_path / "documents" / "worksheet.md.j2").write_text("{{ titel }}\n")
    with pytest.raises(ProblemgenError, match="titel"):
        rendering.render_document("worksheet", "md", {"title": "x"}, str(tmp_path))


def test_unknown_document_template_is_a_clear_error():
    with pytest.raises(ProblemgenError, match="no document template"):
        rendering.render_document("nonexistent", "md", {})


def test_fragment_rendering_is_strict_and_user_templates_override(tmp_path):
    problem = Problem("demo.thing", 1, 1, {}, "Demo", "demo", {"x": 3}, (), {})
    (tmp_path / "problems").mkdir()
    fragment = tmp_path / "problems" / "demo.thing.j2"
    fragment.write_text("{% block prompt %}x is {{ params.x }}{% endblock %}{% block solution %}{{ sol.y }}{% endblock %}")
    assert rendering.render_block(problem, "prompt", "md", str(tmp_path)) == "x is 3\n"
    with pytest.raises(ProblemgenError, match=r"demo\.thing\.j2, line 1 \(solution\): 'dict object' has no attribute 'y'"):
        rendering.render_block(problem, "solution", "md", str(tmp_path))


def test_blocks_rendered_from_one_context_are_the_blocks_rendered_alone(tmp_path):
    """A name set in the prompt stays there: the solution, rendered from the same context, cannot see it."""
    problem = Problem("demo.thing", 1, 1, {}, "Demo", "demo", {"x": 3}, (), {"y": 4})
    (tmp_path / "problems").mkdir()
    (tmp_path / "problems" / "demo.thing.j2").write_text(
        "{% set top = 1 %}{% block prompt %}{% set x = params.x * 2 %}x is {{ x }}{% endblock %}"
        "{% block solution %}{{ sol.y }} {{ x is defined }} {{ top is defined }}{% endblock %}")
    together = list(rendering.render_blocks(problem, ("prompt", "solution"), "md", str(tmp_path)))
    alone = [rendering.render_block(problem, block, "md", str(tmp_path)) for block in ("prompt", "solution")]
    assert together == alone == ["x is 6\n", "4 False False\n"]


def test_products_of_dimensions_are_typeset_as_products():
    from problemgen.documents.rendering import shape_latex, shape_text

    assert shape_latex(["B", "L", "h*d_k"]) == r"(B, L, h\,d_k)"
    assert shape_text(["B", "h*d_k"]) == "(B, h·d_k)"


def test_plain_text_symbols_in_prose_are_set_as_math_in_latex():
    """Misconception hints say "d_k"; in the PDF that must not print a literal underscore."""
    assert rendering.tex_text("no 1/√d_k scaling, W_O missing") == r"no 1/$\sqrt{d_{k}}$ scaling, $W_{O}$ missing"
    assert rendering.tex_text("answers_key.toml") == r"answers\_key.toml"


@pytest.mark.parametrize("prose, latex", [
    ("Q = X W_Qᵀ.", r"Q = X $W_{Q}^{\top}$."),
    ("(√d_k vs d_k)", r"($\sqrt{d_{k}}$ vs $d_{k}$)"),
    ("d_model / h", r"$d_{\text{model}}$ / h"),
    ("only n_kv_heads heads", r"only $n_{\text{kv\_heads}}$ heads"),
    ("−log softmax(z)_y", r"−log softmax(z)${}_{y}$"),
    ("q_i · k_j", r"$q_{i}$ · $k_{j}$"),
])
def test_symbols_with_roots_transposes_and_long_subscripts_become_math(prose, latex):
    assert rendering.tex_text(prose) == latex


def _catalogue_texts() -> list[str]:
    from problemgen.misconceptions.catalogue import CATALOGUE

    return [text for entry in CATALOGUE.values() for text in (entry.title, entry.hint)]


def test_no_catalogue_title_or_hint_prints_a_literal_underscore_in_latex():
    """The key's "Recognised mistakes" lines print catalogue text; d_k must not come out as d_k in roman."""
    for text in _catalogue_texts():
        prose = re.sub(r"\$[^$]*\$", "", rendering.tex_text(text))
        assert r"\_" not in prose, (text, rendering.tex_text(text))


def test_every_catalogue_title_and_hint_compiles_with_pdflatex():
    """Unicode (√ ∞ − · × ⊙ ᵀ ε …) and symbols in the catalogue must all be printable by pdflatex."""
    from problemgen.documents import latex

    if latex.pdflatex_path() is None:
        pytest.skip("pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
    body = "\n\n".join(rf"{{\small Recognised mistakes: {rendering.tex_text(text)}.\par}}" for text in _catalogue_texts())
    source = (
        "\\documentclass{article}\n\\usepackage[utf8]{inputenc}\n\\usepackage{amsmath,amssymb}\n"
        + rendering.tex_unicode_declarations() + "\\begin{document}\n\\raggedright\n" + body + "\n\\end{document}\n"
    )
    pdf, log = latex.compile_with_log(source, "catalogue")
    assert pdf.startswith(b"%PDF") and "Missing character" not in log


def test_key_shows_a_product_dimension_as_its_number_when_the_problem_gave_its_factors():
    part = AnswerPart("s", "shape", ["B", "L", "h*d_v"], spec={"dims": {"B": 2, "L": 5, "h": 8, "d_v": 64}})
    assert rendering.answer_display(part, "tex") == r"$(B, L, h\,d_v)$ $= (2, 5, 512)$"
    partial = AnswerPart("s", "shape", ["B", "h*d_v"], spec={"dims": {"B": 2, "h": 8}})
    assert rendering.answer_display(partial, "md") == r"$(B, h\,d_v)$ $= (2, 8\,d_v)$"


_FLOAT_CELL = st.one_of(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e17, max_value=1e17),
                        st.floats(allow_nan=False, allow_infinity=False),
                        st.sampled_from([0.0, -0.0, 1e-9, -1e-9, 0.99995, -0.00005, 1e15, 2.5, -0.5]),
                        st.builds(lambda n, e: n + e, st.integers(-1000, 1000),  # at the edges of rounding
                                  st.sampled_from([1e-9, -1e-9, 4.9e-5, -4.9e-5, 5e-5, -5e-5, 0.5, -0.5, 0.49999])))
_INT_CELL = st.one_of(st.integers(-10**6, 10**6), st.integers(-2**70, 2**70))


def _matrices(cell):
    return st.integers(1, 4).flatmap(lambda m: st.one_of(
        st.lists(cell, min_size=1, max_size=5),  # a vector: one row
        st.lists(st.lists(cell, min_size=m, max_size=m), min_size=1, max_size=4)))


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(_matrices(_FLOAT_CELL), _matrices(_INT_CELL), _matrices(st.one_of(_FLOAT_CELL, _INT_CELL))),
       digits=st.integers(1, 8))
def test_real_matrices_take_the_fast_paths_to_the_same_latex(value, digits):
    """Matrices of floats or of ints take direct paths; the text is the general path's (mixed ones take it)."""
    from problemgen.documents.rendering import _any_body, _rows

    general = rf"\begin{{bmatrix}} {_any_body(_rows(value), digits)} \end{{bmatrix}}"
    assert rendering.matrix_latex(value, digits) == general


_NAMES = st.sampled_from(["Q", "K", "S", "title", "items", "keys", "get", "values", "copy", "__class__", "__len__",
                          "pop", "missing", "_private", "0"])
_VALUES = st.one_of(st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2))


def _looked_up(value):
    """A comparable view of a jinja lookup: the value, a bound method's name, or the undefined name."""
    if isinstance(value, jinja2.Undefined):
        return ("undefined", value._undefined_name)
    return ("method", value.__name__) if callable(value) and hasattr(value, "__self__") else ("value", value)


@settings(max_examples=300, deadline=None)
@given(data=st.dictionaries(st.one_of(_NAMES, st.integers(0, 3)), _VALUES, max_size=6), name=_NAMES)
def test_data_environment_reads_dicts_as_jinja_does(data, name):
    """The dict fast path returns what jinja's own lookup returns: the key, a dict method of that name, or an
    undefined value naming the missing attribute; a dict subclass takes jinja's own path."""
    fast = rendering.DataEnvironment(undefined=jinja2.StrictUndefined)
    for obj in (data, type("Params", (dict,), {})(data)):
        assert _looked_up(fast.getattr(obj, name)) == _looked_up(jinja2.Environment.getattr(fast, obj, name))


def test_data_environment_renders_dict_attributes_keys_and_strict_undefined_like_jinja():
    source = "{{ params.Q }} {{ params['K'] }} {{ params.items() | list | length }} {{ p.title }}"
    context = {"params": {"Q": 1, "K": 2}, "p": {"title": "T"}}
    ours = rendering.DataEnvironment(undefined=jinja2.StrictUndefined)
    plain = jinja2.Environment(undefined=jinja2.StrictUndefined)
    assert ours.from_string(source).render(context) == plain.from_string(source).render(context) == "1 2 2 T"
    with pytest.raises(jinja2.UndefinedError, match="has no attribute 'R'"):
        ours.from_string("{{ params.R }}").render(context)


_MASK_CELL = st.one_of(st.booleans(), st.sampled_from([0, 1]))


@settings(max_examples=300, deadline=None)
@given(mask=st.one_of(st.lists(_MASK_CELL, min_size=1, max_size=5),
                      st.integers(1, 5).flatmap(lambda m: st.lists(st.lists(_MASK_CELL, min_size=m, max_size=m),
                                                                   min_size=1, max_size=5))),
       representation=st.sampled_from(["bool", "01", "additive"]), digits=st.integers(1, 8))
def test_masks_take_the_lookup_path_to_the_same_latex(mask, representation, digits):
    expected = rendering.matrix_latex(rendering.mask_values(mask, representation), digits)
    assert rendering.mask_latex(mask, representation, digits) == expected


def test_data_environment_templates_see_the_environment_globals_and_their_own():
    env = rendering.DataEnvironment(undefined=jinja2.StrictUndefined)
    env.globals["fmt"] = "md"
    template = env.from_string("{{ fmt }} {{ range(2) | list }} {{ extra }}", globals={"extra": 1})
    assert template.render() == "md [0, 1] 1"
    assert "extra" not in env.globals  # a template's own globals never reach the environment


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="a\n ░", max_size=40))
def test_blank_lines_collapse_as_the_repeated_replace_does(text):
    expected = text
    while "\n\n\n" in expected:
        expected = expected.replace("\n\n\n", "\n\n")
    assert rendering._collapse_blank_lines(text) == expected


def test_an_environment_is_one_object_however_it_is_asked_for():
    assert rendering.environment("text") is rendering.environment("text", None)
    assert rendering.environment("md") is rendering.environment("md", user_dir=None)
    assert rendering.document_environment("md") is rendering.document_environment("md", None)
