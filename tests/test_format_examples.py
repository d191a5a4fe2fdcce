"""The format example beside every answer (sheet comment, quiz prompt, page) is never the part's answer.

The examples are read back out of the very text students see (every value after "e.g." or "such as"),
then graded against the part: none may be correct or earn anything. Every kind at every difficulty is
swept over many seeds, since a fixed example equals some variant's key only now and then (``e.g. 0.125``
was the key of scaling.choose_scale with d_k = 64; ``e.g. 124439808`` was GPT-2 small's total).
"""

from __future__ import annotations

import re
import tomllib

import pytest

from problemgen.answers import types
from problemgen.model.core import AnswerPart
from problemgen.model.registry import generate, get_kind, load_all
from problemgen.sheets.answersheet import describe_format
from problemgen.sheets.grading import grade_part

SEEDS = range(40)
_INTRO = re.compile(r"(?:e\.g\.|such as) ")
_UNIT = re.compile(r" (?:bytes|params|FLOPs)\b")


def _value(text: str):
    """One example as the sheet would hold it: TOML when it is TOML, else the text (quotes are optional)."""
    try:
        return tomllib.loads(f"x = {text}")["x"]
    except tomllib.TOMLDecodeError:
        return text


def _one(text: str, start: int) -> tuple[str, int]:
    """The example starting at ``start``: a quoted string, a bracketed array, or a bare word with its unit."""
    if text[start] == '"':
        end = text.index('"', start + 1) + 1
    elif text[start] == "[":
        depth, end = 0, start
        for end in range(start, len(text)):
            depth += (text[end] == "[") - (text[end] == "]")
            if depth == 0:
                break
        end += 1
    else:
        end = re.compile(r"[^\s,;()]+").match(text, start).end()
        unit = _UNIT.match(text, end)
        end = unit.end() if unit else end
    return text[start:end], end


def examples_in(text: str) -> list:
    """Every example a format description shows (``e.g. A or B``, ``such as "C"``), as sheet values."""
    found = []
    for intro in _INTRO.finditer(text):
        position = intro.end()
        while True:
            example, position = _one(text, position)
            found.append(_value(example))
            if not text.startswith(" or ", position):
                break
            position += len(" or ")
    return found


def _cases() -> list[tuple[str, int]]:
    load_all()
    from problemgen.model.registry import _REGISTRY

    return [(name, d) for name in sorted(_REGISTRY) for d in get_kind(name).difficulties]


def _refusals(part) -> list[str]:
    refused = []
    for example in examples_in(describe_format(part)):
        result = grade_part(part, example)
        if result.status == "correct" or result.score > 0:
            refused.append(f"{part.key}: the example {example!r} is accepted ({result.status}, {result.score})")
    return refused


def _usual(part) -> tuple:
    """The examples a part of this type shows unless its key is one of them: the first candidates."""
    from problemgen.answers.types import expression, integer, number, shape, term

    first = {"number": (number.EXAMPLE_NUMBERS[0], *(next(iter(number.EXAMPLE_EXPRESSIONS)),) * bool(part.exact)),
             "integer": (integer.EXAMPLE_INTEGERS[0], f"{integer.EXAMPLE_INTEGERS[0]:,}"),
             "shape": shape.EXAMPLE_SHAPES[:1], "term": term.EXAMPLE_TERMS[:1],
             "expression": tuple(expression.EXAMPLE_EXPRESSIONS)[:1]}
    return first.get(part.type, types.get(part.type).examples(part))


@pytest.mark.parametrize("kind,difficulty", _cases())
def test_no_format_example_is_the_key_or_accepted_for_it(kind, difficulty):
    problems = [generate(kind, seed, difficulty) for seed in SEEDS]
    assert [r for p in problems for part in p.parts for r in _refusals(part)] == []


@pytest.mark.parametrize("kind,difficulty", _cases())
def test_every_part_shows_the_usual_example_so_an_example_never_hints_at_a_key(kind, difficulty):
    """An example that avoided its key would tell a student who knows the code that the usual one is the
    key: the usual examples are chosen so that no variant needs another."""
    for part in (part for seed in SEEDS for part in generate(kind, seed, difficulty).parts):
        assert types.get(part.type).examples(part) == _usual(part), (part.key, part.value)


def test_the_audited_examples_are_no_longer_their_own_keys():
    scale = generate("scaling.choose_scale", 1, 2, d_model=512, heads=8)  # d_k = 64
    part = next(p for p in scale.parts if p.key == "scale")
    assert part.value == 0.125
    assert "0.125" not in describe_format(part) and _refusals(part) == []
    gpt2 = generate("params.model", 1, 3, preset="gpt2-small")
    total = next(p for p in gpt2.parts if p.key == "total")
    assert total.value == 124439808
    assert "124439808" not in describe_format(total) and "124,439,808" not in describe_format(total)
    hints = grade_part(total, "124439808 bits").feedback + grade_part(total, "12443,9808").feedback
    assert "e.g. 124439808" not in hints and "e.g. 124,439,808" not in hints  # the invalid-answer hints too


@pytest.mark.parametrize("name", types.names())
def test_each_type_shows_exactly_the_examples_it_checked(name):
    """``examples`` is what ``describe`` shows: every example is in the text, and the text shows no other."""
    parts = [part for kind, d in _cases() for part in generate(kind, 3, d).parts if part.type == name]
    if not parts:
        pytest.skip(f"no problem asks for an answer of type {name}")
    answer_type = types.get(name)
    for part in parts:
        shown = sorted(map(repr, examples_in(describe_format(part))))
        assert shown == sorted(repr(_value(x) if isinstance(x, str) else x) for x in answer_type.examples(part)), \
            describe_format(part)


def test_a_choice_shows_no_example_since_any_option_may_be_the_key():
    part = generate("concepts.choice", 1, 1).parts[0]
    assert examples_in(describe_format(part)) == []


@pytest.mark.parametrize("part", [
    AnswerPart("x", "number", -4.25, atol=0.005),
    AnswerPart("x", "number", -6.5, rtol=0.01, exact="-exp(2)/(1+exp(-2))"),
    AnswerPart("n", "integer", 123456789),
    AnswerPart("t", "term", ["Dropout"]),
    AnswerPart("s", "shape", ["N", "C", "W"]),
    AnswerPart("e", "expression", "-exp(2)/(1+exp(-2))", spec={"decimal": -6.5082}),
], ids=lambda p: p.type)
def test_a_key_equal_to_the_usual_example_is_shown_another(part):
    shown = examples_in(describe_format(part))
    assert shown and _refusals(part) == []


def _sheet_header_examples() -> list[str]:
    """The values of a blank sheet's "Write answers as on paper: …;" line."""
    from problemgen.sheets import answersheet

    source = open(answersheet.__file__, encoding="utf-8").read()
    line = re.search(r"Write answers as on paper: (.*?); quotes are optional", source)[1]
    items, depth, start = [], 0, 0
    for at, char in enumerate(line + ","):
        depth += (char in "([") - (char in ")]")
        if char == "," and depth == 0:
            items.append(line[start:at].strip())
            start = at + 1
    return items


@pytest.mark.parametrize("kind,difficulty", _cases())
def test_no_example_on_the_sheets_first_lines_is_accepted_for_any_part(kind, difficulty):
    """The sheet's general line once showed 0.25, the scale's key at d_k = 16, and a 2x2 of weights. (A
    matrix example may share an entry with a key, earning that entry's credit; it is never the key.)"""
    examples = _sheet_header_examples()
    assert len(examples) == 5
    for part in (part for seed in range(6) for part in generate(kind, seed, difficulty).parts):
        accepted = [e for e in examples if grade_part(part, e).status == "correct"]
        assert accepted == [], (part.key, part.value, accepted)
