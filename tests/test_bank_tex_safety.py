"""Bank text cannot smuggle TeX that reads or writes files: math allow-list at validation, paranoid pdflatex."""

from __future__ import annotations

import textwrap

import pytest

from problemgen.documents import banks, latex, texmath

KIND = "norms.layer_norm"


def write_bank(tmp_path, body: str):
    path = tmp_path / "hostile.toml"
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


@pytest.mark.parametrize("math", [
    r"$\input{/etc/passwd}$", r"$\include{x}$", r"$\read16 to\x$", r"$\openin1=/etc/passwd$", r"$\write18{id}$",
    r"$\immediate\write18{id}$", r"$\def\x{1}$", r"$\let\a\b$", r"$\csname input\endcsname$", r"$\catcode`\^=0$",
    r"$\newcommand{\x}{1}$", r"$^^5cinput{/etc/passwd}$", r"$x % comment$", r"$\begin{filecontents}$",
    r"$\@input{x}$", r"$\string\input$",
])  # fmt: skip
def test_file_definition_and_token_list_commands_are_refused_in_math(math):
    assert texmath.forbidden(f"Scaling {math} here")


def test_the_maths_the_shipped_banks_use_is_allowed():
    for text in (r"Scaling by $\sqrt{d_k}$", r"$\frac{QK^\top}{\sqrt{d_k}}$", r"$d_{\text{model}} \times 4$",
                 r"$-\infty$ and $\ldots$", r"$\mathrm{softmax}(x)_i \ge 0$", r"$\gamma \cdot \beta$", r"$\{1, \ldots, n\}$",
                 r"100\% sure, $\log \sin \cos$"):  # fmt: skip
        assert texmath.forbidden(text) == [], text


def test_bank_validate_names_file_line_and_key_for_each_smuggled_command(tmp_path):
    path = write_bank(tmp_path, f"""
        title = "Attention"
        instructions = "Show work. $\\\\def\\\\x{{1}}$"

        [[problems]]
        kind = "{KIND}"
        title = "Norms $\\\\input{{/etc/passwd}}$"
    """)
    bank, issues = banks.check_bank(path)
    assert bank is None
    shown = [str(i) for i in issues]
    assert any("hostile.toml, line 2, key 'instructions'" in s and r"\def" in s for s in shown), shown
    assert any("hostile.toml, line 6, key 'title'" in s and r"\input" in s for s in shown), shown


@pytest.mark.skipif(latex.pdflatex_path() is None, reason="pdflatex not installed")
def test_pdflatex_cannot_read_a_file_outside_its_build_directory(tmp_path):
    """Even if such text reached pdflatex, paranoid mode refuses absolute paths: the file is not there for it."""
    secret = tmp_path / "secret.tex"
    secret.write_text("SECRETCONTENT\n")
    source = ("\\documentclass{article}\n\\begin{document}\n"
              f"\\IfFileExists{{{secret}}}{{\\errmessage{{LEAKED}}}}{{}}\n"
              f"\\newread\\r\\openin\\r={secret} \\ifeof\\r\\else\\errmessage{{LEAKED}}\\fi\n"
              "x\n\\end{document}\n")  # fmt: skip
    assert latex.compile_pdf(source, "doc").startswith(b"%PDF")


@pytest.mark.skipif(latex.pdflatex_path() is None, reason="pdflatex not installed")
def test_pdflatex_cannot_write_outside_its_build_directory(tmp_path):
    target = tmp_path / "written.txt"
    source = ("\\documentclass{article}\n\\newwrite\\out\n\\immediate\\openout\\out=" + str(target) + "\n"
              "\\immediate\\write\\out{x}\n\\immediate\\closeout\\out\n\\begin{document}x\\end{document}\n")  # fmt: skip
    try:
        latex.compile_pdf(source, "doc")
    except Exception:
        pass
    assert not target.exists()
