"""Whole-number answers: thousands separators, units, exact expressions; no tolerance."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.model.core import AnswerPart  # noqa: E402

COUNT = AnswerPart(key="n", type="integer", value=124439808)


@pytest.mark.parametrize("text", ["124439808", "124,439,808", "124_439_808", "124 439 808", "124\u2009439\u2009808",
                                  "124439808 bytes", "995518464 bits", "1.24439808e8", "62219904*2", "62,219,904 \u00d7 2"])
def test_notations_of_the_count_are_correct(text):
    results = verdicts(COUNT, text)
    assert {r.status for r in results.values()} == {"correct"}, {k: r.feedback for k, r in results.items()}


@pytest.mark.parametrize("text, message", [("124,43", "groups of three"), ("1244398.08", "whole number"),
                                           ("many", "unknown name")])
def test_unreadable_counts_are_invalid(text, message):
    for channel, result in verdicts(COUNT, text).items():
        assert result.status == "invalid" and message in result.feedback, (channel, result)


@pytest.mark.parametrize("text", ["124439809", "124,439,809", "4\u00d72^20", "124439808 bits", "995518465 bits"])
def test_other_counts_are_wrong(text):
    assert {r.status for r in verdicts(COUNT, text).values()} == {"wrong"}
