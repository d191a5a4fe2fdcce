"""The variant contract over every registered kind, and tests that the checker itself catches bugs.

``problemgen check`` and this file run the same ``selfcheck.check_kind``: the key scores full marks,
a perturbed answer scores less, garbage is invalid, every listed mistake is graded wrong and named,
variants are deterministic and distinct, and every fragment renders in md, tex and text.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from dataclasses import replace

import pytest

from problemgen import selfcheck
from problemgen.model import registry
from problemgen.model.core import AnswerPart, Mistake, values_match
from problemgen.misconceptions.catalogue import mistake

SEEDS = 50
KINDS = [spec.name for spec in registry.all_kinds()]


@pytest.mark.parametrize("kind", KINDS)
def test_kind_keeps_the_variant_contract(kind):
    failures = selfcheck.check_kind(kind, SEEDS)
    assert not failures, f"{len(failures)} failure(s):\n" + "\n".join(str(f) for f in failures[:25])


@pytest.mark.parametrize("kind", KINDS)
def test_kind_has_enough_distinct_answer_keys_that_it_cannot_be_learned_by_heart(kind):
    from problemgen import variety

    measured = variety.measure(kind)
    assert measured.ok, str(measured)


def test_the_variety_threshold_depends_on_the_answer_type_and_a_stated_small_space():
    from problemgen import variety
    from problemgen.model.core import Problem

    def problem(*parts):
        return Problem("x.y", 0, 2, {}, "t", "x", {}, parts, {})

    assert variety.category(problem(_NUMBER), "")[1] == variety.NUMERIC_MIN
    assert variety.category(problem(_NUMBER), "Small answer space: fixed by L.")[1] == variety.SMALL_MIN
    assert variety.category(problem(_SHAPE), "")[1] == variety.SHAPE_MIN
    assert variety.category(problem(_SHAPE, _MASK), "")[1] == variety.NUMERIC_MIN
    assert variety.category(problem(_CHOICE), "")[1] == variety.CHOICE_MIN


def test_every_topic_has_kinds():
    assert {spec.topic for spec in registry.all_kinds()} >= {"attention", "scaling", "masks", "multihead", "shapes"}


# ------------------------------------------------------------------- the checker catches what it should

_NUMBER = AnswerPart(key="w", type="number", value=0.25, atol=0.005, mistakes=(mistake("no_scaling", 0.5),))
_MATRIX = AnswerPart(key="m", type="matrix", value=[[0.5, 0.5], [0.3, 0.7]], atol=0.005)
_MASK = AnswerPart(key="k", type="mask", value=[[True, False], [True, True]], spec={"representation": "01"})
_SHAPE = AnswerPart(key="s", type="shape", value=["B", "h", "L", "L"], spec={"dims": {"B": 2, "h": 4, "L": 5}})
_CHOICE = AnswerPart(key="c", type="choice", value=["b"], spec={"multiple": False, "options": [
    {"id": "a", "text": "one", "why": "no"}, {"id": "b", "text": "two", "why": "yes"}]})


@pytest.mark.parametrize("part", [_NUMBER, _MATRIX, _MASK, _SHAPE, _CHOICE], ids=lambda p: p.type)
def test_perturbed_answers_fall_outside_the_key(part):
    assert not values_match(part, selfcheck.perturb(part).value)


@pytest.mark.parametrize("part", [_NUMBER, _MATRIX, _MASK, _SHAPE, _CHOICE], ids=lambda p: p.type)
def test_well_formed_parts_pass_the_part_checks(part):
    assert selfcheck.check_part(part) == []


def test_a_mistake_equal_to_the_key_is_reported():
    part = replace(_NUMBER, mistakes=(mistake("no_scaling", 0.251),))
    assert any("cannot be told from the key" in p for p in selfcheck.check_part(part))


def test_an_uncatalogued_mistake_tag_is_reported():
    part = replace(_NUMBER, mistakes=(Mistake("forgot_everything", 0.9, "hint"),))
    assert any("not in the catalogue" in p for p in selfcheck.check_part(part))


def test_a_choice_key_outside_the_options_and_a_missing_why_are_reported():
    options = [{"id": "a", "text": "one", "why": ""}, {"id": "b", "text": "two", "why": "yes"}]
    part = replace(_CHOICE, value=["z"], spec={"multiple": False, "options": options})
    found = " | ".join(selfcheck._check_spec(part))
    assert "not among the options" in found and "needs a 'why'" in found


def test_prose_outside_math_is_linted_for_latex_specials_and_markdown():
    assert selfcheck._prose_problems("the d_k value") == ["_"]
    assert selfcheck._prose_problems("**bold** claim") == ["Markdown-only markup"]
    assert selfcheck._prose_problems("plain words, with (brackets) and 3/4.") == []


def test_garbage_keeps_the_answers_form():
    assert selfcheck.garbage_like([[0.5, 1], [2, 3]]) == [["@@", "@@"], ["@@", "@@"]]
    assert selfcheck.garbage_like(7) == "@@"


def test_repeated_variants_are_reported_as_not_distinct():
    same = {1: ["a"] * 10, 2: [str(i) for i in range(10)]}
    failures = selfcheck._distinctness("x.y", same)
    assert len(failures) == 1 and "difficulty 1" in failures[0].detail


def test_check_kinds_filters_by_topic():
    results = selfcheck.check_kinds(None, 2, topic="scaling")
    assert set(results) == {spec.name for spec in registry.all_kinds("scaling")}


def test_large_samples_need_a_space_of_25_variants_not_half_the_seeds():
    cycle = lambda n: [str(i % n) for i in range(400)]  # noqa: E731
    assert selfcheck._distinctness("x.y", {1: cycle(30)}) == []
    assert len(selfcheck._distinctness("x.y", {1: cycle(20)})) == 1


# ---------------------------------------------------- a prompt's format example never gives the answer away

_OWN_TOPICS = ("attention", "scaling", "masks", "multihead", "shapes")
_ALL_TOPICS = sorted({spec.topic for spec in registry.all_kinds()})
_EXAMPLE_LEAD = re.compile(r"(?:such as|for example|e\.g\.)\s+")
_ALTERNATIVE = re.compile(r"\s+or\s+")


def _one_example(text: str) -> str:
    """The example at the start of ``text``: up to a space, comma or semicolon outside brackets."""
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0 or (depth == 0 and (char.isspace() or char in ",;")):
            return text[:index]
    return text


def _looks_like_an_answer(example: str) -> bool:
    head = example.lstrip("-")
    return bool(head) and (head[0].isdigit() or head[0] == "(" or head[:3] in ("exp", "sqr", "log", "sin", "cos"))


def _format_examples(prompt: str) -> list[str]:
    """The example answers a prompt shows ("such as 1/sqrt(5)", "e.g. (100, 20)", "sin(2/3) or cos(3/10)")."""
    found = []
    for match in _EXAMPLE_LEAD.finditer(prompt):
        text = prompt[match.end():]
        while True:
            raw = _one_example(text)
            example = raw.rstrip(".:").replace("$", "")
            if not _looks_like_an_answer(example):
                break
            found.append(example)
            alternative = _ALTERNATIVE.match(text, len(raw))
            if alternative is None:
                break
            text = text[alternative.end():]
    return found


def _example_value(example: str):
    """A number or a tuple of numbers for a format example; None if it is neither."""
    import sympy  # trusted template text, never student input

    try:
        value = sympy.sympify(example)
    except (sympy.SympifyError, SyntaxError, TypeError):
        return None
    if isinstance(value, tuple):
        return tuple(float(v) for v in value) if all(v.is_number for v in value) else None
    return float(value) if value.is_number else None


def _key_values(part) -> list:
    """Every number a part's key holds, plus its whole shape as a tuple of numbers."""
    if part.type == "shape":
        dims = part.spec.get("dims", {})
        sizes = []
        for dim in part.value:
            size = 1
            for factor in str(dim).split("*"):
                size *= int(factor) if factor.isdigit() else dims.get(factor, -1)
            sizes.append(float(size))
        return [tuple(sizes)]
    flat, stack = [], [part.value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            flat.append(float(item))
    return flat


@pytest.mark.slow
@pytest.mark.parametrize("topic", _ALL_TOPICS)
def test_a_format_example_in_the_prompt_never_equals_the_key(topic):
    from problemgen.documents.rendering import render_block

    clashes = []
    for spec in registry.all_kinds(topic):
        for difficulty in spec.difficulties:
            for seed in range(120):
                problem = registry.generate(spec.name, seed, difficulty)
                examples = [_example_value(e) for e in _format_examples(render_block(problem, "prompt", "md"))]
                for part in problem.parts:
                    for key in _key_values(part):
                        for example in examples:
                            same = (example == key) if isinstance(key, tuple) else (
                                isinstance(example, float) and abs(example - key) < 1e-9)
                            if same:
                                clashes.append(f"{problem.variant_id}: example {example} equals the key of {part.key}")
    assert not clashes, f"{len(clashes)} clash(es):\n" + "\n".join(clashes[:25])


def test_format_examples_are_found_and_evaluated():
    prompt = ("exactly (for example exp(1)/(exp(1) + exp(2))) or e.g. (100, 20): or such as 1/sqrt(5),"
              " (for example -log(3/20)), such as sin(3) or cos(3/10). Such as the key or a fraction.")
    examples = _format_examples(prompt)
    assert examples == ["exp(1)/(exp(1) + exp(2))", "(100, 20)", "1/sqrt(5)", "-log(3/20)", "sin(3)", "cos(3/10)"]
    assert _example_value(examples[1]) == (100.0, 20.0)
    assert _example_value(examples[2]) == pytest.approx(5 ** -0.5)
    assert _example_value(examples[3]) == pytest.approx(-math.log(3 / 20))


# ---------------------------------------------------------------- the widest variants fit the printed page

_PAGE = r"""\documentclass[11pt]{article}
\usepackage[utf8]{inputenc}
\usepackage[margin=2.2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage{parskip}
%s
\begin{document}
%s
\end{document}
"""
_OVERFULL = re.compile(r"Overfull \\hbox \((\d+\.\d+)pt too wide\) (?:in paragraph at lines (\d+)|detected at line (\d+))")


_INLINE_MATH = re.compile(r"(?<![$\\])\$([^$]+)\$")
_BREAK_POINT = re.compile(r"\s(?:=|\+|-|\\approx|\\times|\\to)\s")
_SEARCHED_SEEDS = 100
_SEARCHED_TOPICS = ("params", "memory", "complexity", "norms", "ffn", "positional", "objective", "shapes")
"""Topics typeset at their widest searched seeds; the others (and concepts) at fixed seeds."""


def _longest_unbreakable(tex: str) -> int:
    """Characters in the longest stretch of inline math TeX cannot break: between =, +, - or × at brace depth 0.

    A rough stand-in for typeset width: a bmatrix in running text is one unbreakable box, and a long
    chain of equalities may break only at its relations and operators.
    """
    longest = 0
    for math_text in _INLINE_MATH.findall(tex):
        depth, start = 0, 0
        pieces = []
        for index, char in enumerate(math_text):
            depth += {"{": 1, "}": -1}.get(char, 0)
            split = _BREAK_POINT.match(math_text, index) if depth == 0 and index >= start else None
            if split:
                pieces.append(math_text[start:index])
                start = split.end()
        pieces.append(math_text[start:])
        for piece in pieces:
            visible = re.sub(r"\\(?:begin|end)\{bmatrix\}|\\text\{|\\mathrm\{|\\[a-zA-Z]+|[{}]", "", piece)
            longest = max(longest, len(visible))
    return longest


def _widest_variants(spec) -> list[tuple[int, int]]:
    """(difficulty, seed) pairs to typeset for a kind: seed 0 of every difficulty, plus the two seeds among
    the first 100 of each difficulty with the longest unbreakable inline math (the likeliest to overflow)."""
    from problemgen.documents.rendering import render_problem

    chosen = []
    for difficulty in spec.difficulties:
        widths = {seed: _longest_unbreakable(render_problem(registry.generate(spec.name, seed, difficulty), "tex",
                                                            solution=True))
                  for seed in range(_SEARCHED_SEEDS)}
        widest = sorted(widths, key=lambda seed: (-widths[seed], seed))[:2]
        chosen += [(difficulty, seed) for seed in sorted({0, *widest})]
    return chosen


def test_the_widest_variant_search_measures_unbreakable_math():
    narrow, wide = r"\begin{bmatrix} 1 & 2 \end{bmatrix}", r"\begin{bmatrix} 1 & 2 & 3 & 4 \end{bmatrix}"
    assert _longest_unbreakable(f"text $x = {wide}$") > _longest_unbreakable(f"text $x = {narrow}$") > 3
    assert _longest_unbreakable("$a + bb + c = d$ and $$x = y + z$$") == 2
    assert _longest_unbreakable("no math at all") == 0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_prompts_and_solutions_of_the_widest_variants_fit_the_page(tmp_path):
    """Matrices side by side on one display line overflow the margin at d_k = 8 or 9; they must wrap."""
    from problemgen.documents.rendering import render_problem, tex_unicode_declarations

    blocks, owner = [], {}
    for topic in _ALL_TOPICS:
        for spec in registry.all_kinds(topic):
            searched = topic in _SEARCHED_TOPICS
            for difficulty, seed in _widest_variants(spec) if searched else ((2, 0), (3, 0), (3, 1), (3, 2)):
                problem = registry.generate(spec.name, seed, difficulty)
                blocks.append(render_problem(problem, "tex", solution=True) + "\n\\clearpage\n")
                owner[len(blocks)] = problem.variant_id
    body = "".join(blocks)
    (tmp_path / "doc.tex").write_text(_PAGE % (tex_unicode_declarations(), body), encoding="utf-8")
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-no-shell-escape", "doc.tex"], cwd=tmp_path,
                   capture_output=True, timeout=120, check=False)
    log = (tmp_path / "doc.log").read_text(errors="replace")
    lines = (tmp_path / "doc.tex").read_text(encoding="utf-8").split("\n")
    too_wide = []
    for match in _OVERFULL.finditer(log):
        line = int(match.group(2) or match.group(3))
        page = "\n".join(lines[:line]).count("\\clearpage") + 1
        if float(match.group(1)) > 3:
            too_wide.append(f"{owner.get(page, '?')}: {match.group(1)}pt at '{lines[line - 1][:60]}'")
    assert "Output written" in log, "pdflatex produced no PDF"
    assert not too_wide, "\n".join(too_wide)
