"""The LaTeX document wrappers keep every line on the page.

Answers in the key are typeset by the wrapper (``answer_display`` and ``documents/*.tex.j2``), not by
the problem fragments: long exact forms and lists of accepted spellings are typewriter text, which can
neither hyphenate nor stretch, so a justified line holding one runs into the margin. These tests compile
keys and worksheets and read pdflatex's "Overfull \\hbox" reports. The fragments are replaced by a
one-word stub (through the ``--templates`` override) so that every overflow found is the wrapper's;
the fragments' own widths are checked by the contract tests.
"""

from __future__ import annotations

import pytest

from problemgen.documents import latex, worksheet
from problemgen.model.core import AnswerPart, Problem
from problemgen.misconceptions.catalogue import mistake
from problemgen.model.variantfile import SheetProblem, WorksheetVariant
from problemgen.documents.worksheet import DocumentRenderer, WorksheetJob

pytestmark = pytest.mark.skipif(
    latex.pdflatex_path() is None,
    reason="pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)",
)

TOLERATED_POINTS = 3.0
"""Overfull lines up to this width are invisible in print; anything wider runs into the margin."""

STUB = "{% block prompt %}Prompt.{% endblock %}\n{% block solution %}Solution.{% endblock %}\n"


def stub_fragments(root) -> str:
    """A user template directory in which every kind's fragment prints one word."""
    from problemgen.model.registry import all_kinds

    (root / "problems").mkdir(parents=True)
    for spec in all_kinds():
        (root / "problems" / f"{spec.name}.j2").write_text(STUB, encoding="utf-8")
    return str(root)


def every_kind_bank(path, copies: int) -> str:
    """Every registered kind at every difficulty it offers, ``copies`` seeds of each."""
    from problemgen.model.registry import all_kinds

    entries = [
        f'[[problems]]\nkind = "{spec.name}"\ndifficulty = {level}\ncount = {copies}\n'
        for spec in all_kinds() for level in spec.difficulties
    ]
    path.write_text('title = "Every kind"\nseed = 3\n\n' + "\n".join(entries), encoding="utf-8")
    return str(path)


def too_wide(tex: str, name: str) -> list[tuple[float, str]]:
    """(width, source lines) of every overfull line wider than tolerated."""
    _, log = latex.compile_with_log(tex, name)
    lines = tex.splitlines()
    return [
        (box.points, " / ".join(lines[box.first_line - 1 : box.last_line])[:300])
        for box in latex.overfull_boxes(log) if box.points > TOLERATED_POINTS
    ]


def test_overfull_boxes_are_read_from_the_log_with_their_widths_and_source_lines():
    log = (
        "Overfull \\hbox (41.02444pt too wide) in paragraph at lines 1577--1578\n"
        "[]\\OT1/cmtt/m/n/10.95 causal mask\n"
        "Overfull \\hbox (2.5pt too wide) detected at line 12\n"
        "Underfull \\hbox (badness 10000) in paragraph at lines 3--4\n"
    )
    assert latex.overfull_boxes(log) == [latex.Overfull(41.02444, 1577, 1578), latex.Overfull(2.5, 12, 12)]


@pytest.mark.slow
def test_every_kind_answer_key_and_worksheet_wrapper_lines_fit_the_page(tmp_path):
    """Each kind at d1–d3, three seeds each: answers, labels, mistakes and headings stay on the page."""
    out = tmp_path / "out"
    job = WorksheetJob(every_kind_bank(tmp_path / "bank.toml", copies=3), out, formats=("tex",),
                       templates=stub_fragments(tmp_path / "templates"))
    worksheet.write_worksheet(job)
    for name in ("answer_key", "worksheet"):
        assert too_wide((out / f"{name}.tex").read_text(encoding="utf-8"), name) == []


def synthetic_variant() -> WorksheetVariant:
    """One problem holding the widest answers seen in real keys (scaling.saturation and
    objective.cross_entropy at d3 print exact forms like these), repeated so each meets the margin."""
    long_exact = ("exp(15*sqrt(2)/16)/(exp(-11*sqrt(2)/16) + exp(-9*sqrt(2)/16) + exp(-sqrt(2)/8) + "
                  "exp(3*sqrt(2)/16) + exp(sqrt(2)/4) + exp(15*sqrt(2)/16))")
    long_sum = ("((log(exp(2) + exp(-2) + exp(0)) - (-2)) + (log(exp(1) + exp(0) + exp(-1)) - (-1)) + "
                "(log(exp(3) + exp(1) + exp(0)) - (1)))/3")
    parts = (
        AnswerPart("weight", "number", 0.4614, label="the weight on key 1, exactly or to 4 decimals",
                   atol=0.0005, exact=long_exact,
                   mistakes=(mistake("no_scaling", 0.5), mistake("scale_by_dk", 0.4), mistake("scale_by_d_model", 0.3))),
        AnswerPart("term1", "term", ["causal mask", "causal", "look-ahead mask", "lookahead mask", "triangular mask",
                                     "autoregressive mask", "future mask", "subsequent mask", "no-peek mask"],
                   label="the term for question 1"),
        AnswerPart("loss", "number", 1.4076, label="the mean loss", atol=0.0005, exact=long_sum),
        AnswerPart("expr", "expression", long_exact.replace(" ", ""), label="the exact weight",
                   atol=0.0005, spec={"decimal": 0.4614, "allow_decimal": True}),
        AnswerPart("scaled_variance_of_the_scores", "number", 1.0,
                   label="the variance of q·k/√d_k after scaling by the square root of the key width"),
    )
    problem = Problem(kind="scaling.saturation", seed=1, difficulty=3, overrides={},
                      title="Tracing shapes through batched multi-head self-attention with a long title",
                      topic="scaling", params={}, parts=parts, solution={})
    placed = tuple(SheetProblem(id=f"p{i}", points=1, problem=problem) for i in (1, 12, 123))
    return WorksheetVariant(variant_id="layout-s1", title="Layout", bank="layout", seed=1, problems=placed)


def test_long_exact_forms_accepted_spellings_and_answer_lines_stay_on_the_page(tmp_path):
    """The reviewer's cases: a 54pt exact form, a 41pt 'also accepted' list, a 17pt 'Answer under' line."""
    files = DocumentRenderer(stub_fragments(tmp_path / "templates")).documents(synthetic_variant(), ("tex",))
    for name in ("answer_key", "worksheet"):
        assert too_wide(files[f"{name}.tex"].decode("utf-8"), name) == []


@pytest.mark.slow
@pytest.mark.parametrize("bank", [p.stem for p in __import__("problemgen.documents.banks", fromlist=["x"]).shipped_banks()])
def test_every_shipped_bank_compiles_cleanly_with_each_problem_statement_on_one_page(bank, tmp_path):
    """Whole worksheets and keys of every shipped bank: no TeX error, no line into the margin, no problem
    statement taller than a page (it is one unbreakable box, so a break inside one cannot happen)."""
    import re

    out = tmp_path / bank
    worksheet.write_worksheet(WorksheetJob(bank, out, formats=("tex",)))
    for name in ("worksheet", "answer_key"):
        source = (out / f"{name}.tex").read_text(encoding="utf-8")
        statements = source.count(r"\begin{problem}")
        assert statements == source.count(r"\section*{\raggedright Problem") > 0  # every statement boxed
        _, log = latex.compile_with_log(source, name)
        assert not re.search(r"^! ", log, re.M)
        assert "Overfull \\vbox" not in log, f"{bank} {name}: a problem statement is taller than a page"
        wide = [box for box in latex.overfull_boxes(log) if box.points > TOLERATED_POINTS]
        assert wide == [], f"{bank} {name}: lines into the margin at {wide}"
        assert "\\^{}" not in source  # "10^9" is typeset as a power, not a stray accent
