"""pdflatex compile: success, first-error reporting, reproducible bytes, no shell escape, install hint."""

from __future__ import annotations

import pytest

from problemgen.documents import latex
from problemgen.model.core import ProblemgenError

needs_pdflatex = pytest.mark.skipif(
    latex.pdflatex_path() is None,
    reason="pdflatex not installed (apt-get install texlive-latex-base texlive-latex-recommended)",
)

MINIMAL = "\\documentclass{article}\n\\begin{document}\nHello $x^2$.\n\\end{document}\n"


def test_missing_pdflatex_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(latex, "pdflatex_path", lambda: None)
    with pytest.raises(ProblemgenError, match="apt-get install texlive-latex-base texlive-latex-recommended"):
        latex.compile_pdf(MINIMAL, "doc")


def test_document_names_are_restricted_to_plain_file_stems():
    with pytest.raises(ProblemgenError, match="invalid document name"):
        latex.compile_pdf(MINIMAL, "../escape")


def test_first_error_extracts_the_bang_line_and_its_source_line():
    log = "noise\n! Undefined control sequence.\n<argument> x\nl.7 \\foo\n   \nmore\n"
    assert latex._first_error(log) == "Undefined control sequence. l.7 \\foo"


@needs_pdflatex
def test_compile_returns_a_pdf():
    assert latex.compile_pdf(MINIMAL, "doc").startswith(b"%PDF")


@needs_pdflatex
def test_same_source_gives_the_same_pdf_bytes():
    assert latex.compile_pdf(MINIMAL, "doc") == latex.compile_pdf(MINIMAL, "doc")


@needs_pdflatex
def test_a_tex_error_is_reported_with_its_message_and_line():
    broken = "\\documentclass{article}\n\\begin{document}\n\\undefinedmacro\n\\end{document}\n"
    with pytest.raises(ProblemgenError, match=r"pdflatex failed on doc\.tex: Undefined control sequence\. l\.3"):
        latex.compile_pdf(broken, "doc")


@needs_pdflatex
def test_shell_escape_is_fully_disabled_not_just_restricted():
    # \pdfshellescape is 0 when disabled, 2 in TeX Live's default restricted mode, 1 when enabled
    source = (
        "\\documentclass{article}\n\\begin{document}\n"
        "\\ifnum\\pdfshellescape=0 ok\\else\\errmessage{shell escape is on}\\fi\n\\end{document}\n"
    )
    assert latex.compile_pdf(source, "doc").startswith(b"%PDF")
