"""Tests for reference.masks: causal alignment, padding, combining boolean and additive masks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import additive_mask, causal_mask, combine_masks, lengths_to_valid, padding_mask

PROPS = settings(max_examples=40, deadline=None)


def test_causal_mask_for_four_tokens_is_the_lecture_matrix():
    # the seed's M for L = 4: 0 on and below the diagonal, -inf above it
    ninf = -np.inf
    expected = np.array(
        [[0, ninf, ninf, ninf], [0, 0, ninf, ninf], [0, 0, 0, ninf], [0, 0, 0, 0]], dtype=float
    )
    assert np.array_equal(additive_mask(causal_mask(4)), expected)
    assert np.array_equal(causal_mask(5), np.tril(np.ones((5, 5), bool)))


@PROPS
@given(st.integers(0, 7), st.integers(0, 7))
def test_causal_alignments_follow_their_definitions(L, S):
    top = causal_mask(L, S, align="top-left")
    bottom = causal_mask(L, S, align="bottom-right")
    assert top.shape == bottom.shape == (L, S)
    for i in range(L):
        for j in range(S):
            assert top[i, j] == (j <= i)
            assert bottom[i, j] == (j <= i + S - L)


@PROPS
@given(st.integers(1, 7), st.integers(0, 7))
def test_bottom_right_mask_is_the_last_rows_of_the_full_causal_mask(L, extra):
    # KV-cache alignment: L new queries are the last L rows of an (L + extra)-token sequence
    S = L + extra
    assert np.array_equal(causal_mask(L, S, align="bottom-right"), causal_mask(S)[S - L :])
    assert causal_mask(L, S, align="bottom-right")[-1].all()


def test_square_alignments_agree_and_bad_align_is_rejected():
    assert np.array_equal(causal_mask(4, 4, align="bottom-right"), causal_mask(4))
    with pytest.raises(ValueError, match="align"):
        causal_mask(2, 3, align="diagonal")
    with pytest.raises(ValueError, match="non-negative"):
        causal_mask(-1)


def test_padding_mask_hides_pad_keys_from_every_query():
    valid = lengths_to_valid([3, 1], 4)
    assert np.array_equal(valid, [[True, True, True, False], [True, False, False, False]])
    m = padding_mask(valid)
    assert m.shape == (2, 1, 4)
    full = np.broadcast_to(m, (2, 3, 4))
    assert np.array_equal(full[0], np.tile([True, True, True, False], (3, 1)))
    with pytest.raises(ValueError, match="lengths"):
        lengths_to_valid([5], 4)


@PROPS
@given(st.integers(0, 2**32 - 1), st.integers(1, 5))
def test_combined_boolean_and_additive_masks_block_the_same_entries(seed, L):
    rng = np.random.default_rng(seed)
    valid = rng.random((2, L)) < 0.7
    as_bool = combine_masks(causal_mask(L), padding_mask(valid))
    as_float = combine_masks(additive_mask(causal_mask(L)), additive_mask(padding_mask(valid)))
    mixed = combine_masks(causal_mask(L), additive_mask(padding_mask(valid)), None)
    assert as_bool.dtype == bool and as_bool.shape == (2, L, L)
    assert np.array_equal(as_float, additive_mask(as_bool))
    assert np.array_equal(mixed, as_float)
    expected = np.tril(np.ones((L, L), bool))[None] & valid[:, None, :]
    assert np.array_equal(as_bool, expected)


def test_combine_masks_of_nothing_is_none_and_float_masks_pass_through():
    assert combine_masks() is None and combine_masks(None, None) is None
    bias = np.array([[0.5, -1.0]])
    assert np.array_equal(combine_masks(bias), bias)
    assert np.array_equal(additive_mask(np.array([[True, False]])), [[0.0, -np.inf]])
