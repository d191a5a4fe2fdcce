"""Shape answers: one rule for names, given numbers, products and names the prompt defines as equal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.model.core import AnswerPart  # noqa: E402

DIMS = {"B": 4, "L": 12, "h": 8, "d_k": 128, "d_v": 128, "d_model": 1024}
MERGED = AnswerPart(key="s", type="shape", value=["B", "L", "h*d_v"],
                    spec={"dims": DIMS, "equal": {"d_v": "d_k", "d_model": "h*d_k"}})
PLAIN = AnswerPart(key="s", type="shape", value=["B", "L", "h*d_k"], spec={"dims": DIMS})
HEADS = AnswerPart(key="q_heads", type="shape", value=["B", "h", "L", "d_k"],  # as a worksheet asks it (h = 3)
                   spec={"dims": {"B": 2, "L": 7, "d_k": 64, "d_model": 192, "d_v": 64, "h": 3},
                         "equal": {"d_model": "h*d_k", "d_v": "d_k"}})
SLICE = AnswerPart(key="head", type="shape", value=["B", "h", "L", "d_model/h"],  # one head's slice, d_model = 512
                   spec={"dims": {"B": 2, "L": 7, "d_k": 64, "d_model": 512, "d_v": 64, "h": 8},
                         "equal": {"d_model": "h*d_k", "d_v": "d_k"}})

ACCEPTED = [
    (MERGED, "(B, L, h*d_v)"), (MERGED, "(B, L, d_model)"), (MERGED, "(B, L, h*d_k)"), (MERGED, "(4, 12, 1024)"),
    (MERGED, "[B, L, d_v*h]"), (MERGED, "B x L x h*d_v"), (MERGED, "B \u00d7 L \u00d7 h\u00b7d_v"),
    (MERGED, "(B, L, h\u00d7d_v)"), (MERGED, "torch.Size([4, 12, 1024])"), (MERGED, "4x12x1024"),
    (MERGED, "(B, L, 8*d_k)"), (PLAIN, "(B, L, d_k*h)"), (PLAIN, "(B,L,h*d_k)"), (PLAIN, "(4, 12, 1024)"),
    (HEADS, "(B, h, L, d_model/h)"), (HEADS, "(B, h, L, 192/3)"),
    (HEADS, "(B, h, L, d_model/3)"), (HEADS, "(B, h, L, (d_model)/3)"),  # the number given for h
    (HEADS, "(B, d_model/64, L, d_k)"),
    (HEADS, "(B, h, L, 192/h)"), (HEADS, "(B, 192/d_k, L, d_k)"),  # the number given for d_model
    (SLICE, "(B, h, L, 512/h)"), (SLICE, "(B, h, L, (512)/h)"), (SLICE, "(B, h, L, 512 / h)"),
    (SLICE, "(B, h, L, d_model/h)"), (SLICE, "(B, h, L, 64)"),
]

WRONG = [
    (PLAIN, "(B, L, h*d_v)"),      # an unrelated name of equal value stays wrong
    (PLAIN, "(B, L, d_model)"),    # this part does not define d_model = h*d_k
    (MERGED, "(B, h, L, d_v)"),
    (MERGED, "(L, B, h*d_v)"),
    (HEADS, "(B, h, L, d_model/2)"),
    (HEADS, "(d_model/96, h, L, d_k)"),  # B = 2 = 192/96: the size of the batch axis, not its name
    (HEADS, "(B, h, d_model/(3*d_k)*7, d_k)"),  # 7 = L, written without L
    (SLICE, "(B, h, L, 1024/h)"), (SLICE, "(B, h, L, 512/B)"),  # not d_model's number; not over h
    (SLICE, "(B, h, L, 5120/h)"), (SLICE, "(B, h, L, 512.5/h)"),  # 512 only as a whole number of its own
    (HEADS, "(B, h, L, 192/L)"),
]


@pytest.mark.parametrize("part, text", ACCEPTED)
def test_notations_of_the_key_are_correct_in_every_channel(part, text):
    results = verdicts(part, text)
    assert {r.status for r in results.values()} == {"correct"}, {k: r.feedback for k, r in results.items()}


@pytest.mark.parametrize("part, text", WRONG)
def test_other_dimensions_are_wrong(part, text):
    assert {r.status for r in verdicts(part, text).values()} == {"wrong"}


@pytest.mark.parametrize("text, message", [("(B, __import__('os'), L)", "dimension"), ("(B, L, d_k", "dimension")])
def test_unreadable_shapes_are_invalid(text, message):
    for channel, result in verdicts(PLAIN, text).items():
        assert result.status == "invalid" and message in result.feedback, (channel, result)


def test_a_number_two_defined_names_share_is_read_as_neither():
    """Read as d_model, 64/h would be d_k; read as d_ff (4*d_k), it would not: it stays the number 64."""
    from problemgen.answers.types.shape import same_dim

    numbers, equal = {"h": 4, "d_k": 16, "d_model": 64, "d_ff": 64}, {"d_model": "h*d_k", "d_ff": "4*d_k"}
    assert same_dim("d_model/h", "d_k", numbers, equal) and not same_dim("64/h", "d_k", numbers, equal)
    assert same_dim("64/h", "d_k", numbers, {"d_model": "h*d_k"})


@pytest.mark.parametrize("text, feedback", [
    ("(B, L, h)", "wrong dimension at position 3"), ("(L, B, d_k)", "wrong dimensions at positions 1, 2, 3"),
])
def test_the_feedback_names_the_wrong_dimensions_in_plain_english(text, feedback):
    """It once said "wrong dimension(s) at position 1, 2, 3" whatever their number."""
    for channel, result in verdicts(PLAIN, text).items():
        assert result.status == "wrong" and result.feedback.startswith(feedback), (channel, result)
