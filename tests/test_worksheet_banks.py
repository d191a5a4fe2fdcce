"""Every shipped question bank renders: Markdown and LaTeX always, PDF when pdflatex is installed."""

from __future__ import annotations

import re

import pytest

from problemgen.documents import banks, latex, worksheet
from problemgen.documents.worksheet import WorksheetJob

SHIPPED = banks.shipped_banks()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_bank_renders_markdown_and_latex_with_every_part_answered_in_the_key(path, tmp_path):
    out = tmp_path / "out"
    variant = worksheet.write_worksheet(WorksheetJob(path, out, formats=("md", "tex")))
    key_md = (out / "answer_key.md").read_text(encoding="utf-8")
    key_tex = (out / "answer_key.tex").read_text(encoding="utf-8")
    for placed in variant.problems:
        for part in placed.problem.parts:
            assert f"`{placed.id}.{part.key}`" in key_md
            assert f"\\texttt{{{placed.id}.{latex_escaped(part.key)}}}" in key_tex
    sheet = (out / "worksheet.md").read_text(encoding="utf-8")
    assert sheet.count("\n## Problem ") == len(variant.problems)
    assert "{{" not in sheet + key_md and "(((" not in key_tex  # no template syntax leaked


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_bank_key_sheet_scores_full_marks_and_the_blank_sheet_none(path, tmp_path):
    from problemgen.sheets.grading import grade_sheet
    from problemgen.model.variantfile import WorksheetVariant

    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(path, out))
    variant = WorksheetVariant.load(out / "variant.json")
    key = grade_sheet(variant, out / "key.toml")
    assert key.score == 1.0, [r for r in key.results if not r.passed]
    assert grade_sheet(variant, out / "answers.toml").score == 0.0


@pytest.mark.slow
@pytest.mark.skipif(latex.pdflatex_path() is None, reason="pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_bank_compiles_to_pdf(path, tmp_path):
    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(path, out, formats=("md", "pdf")))
    for name in ("worksheet.pdf", "answer_key.pdf"):
        assert (out / name).read_bytes().startswith(b"%PDF")


def latex_escaped(key: str) -> str:
    return re.sub(r"_", r"\\_", key)


def every_kind_bank(tmp_path):
    """A bank holding every registered kind that has a fragment, at every difficulty it offers.

    (A kind without a fragment is the registry contract's concern; here we check what reaches LaTeX.)
    """
    from problemgen.model.registry import all_kinds
    from problemgen.resources import templates_dir

    entries = [
        f'[[problems]]\nkind = "{spec.name}"\ndifficulty = {level}\n'
        for spec in all_kinds() if (templates_dir() / "problems" / f"{spec.name}.j2").exists()
        for level in spec.difficulties
    ]
    path = tmp_path / "every_kind.toml"
    path.write_text('title = "Every kind"\nseed = 1\n\n' + "\n".join(entries), encoding="utf-8")
    return path


def test_every_kind_renders_to_latex_using_only_characters_pdflatex_knows(tmp_path):
    from problemgen.documents.rendering import TEX_UNICODE

    handled_by_inputenc = set("–—‘’“”éèàüöäÉ×²³¹·")
    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(every_kind_bank(tmp_path), out, formats=("tex",)))
    for name in ("worksheet.tex", "answer_key.tex"):
        text = (out / name).read_text(encoding="utf-8")
        unknown = {c for c in text if ord(c) > 127} - set(TEX_UNICODE) - handled_by_inputenc
        assert not unknown, f"{name}: characters pdflatex cannot print: {sorted(unknown)}"


@pytest.mark.slow
@pytest.mark.skipif(latex.pdflatex_path() is None, reason="pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
def test_every_kind_at_every_difficulty_compiles(tmp_path):
    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(every_kind_bank(tmp_path), out, formats=("pdf",)))
    for name in ("worksheet.pdf", "answer_key.pdf"):
        assert (out / name).read_bytes().startswith(b"%PDF")


@pytest.mark.slow
@pytest.mark.skipif(latex.pdflatex_path() is None, reason="pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
@pytest.mark.parametrize("seed", [7, 11])  # 11 once overflowed by 21pt
def test_answer_keys_of_every_kind_fit_the_page(tmp_path, seed):
    """Whole documents, fragments included: no line of a worksheet or key may be > 3pt too wide.

    (tests/test_worksheet_layout.py isolates the wrapper's own lines; this one is the product as printed.)
    """
    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(every_kind_bank(tmp_path), out, seed=seed, formats=("tex",)))
    for name in ("worksheet", "answer_key"):
        _, log = latex.compile_with_log((out / f"{name}.tex").read_text(encoding="utf-8"), name)
        widths = [box.points for box in latex.overfull_boxes(log)]
        assert not [w for w in widths if w > 3], (name, widths)


def test_every_kind_renders_markdown_math_that_github_and_katex_understand(tmp_path):
    """Only $…$ and $$…$$ delimiters (GitHub ignores \\( \\) and \\[ \\]), balanced in every paragraph."""
    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(every_kind_bank(tmp_path), out))
    for name in ("worksheet.md", "answer_key.md"):
        text = (out / name).read_text(encoding="utf-8")
        assert "\\[" not in text.replace("\\\\[", "") and "\\(" not in text, name
        for paragraph in text.split("\n\n"):
            dollars = len(re.findall(r"(?<!\\)\$", paragraph))
            assert dollars % 2 == 0, f"{name}: unbalanced $ in {paragraph[:120]!r}"
