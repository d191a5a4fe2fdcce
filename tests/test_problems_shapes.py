"""Shape generators: symbolic answers match a hand-written trace, numbers are accepted, one bug per pipeline."""

from __future__ import annotations

import re

import pytest

from problemgen.model import registry
from problemgen.sheets.grading import grade_part

SEEDS = range(15)

EXPECTED_SELF = {
    "q": ["B", "L", "h*d_k"],
    "q_heads": ["B", "h", "L", "d_k"],
    "k_heads": ["B", "h", "L", "d_k"],
    "scores": ["B", "h", "L", "L"],
    "weights": ["B", "h", "L", "L"],
    "head_outputs": ["B", "h", "L", "d_v"],
    "concat": ["B", "L", "h*d_v"],
    "output": ["B", "L", "d_model"],
}


def _problems(kind: str):
    for d in (1, 2, 3):
        for seed in SEEDS:
            yield registry.generate(kind, seed, d)


def _numeric(shape: list[str], dims: dict[str, int]) -> str:
    sizes = []
    for dim in shape:
        value = 1
        for factor in dim.split("*"):
            value *= dims[factor]
        sizes.append(str(value))
    return "(" + ", ".join(sizes) + ")"


def test_trace_matches_the_hand_written_pipeline_and_sizes_are_distinct():
    for p in _problems("shapes.trace"):
        dims = p.params["dims"]
        assert len({dims[n] for n in ("B", "L", "h", "d_k", "d_model")}) == 5
        for part in p.parts:
            assert part.value == EXPECTED_SELF[part.key]


def test_trace_accepts_names_or_the_given_numbers_and_names_the_missing_transpose():
    for seed in SEEDS:
        p = registry.generate("shapes.trace", seed, 3)
        dims = p.params["dims"]
        for part in p.parts:
            assert grade_part(part, "(" + ", ".join(part.value) + ")").status == "correct"
            assert grade_part(part, _numeric(part.value, dims)).status == "correct"
        scores = p.part("scores")
        result = grade_part(scores, _numeric(["B", "L", "h", "h"], dims))
        assert result.status == "wrong" and result.mistake == "split_without_transpose"


def test_cross_attention_scores_are_decoder_by_encoder():
    for p in _problems("shapes.cross"):
        scores = p.part("scores")
        assert scores.value[-2:] == ["L", "S"]
        assert p.params["dims"]["L"] != p.params["dims"]["S"]
        transposed = {m.name: m.value for m in scores.mistakes}["transpose_scores"]
        assert transposed[-2:] == ["S", "L"]
        key_rows = {part.key: part.value for part in p.parts}
        for name in ("k", "k_heads", "v_heads"):
            if name in key_rows:
                assert "S" in key_rows[name] and "L" not in key_rows[name]


def test_bug_pipeline_has_exactly_one_wrong_line():
    for p in _problems("shapes.bug"):
        dims = dict(p.params["dims"])
        dims["d_k"] = dims["d_v"] = dims["d_model"] // dims["h"]
        correct = {
            "the input $X$": ["B", "L", "d_model"],
            "$Q = X W_Q$ (all heads packed)": EXPECTED_SELF["q"],
            "$Q$ split into heads, as fed to the per-head product $Q K^\\top$": EXPECTED_SELF["q_heads"],
            "the scores $Q K^\\top$ of every head": EXPECTED_SELF["scores"],
            "the softmax weights": EXPECTED_SELF["weights"],
            "the head outputs $A V$": EXPECTED_SELF["head_outputs"],
            "the heads merged for $W_O$": EXPECTED_SELF["concat"],
            "the output after $W_O$": EXPECTED_SELF["output"],
        }
        part = p.part("line")
        assert len(part.value) == 1
        for option in part.spec["options"]:
            what, shown = re.fullmatch(r"(.*): \$(\(.*\))\$", option["text"]).groups()
            is_right = shown == _numeric(correct[what], dims)
            assert is_right == (option["id"] not in part.value), option


@pytest.mark.parametrize("kind", ["shapes.trace", "shapes.cross", "shapes.bug"])
def test_shape_variants_differ_between_seeds(kind):
    seen = {str(registry.generate(kind, seed, 2).params) for seed in range(20)}
    assert len(seen) >= 15


def test_single_head_cross_attention_gives_values_their_own_width():
    for seed in range(30):
        p = registry.generate("shapes.cross", seed, 1)
        dims = p.params["dims"]
        assert len(set(dims.values())) == len(dims), dims
        assert p.part("output").value == ["L", "d_v"]
