from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.builders import call, session
from viewer.analysis import busy_union
from viewer.analysis.intervals import chosen, known_or


def test_union_merges_overlapping_and_touching_calls() -> None:
    s = session(
        call("a", 0, 0, 100, 0),
        call("a", 1, 50, 150, 1),
        call("a", 2, 150, 200, 0),
        call("a", 3, 300, 400, 1),
    )
    np.testing.assert_array_equal(busy_union(s, 0), [[0, 200], [300, 400]])


def test_union_clipped_to_range() -> None:
    s = session(call("a", 0, 0, 100, 0), call("a", 1, 300, 400, 1))
    np.testing.assert_array_equal(busy_union(s, 0, (50, 350)), [[50, 100], [300, 350]])
    assert busy_union(s, 0, (120, 250)).shape == (0, 2)


def test_open_interval_runs_to_session_end() -> None:
    s = session(call("a", 0, 0, 100, 0), call("a", 1, 200, None, 1), end_ms=1000)
    np.testing.assert_array_equal(busy_union(s, 0), [[0, 100], [200, 1000]])


def test_two_gpus_are_separate() -> None:
    s = session(call("a", 0, 0, 100, 0), call("a", 1, 50, 300, 2))
    np.testing.assert_array_equal(busy_union(s, 0), [[0, 100]])
    np.testing.assert_array_equal(busy_union(s, 1), [[50, 300]])
    assert busy_union(s, 7).shape == (0, 2)


def test_gpu_taken_from_workers_table_when_row_has_none() -> None:
    s = session(
        dict(job_id="a", partition=0, gpu_start=0, gpu_end=10, worker=3),
        workers={3: 1},
    )
    np.testing.assert_array_equal(busy_union(s, 1), [[0, 10]])


def test_reversed_range_is_an_error() -> None:
    s = session(call("a", 0, 0, 100, 0))
    with pytest.raises(ValueError):
        busy_union(s, 0, (10, 5))


def test_a_column_chosen_on_every_row_is_the_column_itself() -> None:
    col = np.arange(5.0)
    assert chosen(col, np.ones(5, bool)) is col
    assert chosen(col, np.array([True, False, True, False, False])).tolist() == [0.0, 2.0]
    assert chosen(col[:0], np.zeros(0, bool)).tolist() == []


def test_known_values_kept_and_the_fallback_made_only_where_one_is_unknown() -> None:
    made = []

    def fallback() -> np.ndarray:
        made.append(1)
        return np.full(3, 9.0)

    col = np.array([1.0, 2.0, 3.0])
    assert known_or(col, fallback) is col and not made
    got = known_or(np.array([1.0, np.nan, np.inf]), fallback)
    assert got.tolist() == [1.0, 9.0, 9.0] and made == [1]


@pytest.mark.parametrize("seed", range(6))
def test_a_gpus_union_is_its_calls_merged_alone(seed: int) -> None:
    """Read from the session's blocks of every GPU: the blocks that merging the GPU's calls
    alone gives (overlapping, touching, open and unknown-GPU calls, ties), in a range too."""
    from viewer.analysis.intervals import calls, merge

    rng = np.random.default_rng(seed)
    made = []
    for i in range(60):
        start = float(rng.integers(0, 2000))
        end = start + float(rng.choice([0, 5, 40, 300]))
        gpu = int(rng.choice([0, 1, 2, -1]))
        made.append(call(f"j{i % 9}", i, start, end if i % 13 else None, worker=i % 4, gpu=gpu))
    s = session(*made, end_ms=2500.0)
    c = calls(s)
    for gpu in (-1, 0, 1, 2, 5):
        for window in (None, (100.0, 900.0)):
            mine = c[c["gpu"] == gpu]
            blocks = merge(mine["gpu"], mine["start"], mine["end"])
            a, b = blocks["start"], blocks["end"]
            if window is not None:
                a, b = np.clip(a, *window), np.maximum(np.clip(b, *window), np.clip(a, *window))
            keep = b > a
            want = np.column_stack([a[keep], b[keep]]).astype(np.float64).reshape(-1, 2)
            got = busy_union(s, gpu, window)
            assert got.dtype == np.float64 and np.array_equal(got, want), (gpu, window)


def _merged_by_a_sweep(groups, starts, ends) -> list[tuple]:
    """Each group's intervals in (group, start) order, swept: a block opens where an
    interval starts after the ends so far (touching ones join); its closer is the last
    interval in that order whose end is the block's end (the reference)."""
    order = sorted(range(len(starts)), key=lambda k: (groups[k], starts[k]))  # stable
    out: list[list] = []
    for k in order:
        g, s, e = int(groups[k]), float(starts[k]), float(ends[k])
        if out and out[-1][0] == g and s <= out[-1][2]:
            block = out[-1]
            if e >= block[2]:
                block[2], block[4] = e, k
        else:
            out.append([g, s, e, k, k])
    return [tuple(b) for b in out]


@pytest.mark.parametrize("seed", range(12))
def test_merge_is_the_sweep_in_order_or_not(seed: int) -> None:
    """Calls given in order (the columns kept as they are) or not, overlapping, touching or
    apart, on one GPU or three: the blocks a sweep finds, with their first and last calls."""
    from viewer.analysis.intervals import merge

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    groups = rng.integers(0, 1 if seed % 2 else 3, n).astype(np.int32)
    starts = np.round(rng.uniform(0, 2000, n))
    ends = starts + rng.choice([0.0, 10.0, 100.0, 400.0], n)
    if seed % 3 == 0:  # in order already: each call a block of its own, or joined
        order = np.lexsort((starts, groups))
        groups, starts, ends = groups[order], starts[order], ends[order]
    m = merge(groups, starts, ends)
    got = list(
        zip(*(m[c].tolist() for c in ("group", "start", "end", "first", "last")), strict=True)
    )
    assert got == _merged_by_a_sweep(groups, starts, ends)
