"""Whole-number answers: thousands separators, units, exact expressions; no tolerance."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from answer_channels import verdicts  # noqa: E402

from problemgen.misconceptions.catalogue import mistake  # noqa: E402
from problemgen.model.core import AnswerPart  # noqa: E402

N = 124439808
COUNT = AnswerPart(key="n", type="integer", value=N)
BYTES = AnswerPart(key="n", type="integer", value=N, spec={"unit": "bytes"},
                   mistakes=(mistake("bits_not_bytes", 8 * N),))
PARAMS = AnswerPart(key="n", type="integer", value=N, spec={"unit": "parameters"})
FLOPS = AnswerPart(key="n", type="integer", value=N, spec={"unit": "FLOPs"})


@pytest.mark.parametrize("part, text", [
    *((part, text) for part in (COUNT, BYTES, PARAMS, FLOPS)
      for text in ["124439808", "124,439,808", "124_439_808", "124 439 808", "124\u2009439\u2009808",
                   "1.24439808e8", "62219904*2", "62,219,904 \u00d7 2"]),
    (BYTES, "124439808 bytes"), (BYTES, "124439808 B"), (BYTES, "124,439,808 Bytes"), (BYTES, "995518464 bits"),
    (BYTES, "121523.25 KiB"), (BYTES, "124439.808 KB"), (BYTES, "118.675048828125 MiB"), (BYTES, "62219904*2 bytes"),
    (PARAMS, "124439808 params"), (PARAMS, "124,439,808 parameters"), (FLOPS, "124439808 FLOPs"), (FLOPS, "124439808 flops"),
])
def test_notations_of_the_count_are_correct(part, text):
    results = verdicts(part, text)
    assert {r.status for r in results.values()} == {"correct"}, {k: r.feedback for k, r in results.items()}


@pytest.mark.parametrize("text, message", [("124,43", "groups of three"), ("1244398.08", "whole number"),
                                           ("many", "unknown name")])
def test_unreadable_counts_are_invalid(text, message):
    for channel, result in verdicts(COUNT, text).items():
        assert result.status == "invalid" and message in result.feedback, (channel, result)


@pytest.mark.parametrize("part, text, message", [
    (PARAMS, "995518464 bits", "a number of parameters"),  # 8x the count, in bits: no conversion for parameters
    (PARAMS, "124439808 bytes", "a number of parameters"),
    (PARAMS, "124439808 B", "a number of parameters"),
    (PARAMS, "124439808 FLOPs", "a number of parameters"),
    (BYTES, "124439808 params", "a number of bytes"),
    (BYTES, "124439808 FLOPs", "a number of bytes"),
    (FLOPS, "995518464 bits", "a number of FLOPs"),
    (FLOPS, "118.675048828125 MiB", "a number of FLOPs"),
    (COUNT, "124439808 bytes", "a plain whole number"),
    (COUNT, "995518464 bits", "a plain whole number"),
    (COUNT, "124439808 params", "a plain whole number"),
    (BYTES, "124439808 b", "may mean bits or bytes"),  # b alone is not bytes (nor bits)
    (BYTES, "15554976 b", "may mean bits or bytes"),
    (BYTES, "118.67 Mb", "may mean bits or bytes"),
    (BYTES, "124439808 pi", "not a unit"),
])
def test_a_unit_that_does_not_fit_the_question_is_invalid_naming_what_it_asks(part, text, message):
    for channel, result in verdicts(part, text).items():
        assert result.status == "invalid" and message in result.feedback, (channel, result)


@pytest.mark.parametrize("part, text", [
    (COUNT, "124439809"), (COUNT, "124,439,809"), (COUNT, "4\u00d72^20"), (BYTES, "995518465 bits"),
    (BYTES, "124.4 MB"), (BYTES, "-124439808 B"), (PARAMS, "124439809 params"),
])
def test_other_counts_are_wrong(part, text):
    assert {r.status for r in verdicts(part, text).values()} == {"wrong"}


@pytest.mark.parametrize("part, text, tag", [
    (BYTES, "124439808 bits", "bits_not_bytes"),          # the byte count, labelled bits
    (BYTES, "995518464", "bits_not_bytes"),               # the bit count, as bytes
    (BYTES, "995518464 bytes", "bits_not_bytes"),
    (BYTES, "124.439808 MiB", "decimal_vs_binary_units"),  # the size in MB, labelled MiB
])
def test_a_unit_mix_up_names_its_misconception(part, text, tag):
    for channel, result in verdicts(part, text).items():
        assert (result.status, result.mistake) == ("wrong", tag), (channel, result)


def test_a_variant_file_from_before_parts_carried_their_unit_is_read_by_the_label():
    """Parts of a variant file written before ``spec["unit"]`` existed still accept the unit their label names,
    and refuse the others: an old class set graded now keeps "12582912 bytes" right and "bits" for parameters out."""
    size = AnswerPart(key="size", type="integer", value=N, label="the KV-cache size in bytes")
    count = AnswerPart(key="count", type="integer", value=N, label="the parameters of the attention layer")
    flops = AnswerPart(key="qk", type="integer", value=N, label="the FLOPs of the score product")
    entries = AnswerPart(key="entries", type="integer", value=N, label="the number of score entries")
    assert {r.status for r in verdicts(size, "995518464 bits").values()} == {"correct"}
    assert {r.status for r in verdicts(count, "124439808 params").values()} == {"correct"}
    assert {r.status for r in verdicts(flops, "124439808 FLOPs").values()} == {"correct"}
    for part in (count, flops, entries):
        assert {r.status for r in verdicts(part, "995518464 bits").values()} == {"invalid"}
    assert {r.status for r in verdicts(size, "124439808 params").values()} == {"invalid"}


@pytest.mark.parametrize("kind, seed, difficulty, unit", [
    ("params.attention_layer", 0, 1, "parameters"), ("params.model", 0, 2, "parameters"),
    ("multihead.gqa", 0, 3, "parameters"), ("memory.kv_cache", 0, 1, "bytes"),
    ("complexity.score_matrix", 0, 1, "bytes"), ("complexity.flops", 1, 2, "FLOPs"),
])
def test_generated_counts_take_their_own_unit_only(kind, seed, difficulty, unit):
    """The audit's cases: 8x a parameter count or a FLOP count written in bits earned full marks, and so did
    a byte count written in params."""
    from problemgen import generate

    parts = [p for p in generate(kind, seed, difficulty).parts if p.spec.get("unit")]
    assert parts and {p.spec["unit"] for p in parts} == {unit}
    for part in parts:
        own = {"parameters": "params", "bytes": "bytes", "FLOPs": "FLOPs"}[unit]
        assert {r.status for r in verdicts(part, f"{part.value} {own}").values()} == {"correct"}
        bits = {r.status for r in verdicts(part, f"{part.value * 8} bits").values()}
        assert bits == ({"correct"} if unit == "bytes" else {"invalid"})
        for other in {"params", "bytes", "FLOPs"} - {own}:
            assert {r.status for r in verdicts(part, f"{part.value} {other}").values()} == {"invalid"}


def test_a_variant_file_without_units_asks_the_same_quantity_as_a_new_one():
    """Files written before parts carried ``spec["unit"]`` are read by their labels: every whole-number
    part of every kind must come out as the quantity its generator now names (multihead.head_dim's
    "entries of one head's W_Q" once came out a plain count, so "23040 params" turned invalid)."""
    from dataclasses import replace

    from problemgen.answers.types.integer import asked_unit
    from problemgen.model.registry import _REGISTRY, generate, load_all

    load_all()
    for name, spec in sorted(_REGISTRY.items()):
        for difficulty in spec.difficulties:
            for seed in range(6):
                for part in generate(name, seed, difficulty).parts:
                    if part.type == "integer":
                        legacy = replace(part, spec={k: v for k, v in part.spec.items() if k != "unit"})
                        assert asked_unit(legacy) == part.spec.get("unit"), (name, part.key, part.label)
