"""Every shortcut class grading takes, against the general path it stands beside.

Class grading reads thousands of sheets that come back as we handed them out, so a few steps take a
shortcut for that plain case (a plain numeric array, a plain mask, a variant file with every field).
Each shortcut must give exactly what the general path gives — the same verdict, feedback and score —
on generated input and on hostile input, and must step aside for anything else.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "grading"))
import grading_fixture as fx  # noqa: E402

from problemgen.answers import arrays  # noqa: E402
from problemgen.answers.text import NonFinite, SheetArray  # noqa: E402
from problemgen.answers.types import mask as mask_type  # noqa: E402
from problemgen.answers.types import matrix as matrix_type  # noqa: E402
from problemgen.model.core import AnswerPart, Mistake, Problem, misses, numbers_close  # noqa: E402
from problemgen.model.variantfile import WorksheetVariant  # noqa: E402

def general(answer_type):
    """The same answer type with its shortcut turned off: the general reader alone."""

    class General(type(answer_type)):
        def plain_reading(self, part, raw):
            return None

    return General()


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Entries a sheet can hold, hostile ones included: every float (nan, inf, -0.0, subnormals), integers past
# any float, booleans, text, non-finite markers, nested lists and tables.
ENTRIES = st.one_of(
    st.floats(), st.floats(min_value=-2, max_value=2), st.sampled_from([0.0, -0.0, 1.0, 0.5, 1e308, 5e-324]),
    st.integers(-3, 3), st.integers(min_value=-(10**310), max_value=10**310), st.booleans(),
    st.sampled_from(["-inf", " -inf", "-INF", "-∞", "0", "1", "T", "false", "1/2", "0,5", "@@", "", "nan"]),
    st.builds(NonFinite, st.sampled_from(["nan", "inf", "-inf", "1e999"])),
    st.lists(st.integers(0, 1), max_size=2), st.dictionaries(st.just("a"), st.integers(0, 1), max_size=1),
)


def _shaped(draw, shape: tuple[int, ...], entries) -> object:
    """A raw answer of ``shape`` (sometimes not quite: a row too long, a SheetArray, a tuple)."""
    if len(shape) == 1:
        raw = [draw(entries) for _ in range(shape[0])]
    else:
        raw = [[draw(entries) for _ in range(shape[1])] for _ in range(shape[0])]
    twist = draw(st.integers(0, 9))
    if twist == 0 and raw:
        raw[-1] = raw[-1] + [draw(entries)] if isinstance(raw[-1], list) else [raw[-1]]
    elif twist == 1:
        raw = SheetArray(raw, draw(st.sampled_from(["[[0,5, 0,5]]", "[1, 2]"])))
    elif twist == 2 and raw:
        raw = [tuple(r) if isinstance(r, list) else r for r in raw]
    elif twist == 3:
        raw = [raw]
    return raw


@st.composite
def matrix_cases(draw):
    shape = draw(st.sampled_from([(1,), (3,), (1, 3), (2, 2), (3, 1), (2, 3)]))
    numbers = st.floats(-2, 2).map(lambda x: round(x, 2))
    key = [draw(numbers) for _ in range(shape[0])] if len(shape) == 1 else \
        [[draw(numbers) for _ in range(shape[1])] for _ in range(shape[0])]
    mistake = [[x + 0.5 for x in row] for row in key] if len(shape) == 2 else [x + 0.5 for x in key]
    part = AnswerPart(key="m", type="matrix", value=key, atol=draw(st.sampled_from([0.0, 0.005, 0.5])),
                      rtol=draw(st.sampled_from([0.0, 0.01])), mistakes=(Mistake("shifted", mistake, "Hint."),))
    near = st.one_of(st.sampled_from([x for row in (key if len(shape) == 2 else [key]) for x in row]), ENTRIES)
    which = draw(st.integers(0, 3))
    raw = key if which == 0 else mistake if which == 1 else _shaped(draw, shape, near)
    return part, raw


@SETTINGS
@given(matrix_cases())
def test_the_plain_matrix_shortcut_grades_as_the_general_reader(case):
    part, raw = case
    assert matrix_type.TYPE.grade(part, raw) == general(matrix_type.TYPE).grade(part, raw)


@st.composite
def mask_cases(draw):
    representation = draw(st.sampled_from(["bool", "01", "additive"]))
    shape = draw(st.sampled_from([(2, 2), (1, 3), (3, 3)]))
    key = [[draw(st.booleans()) for _ in range(shape[1])] for _ in range(shape[0])]
    leaky = [[True for _ in row] for row in key]
    part = AnswerPart(key="m", type="mask", value=key, spec={"representation": representation},
                      mistakes=(Mistake("leaky", leaky, "Hint."),))
    written = st.sampled_from([True, False, 0, 1, 0.0, 1.0, -0.0, "-inf", 2, -1e9, NonFinite("-inf")])
    which = draw(st.integers(0, 3))
    raw = (mask_type.mask_in(key, representation) if which == 0 else mask_type.mask_in(leaky, representation)
           if which == 1 else _shaped(draw, shape, st.one_of(written, ENTRIES)))
    return part, raw


@SETTINGS
@given(mask_cases())
def test_the_plain_mask_shortcut_grades_as_the_general_reader(case):
    part, raw = case
    assert mask_type.TYPE.grade(part, raw) == general(mask_type.TYPE).grade(part, raw)


@pytest.mark.parametrize("representation", ["bool", "01", "additive"])
def test_every_plain_mask_entry_reads_as_as_mask_entry_reads_it(representation):
    for (kind, value), allowed in mask_type._PLAIN[representation].items():
        assert type(value) is kind
        assert mask_type.as_mask_entry(value, representation, "entry") is allowed


HOSTILE = [
    [[float("nan"), 0.0]], [[float("inf"), 0.0]], [[1e308, 1e308]], [[10**400, 0]], [[True, 0.0]], [[None, 1]],
    [["0.5", 0.5]], [[[0.5], 0.5]], [[0.5, 0.5, 0.5]], [[0.5], [0.5]], [0.5, 0.5], [[0.5, 0.5], 0.5],
    SheetArray([[0, 5]], "[[0,5]]"), [(0.5, 0.5)], [[{"a": 1}, 0.5]], [[NonFinite("-inf"), 0]], [[-0.0, 0]],
    [[1e308, -1e308]],
]


@pytest.mark.parametrize("raw", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("representation", [None, "bool", "01", "additive"])
def test_hostile_arrays_grade_as_the_general_reader(raw, representation):
    if representation is None:
        part = AnswerPart(key="m", type="matrix", value=[[0.5, 0.0]], atol=0.01)
        answer_type = matrix_type.TYPE
    else:
        part = AnswerPart(key="m", type="mask", value=[[True, False]], spec={"representation": representation})
        answer_type = mask_type.TYPE
    assert answer_type.grade(part, raw) == general(answer_type).grade(part, raw)


NESTED = st.recursive(st.one_of(st.integers(0, 2), st.floats(allow_nan=False)),
                      lambda children: st.lists(children, max_size=3), max_leaves=12)


@SETTINGS
@given(NESTED, st.sampled_from([(0,), (2,), (3,), (1, 2), (2, 2), (2, 3), (2, 2, 2)]))
def test_plain_entries_are_what_structure_reads(raw, shape):
    flat = arrays.plain_entries(raw, shape)
    if flat is None or any(isinstance(x, list) for x in flat):
        return
    assert arrays.structure(raw) == (shape, flat)


@SETTINGS
@given(st.lists(st.tuples(st.floats(allow_nan=False), st.floats(allow_nan=False, allow_infinity=False)), max_size=6),
       st.sampled_from([0.0, 0.005, 1.0]), st.sampled_from([0.0, 0.01]))
def test_misses_are_the_entries_numbers_close_refuses(pairs, atol, rtol):
    values, references = [a for a, _ in pairs], [b for _, b in pairs]
    assert misses(values, references, rtol, atol) == [
        i for i, (a, b) in enumerate(pairs) if not numbers_close(a, b, rtol, atol)]


def test_a_sum_of_finite_floats_is_finite_only_when_no_entry_overflows():
    """The matrix shortcut trusts a finite sum to mean finite entries; an overflowing sum goes the long way."""
    assert not math.isfinite(sum([1e308, 1e308]))
    part = AnswerPart(key="m", type="matrix", value=[[1e308, 1e308]], atol=0.0)
    assert matrix_type.TYPE.grade(part, [[1e308, 1e308]]).status == "correct"


# ------------------------------------------------------------------------------------------ variant objects


def _variants() -> list[dict]:
    data = json.loads(fx.fixture_variant(student="s1").to_json())
    partial = json.loads(json.dumps(data))
    for problem in partial["problems"]:
        for part in problem["problem"]["parts"]:
            del part["label"], part["spec"]  # an older or hand-written file: defaults fill in
    return [data, partial]


@pytest.mark.parametrize("data", _variants(), ids=["every field", "defaults"])
def test_variant_objects_are_those_the_constructors_build(data):
    variant = WorksheetVariant.from_dict(data)
    for sheet_problem, raw in zip(variant.problems, data["problems"]):
        built = Problem(**{**raw["problem"], "parts": tuple(
            AnswerPart(**{**p, "mistakes": tuple(Mistake(m["name"], m["value"], m.get("hint", _hint(m)))
                                                 for m in p["mistakes"])})
            for p in raw["problem"]["parts"])})
        assert sheet_problem.problem == built
        for fast, slow in zip(sheet_problem.problem.parts, built.parts):
            assert vars(fast) == vars(slow) and type(fast) is type(slow)
            assert [vars(m) for m in fast.mistakes] == [vars(m) for m in slow.mistakes]
        assert {f.name for f in fields(sheet_problem)} == set(vars(sheet_problem))


def _hint(mistake: dict) -> str:
    from problemgen.misconceptions.entries import DEFAULT_HINTS

    return DEFAULT_HINTS.get(mistake["name"], "")


@pytest.mark.parametrize("change, message", [
    (lambda p: p.update(type="tensor"), "unknown answer type"), (lambda p: p.update(key="not a key"), "identifier"),
    (lambda p: p.update(colour="red"), "unexpected keyword"),
])
def test_a_bad_part_is_refused_the_same_way(change, message):
    data = _variants()[0]
    change(data["problems"][0]["problem"]["parts"][0])
    with pytest.raises(Exception, match=message):
        WorksheetVariant.from_dict(data)


def test_the_cached_key_layout_is_no_part_of_the_value():
    part = AnswerPart(key="m", type="matrix", value=[[0.5, 0.0]], atol=0.01)
    assert part.layout == ((1, 2), [0.5, 0.0])
    assert part == AnswerPart(key="m", type="matrix", value=[[0.5, 0.0]], atol=0.01)
    assert "layout" not in part.to_dict() and Problem.from_dict(fx.attention_problem().to_dict()) == fx.attention_problem()


def _flatten_by_recursion(value):
    """The plain definition the direct paths of ``_flatten`` stand beside."""
    if not isinstance(value, list):
        return (), [value]
    if not value:
        return (0,), []
    shapes, flat = set(), []
    for item in value:
        shape, entries = _flatten_by_recursion(item)
        shapes.add(shape)
        flat.extend(entries)
    if len(shapes) != 1:
        raise ValueError("ragged nested list")
    return (len(value), *shapes.pop()), flat


@SETTINGS
@given(st.one_of(NESTED, st.lists(st.lists(st.one_of(st.floats(), st.booleans(), st.lists(st.integers(), max_size=2),
                                                       st.builds(SheetArray, st.lists(st.integers(), max_size=2), st.just(""))),
                                             min_size=2, max_size=3), max_size=3)))
def test_flatten_agrees_with_the_recursive_definition(value):
    from problemgen.model.core import _flatten

    try:
        expected = _flatten_by_recursion(value)
    except ValueError:
        with pytest.raises(ValueError):
            _flatten(value)
        return
    assert _flatten(value) == expected
