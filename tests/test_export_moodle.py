"""Moodle XML export: pools as categories, and the file re-graded by a small interpreter of Moodle's rules.

The round trip reads the written file back (``lms_readers``) and checks it against the frozen problems
themselves, not against the model that wrote it: a dropped tolerance or a lost mistake shows up here.
"""

import re
from pathlib import Path

import pytest

from problemgen.documents.banks import shipped_banks
from problemgen.exports.lms import build_export
from problemgen.exports.moodle import EXPORT, cloze_weights, render_moodle
from tests.lms_readers import read_moodle
from tests.lms_roundtrip import check_hostile_responses, check_variant, hostile_export, problem_of

FAST_BANKS = ("question_banks/attention_basics.toml", "question_banks/masking.toml",
              "question_banks/multihead_shapes.toml")


def export_file(tmp_path, bank, n=2, **options):
    out = tmp_path / "pool.xml"
    EXPORT.build(bank=str(bank), n=str(n), output=out, seed="0", **options)
    return out


def round_trip(path) -> dict:
    """Re-grade every question of the file against its rebuilt problem; counts by question type."""
    counts: dict[str, int] = {}
    for question in read_moodle(path):
        counts[question.type] = counts.get(question.type, 0) + 1
        assert question.idnumber in question.name
        if question.type == "essay":
            assert question.grader_info
        check_variant(question.idnumber, question.responses, essay=question.type == "essay")
    return counts


@pytest.mark.parametrize("bank", FAST_BANKS, ids=lambda p: p.split("/")[-1])
def test_a_bank_round_trips_key_outside_tolerance_mistakes_and_options(tmp_path, bank):
    counts = round_trip(export_file(tmp_path, bank))
    assert sum(counts.values()) > 0


@pytest.mark.slow
@pytest.mark.parametrize("bank", shipped_banks(), ids=lambda p: p.stem)
def test_every_shipped_bank_round_trips(tmp_path, bank):
    counts = round_trip(export_file(tmp_path, bank, n=3, with_solutions=True))
    assert sum(counts.values()) > 0


def test_each_bank_item_becomes_a_category_of_distinct_variants(tmp_path):
    questions = read_moodle(export_file(tmp_path, FAST_BANKS[0], n=3))
    export = build_export(FAST_BANKS[0], 3)
    categories = {q.category for q in questions}
    assert len(categories) == len(export.pools)
    assert all(c.startswith("$course$/top/attention_basics/p") for c in categories)
    ids = [q.idnumber for q in questions]
    assert len(ids) == len(set(ids)) == 3 * len(export.pools)
    assert all(re.fullmatch(r"[\w.]+/d\d+/s\d+.*", i) for i in ids)


def test_numbers_carry_tolerance_and_mistakes_as_zero_credit_answers_with_hints(tmp_path):
    questions = read_moodle(export_file(tmp_path, "question_banks/params_memory.toml"))
    numerical = [q for q in questions if q.type == "numerical"]
    with_mistakes = [q for q in numerical if len(q.responses[0].answers) > 1]
    assert with_mistakes
    for q in with_mistakes:
        key, *mistakes = q.responses[0].answers
        assert key.fraction == 100 and all(m.fraction == 0 and m.feedback for m in mistakes)


def test_cloze_blanks_hold_the_mistakes_as_wrong_answers_with_feedback(tmp_path):
    questions = read_moodle(export_file(tmp_path, FAST_BANKS[0]))
    text = next(q.text for q in questions if q.type == "cloze" and "~%0%" in q.text)
    assert re.search(r"\{\d+:NUMERICAL:=[-\d.e]+:[\d.e-]+~%0%[-\d.e]+:[\d.e-]+#[^~}]+", text)


def test_prompts_are_html_with_mathjax_maths_not_markdown(tmp_path):
    questions = read_moodle(export_file(tmp_path, FAST_BANKS[0]))
    assert all(q.text.startswith("<p>") and "$" not in q.text for q in questions)
    assert sum("\\(" in q.text for q in questions) > len(questions) // 2


def test_general_feedback_is_the_solution_only_with_solutions(tmp_path):
    assert all(q.general_feedback == "" for q in read_moodle(export_file(tmp_path, FAST_BANKS[1])))
    with_solutions = read_moodle(export_file(tmp_path, FAST_BANKS[1], with_solutions=True))
    assert all(q.general_feedback.startswith("<p>") for q in with_solutions)


def test_masks_are_cloze_choices_per_cell(tmp_path):
    questions = read_moodle(export_file(tmp_path, FAST_BANKS[1]))
    masks = [q for q in questions if any(p.type == "mask" for p in problem_of(q.idnumber).parts)]
    assert masks and all(q.type == "cloze" and any(r.kind == "choice" for r in q.responses) for q in masks)


def test_cloze_weights_keep_the_proportions_of_the_shares():
    from problemgen.exports.lms import Blank

    blanks = tuple(Blank(f"b{i}", "", "numerical", value=0.0, points=p) for i, p in enumerate([1 / 6] * 3 + [1 / 2]))
    assert cloze_weights(blanks) == [1, 1, 1, 3]


def test_hostile_titles_stay_text_in_the_xml(tmp_path):
    bank = tmp_path / "bank.toml"
    bank.write_text('id = "hostile"\ntitle = "H"\n[[problems]]\nkind = "attention.scaled_scores"\n'
                    'title = "A ]]> </text> {1:NUMERICAL:=1} # ~ = <script>"\n', encoding="utf-8")
    (question,) = read_moodle(export_file(tmp_path, bank, n=1))
    assert question.name.startswith("A ]]> </text> {1:NUMERICAL:=1} # ~ = <script> [")
    assert "p1 A ]]> <//text> {1:NUMERICAL:=1} # ~ = <script>" in question.category
    round_trip(tmp_path / "pool.xml")


def test_the_command_writes_the_file_and_a_preview(tmp_path):
    from click.testing import CliRunner

    from problemgen.cli import cli

    out, preview = tmp_path / "m.xml", tmp_path / "m.md"
    result = CliRunner().invoke(cli, ["export", "moodle", "--bank", "masking", "-n", "2", "-o", str(out),
                                       "--preview", str(preview), "--with-solutions"])
    assert result.exit_code == 0, result.output
    assert out.exists() and "# " in preview.read_text(encoding="utf-8")
    assert f"wrote {out}" in result.output


def test_a_bad_count_is_a_one_line_error(tmp_path):
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "problemgen", "export", "moodle", "--bank", "masking", "-n", "lots",
                             "-o", str(tmp_path / "x")], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and result.stderr.strip() == "error: -n must be an integer, got 'lots'"


def test_render_is_deterministic():
    export = build_export(FAST_BANKS[2], 2)
    assert render_moodle(export) == render_moodle(build_export(FAST_BANKS[2], 2))


@pytest.mark.parametrize("several", [False, True], ids=["one blank", "cloze"])
def test_hostile_text_in_every_field_reads_back_intact(tmp_path, several):
    export = hostile_export(several)
    path = tmp_path / "h.xml"
    path.write_text(render_moodle(export), encoding="utf-8")
    questions = read_moodle(path)
    expected = export.pools[0].questions
    assert [q.name for q in questions] == [f"{q.title} [{q.variant_id}]" for q in expected]
    assert all(q.general_feedback == e.solution for q, e in zip(questions, expected))
    assert all(q.text.startswith(e.prompt.replace("{", "&#123;") if several else e.prompt)
               for q, e in zip(questions, expected))
    for question, wanted in zip(questions, expected):
        check_hostile_responses(question.responses, wanted.blanks)


def test_a_matrix_or_mask_is_laid_out_as_a_grid_of_blanks(tmp_path):
    questions = read_moodle(export_file(tmp_path, FAST_BANKS[1], n=1))
    grids = 0
    for question in (q for q in questions if q.type == "cloze"):
        for part in problem_of(question.idnumber).parts:
            if part.type in ("matrix", "mask") and isinstance(part.value[0], list):
                rows = "".join("<tr>" + r"<td>\{\d+:[^<]*</td>" * len(row) + "</tr>" for row in part.value)
                assert re.search(f"<table>{rows}</table>", question.text), (question.idnumber, part.key)
                grids += 1
    assert grids


def test_a_variant_id_too_long_for_moodles_idnumber_stays_in_the_name_and_is_listed(tmp_path):
    from dataclasses import replace

    from problemgen.exports.moodle import MAX_IDNUMBER, long_ids_note

    export = build_export(FAST_BANKS[1], 1)
    long_id = "masks.causal/d1/s1," + ",".join(f"option{i}=value{i}" for i in range(10))
    pool = replace(export.pools[0], questions=(replace(export.pools[0].questions[0], variant_id=long_id),))
    export = replace(export, pools=(pool,))
    path = tmp_path / "long.xml"
    path.write_text(render_moodle(export), encoding="utf-8")
    (question,) = read_moodle(path)
    assert len(long_id) > MAX_IDNUMBER and question.idnumber is None and long_id in question.name
    assert long_ids_note(export) == [f"{long_id}: longer than Moodle's 100-character idnumber, kept in the name only"]


def test_a_manual_question_is_an_essay_with_key_and_solution_for_the_grader(tmp_path):
    from dataclasses import replace

    from problemgen.documents.worksheet import DocumentRenderer
    from problemgen.exports.lms import LmsExport, Pool, question_of
    from problemgen.model.core import AnswerPart
    from problemgen.model.registry import generate

    problem = generate("attention.scores", 3, 1)
    problem = replace(problem, parts=(*problem.parts, AnswerPart("e", "expression", "x**2", label="$f(x)$")))
    question = question_of(problem, 2.0, DocumentRenderer(), with_solutions=True)
    path = tmp_path / "essay.xml"
    path.write_text(render_moodle(LmsExport("b", "B", (Pool("p1", "P", 2.0, (question,)),), ())), encoding="utf-8")
    (read,) = read_moodle(path)
    assert read.type == "essay" and not read.responses and read.default_grade == 2.0
    assert question.key_html in read.grader_info and question.solution in read.grader_info
    assert read.grader_info.startswith("<p>Graded by hand: parts e (expression) cannot be checked by an LMS.</p>")
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema (test extra) validates the XSD")
    schema = Path(__file__).parent / "fixtures" / "lms" / "moodle_quiz_subset.xsd"
    xmlschema.XMLSchema11(str(schema)).validate(str(path))
