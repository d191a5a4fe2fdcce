"""GIFT export: a grammar check of the subset we write, escaping of hostile text, and the file re-graded.

The reader (``lms_readers.read_gift``) follows Moodle's GIFT rules and fails on anything outside the
subset we emit; the round trip checks every blank against the rebuilt problem (``lms_roundtrip``).
"""

import re

import pytest

from problemgen.documents.banks import shipped_banks
from problemgen.exports.gift import EXPORT, gift_escape, render_gift
from problemgen.exports.lms import build_export
from tests.lms_readers import gift_unescape, read_gift
from tests.lms_roundtrip import check_hostile_responses, check_variant, hostile_export

VARIANT = re.compile(r"\[([\w.]+/d\d+/s\d+[^\[\]]*)\](?: part (\d+) of (\d+):)?")
FAST_BANKS = ("question_banks/params_memory.toml", "question_banks/masking.toml",
              "question_banks/multihead_shapes.toml")


def export_file(tmp_path, bank, n=2, **options):
    out = tmp_path / "pool.gift"
    EXPORT.build(bank=str(bank), n=str(n), output=out, seed="0", **options)
    return out.read_text(encoding="utf-8")


def round_trip(text: str) -> dict:
    """Group the questions by variant (one per blank for multi-blank problems) and re-grade each variant."""
    variants: dict[str, list] = {}
    counts: dict[str, int] = {}
    for question in read_gift(text):
        found = VARIANT.findall(question.name)
        assert found, question.name
        variant_id, part, total = found[-1]
        variants.setdefault(variant_id, []).append((int(part or 1), int(total or 1), question))
        counts[question.kind] = counts.get(question.kind, 0) + 1
    for variant_id, questions in variants.items():
        assert [p for p, _, _ in questions] == list(range(1, questions[0][1] + 1)), variant_id
        essay = questions[0][2].kind == "essay"
        check_variant(variant_id, [r for _, _, q in questions for r in q.responses], essay=essay)
    return counts


@pytest.mark.parametrize("bank", FAST_BANKS, ids=lambda p: p.split("/")[-1])
def test_a_bank_round_trips_key_outside_tolerance_mistakes_and_options(tmp_path, bank):
    assert sum(round_trip(export_file(tmp_path, bank)).values()) > 0


@pytest.mark.slow
@pytest.mark.parametrize("bank", shipped_banks(), ids=lambda p: p.stem)
def test_every_shipped_bank_round_trips(tmp_path, bank):
    assert sum(round_trip(export_file(tmp_path, bank, n=3, with_solutions=True)).values()) > 0


@pytest.mark.parametrize("text", ["a ~ b = c # d { e } f : g", "\\(x_{1}\\) \\\\ \\n \\{", "h*d_k\\*", "line\nbreak"])
def test_escaping_reads_back_as_the_same_text(text):
    escaped = gift_escape(text)
    assert "\n" not in escaped
    assert gift_unescape(escaped) == " ".join(text.split("\n"))
    assert not re.search(r"(?<!\\)(?:\\\\)*[~=#{}:]", escaped.replace("\\\\", ""))


def test_hostile_titles_and_spellings_stay_text(tmp_path):
    bank = tmp_path / "bank.toml"
    title = "A ~ = # { } : \\n title"
    bank.write_text(f'id = "hostile"\ntitle = "H"\n[[problems]]\nkind = "attention.scaled_scores"\ntitle = "{title.replace(chr(92), chr(92) * 2)}"\n'
                    '[[problems]]\nkind = "multihead.concat"\ntitle = "Shapes {1:x}"\n', encoding="utf-8")
    text = export_file(tmp_path, bank, n=1)
    questions = read_gift(text)
    assert questions[0].name.startswith(title + " [")
    assert any(q.kind == "short" for q in questions)
    round_trip(text)


def test_each_pool_is_a_category_and_solutions_are_general_feedback(tmp_path):
    text = export_file(tmp_path, FAST_BANKS[0], with_solutions=True)
    questions = read_gift(text)
    export = build_export(FAST_BANKS[0], 2)
    assert len({q.category for q in questions}) == len(export.pools)
    assert all(q.category.startswith("$course$/top/params_memory/p") for q in questions)
    assert all(q.general_feedback.startswith("<p>") for q in questions)
    assert all(q.general_feedback == "" for q in read_gift(export_file(tmp_path, FAST_BANKS[0])))


def test_numbers_have_tolerance_and_mistakes_as_zero_credit_answers_with_hints(tmp_path):
    questions = read_gift(export_file(tmp_path, FAST_BANKS[0]))
    with_mistakes = [q for q in questions if q.kind == "numerical" and len(q.responses[0].answers) > 1]
    assert with_mistakes
    for q in with_mistakes:
        key, *mistakes = q.responses[0].answers
        assert key.fraction == 100 and all(m.fraction == 0 and m.feedback for m in mistakes)
    assert re.search(r"\{#=[-\d.e]+:[\d.e-]+ =%0%[-\d.e]+:[\d.e-]+#", export_file(tmp_path, FAST_BANKS[0]))


def test_a_multi_blank_problem_is_one_question_per_blank_and_the_command_says_so(tmp_path):
    out = tmp_path / "m.gift"
    message = EXPORT.build(bank=FAST_BANKS[1], n="1", output=out, seed="0")
    parts = [q for q in read_gift(out.read_text(encoding="utf-8")) if " part 1 of " in q.name]
    assert parts and re.search(r"\d+ variants with several blanks became \d+ GIFT questions, one per blank", message)


def test_render_is_deterministic():
    assert render_gift(build_export(FAST_BANKS[2], 2)) == render_gift(build_export(FAST_BANKS[2], 2))


@pytest.mark.parametrize("several", [False, True], ids=["one blank", "one question per blank"])
def test_hostile_text_in_every_field_reads_back_intact(several):
    export = hostile_export(several)
    questions = read_gift(render_gift(export))
    expected = [(q, b) for q in export.pools[0].questions for b in q.blanks]
    assert len(questions) == len(expected)
    for question, (wanted, blank) in zip(questions, expected):
        assert question.name.startswith(" ".join(f"{wanted.title} [{wanted.variant_id}]".split("\n")))
        assert question.text.startswith(" ".join(wanted.prompt.split("\n")))
        assert question.general_feedback == " ".join(wanted.solution.split("\n"))
        check_hostile_responses(question.responses, (blank,))


def test_a_manual_question_is_an_essay_with_the_key_in_the_general_feedback_only_with_solutions():
    from dataclasses import replace

    from problemgen.documents.worksheet import DocumentRenderer
    from problemgen.exports.lms import LmsExport, Pool, question_of
    from problemgen.model.core import AnswerPart
    from problemgen.model.registry import generate

    problem = generate("attention.scores", 3, 1)
    problem = replace(problem, parts=(*problem.parts, AnswerPart("e", "expression", "x**2", label="$f(x)$")))
    for with_solutions in (False, True):
        question = question_of(problem, 1.0, DocumentRenderer(), with_solutions)
        (read,) = read_gift(render_gift(LmsExport("b", "B", (Pool("p1", "P", 1.0, (question,)),), ())))
        assert read.kind == "essay" and not read.responses
        assert read.general_feedback == (" ".join((question.key_html + question.solution).split("\n"))
                                         if with_solutions else "")
