"""Number answers: the ways people write a number, units, percent, and what stays invalid."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.model.core import AnswerPart, Mistake  # noqa: E402

QUARTER = AnswerPart(key="x", type="number", value=0.25, atol=0.005)
BIG = AnswerPart(key="x", type="number", value=2500.0, rtol=0.001)
ROOT = AnswerPart(key="x", type="number", value=0.7071067811865476, atol=0.0005, exact="sqrt(2)/2")
NEG = AnswerPart(key="x", type="number", value=-0.5, atol=0.005)
MEMORY = AnswerPart(key="size", type="number", value=201.3, rtol=0.001, spec={"unit": "MB"},
                    mistakes=(Mistake("decimal_vs_binary_units", 191.98, "MB are 10^6 bytes, MiB 2^20."),))

ACCEPTED = [
    (QUARTER, "0.25"), (QUARTER, ".25"), (QUARTER, "1/4"), (QUARTER, "25%"), (QUARTER, "2.5e-1"),
    (QUARTER, "2.5×10^-1"), (QUARTER, "2.5 x 10^-1"), (QUARTER, "2.5*10^(-1)"), (QUARTER, "1/(2·2)"),
    (BIG, "2.5×10^3"), (BIG, "2.5e3"), (BIG, "2500"),
    (ROOT, "√2/2"), (ROOT, "1/√2"), (ROOT, "sqrt(2)/2"), (ROOT, "0.7071"),
    (NEG, "\u22120.5"), (NEG, "-1/2"), (NEG, "\u2212.5"),
    (MEMORY, "201.3 MB"), (MEMORY, "201.3MB"), (MEMORY, "201.3"),
    (MEMORY, "191.98 MiB"),  # the paired unit, converted: 191.98 MiB = 201.3 MB
]

INVALID = [
    (QUARTER, "0,25", "decimal point"),
    (QUARTER, "seven", "unknown name"),
    (QUARTER, "0.25 MB", "asks for a plain number"),
    (BIG, "25%", "not a percentage"),
    (MEMORY, "201.3 GB", "asks for the answer in MB"),
    (QUARTER, "\uff10.25", "FULLWIDTH DIGIT ZERO"),
    (BIG, "0.347795445*10^344", "too large"),  # 10.0 ** 344 raises OverflowError: never out of the grader
    (QUARTER, "10^-400", "too small"),
]


@pytest.mark.parametrize("part, text", ACCEPTED)
def test_notations_of_the_key_are_correct_in_every_channel(part, text):
    results = verdicts(part, text)
    assert {r.status for r in results.values()} == {"correct"}, {k: r.feedback for k, r in results.items()}


@pytest.mark.parametrize("part, text, message", INVALID)
def test_unreadable_numbers_are_invalid_with_a_message(part, text, message):
    for channel, result in verdicts(part, text).items():
        assert result.status == "invalid" and message in result.feedback, (channel, result)


def test_the_asked_number_in_the_paired_unit_names_the_unit_mistake():
    for channel, result in verdicts(MEMORY, "201.3 MiB").items():
        assert (result.status, result.mistake) == ("wrong", "decimal_vs_binary_units"), channel


@pytest.mark.parametrize("text", ["0.3", "-0.25", "1/3", "2.5e-2", "\u22120.25"])
def test_other_values_are_wrong(text):
    assert {r.status for r in verdicts(QUARTER, text).values()} == {"wrong"}
