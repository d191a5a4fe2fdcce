"""problemgen.wording: one way to count and list things in every message."""

from __future__ import annotations

from problemgen.wording import closest, counted, listed, suggest


def test_a_count_of_one_is_singular_and_every_other_count_plural():
    assert [counted(n, "file") for n in (0, 1, 2)] == ["0 files", "1 file", "2 files"]
    assert counted(3, "student folder") == "3 student folders"
    assert counted(2, "entry", "entries") == "2 entries"


def test_a_long_list_shows_the_first_names_then_how_many_more():
    assert listed(["a", "b"]) == "a, b"
    assert listed([f"s{i}" for i in range(7)]) == "s0, s1, s2, s3, s4 and 2 more"
    assert listed([f"s{i}" for i in range(11)], 10).endswith("s9 and 1 more")
    assert listed([f"s{i}" for i in range(10)], 10).endswith("s8, s9")


def test_a_misspelt_name_is_offered_the_closest_choice_and_a_far_one_none():
    assert closest("atention.weights", ["attention.weights", "masks.causal"]) == "attention.weights"
    assert suggest("mask", ["masks", "norms"]) == " — did you mean 'masks'?"
    assert closest("zzz", ["masks", "norms"]) is None and suggest("zzz", ["masks"]) == ""
