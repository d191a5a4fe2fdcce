"""The comparison of a returned array with the expected one (``code.compare``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from problemgen.code.compare import close

SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, max_side=5)
FINITE = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
ANY = st.floats(-1e6, 1e6) | st.sampled_from([np.inf, -np.inf, np.nan, 0.0, -0.0])


@settings(max_examples=300, deadline=None)
@given(st.data(), SHAPES, st.floats(0, 0.5), st.floats(0, 1e-2))
def test_close_decides_exactly_as_numpy_isclose_for_finite_results(data, shape, rtol, atol):
    expected = data.draw(hnp.arrays(np.float64, shape, elements=ANY))
    # results near the expected values as often as far from them, so both verdicts occur
    nudges = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-2 * atol - 1e-9, 2 * atol + 1e-9)))
    near = np.where(np.isfinite(expected), expected, 0.0) * (1 + data.draw(st.sampled_from([0.0, rtol, -rtol, 2 * rtol])))
    values = np.where(data.draw(hnp.arrays(bool, shape)), near + nudges, data.draw(hnp.arrays(np.float64, shape, elements=FINITE)))
    assert np.array_equal(close(values, expected, rtol, atol), np.isclose(values, expected, rtol=rtol, atol=atol))


def test_close_takes_integer_expected_values():
    assert close(np.array([1.0, 2.5]), np.array([1, 2]), 0.0, 0.1).tolist() == [True, False]
