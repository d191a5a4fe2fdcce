"""Mask answers: each representation's spellings, and -1e9 is not -inf."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.model.core import AnswerPart  # noqa: E402

CAUSAL = [[True, False], [True, True]]


def mask(representation: str) -> AnswerPart:
    return AnswerPart(key="m", type="mask", value=CAUSAL, spec={"representation": representation})


ACCEPTED = [
    ("bool", "[[true, false], [true, true]]"), ("bool", "[[True, False], [True, True]]"),
    ("bool", "[[T, F], [T, T]]"), ("bool", "[[1, 0], [1, 1]]"), ("bool", "[[T F]\n [T T]]"),
    ("01", "[[1, 0], [1, 1]]"), ("01", "[[true, false], [true, true]]"), ("01", "[1 0; 1 1]"),
    ("additive", "[[0, -inf], [0, 0]]"), ("additive", "[[0, -\u221e], [0, 0]]"),
    ("additive", "[[0, \u2212\u221e], [0, 0]]"), ("additive", "[[0 -inf]\n [0 0]]"),
]


@pytest.mark.parametrize("representation, text", ACCEPTED)
def test_spellings_of_the_asked_representation_are_correct(representation, text):
    results = verdicts(mask(representation), text)
    assert {r.status for r in results.values()} == {"correct"}, {k: r.feedback for k, r in results.items()}


@pytest.mark.parametrize("representation, text, message", [
    ("additive", "[[0, -1e9], [0, 0]]", "-1e9 is not -inf"),
    ("additive", "[[1, 0], [1, 1]]", "additive mask"),
    ("bool", "[[0, -inf], [0, 0]]", "boolean mask"),
    ("01", "[[1, 2], [1, 1]]", "0/1 mask"),
])
def test_other_representations_are_invalid_naming_the_asked_one(representation, text, message):
    for channel, result in verdicts(mask(representation), text).items():
        assert result.status == "invalid" and message in result.feedback, (channel, result)


@pytest.mark.parametrize("representation, text", [("bool", "[[T, T], [T, T]]"), ("01", "[[1, 1], [1, 1]]"),
                                                  ("additive", "[[0, 0], [0, 0]]")])
def test_a_wrong_entry_is_wrong(representation, text):
    assert {r.status for r in verdicts(mask(representation), text).values()} == {"wrong"}


@pytest.mark.parametrize("representation, text", [("bool", "see attached"), ("bool", "hello"), ("01", "tril(ones(2))"),
                                                  ("additive", "[[0, -inf, 0], [0, 0, x]]")])
def test_text_that_is_no_mask_is_unreadable_not_a_wrong_shape(representation, text):
    """Read as a vector of words, such text was a shape error ("wrong"), which class statistics counted as a
    wrong answer rather than an unreadable one."""
    for channel, result in verdicts(mask(representation), text).items():
        assert result.status == "invalid" and "not read as a 2x2 mask" in result.feedback, (channel, result)


@pytest.mark.parametrize("representation, text", [("bool", "[[true, false, false], [true, true, false]]"),
                                                  ("01", "[[1, 0, 0]]")])
def test_a_mask_of_the_wrong_shape_is_still_wrong(representation, text):
    for channel, result in verdicts(mask(representation), text).items():
        assert result.status == "wrong" and "shape error" in result.feedback, (channel, result)
