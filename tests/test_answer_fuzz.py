"""Every kind's answer keys, mutated, through every channel: each gets a clean verdict (slow).

A student's near-miss is the hardest input a reader meets: the key's own text with a character dropped,
a token pasted in (``1or 2``, ``2^1e-99999999999999999999``, ``0.35*10^344``, a lone surrogate) or a
bracket moved. A campaign of millions of such mutations found readers raising decimal, overflow and
recursion errors; this test keeps a fixed, derandomized sample of them in CI. A reader's exception
fails it (``tests/conftest.py`` re-raises grader faults), and so does a verdict out of range or a
message of more than one line.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.model.registry import all_kinds, generate  # noqa: E402
from problemgen.sheets.answersheet import key_value, toml_value  # noqa: E402

pytestmark = pytest.mark.slow

TOKENS = ["0", "1", "-", "\u2212", ".", "/", "e", "e-", "*", "^", "(", ")", "[", "]", ",", ";", " ", "\n", "inf",
          "-inf", "nan", "T", "F", "true", "x", "\u00d7", "sqrt(", "2", "9", "1e308", "5e-324", "9" * 25, "_", "'",
          '"', "d_k", "h", "MiB", "GB", "%", "b", "(b)", "array(", "torch.Size(", "j", "or", "if", "\t", "\u221e",
          "1/3", "[[", "]]", "],[", "1_000", "0,5", "2^1e-99999999999999999999", "*10^344", "\ud800", "[" * 400]


@functools.lru_cache(maxsize=1)
def key_texts() -> list[tuple[object, str]]:
    """(part, the key as a student would type it) for every part of every kind at every difficulty."""
    found = []
    for spec in all_kinds():
        for difficulty in spec.difficulties:
            for part in generate(spec.name, 7 + difficulty, difficulty).parts:
                found.append((part, toml_value(key_value(part))))
    return found


def mutated(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each edit applied: 0 drops a character, 1 inserts the token, 2 overwrites one."""
    chars = list(text)
    for operation, position, token in edits:
        at = position % (len(chars) + 1)
        if operation == 0 and chars:
            del chars[min(at, len(chars) - 1)]
        elif operation == 1 or not chars:
            chars.insert(at, token)
        else:
            chars[min(at, len(chars) - 1)] = token
    return "".join(chars)


@settings(max_examples=4000, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, 10**6),
       edits=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10**6), st.sampled_from(TOKENS)), min_size=1, max_size=4))
def test_a_mutated_key_gets_a_clean_verdict_in_every_channel(index, edits):
    parts = key_texts()
    part, key = parts[index % len(parts)]
    text = mutated(key, edits)
    for channel, result in verdicts(part, text).items():
        assert result.status in ("correct", "wrong", "invalid"), (channel, result)
        assert 0.0 <= result.score <= 1.0 and (result.status != "invalid" or result.score == 0.0), (channel, result)
        assert "\n" not in result.feedback and len(result.feedback) < 1000, (channel, result)
