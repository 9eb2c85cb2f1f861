"""Hypothesis strategies shared by the tests: small shapes, broadcastable pairs, arrays.

Values stay in ranges where every op of the op table is smooth enough for finite
differences (see `tests/core/test_ops.py`); shapes stay tiny so gradchecks are fast.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


@st.composite
def broadcastable_pair(draw: st.DrawFn) -> tuple[tuple, tuple]:
    """Two shapes that broadcast together, e.g. ((2, 3), (3,)) or ((4, 1), (1, 5))."""
    shape = draw(shapes)
    other = list(shape[draw(st.integers(0, len(shape))) :])  # drop leading axes
    other = [1 if draw(st.booleans()) else n for n in other]  # and squash some to 1
    pair = (shape, tuple(other))
    return pair if draw(st.booleans()) else pair[::-1]


def arrays(shape: tuple, low: float = -2.0, high: float = 2.0) -> st.SearchStrategy:
    """float64 arrays of `shape` with values in [low, high] (no NaN or inf)."""
    return hnp.arrays(
        np.float64,
        shape,
        elements=st.floats(low, high, allow_nan=False, allow_infinity=False, width=64),
    )


@st.composite
def arrays_away_from(
    draw: st.DrawFn, shape: tuple, kinks: tuple = (0.0,), margin: float = 1e-2
) -> np.ndarray:
    """Arrays whose values keep `margin` away from the kinks of relu/abs/clip/max."""
    arr = draw(arrays(shape))
    for k in kinks:
        near = np.abs(arr - k) < margin
        arr = np.where(near, k + margin * 2, arr)
    return arr
