"""Every shipped question bank renders: Markdown and LaTeX always, PDF when pdflatex is installed."""

from __future__ import annotations

import re

import pytest

from problemgen import banks, latex, worksheet
from problemgen.worksheet import WorksheetJob

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


@pytest.mark.skipif(latex.pdflatex_path() is None, reason="pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)")
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_bank_compiles_to_pdf(path, tmp_path):
    out = tmp_path / "out"
    worksheet.write_worksheet(WorksheetJob(path, out, formats=("md", "pdf")))
    for name in ("worksheet.pdf", "answer_key.pdf"):
        assert (out / name).read_bytes().startswith(b"%PDF")


def latex_escaped(key: str) -> str:
    return re.sub(r"_", r"\\_", key)
