"""``Growing``: the columns a log read in pieces grows, in place, and held compact only
while that loses nothing."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.io import grow
from viewer.io.grow import Growing


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(
                st.integers(-(1 << 30), 1 << 30).map(float),  # whole ms: float32 or not
                st.floats(allow_nan=True, allow_infinity=True, width=64),
                st.sampled_from([0.5, 0.1, 1e300, 16777217.0, -0.0]),
            ),
            max_size=40,
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_a_compact_column_holds_every_value_exactly(pieces, small_maps):
    """Appended in pieces, some rows written again later: the column reads back exactly
    what was written (a value float32 cannot hold makes it float64 from then on, earlier
    rows kept), whether its room is a heap buffer or a map grown in place."""
    if small_maps:
        grow.MAPPED_BYTES = 64
    try:
        col = Growing(np.float64, np.nan, compact=True)
        want: list[float] = []
        for k, piece in enumerate(pieces):
            col.append(np.array(piece, np.float64))
            want += piece
            if want and k % 3 == 2:  # a late line fills an earlier row
                col.put(np.array([len(want) // 2]), np.array([piece[0] if piece else 2.5]))
                want[len(want) // 2] = piece[0] if piece else 2.5
        got = col.take().astype(np.float64)
        np.testing.assert_array_equal(got, np.array(want, np.float64))
        assert np.array_equal(np.signbit(got), np.signbit(np.array(want, np.float64)))
    finally:
        grow.MAPPED_BYTES = 1 << 16


def test_whole_milliseconds_stay_float32_and_a_fraction_widens():
    col = Growing(np.float64, np.nan, compact=True)
    col.append(np.array([1648.0, 3117.0, np.nan, 0.5]))
    col.grow(3)
    assert col.dtype == np.float32
    col.put(np.array([5]), np.array([0.1]))
    assert col.dtype == np.float64
    np.testing.assert_array_equal(col.take(), [1648.0, 3117.0, np.nan, 0.5, np.nan, 0.1, np.nan])


def test_a_mapped_column_grows_in_place_without_copying_its_rows():
    """From MAPPED_BYTES on the room is an anonymous map moved by mremap: the rows written
    before a growth are the rows after it, and the room past them was never written."""
    col = Growing(np.int64, -1)
    for k in range(40):
        col.append(np.arange(k * 1000, (k + 1) * 1000))
    assert col.map is not None and len(col.buf) >= 40_000
    np.testing.assert_array_equal(col.take(), np.arange(40_000))


def test_appending_a_value_float32_cannot_hold_widens_before_taking_room() -> None:
    """The room past the rows is not written yet (a heap buffer holds garbage there): the
    column widens to float64 before it grows, so no unwritten row is ever converted."""
    import warnings

    col = Growing(np.float64, np.nan, compact=True)
    col.append(np.array([1.0, 2.0]))
    col.append(np.array([3.0]))
    assert col.dtype == np.float32 and len(col.buf) > len(col)  # room left unwritten
    signaling = np.array([0x7FA00000], np.uint32).view(np.float32)[0]  # garbage may hold it
    col.buf[len(col) :] = signaling  # whose cast to float64 warns "invalid value"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        col.append(np.array([0.1, 1e300]))
    assert col.dtype == np.float64
    np.testing.assert_array_equal(col.rows, [1.0, 2.0, 3.0, 0.1, 1e300])
