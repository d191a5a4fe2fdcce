"""The bank's credit policy: what a named mistake earns, and all-or-nothing parts."""

from __future__ import annotations

import textwrap

import pytest

from problemgen.documents import banks
from problemgen.documents.worksheet import build_variant
from problemgen.model.variantfile import WorksheetVariant
from problemgen.sheets.answersheet import parse_sheet_text, toml_value
from problemgen.sheets.credit import apply_credit
from problemgen.sheets.grading import PartResult, grade_answers


def test_a_named_mistake_earns_exactly_the_mistake_credit():
    verdict = PartResult("wrong", 0.33, "no_scale", "hint")
    assert apply_credit(verdict).score == 0.0
    assert apply_credit(verdict, mistake_credit=0.5).score == 0.5
    assert apply_credit(PartResult("wrong", 0.75), "all-or-nothing").score == 0.0
    assert apply_credit(PartResult("wrong", 0.75), "entries").score == 0.75
    assert apply_credit(PartResult("correct", 1.0), "all-or-nothing").score == 1.0


def bank(tmp_path, extra: str):
    path = tmp_path / "b.toml"
    path.write_text(textwrap.dedent(f"""\
        title = "T"
        seed = 5
        [[problems]]
        kind = "attention.weights"
        points = 4
        {extra}
        """), encoding="utf-8")
    return banks.load_bank(path)


def sheet_with(variant: WorksheetVariant, value) -> str:
    return f'[p1]\nweights = {toml_value(value)}\n'


@pytest.mark.parametrize("extra, expected", [("", 0.0), ("mistake_credit = 0.5", 2.0)])
def test_two_students_with_the_same_mistake_get_the_same_credit(tmp_path, extra, expected):
    variant = build_variant(bank(tmp_path, extra), 5)
    variant = WorksheetVariant.from_dict(variant.to_dict())  # the policy survives variant.json
    part = variant.problems[0].problem.parts[0]
    mistake = next(m for m in part.mistakes if m.name == "no_scaling")
    report = grade_answers(variant, parse_sheet_text(sheet_with(variant, mistake.value)))
    assert report.results[0].mistake == "no_scaling" and report.points == expected


def test_all_or_nothing_gives_no_credit_for_a_partly_right_matrix(tmp_path):
    for extra, partial in (("", True), ('credit = "all-or-nothing"', False)):
        variant = build_variant(bank(tmp_path, extra), 5)
        value = [list(row) for row in variant.problems[0].problem.parts[0].value]
        value[0][0] += 0.3
        value[0][1] -= 0.3
        report = grade_answers(variant, parse_sheet_text(sheet_with(variant, value)))
        assert (0 < report.points < 4) is partial and report.results[0].status == "wrong"


@pytest.mark.parametrize("extra, message", [
    ('credit = "some"', "credit must be one of"),
    ("mistake_credit = 2", "mistake_credit is a fraction from 0 to 1"),
    ('vary = ["colour"]', "has no override 'colour'"),
])
def test_bad_credit_keys_name_the_line_and_key(tmp_path, extra, message):
    path = tmp_path / "b.toml"
    path.write_text(f'title = "T"\n[[problems]]\nkind = "attention.weights"\n{extra}\n', encoding="utf-8")
    _, issues = banks.check_bank(path, try_generate=False)
    assert any(message in str(issue) and "line 4" in str(issue) for issue in issues), issues
