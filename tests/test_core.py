"""The problem model: JSON round trips, freezing rules and the value comparison used by self-checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from problemgen.model.core import AnswerPart, Mistake, Problem, to_jsonable, values_match


def sample_problem() -> Problem:
    part = AnswerPart(
        key="weights",
        type="matrix",
        value=[[0.5, 0.5], [0.33, 0.67]],
        label="the attention weights",
        atol=0.005,
        mistakes=(Mistake("no_scaling", [[0.5, 0.5], [0.27, 0.73]], "scale"),),
    )
    return Problem("attention.weights", 3, 1, {"L": 2}, "Weights", "attention", {"Q": [[1, 0]]}, (part,), {"S": [[1]]})


def test_problem_survives_a_json_round_trip_unchanged():
    problem = sample_problem()
    assert Problem.from_dict(json.loads(json.dumps(problem.to_dict()))) == problem


def test_variant_id_names_kind_difficulty_seed_and_overrides():
    assert sample_problem().variant_id == "attention.weights/d1/s3,L=2"


def test_to_jsonable_converts_numpy_and_refuses_non_finite_values():
    assert to_jsonable({"a": np.arange(3), "b": np.float64(1.5), "c": (np.int64(2),)}) == {"a": [0, 1, 2], "b": 1.5, "c": [2]}
    with pytest.raises(ValueError):
        to_jsonable([1.0, float("-inf")])


def test_matrix_values_match_needs_the_exact_shape_and_every_entry_within_tolerance():
    part = sample_problem().parts[0]
    assert values_match(part, [[0.5, 0.5], [0.334, 0.668]])
    assert not values_match(part, [[0.5, 0.5], [0.34, 0.67]])
    assert not values_match(part, [[0.5, 0.5, 0.0], [0.33, 0.67, 0.0]])
    assert not values_match(part, [0.5, 0.5, 0.33, 0.67])


def test_numbers_use_absolute_plus_relative_tolerance():
    part = AnswerPart(key="x", type="number", value=100.0, rtol=0.01, atol=0.0)
    assert values_match(part, 100.9)
    assert not values_match(part, 101.1)


def test_answer_part_rejects_unknown_types_and_non_identifier_keys():
    with pytest.raises(ValueError):
        AnswerPart(key="x", type="vector", value=1)
    with pytest.raises(ValueError):
        AnswerPart(key="a b", type="number", value=1)


@pytest.mark.parametrize(
    "value,shape",
    [([1, 2], (2,)), ([[1, 2], [3, 4]], (2, 2)), ([[[1], [2]], [[3], [4]]], (2, 2, 1)), ([], (0,)), ([[]], (1, 0)), (5, ())],
)
def test_flatten_reports_the_shape_of_regular_nested_lists(value, shape):
    from problemgen.model.core import _flatten

    assert _flatten(value)[0] == shape


@pytest.mark.parametrize("ragged", [[[1], [2, 3]], [1, [2]], [[1, [2]], [3, 4]], [[[1]], [2]]])
def test_flatten_refuses_ragged_lists(ragged):
    from problemgen.model.core import _flatten

    with pytest.raises(ValueError):
        _flatten(ragged)


def test_catalogue_hints_are_not_repeated_in_frozen_files_but_come_back_on_load():
    from problemgen.misconceptions.catalogue import mistake

    default, custom = mistake("no_scaling", 1.0), mistake("no_scaling", 1.0, "a specific hint")
    assert "hint" not in default.to_dict() and custom.to_dict()["hint"] == "a specific hint"
    assert Mistake.from_dict(default.to_dict()) == default
    assert Mistake.from_dict(custom.to_dict()) == custom


def test_the_model_never_branches_on_an_answer_type_name():
    """Each answer type owns its comparison (``AnswerType.same``); core only looks the type up."""
    import ast
    from pathlib import Path

    from problemgen.model import core

    names = set(core.ANSWER_TYPES)
    tree = ast.parse(Path(core.__file__).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            named = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in names]
            assert not named, f"core compares with answer type names {named}: {ast.unparse(node)}"


def test_values_match_asks_the_parts_answer_type(monkeypatch):
    from problemgen.answers import types

    calls = []
    term = types.get("term")
    monkeypatch.setattr(type(term), "same", lambda self, part, c, r: calls.append((part.key, c, r)) or True)
    assert values_match(AnswerPart(key="t", type="term", value=["softmax"]), "anything")
    assert calls == [("t", "anything", ["softmax"])]


def test_every_answer_type_module_is_found_by_the_models_lookup():
    from problemgen.answers import types
    from problemgen.model.core import ANSWER_TYPES, answer_type

    assert all(answer_type(name) is types.get(name) and answer_type(name).name == name for name in ANSWER_TYPES)
    with pytest.raises(KeyError):
        answer_type("nonsense")
