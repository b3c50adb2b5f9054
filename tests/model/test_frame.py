"""Frame: the model's tables; factorize: codes in order of first appearance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from viewer.model.frame import Frame, empty_like
from viewer.model.keys import factorize, first_seen, unique


def frame() -> Frame:
    return Frame({"a": np.arange(4.0), "b": np.array(["w", "x", "y", None], dtype=object)})


def test_columns_are_the_arrays_read_only_and_never_copied() -> None:
    f = frame()
    assert f["a"] is f["a"] and len(f) == 4 and f.columns == ["a", "b"]
    for name in f:
        assert not f[name].flags.writeable  # a shared table is never written
    with pytest.raises(ValueError):
        f["a"][0] = 9.0
    src = np.arange(3)
    Frame({"x": src})
    assert src.flags.writeable  # the caller's array is not made read-only, a view is


def test_rows_by_mask_positions_and_slice_keep_every_column() -> None:
    f = frame()
    assert f[f["a"] > 1]["b"].tolist() == ["y", None]
    assert f.take([3, 0])["a"].tolist() == [3.0, 0.0]
    assert f[1:3]["b"].tolist() == ["x", "y"] and len(f[1:3]) == 2
    assert f.row(-1) == {"a": 3.0, "b": None}
    assert list(f.rows())[1] == (1.0, "x")
    with pytest.raises(IndexError):
        f.row(4)
    with pytest.raises(ValueError, match="mask of 2 rows"):
        f[np.array([True, False])]


def test_a_mask_of_every_row_is_the_frame_itself_not_a_copy() -> None:
    """The window kept a second copy of every call's ~30 columns (~30 MB at 10^6 events)
    where ``kernel_intervals`` kept the calls with a kernel time: all of them."""
    f = frame()
    assert f[np.ones(4, bool)] is f
    assert f[np.array([True, True, True, False])] is not f
    empty = Frame({"a": np.zeros(0)})
    assert empty[np.zeros(0, bool)] is empty


def test_new_frames_share_unchanged_columns() -> None:
    f = frame()
    g = f.assign(c=7, a=np.zeros(4))
    assert g.columns == ["a", "b", "c"] and g["c"].tolist() == [7] * 4
    assert g["b"] is f["b"] and f["a"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert f.rename({"a": "z"}).columns == ["z", "b"]
    assert f[["b"]].columns == ["b"] and len(f[["b"]]) == 4
    with pytest.raises(ValueError, match="has 2 rows, not 4"):
        f.assign(d=np.zeros(2))


def test_sort_concat_equals_and_pandas() -> None:
    f = Frame({"t": np.array([3.0, np.nan, 1.0, 3.0]), "i": np.arange(4)})
    assert f.sort_by("t")["i"].tolist() == [2, 0, 3, 1]  # stable, NaN last
    both = Frame.concat([f, f[:1]])
    assert len(both) == 5 and both["i"].tolist() == [0, 1, 2, 3, 0]
    assert f.equals(Frame({"t": np.array([3.0, np.nan, 1.0, 3.0]), "i": np.arange(4)}))
    assert not f.equals(f.assign(i=np.arange(4.0)))  # dtypes differ
    assert not f.equals(f[["i", "t"]])  # column order differs
    empty = empty_like({"x": "int32", "y": "object"})
    assert len(empty) == 0 and empty["x"].dtype == np.int32 and empty["y"].dtype == object
    pdf = frame().to_pandas()
    assert isinstance(pdf, pd.DataFrame) and pdf["b"].tolist() == ["w", "x", "y", None]
    assert frame().to_numpy(object).shape == (4, 2)
    assert frame().nbytes() > 4 * 8 + 4 * 8 + 3 * 49  # the strings counted


@given(st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=2)), max_size=40))
def test_factorize_is_pandas_factorize(values: list) -> None:
    for kind in ([v for v in values if isinstance(v, int)], [str(v) for v in values]):
        array = np.array(kind, dtype=object if kind and isinstance(kind[0], str) else np.int64)
        codes, uniques = factorize(array)
        want_codes, want_uniques = pd.factorize(pd.Series(array, dtype=array.dtype))
        assert codes.tolist() == want_codes.tolist()
        assert list(uniques) == list(want_uniques)
        assert first_seen(array).tolist() == (~pd.Series(array).duplicated()).tolist()


@given(
    st.lists(
        st.one_of(
            st.integers(-3, 3).map(float),
            st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.5]),
        ),
        max_size=40,
    ),
    st.booleans(),
)
def test_unique_is_numpy_unique(values: list, as_int: bool) -> None:
    """The stable-sort ``unique`` gives np.unique's values, first positions and inverse,
    NaNs one value; integers and floats."""
    array = np.array(values, dtype=np.float64)
    if as_int:
        array = np.nan_to_num(array, posinf=9, neginf=-9).astype(np.int64)
    want, want_index, want_inverse = np.unique(array, return_index=True, return_inverse=True)
    got, index, inverse = unique(array, return_index=True, return_inverse=True)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(unique(array), want, equal_nan=True)
    assert index.tolist() == want_index.tolist()
    assert inverse.tolist() == want_inverse.reshape(-1).tolist()


def test_rows_of_slices_a_column_when_it_is_read() -> None:
    f = frame()
    part = f.rows_of(1, 3)
    assert len(part) == 2 and part["a"].tolist() == [1.0, 2.0]
    assert part["a"].base is not None and not part["a"].flags.writeable  # a view
    assert part.row(1) == {"a": 2.0, "b": "y"} and part[part["a"] > 1]["b"].tolist() == ["y"]
    assert part.rows_of(1, 2)["b"].tolist() == ["y"] and part[:1]["a"].tolist() == [1.0]
    assert part.equals(f.take([1, 2])) and part.assign(c=0).columns == ["a", "b", "c"]
    assert f.rows_of(3, 9)["a"].tolist() == [3.0] and len(f.rows_of(5, 9)) == 0
    assert part["a"] is part["a"]  # read once, then kept
    f.release()  # a frame of its own columns has nothing to let go
    assert f["a"].tolist() == [0.0, 1.0, 2.0, 3.0]
    first = part["a"]
    part.release()
    assert part["a"] is not first and part["a"].tolist() == [1.0, 2.0]


@given(st.lists(st.integers(-3, 3), max_size=40), st.booleans())
def test_first_seen_of_sorted_values_is_that_of_any_order(values: list, as_float: bool) -> None:
    """Sorted numbers take ``first_seen``'s comparison with the value before: the same marks
    as the first positions ``np.unique`` gives (NaN last, then not sorted to numpy)."""
    array = np.sort(np.array(values, dtype=np.float64 if as_float else np.int64))
    if as_float and len(array):
        array = np.append(array, [np.nan, np.nan])
    want = np.zeros(len(array), dtype=bool)
    want[np.unique(array, return_index=True)[1]] = True
    assert first_seen(array).tolist() == want.tolist()


def test_a_lazy_take_makes_only_the_columns_read() -> None:
    """``take(rows, lazy=True)`` (``analysis.calls``): the columns nobody reads are never
    copied; each read column is made once."""
    import tracemalloc

    n = 200_000
    src = Frame({f"c{i}": np.arange(n, dtype=np.float64) + i for i in range(10)})
    rows = np.arange(n)[::-1]
    tracemalloc.start()
    try:
        lazy = src.take(rows, lazy=True)
        first = lazy["c3"]
        grown = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert grown < 3 * n * 8  # one column (and the rows), not ten
    assert lazy["c3"] is first and not first.flags.writeable
    assert lazy.columns == src.columns and len(lazy) == n
    assert lazy.equals(src.take(rows))


@given(
    st.lists(st.integers(0, 5), max_size=12),
    st.lists(st.integers(0, 11), max_size=8),
    st.booleans(),
)
def test_lazy_frames_read_as_eager_ones(rows, again, replace) -> None:
    """Takes, masks, slices and assigns of a lazy frame give what the eager frame gives."""
    f = Frame(
        {
            "a": np.arange(6.0),
            "b": np.array(list("uvwxyz"), dtype=object),
            "c": np.arange(6, dtype=np.int32),
        }
    )
    eager, lazy = f.take(rows), f.take(rows, lazy=True)
    assert lazy.equals(eager)
    extra = {"a": np.ones(len(rows))} if replace else {"d": np.zeros(len(rows))}
    assert lazy.assign(**extra, e=1).equals(eager.assign(**extra, e=1))
    assert lazy.assign(**extra).columns == eager.assign(**extra).columns
    again = [i for i in again if i < len(rows)]
    assert lazy.take(again).equals(eager.take(again))
    assert lazy.assign(**extra).take(again).equals(eager.assign(**extra).take(again))
    mask = np.arange(len(rows)) % 2 == 0
    assert lazy[mask].equals(eager[mask]) and lazy[1:].equals(eager[1:])
    assert lazy[["c", "a"]].equals(eager[["c", "a"]])
    assert list(lazy.rows()) == list(eager.rows()) and lazy.to_dict().keys() == {"a", "b", "c"}


def test_sort_by_a_sorted_column_is_the_frame_itself() -> None:
    """No copy of every column when the rows already are in order (the lanes sort 10^5
    transitions that are; the copy held 3.4 MB)."""
    f = Frame({"t": np.array([1.0, 2.0, 2.0, 5.0]), "i": np.arange(4)})
    assert f.sort_by("t") is f
    one = Frame({"t": np.array([3.0]), "i": np.arange(1)})
    assert one.sort_by("t") is one
    late_nan = Frame({"t": np.array([1.0, np.nan, 2.0]), "i": np.arange(3)})
    assert late_nan.sort_by("t")["i"].tolist() == [0, 2, 1]


def test_rows_in_one_run_are_views_of_the_columns_and_other_rows_copies() -> None:
    """Every started call of a log whose calls all started is one run of the partitions'
    rows: a view of each column, not a copy (132 MB at 1.5 M one-call jobs)."""
    from viewer.model.frame import constant

    f = Frame({"t": np.arange(10.0), "k": constant(7, 10, np.int32)})
    for lazy in (False, True):
        run = f.take(np.arange(3, 8), lazy=lazy)
        assert run["t"].tolist() == [3.0, 4.0, 5.0, 6.0, 7.0] and len(run) == 5
        assert np.shares_memory(run["t"], f["t"]) and run["k"].tolist() == [7] * 5
        assert not run["t"].flags.writeable
        for rows in ([3, 5, 6], [7, 6, 5], [2, 2, 3]):
            other = f.take(np.array(rows), lazy=lazy)
            assert other["t"].tolist() == [float(r) for r in rows]
            assert not np.shares_memory(other["t"], f["t"])
        assert len(f.take(np.zeros(0, int), lazy=lazy)) == 0
        assert f.take(np.array([4]), lazy=lazy)["t"].tolist() == [4.0]


def test_a_slice_of_a_lazy_frame_makes_only_the_columns_read() -> None:
    """The terminal's report reads 40 transitions of 1.5 M: their slice made every lazy
    column, the job ids too (2 x 78 MB of text), though none is printed."""
    made = []

    def maker(name: str, n: int):
        def make() -> np.ndarray:
            made.append(name)
            return np.arange(n) * (2 if name == "b" else 1)

        return make

    frame = Frame.lazy({"a": maker("a", 10), "b": maker("b", 10)}, 10)
    head, odd = frame[:4], frame[1::2]
    assert len(head) == 4 and len(odd) == 5 and made == []
    assert head["b"].tolist() == [0, 2, 4, 6] and made == ["b"]
    assert odd["a"].tolist() == [1, 3, 5, 7, 9] and odd["b"].tolist() == [2, 6, 10, 14, 18]
    assert made == ["b", "a"] and frame[::-1]["a"].tolist() == list(range(9, -1, -1))
    assert len(frame[20:]) == 0 and frame[20:]["a"].tolist() == []
