"""The LMS exports read back by tools we did not write: an XSD of the Moodle XML subset (validated by
xmlschema), and third-party readers from PyPI (moodle-xml-parser, pygiftparser) that must find each
question's text and correct answer intact.

The schema is ours (``tests/fixtures/lms/moodle_quiz_subset.xsd``, written from Moodle's documentation);
the readers are test dependencies (the ``test`` extra). Each test is skipped with the reason when its
package is missing. The readers' own limits are stated where a test works around them.
"""

import html
from pathlib import Path

import pytest

from problemgen.documents.banks import shipped_banks
from problemgen.exports.gift import EXPORT as GIFT
from problemgen.exports.gift import gift_spelling
from problemgen.exports.lms import build_export
from problemgen.exports.moodle import EXPORT as MOODLE
from problemgen.exports.moodle import cloze_text, literal_spelling, number
from tests.lms_readers import gift_unescape

SCHEMA = Path(__file__).parent / "fixtures" / "lms" / "moodle_quiz_subset.xsd"
FAST_BANKS = ("question_banks/masking.toml", "question_banks/params_memory.toml",
              "question_banks/multihead_shapes.toml")
EVERY_BANK = [str(b) if f"question_banks/{b.name}" in FAST_BANKS else pytest.param(str(b), marks=pytest.mark.slow)
              for b in shipped_banks()]
"""Every shipped bank: the fast ones in the default run, the rest with ``-m slow``."""


def _write(export, tmp_path, bank, n=2, with_solutions=False):
    out = tmp_path / f"pool.{export.name}"
    export.build(bank=str(bank), n=str(n), output=out, seed="0", with_solutions=with_solutions)
    return out


# --------------------------------------------------------------------------------------------------
# Moodle XML: our schema of the subset, and moodle-xml-parser
# --------------------------------------------------------------------------------------------------


def _schema():
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema (test extra) validates the XSD")
    return xmlschema.XMLSchema11(str(SCHEMA))


@pytest.mark.parametrize("bank", FAST_BANKS, ids=lambda p: p.split("/")[-1])
def test_moodle_xml_is_valid_against_the_schema_of_the_subset(tmp_path, bank):
    _schema().validate(str(_write(MOODLE, tmp_path, bank, with_solutions=True)))


@pytest.mark.slow
@pytest.mark.parametrize("bank", shipped_banks(), ids=lambda p: p.stem)
def test_every_shipped_banks_moodle_xml_is_valid(tmp_path, bank):
    _schema().validate(str(_write(MOODLE, tmp_path, bank, n=3, with_solutions=True)))


def test_the_schema_rejects_what_moodle_would_refuse(tmp_path):
    schema = _schema()
    good = _write(MOODLE, tmp_path, FAST_BANKS[1]).read_text(encoding="utf-8")
    for old, new in [("<tolerance>0</tolerance>", "<tolerance>-1</tolerance>"), ("{1:NUMERICAL:", "{1:NUMERIC:"),
                     ('fraction="100"', 'fraction="150"'), ("<idnumber>", "<idnumber>" + "x" * 100),
                     ('type="numerical"', 'type="calculated"'), ("<single>true", "<single>yes")]:
        assert old in good, old
        assert not schema.is_valid(good.replace(old, new, 1)), new


def _moodle_questions(export):
    """(name, question text, blanks) of every exported question in file order."""
    found = []
    for pool in export.pools:
        for q in pool.questions:
            label = f"\n<p>{q.blanks[0].label}</p>" if len(q.blanks) == 1 else ""
            found.append((f"{q.title} [{q.variant_id}]", q.prompt + label, q.blanks))
    return found


@pytest.mark.parametrize("bank", EVERY_BANK, ids=lambda p: p.split("/")[-1])
def test_moodle_xml_parser_finds_each_text_and_correct_answer(tmp_path, bank):
    """moodle-xml-parser reads multichoice and cloze questions. It decodes HTML entities before it
    splits a cloze blank at ``~``/``#`` and takes a blank to end at the first ``}``, so a blank is
    compared up to its correct answer, and only options without those characters."""
    reader = pytest.importorskip("moodle_xml_parser.parser", reason="moodle-xml-parser (test extra) reads Moodle XML")
    path = _write(MOODLE, tmp_path, bank)
    parsed = reader.parse_file(str(path))
    expected = {name: (text, blanks) for name, text, blanks in _moodle_questions(build_export(bank, 2))}
    checked = 0
    for question in parsed["multichoice"]:
        text, (blank,) = expected[question.name]
        assert question.text_pre_parse == html.unescape(text).strip()
        assert [o.answer for o in question.options] == [html.unescape(o.html) for o in blank.options]
        assert [o.answer for o in question.options if o.score_fraction > 0] == [
            html.unescape(o.html) for o in blank.options if o.correct]
        checked += 1
    for question in parsed["cloze"]:
        _, blanks = expected[question.name]
        gaps = [g for g in question.gaps if g.sub_type in ("NUMERICAL", "MULTICHOICE", "MCV", "MR", "SHORTANSWER", "SAC")]
        assert len(gaps) == len(blanks), question.name
        for gap, blank in zip(gaps, blanks):
            right = [o.answer for o in gap.options if o.score > 0]
            if blank.kind == "numerical":
                assert right[0] == f"{number(blank.value)}:{number(blank.tolerance)}"
            elif blank.kind == "choice" and not any(c in o.html for o in blank.options for c in "{}~#&"):
                assert right == [o.html for o in blank.options if o.correct]
            elif blank.kind == "short" and not any(c in s for s in blank.spellings for c in "{}~#&"):
                assert right == [html.unescape(cloze_text(literal_spelling(s))) for s in blank.spellings]
            checked += 1
    assert checked


# --------------------------------------------------------------------------------------------------
# GIFT: pygiftparser
# --------------------------------------------------------------------------------------------------


def _gift_expected(export):
    """(name, prompt, blank or None for an essay) of every GIFT question in file order."""
    found = []
    for pool in export.pools:
        for q in pool.questions:
            name = f"{q.title} [{q.variant_id}]"
            if q.manual or len(q.blanks) == 1:
                found.append((name, q.prompt, q.blanks[0] if q.blanks else None))
            else:
                total = len(q.blanks)
                found += [(f"{name} part {k} of {total}: {b.label}", q.prompt, b)
                          for k, b in enumerate(q.blanks, start=1)]
    return found


def _beyond_the_reader(blank) -> bool:
    """What pygiftparser 1.1 cannot read: numbers with a minus sign or an exponent (it reads unsigned
    decimals only), and a ``}`` anywhere in the answers (it ends them at the first one, escaped or not)."""
    if blank is None:
        return False
    texts = [*(o.html + o.feedback for o in blank.options), *blank.spellings, *(m.feedback for m in blank.mistakes)]
    if any("}" in t for t in texts):
        return True
    values = [blank.value, blank.tolerance, *(m.value for m in blank.mistakes)] if blank.kind == "numerical" else []
    return any(x < 0 or "e" in number(x) for x in values)


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")).strip()


def check_gift_question(question, expected) -> None:
    name, prompt, blank = expected
    assert gift_unescape(question.title) == _one_line(name)
    assert gift_unescape(question.text).startswith(_one_line(prompt))
    kind = type(question.answers).__name__
    if blank is None:
        assert kind == "Essay"
        return
    answers = question.answers.answers
    if blank.kind == "numerical":
        assert kind == "NumericAnswerSet"
        key, *wrong = answers
        assert (key.value, key.tolerance, key.fraction) == (blank.value, blank.tolerance, 100)
        assert [(a.value, a.fraction) for a in wrong] == [(m.value, 0) for m in blank.mistakes]
        assert [gift_unescape(a.feedback) for a in wrong] == [_one_line(m.feedback) for m in blank.mistakes]
    elif blank.kind == "choice":
        assert kind == ("MultipleChoicesSet" if blank.multiple else "SelectSet")
        assert [gift_unescape(a.answer.strip()) for a in answers] == [_one_line(o.html) for o in blank.options]
        assert [a.fraction > 0 for a in answers] == [o.correct for o in blank.options]
    else:  # the reader calls "short" only answers without a %fraction%, so known wrong spellings make it a select
        assert kind == ("SelectSet" if blank.mistakes else "ShortSet")
        right = [gift_unescape(a.answer.strip()) for a in answers if a.fraction == 100]
        assert right == [gift_unescape(gift_spelling(s)) for s in blank.spellings]


@pytest.mark.parametrize("bank", EVERY_BANK, ids=lambda p: p.split("/")[-1])
def test_pygiftparser_finds_each_text_and_correct_answer(tmp_path, bank):
    """pygiftparser keeps GIFT's escapes in what it returns, so its text is unescaped by Moodle's rule
    before comparing; the questions beyond its grammar (see below) are left to our own reader, and must
    stay a minority."""
    reader = pytest.importorskip("pygiftparser.parser", reason="pygiftparser (test extra) reads GIFT")
    with open(_write(GIFT, tmp_path, bank), encoding="utf-8") as handle:
        parsed = reader.parseFile(handle)
    expected = _gift_expected(build_export(bank, 2))
    assert len(parsed) == len(expected)
    read = 0
    for question, wanted in zip(parsed, expected):
        if _beyond_the_reader(wanted[2]):
            continue
        assert question.valid, wanted[0]
        check_gift_question(question, wanted)
        read += 1
    assert read > len(parsed) // 2
