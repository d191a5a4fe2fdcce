"""Choice and term answers: option spellings, several picks, and words up to case, hyphens and plural."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.model.core import AnswerPart  # noqa: E402

OPTIONS = [{"id": i, "text": f"option {i}", "why": "because"} for i in "abcd"]
SINGLE = AnswerPart(key="c", type="choice", value=["b"], spec={"options": OPTIONS})
SEVERAL = AnswerPart(key="c", type="choice", value=["b", "d"], spec={"options": OPTIONS, "multiple": True})
TERM = AnswerPart(key="t", type="term", value=["layer norm", "layer normalization"])


@pytest.mark.parametrize("part, text", [
    (SINGLE, "b"), (SINGLE, "B"), (SINGLE, "(b)"), (SINGLE, "b)"), (SINGLE, "b."), (SINGLE, "option b"),
    (SEVERAL, "b, d"), (SEVERAL, "b and d"), (SEVERAL, "(b), (d)"), (SEVERAL, "B D"),
    (TERM, "LayerNorm"), (TERM, "layer-norms"), (TERM, "Layer Normalization"), (TERM, "layer_norm"),
])
def test_spellings_of_the_key_are_correct(part, text):
    results = verdicts(part, text)
    assert {r.status for r in results.values()} == {"correct"}, {k: r.feedback for k, r in results.items()}


@pytest.mark.parametrize("part, text, message", [
    (SINGLE, "b, d", "exactly one"), (SINGLE, "z", "no option"), (TERM, "--", "word"),
])
def test_unreadable_choices_and_terms_are_invalid(part, text, message):
    for channel, result in verdicts(part, text).items():
        assert result.status == "invalid" and message in result.feedback, (channel, result)


@pytest.mark.parametrize("part, text", [(SINGLE, "a"), (SEVERAL, "a, b"), (TERM, "batch norm")])
def test_other_answers_are_wrong(part, text):
    assert {r.status for r in verdicts(part, text).values()} == {"wrong"}


def test_a_term_answered_with_infinity_is_told_it_wrote_a_number():
    """A sheet's ``inf`` or ``1e999`` is kept as written (NonFinite); the message names its kind in words."""
    from problemgen.sheets.grading import grade_part
    from problemgen.answers.text import NonFinite

    result = grade_part(TERM, NonFinite("inf"))
    assert result.status == "invalid" and result.feedback == "write a word or short phrase, not a number"
