"""Groups' reductions are pandas' groupby reductions (NaN skipped, all-NaN groups NaN)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from viewer.analysis.groups import Groups

# Times in a session are finite or NaN (missing).
values_with_nan = st.one_of(st.just(np.nan), st.floats(-1e6, 1e6, allow_nan=False))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(0, 40), size=st.integers(0, 8))
def test_reductions_are_pandas_groupby(data, n: int, size: int) -> None:
    size = max(size, 1)
    keys = data.draw(arrays(np.int64, n, elements=st.integers(0, size - 1)))
    values = data.draw(arrays(np.float64, n, elements=values_with_nan))
    flags = data.draw(arrays(np.bool_, n))
    g = Groups(keys, size=size)
    frame = pd.DataFrame({"k": keys, "v": values, "f": flags})
    by = frame.groupby("k")
    index = np.arange(size)
    for name in ("min", "max"):
        want = getattr(by["v"], name)().reindex(index).to_numpy()
        np.testing.assert_array_equal(getattr(g, name)(values), want, err_msg=name)
    # pandas sums with Kahan's compensation: equal to the last few ulps
    want = by["v"].mean().reindex(index).to_numpy()
    np.testing.assert_allclose(g.mean(values), want, rtol=1e-12, atol=1e-9)
    want = by["v"].sum().reindex(index, fill_value=0.0).to_numpy()
    np.testing.assert_allclose(g.sum(values), want, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(g.any(flags), by["f"].any().reindex(index, fill_value=False))
    present = Groups(keys)
    np.testing.assert_array_equal(present.keys, np.unique(keys))
    assert [len(part) for part in present.split(values)] == by.size().tolist()
    first_rows = frame.drop_duplicates("k").sort_values("k").index.to_numpy()
    np.testing.assert_array_equal(present.first_rows(), first_rows)
    want_sum = by["v"].sum()
    got = present.as_dict(present.sum(values))
    assert list(got) == want_sum.index.tolist() and all(type(k) is int for k in got)


def test_split_gives_each_groups_values_in_order() -> None:
    g = Groups(np.array([2, 0, 2, 1, 0]))
    parts = g.split(np.array([10, 11, 12, 13, 14]))
    assert [p.tolist() for p in parts] == [[11, 14], [13], [10, 12]]
    assert g.keys.tolist() == [0, 1, 2]
    assert g.as_dict(g.max(np.array([10, 11, 12, 13, 14]))) == {0: 14.0, 1: 13.0, 2: 12.0}
    empty = Groups(np.zeros(0, dtype=np.int64), size=3)
    assert len(empty.keys) == 0 and np.isnan(empty.min(np.zeros(0))).tolist() == [True] * 3
    assert empty.any(np.zeros(0, dtype=bool)).tolist() == [False] * 3
    assert empty.split(np.zeros(0)) == []
