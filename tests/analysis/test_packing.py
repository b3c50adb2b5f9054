from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.analysis.packing import pack_rows


def _depth(start: np.ndarray, end: np.ndarray) -> int:
    """Brute force: the largest clique, i.e. 1 + the intervals (earlier in (start, end)
    order) still open when an interval starts."""
    order = np.lexsort((end, start))
    s, e = start[order], end[order]
    return max(1 + int((e[:i] > s[i]).sum()) for i in range(len(s)))


def _rows_disjoint(start: np.ndarray, end: np.ndarray, rows: np.ndarray) -> bool:
    for r in np.unique(rows):
        m = rows == r
        order = np.lexsort((end[m], start[m]))
        s, e = start[m][order], end[m][order]
        if np.any(s[1:] < e[:-1]):
            return False
    return True


def test_crafted_intervals_use_minimal_rows() -> None:
    # Three overlap at t=5; [10, 12) reuses a row freed at exactly 10.
    start = np.array([0.0, 2.0, 4.0, 10.0, 11.0])
    end = np.array([10.0, 6.0, 8.0, 12.0, 13.0])
    rows = pack_rows(start, end)
    assert rows.tolist() == [0, 1, 2, 0, 1]


def test_back_to_back_share_a_row_and_input_order_is_kept() -> None:
    start = np.array([5.0, 0.0, 10.0])
    end = np.array([10.0, 5.0, 15.0])
    assert pack_rows(start, end).tolist() == [0, 0, 0]


def test_nan_start_gets_no_row_and_nan_end_never_frees() -> None:
    start = np.array([0.0, np.nan, 5.0, 100.0])
    end = np.array([np.nan, 3.0, 6.0, 101.0])
    assert pack_rows(start, end).tolist() == [0, -1, 1, 1]


def test_zero_length_inside_a_longer_interval_takes_a_new_row() -> None:
    assert pack_rows(np.array([0.0, 5.0]), np.array([10.0, 5.0])).tolist() == [0, 1]
    assert pack_rows(np.array([5.0, 5.0]), np.array([9.0, 5.0])).tolist() == [0, 0]


def test_empty() -> None:
    assert pack_rows(np.zeros(0), np.zeros(0)).tolist() == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 200), st.integers(0, 60)),
        min_size=1,
        max_size=60,
    )
)
def test_rows_never_overlap_and_equal_max_depth(pairs: list[tuple[int, int]]) -> None:
    start = np.array([float(s) for s, _ in pairs])
    end = start + np.array([float(d) for _, d in pairs])
    rows = pack_rows(start, end)
    assert (rows >= 0).all()
    assert _rows_disjoint(start, end, rows)
    assert rows.max() + 1 == _depth(start, end)


def test_pack_rows_uses_as_few_rows_as_the_overlap_needs() -> None:
    rng = np.random.default_rng(3)
    start = rng.uniform(0, 10_000, 5000)
    end = start + rng.uniform(10, 400, 5000)
    rows = pack_rows(start, end)
    for r in np.unique(rows):
        m = rows == r
        order = np.argsort(start[m])
        assert (start[m][order][1:] >= end[m][order][:-1]).all()
    # Rows needed = the maximum number of intervals alive at once.
    events = np.concatenate([np.c_[start, np.ones_like(start)], np.c_[end, -np.ones_like(end)]])
    events = events[np.lexsort((events[:, 1], events[:, 0]))]
    assert rows.max() + 1 == int(np.cumsum(events[:, 1]).max())
