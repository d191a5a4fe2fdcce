"""The variant contract over every registered kind, and tests that the checker itself catches bugs.

``problemgen check`` and this file run the same ``selfcheck.check_kind``: the key scores full marks,
a perturbed answer scores less, garbage is invalid, every listed mistake is graded wrong and named,
variants are deterministic and distinct, and every fragment renders in md, tex and text.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from problemgen import registry, selfcheck
from problemgen.core import AnswerPart, Mistake, values_match
from problemgen.misconceptions import mistake

SEEDS = 50
KINDS = [spec.name for spec in registry.all_kinds()]


@pytest.mark.parametrize("kind", KINDS)
def test_kind_keeps_the_variant_contract(kind):
    failures = selfcheck.check_kind(kind, SEEDS)
    assert not failures, f"{len(failures)} failure(s):\n" + "\n".join(str(f) for f in failures[:25])


def test_every_topic_has_kinds():
    assert {spec.topic for spec in registry.all_kinds()} >= {"attention", "scaling", "masks", "multihead", "shapes"}


# ------------------------------------------------------------------- the checker catches what it should

_NUMBER = AnswerPart(key="w", type="number", value=0.25, atol=0.005, mistakes=(mistake("no_scaling", 0.5),))
_MATRIX = AnswerPart(key="m", type="matrix", value=[[0.5, 0.5], [0.3, 0.7]], atol=0.005)
_MASK = AnswerPart(key="k", type="mask", value=[[True, False], [True, True]], spec={"representation": "01"})
_SHAPE = AnswerPart(key="s", type="shape", value=["B", "h", "L", "L"], spec={"dims": {"B": 2, "h": 4, "L": 5}})
_CHOICE = AnswerPart(key="c", type="choice", value=["b"], spec={"multiple": False, "options": [
    {"id": "a", "text": "one", "why": "no"}, {"id": "b", "text": "two", "why": "yes"}]})


@pytest.mark.parametrize("part", [_NUMBER, _MATRIX, _MASK, _SHAPE, _CHOICE], ids=lambda p: p.type)
def test_perturbed_answers_fall_outside_the_key(part):
    assert not values_match(part, selfcheck.perturb(part).value)


@pytest.mark.parametrize("part", [_NUMBER, _MATRIX, _MASK, _SHAPE, _CHOICE], ids=lambda p: p.type)
def test_well_formed_parts_pass_the_part_checks(part):
    assert selfcheck.check_part(part) == []


def test_a_mistake_equal_to_the_key_is_reported():
    part = replace(_NUMBER, mistakes=(mistake("no_scaling", 0.251),))
    assert any("cannot be told from the key" in p for p in selfcheck.check_part(part))


def test_an_uncatalogued_mistake_tag_is_reported():
    part = replace(_NUMBER, mistakes=(Mistake("forgot_everything", 0.9, "hint"),))
    assert any("not in the catalogue" in p for p in selfcheck.check_part(part))


def test_a_choice_key_outside_the_options_and_a_missing_why_are_reported():
    options = [{"id": "a", "text": "one", "why": ""}, {"id": "b", "text": "two", "why": "yes"}]
    part = replace(_CHOICE, value=["z"], spec={"multiple": False, "options": options})
    found = " | ".join(selfcheck._check_spec(part))
    assert "not among the options" in found and "needs a 'why'" in found


def test_prose_outside_math_is_linted_for_latex_specials_and_markdown():
    assert selfcheck._prose_problems("the d_k value") == ["_"]
    assert selfcheck._prose_problems("**bold** claim") == ["Markdown-only markup"]
    assert selfcheck._prose_problems("plain words, with (brackets) and 3/4.") == []


def test_garbage_keeps_the_answers_form():
    assert selfcheck.garbage_like([[0.5, 1], [2, 3]]) == [["@@", "@@"], ["@@", "@@"]]
    assert selfcheck.garbage_like(7) == "@@"


def test_repeated_variants_are_reported_as_not_distinct():
    same = {1: ["a"] * 10, 2: [str(i) for i in range(10)]}
    failures = selfcheck._distinctness("x.y", same)
    assert len(failures) == 1 and "difficulty 1" in failures[0].detail


def test_check_kinds_filters_by_topic():
    results = selfcheck.check_kinds(None, 2, topic="scaling")
    assert set(results) == {spec.name for spec in registry.all_kinds("scaling")}


def test_large_samples_need_a_space_of_25_variants_not_half_the_seeds():
    cycle = lambda n: [str(i % n) for i in range(400)]  # noqa: E731
    assert selfcheck._distinctness("x.y", {1: cycle(30)}) == []
    assert len(selfcheck._distinctness("x.y", {1: cycle(20)})) == 1
