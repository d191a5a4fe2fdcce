"""The format-neutral LMS model: which blanks each answer type becomes, tolerances, mistakes, HTML, pools."""

import re
from dataclasses import replace
from pathlib import Path

import pytest

from problemgen.answers import types
from problemgen.documents.markdown_html import markdown_html
from problemgen.documents.rendering import md_text
from problemgen.exports.lms import (
    BLANKS,
    blanks_of,
    build_export,
    fragment_html,
    lms_options,
    plain_text,
    preview_markdown,
    question_of,
    shape_spellings,
    text_html,
)
from problemgen.model.core import AnswerPart, Mistake, Problem
from problemgen.model.registry import generate

BANK = "question_banks/attention_basics.toml"


def _problem(*parts: AnswerPart, kind="attention.scores") -> Problem:
    return Problem(kind, 7, 1, {}, "A title", "topic", {}, tuple(parts), {})


def test_a_number_is_one_numerical_blank_with_the_parts_absolute_tolerance():
    part = AnswerPart("score", "number", 2.5, label="the score", rtol=0.01, atol=0.001)
    (blank,) = blanks_of(_problem(part))
    assert (blank.kind, blank.value, blank.integer, blank.points) == ("numerical", 2.5, False, 1.0)
    assert blank.tolerance == pytest.approx(0.001 + 0.01 * 2.5)


def test_an_integer_is_exact():
    (blank,) = blanks_of(_problem(AnswerPart("count", "integer", 12, atol=5)))
    assert blank.integer and blank.tolerance == 0.0 and blank.value == 12.0


def test_mistakes_within_the_tolerance_are_left_out_and_duplicates_kept_once():
    part = AnswerPart("x", "number", 1.0, atol=0.01, mistakes=(
        Mistake("near", 1.005, "too near to tell"), Mistake("far", 2.0, "doubled $x$"), Mistake("again", 2.0, "dup")))
    (blank,) = blanks_of(_problem(part))
    assert [(m.name, m.value) for m in blank.mistakes] == [("far", 2.0)]
    assert blank.mistakes[0].feedback == "doubled \\(x\\)"


def test_a_matrix_is_one_blank_per_entry_row_major_with_per_entry_mistakes():
    part = AnswerPart("A", "matrix", [[1.0, 2.0], [3.0, 4.0]], label="$A$", weight=2, atol=0.1,
                      mistakes=(Mistake("swap", [[1.0, 3.0], [2.0, 4.0]], "transposed"),
                                Mistake("odd_shape", [1.0, 2.0, 3.0], "wrong shape")))
    other = AnswerPart("n", "integer", 3)
    blanks = blanks_of(_problem(part, other))
    assert [b.id for b in blanks] == ["A_r0_c0", "A_r0_c1", "A_r1_c0", "A_r1_c1", "n"]
    assert [b.value for b in blanks[:4]] == [1.0, 2.0, 3.0, 4.0]
    assert [[m.value for m in b.mistakes] for b in blanks[:4]] == [[], [3.0], [2.0], []]
    assert blanks[1].label == "\\(A\\) [1, 2]" and blanks[1].part_label == "\\(A\\)"
    assert [(b.part, b.cell) for b in blanks] == [("A", (0, 0)), ("A", (0, 1)), ("A", (1, 0)), ("A", (1, 1)), ("n", None)]
    assert sum(b.points for b in blanks) == pytest.approx(1.0)
    assert blanks[0].points == pytest.approx(2 / 3 / 4) and blanks[4].points == pytest.approx(1 / 3)


def test_a_vector_is_one_blank_per_entry():
    blanks = blanks_of(_problem(AnswerPart("v", "matrix", [0.5, 0.25], atol=0.01)))
    assert [b.id for b in blanks] == ["v_c0", "v_c1"]


def test_a_choice_keeps_its_options_explanations_as_feedback():
    part = AnswerPart("pick", "choice", ["b"], spec={"multiple": False, "options": [
        {"id": "a", "text": "$QK^T$", "why": "Not scaled"}, {"id": "b", "text": "scaled", "why": ""}]},
        mistakes=(Mistake("no_scale", ["a"], "forgot the scale"),))
    (blank,) = blanks_of(_problem(part))
    assert [(o.id, o.correct, o.feedback) for o in blank.options] == [("a", False, "Not scaled"), ("b", True, "")]
    assert blank.options[0].html == "\\(QK^T\\)" and not blank.multiple
    assert [(m.value, m.feedback) for m in blank.mistakes] == [("a", "forgot the scale")]


@pytest.mark.parametrize("representation, shown", [("bool", ("T", "F")), ("01", ("1", "0")),
                                                   ("additive", ("0", "−∞"))])
def test_a_mask_is_one_choice_per_cell_in_the_parts_representation(representation, shown):
    part = AnswerPart("mask", "mask", [[True, False], [True, True]], spec={"representation": representation},
                      mistakes=(Mistake("inverted_mask", [[False, True], [False, False]], "inverted"),))
    blanks = blanks_of(_problem(part))
    assert [b.id for b in blanks] == ["mask_r0_c0", "mask_r0_c1", "mask_r1_c0", "mask_r1_c1"]
    assert all(b.kind == "choice" and tuple(plain_text(o.html) for o in b.options) == shown for b in blanks)
    assert [next(o.id for o in b.options if o.correct) for b in blanks] == ["allowed", "masked", "allowed", "allowed"]
    assert [[m.value for m in b.mistakes] for b in blanks] == [["masked"], ["allowed"], ["masked"], ["masked"]]


def test_a_term_lists_every_spelling_and_wrong_spellings_with_their_hints():
    part = AnswerPart("t", "term", ["KV cache", "key-value cache"],
                      mistakes=(Mistake("q", ["query cache", "kv CACHE"], "queries are not kept"),))
    (blank,) = blanks_of(_problem(part))
    assert blank.spellings == ("KV cache", "key-value cache") and not blank.case_sensitive
    assert [m.value for m in blank.mistakes] == ["query cache"]  # "kv CACHE" is an accepted spelling


def test_every_shape_spelling_is_accepted_by_the_projects_own_grader():
    """The LMS compares spellings literally; each one we list must be right by problemgen's rules."""
    shape_parts = [p for kind in ("multihead.projection_shapes", "shapes.trace", "multihead.concat")
                   for seed in range(4) for p in generate(kind, seed, 2).parts if p.type == "shape"]
    assert shape_parts
    for part in shape_parts:
        for spelling in shape_spellings(part.value, part.spec.get("dims", {})):
            assert types.get("shape").grade(part, spelling).passed, (part.value, spelling)


def test_a_shape_mistake_is_a_wrong_spelling():
    part = AnswerPart("s", "shape", ["B", "L"], mistakes=(Mistake("swap", ["L", "B"], "axes swapped"),))
    (blank,) = blanks_of(_problem(part))
    assert blank.case_sensitive and "(B, L)" in blank.spellings and "B x L" in blank.spellings
    assert [m.value for m in blank.mistakes] == ["(L, B)"]


def test_an_expression_makes_the_question_a_manual_essay_with_the_key_for_the_grader():
    from problemgen.documents.worksheet import DocumentRenderer

    assert "expression" not in BLANKS
    problem = generate("attention.scores", 3, 1)
    problem = replace(problem, parts=(*problem.parts, AnswerPart("e", "expression", "x**2", label="$f(x)$")))
    assert blanks_of(problem) is None
    question = question_of(problem, 2.0, DocumentRenderer(), with_solutions=True)
    assert question.manual == "parts e (expression) cannot be checked by an LMS" and question.blanks == ()
    assert "\\(f(x)\\)" in question.key_html and question.solution and question.points == 2.0


def test_prompts_are_html_with_mathjax_delimiters_and_nothing_else_unescaped():
    html = fragment_html("Give **both** `A` and $a<b$ \\* 2 <script>x</script>\n\n$$\\frac{1}{2}$$\n")
    assert html == ("<p>Give <strong>both</strong> <code>A</code> and \\(a&lt;b\\) * 2 &lt;script&gt;x&lt;/script&gt;</p>\n"
                    "<p>\\[\\frac{1}{2}\\]</p>")
    assert text_html("<b>$x$</b>") == "&lt;b&gt;\\(x\\)&lt;/b&gt;"


def test_plain_text_stays_literal_but_for_its_maths():
    """Labels, options and hints are plain text, not Markdown: "2**x or 10**x" is not bold between its stars."""
    assert text_html("exp(x), not 2**x or 10**x") == "exp(x), not 2**x or 10**x"
    assert text_html("a `b` \\* _c_ $x^2$ <i>") == "a `b` \\* _c_ \\(x^2\\) &lt;i&gt;"


@pytest.mark.parametrize("export", ["moodle", "gift", "qti21"])
def test_a_hint_with_stars_reads_back_literally_in_every_format_that_carries_it(tmp_path, export):
    """The softmax-base hint ("exp(x), not 2**x or 10**x") of attention weights, as each file holds it;
    Canvas QTI 1.2 carries no numerical hints (see its export)."""
    import html
    import zipfile

    from problemgen.exports import all_exports

    bank = tmp_path / "w.toml"
    bank.write_text('title = "W"\n[[problems]]\nkind = "attention.weights"\nseeds = [2]\n', encoding="utf-8")
    out = tmp_path / "out"
    all_exports()[export].build(bank=str(bank), n="1", output=out, seed="0")
    if export == "qti21":
        text = "".join(zipfile.ZipFile(out).read(n).decode() for n in zipfile.ZipFile(out).namelist())
    else:
        text = out.read_text(encoding="utf-8")
    assert "not 2**x or 10**x" in html.unescape(text) and "<strong>x" not in html.unescape(text)


def test_a_markdown_table_becomes_an_html_table():
    html = markdown_html("| query \\ key | 1 |\n|---|---:|\n| 1 | ░ 0.5 |\n\nShading: $x$", lambda t, d: f"[{t}]")
    assert html == ('<table><thead><tr><th scope="col">query \\ key</th><th scope="col">1</th></tr></thead>'
                    '<tbody><tr><th scope="row">1</th><td>░ 0.5</td></tr></tbody></table>\n<p>Shading: [x]</p>')


def test_each_bank_place_becomes_a_pool_of_distinct_variants_with_their_ids():
    export = build_export(BANK, 3, seed=5)
    assert export.bank_id == "attention_basics" and len(export.pools) == 11
    for pool in export.pools:
        ids = [q.variant_id for q in pool.questions]
        assert len(ids) == 3 == len(set(ids)) and re.fullmatch(r"p\d+", pool.id)
        assert all(re.fullmatch(r"[\w.]+/d\d+/s\d+.*", i) for i in ids)
        assert all(q.prompt and "$" not in q.prompt and q.solution == "" for q in pool.questions)
    assert export.pools[0].points == 2.0


def test_the_variants_are_those_a_worksheet_of_the_same_seed_holds():
    from problemgen.documents.banks import load_bank
    from problemgen.documents.worksheet import build_variant

    export = build_export(BANK, 2, seed=11)
    sheet = build_variant(load_bank(BANK), 11)
    assert [pool.questions[0].variant_id for pool in export.pools] == [p.problem.variant_id for p in sheet.problems]


def test_a_pinned_seed_pool_is_short_and_says_so(tmp_path):
    bank = tmp_path / "bank.toml"
    bank.write_text('id = "pinned"\ntitle = "Pinned"\n[[problems]]\nkind = "attention.scores"\nseeds = [3]\n'
                    'title = "Scores {x} # ~ = <b>"\n', encoding="utf-8")
    export = build_export(str(bank), 4)
    (pool,) = export.pools
    assert len(pool.questions) == 1 and pool.title == "Scores {x} # ~ = <b>"
    assert export.notices == ("p1 (Scores {x} # ~ = <b>): only 1 distinct variant",)


def test_solutions_only_on_request_and_attention_weights_come_with_a_heatmap_image(tmp_path):
    bank = tmp_path / "bank.toml"
    bank.write_text('id = "w"\ntitle = "W"\n[[problems]]\nkind = "attention.weights"\n', encoding="utf-8")
    (question,) = build_export(str(bank), 1, with_solutions=True).pools[0].questions
    assert question.solution.startswith("<p>") and "\\(" in question.solution
    assert '<img src="data:image/svg+xml;base64,' in question.solution and 'alt="Heatmap of' in question.solution


def test_bad_counts_are_one_line_errors():
    from problemgen.errors import ProblemgenError

    with pytest.raises(ProblemgenError, match="-n must be between 1 and 200"):
        build_export(BANK, 0)


def test_the_shared_options_are_the_documented_ones():
    names = {(o.name, o.short) for o in lms_options()}
    assert names == {("--bank", None), ("--count", "-n"), ("--output", "-o"), ("--seed", None),
                     ("--with-solutions", None), ("--preview", None)}


def test_the_preview_shows_every_variant_its_keys_and_known_mistakes():
    export = build_export(BANK, 2, with_solutions=True)
    text = preview_markdown(export)
    for pool in export.pools:
        for question in pool.questions:
            assert f"[{question.variant_id}]" in text
    first = export.pools[1].questions[0].blanks[0]
    assert f"{md_text(plain_text(first.label))} [numerical" in text and "**Solution.**" in text
    mistaken = next(b for p in export.pools for q in p.questions for b in q.blanks if b.mistakes)
    assert f"({mistaken.mistakes[0].name}): " in text


def test_the_preview_escapes_bank_and_plain_text_but_keeps_maths(tmp_path):
    """Titles, labels, options and hints are plain text: in the Markdown preview nothing in them is
    markup (no tag, heading, link or emphasis), as the worksheet escapes them; maths stay maths."""
    bank = tmp_path / "evil.toml"
    bank.write_text('title = "Evil <img src=x onerror=alert(1)> [x](javascript:alert(1)) $x_1$"\n[[problems]]\n'
                    'kind = "attention.weights"\nseeds = [2]\ntitle = "# T1 **b** <b>bold</b>"\n', encoding="utf-8")
    text = preview_markdown(build_export(str(bank), 1))
    assert "# Evil \\<img src=x onerror=alert(1)\\> \\[x\\](javascript:alert(1)) $x_1$ (evil)" in text
    assert "## p1: \\# T1 \\*\\*b\\*\\* \\<b\\>bold\\</b\\> (1 point, 1 variant)" in text
    assert "### \\# T1 \\*\\*b\\*\\* \\<b\\>bold\\</b\\> [attention.weights/" in text
    assert "not 2\\*\\*x or 10\\*\\*x" in text and not re.search(r"(?<!\\)<(img|b)\b", text)


def test_worksheet_markdown_escapes_the_instructions_as_it_escapes_titles(tmp_path):
    from problemgen.documents.banks import load_bank
    from problemgen.documents.worksheet import DocumentRenderer, build_variant

    bank = tmp_path / "evil.toml"
    bank.write_text('title = "Evil <b>"\ninstructions = """Line one <img src=x onerror=alert(1)> '
                    '[click](javascript:alert(1)) **bold** $\\\\sqrt{d_k}$\n\n# Heading injected"""\n'
                    '[[problems]]\nkind = "attention.weights"\n', encoding="utf-8")
    loaded = load_bank(bank)
    checkout = Path(__file__).parents[1] / "templates"  # this checkout's, whatever an editable install maps
    files = DocumentRenderer(checkout).documents(build_variant(loaded, 1), ("md",), instructions=loaded.instructions)
    sheet = files["worksheet.md"].decode("utf-8")
    assert ("Line one \\<img src=x onerror=alert(1)\\> \\[click\\](javascript:alert(1)) \\*\\*bold\\*\\* "
            "$\\sqrt{d_k}$\n\n\\# Heading injected") in sheet
    assert "# Evil \\<b\\>" in sheet


def test_an_unwritable_output_or_a_missing_bank_is_a_one_line_error(tmp_path):
    import subprocess
    import sys

    for export, args in (("moodle", ["--bank", "masking", "-o", str(tmp_path / "no" / "such" / "dir.xml")]),
                         ("gift", ["--bank", str(tmp_path / "missing.toml"), "-o", str(tmp_path / "x.txt")]),
                         ("gift", ["--bank", "masking", "-o", str(tmp_path / "y.txt"), "--seed", "1e3"]),
                         ("qti21", ["--bank", "masking", "-o", str(tmp_path / "q.zip"), "--seed", "-5"]),
                         ("qti21", ["--bank", "masking", "-o", str(tmp_path / "q.zip"), "--preview", "/nonexistent/p.md"])):
        result = subprocess.run([sys.executable, "-m", "problemgen", "export", export, *args],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
        assert result.returncode == 2 and not list(tmp_path.iterdir()), result.stderr


@pytest.mark.parametrize("field", ["title", "prompt"])
def test_the_xml_writers_never_write_a_character_xml_forbids(field):
    """Bank validation refuses control characters; a model from elsewhere is refused by the writer
    instead of becoming a file no reader parses."""
    from problemgen.errors import ProblemgenError
    from problemgen.exports.lms import Blank, LmsExport, Pool, Question
    from problemgen.exports.moodle import render_moodle
    from problemgen.exports.qti12 import render_qti12
    from problemgen.exports.qti21 import render_qti21

    text = {"title": "T", "prompt": "<p>P</p>"}
    text[field] = text[field].replace("P", "P nul \x00 esc \x1b[31m").replace("T", "T nul \x00 esc \x1b[31m")
    blank = Blank("n", "n", "numerical", value=2.5, tolerance=0.01)
    question = Question("attention.scores/d1/s1", text["title"], text["prompt"], "", (blank,), 1.0)
    export = LmsExport("b", "B", (Pool("p1", "P", 1.0, (question,)),), ())
    for render in (render_moodle, render_qti12, render_qti21):
        with pytest.raises(ProblemgenError, match=r"U\+0000 is a character XML 1\.0 forbids") as caught:
            render(export)
        assert "\n" not in str(caught.value) and "\x00" not in str(caught.value)


@pytest.mark.parametrize("export", ["moodle", "gift", "qti12", "qti21"])
def test_a_bank_with_a_control_character_is_refused_before_anything_is_written(tmp_path, export):
    import subprocess
    import sys

    bank = tmp_path / "ctrl.toml"
    bank.write_text('title = "Ctrl \\u0001 esc \\u001b[31m"\n[[problems]]\nkind = "attention.weights"\n'
                    'title = "Item \\u0000 nul"\n', encoding="utf-8")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "problemgen", "export", export, "--bank", str(bank), "-o", str(out)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0 and not out.exists(), result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "line 1, key 'title': contains the control character U+0001" in result.stderr


@pytest.mark.parametrize("seed", ["-5", str(2**64), "99999999999999999999999999"])
def test_a_seed_outside_the_worksheet_range_is_refused_by_every_lms_export(tmp_path, seed):
    """`worksheet --seed` takes 0 to 2**64-1; the exports draw their variants from worksheet seeds."""
    from problemgen.errors import ProblemgenError
    from problemgen.exports import all_exports

    for name in ("moodle", "gift", "qti12", "qti21"):
        with pytest.raises(ProblemgenError, match=r"--seed must be a worksheet seed from 0 to 18446744073709551615"):
            all_exports()[name].build(bank=BANK, n="1", output=tmp_path / name, seed=seed)
        assert not (tmp_path / name).exists()


def test_the_last_worksheet_seed_is_accepted_and_drawn_from_worksheet_seeds_only():
    from problemgen.documents.worksheet import MAX_SEED

    export = build_export(BANK, 3, seed=MAX_SEED)
    assert all(len(pool.questions) == 1 for pool in export.pools)  # one worksheet seed left to draw from


@pytest.mark.parametrize("export", ["moodle", "gift", "qti12", "qti21"])
def test_a_bad_preview_path_is_refused_before_the_export_is_written(tmp_path, export):
    from problemgen.errors import ProblemgenError
    from problemgen.exports import all_exports

    out = tmp_path / "q.out"
    out.write_bytes(b"an earlier export")
    for preview, reason in ((tmp_path / "no" / "p.md", "no directory"), (tmp_path, "it is a directory"),
                            (out, "is the --output file")):
        with pytest.raises(ProblemgenError, match=reason):
            all_exports()[export].build(bank=BANK, n="1", output=out, seed="0", preview=preview)
        assert out.read_bytes() == b"an earlier export"
    assert not (tmp_path / "no").exists()


def test_problemgen_show_rebuilds_an_exported_variant_from_its_id():
    """The README's promise: the id in a question's name is enough to show that very problem."""
    from click.testing import CliRunner

    from problemgen.cli.app import cli

    export = build_export("question_banks/masking.toml", 1)
    with_overrides = [q for pool in export.pools for q in pool.questions if "," in q.variant_id]
    assert with_overrides
    for question in with_overrides[:3]:
        head, *overrides = question.variant_id.split(",")
        kind, difficulty, seed = head.split("/")
        args = ["show", kind, "--difficulty", difficulty[1:], "--seed", seed[1:], *(a for o in overrides for a in ("--set", o))]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert question.prompt_md.strip() in result.output


def test_a_mistakes_window_stops_where_the_grader_would_name_another_mistake_or_none():
    """Moodle and GIFT show the first answer whose window holds a response; the grader names the nearest
    mistake (in tolerances at each value). Windows never overlap, and a relative tolerance is the mistake's."""
    part = AnswerPart("x", "number", 1.0, atol=0.1, mistakes=(
        Mistake("a", 1.25, "one"), Mistake("b", 1.3, "two"), Mistake("far", 3.0, "three")))
    (blank,) = blanks_of(_problem(part))
    windows = {m.name: m.tolerance for m in blank.mistakes}
    assert windows["a"] == pytest.approx(0.025) and windows["b"] == pytest.approx(0.025)
    assert windows["far"] == pytest.approx(0.1) and windows["a"] < 0.025 and windows["far"] < 0.1  # a hair inside
    relative = AnswerPart("size", "number", 432.0, rtol=0.005, mistakes=(Mistake("half", 216.0, "both K and V"),))
    (blank,) = blanks_of(_problem(relative))
    assert blank.tolerance == pytest.approx(2.16) and blank.mistakes[0].tolerance == pytest.approx(1.08)
