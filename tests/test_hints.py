"""Progressive hints over the real kinds: at least two levels before the solution for every kind, and a
level-2 step written in the worked solution's own notation, never under an internal variable name."""

from __future__ import annotations

import re

import pytest

from problemgen.documents.rendering import render_block
from problemgen.model import registry
from problemgen.practice.hints import NO_MORE, first_step, hint_levels, hint_text, solution_names

CASES = [(spec.name, d) for spec in registry.all_kinds() for d in spec.difficulties]


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.slow
@pytest.mark.parametrize("kind, difficulty", CASES)
def test_every_kind_has_two_hint_levels_before_the_solution_and_no_internal_names(kind, difficulty):
    problem = registry.generate(kind, 4, difficulty)
    for part in problem.parts:
        levels = hint_levels(problem, part, "the unit hint", solution_names(kind))
        assert len(levels) >= 2 and NO_MORE not in levels
        for text in levels[1:]:
            for name in problem.solution:
                if "_" in name:
                    assert not re.search(rf"\b{re.escape(name)}\s*=", text), (name, text)
    step = first_step(problem, solution_names(kind))
    if step:  # the step is printed, exactly, by this variant's worked solution
        assert _squeeze(step) in _squeeze(render_block(problem, "solution", "text"))


def test_hint_two_names_the_quantity_as_the_solution_writes_it():
    problem = registry.generate("attention.weights", 1, 1)
    text = hint_text(problem, problem.parts[0], "unit", 2, solution_names("attention.weights"))
    assert "1/√dₖ = 1/" in text and "sqrt_dk" not in text


def test_a_statement_from_a_branch_the_variant_skips_is_never_used():
    for seed in range(12):  # LayerNorm and RMSNorm variants print "one" under different sentences
        problem = registry.generate("params.norms", seed, 3)
        step = first_step(problem, solution_names("params.norms"))
        assert step is None or _squeeze(step) in _squeeze(render_block(problem, "solution", "text"))


def test_hint_two_never_gives_an_answer_away():
    for kind in ("attention.weights", "masks.causal", "params.matrix", "scaling.choose_scale"):
        for seed in range(5):
            problem = registry.generate(kind, seed, 2)
            step = first_step(problem, solution_names(kind)) or ""
            for part in problem.parts:
                if isinstance(part.value, int) and part.value > 9:
                    assert not step.endswith(f"= {part.value}"), (kind, seed, step)
