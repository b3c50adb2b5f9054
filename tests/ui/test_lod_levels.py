"""Level of detail from merged copies: whatever the zoom level and lane, a frame never
hides a gap of a pixel, never draws a bar where there is no interval, never drops one,
and draws a few pieces per pixel column (properties over random lanes and views)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ui.lod_reference import coalesce
from viewer.lanes.lod import (
    LEVEL_STEP,
    MIXED,
    Intervals,
    Stack,
    drawable,
    level_of,
)
from viewer.ui.view.lane_overlay import MAX_COLUMNS, first_per_column

TOL = 1e-6


@st.composite
def lanes(draw) -> list[Intervals]:
    """1-4 lanes of non-overlapping intervals whose lengths and gaps span six decades."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(0, 300))
        seed = draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        length = 10 ** rng.uniform(-2, 4, n)
        gap = np.where(rng.random(n) < 0.3, 10 ** rng.uniform(-2, 4, n), 0.0)
        start = np.cumsum(length + gap) - length
        key = rng.integers(0, draw(st.integers(1, 4)), n)
        out.append(Intervals.make(start, start + length, key))
    return out


@st.composite
def views(draw) -> tuple[float, float, float]:
    """(x0, x1, px): a view of 400-2000 pixels at 0.01 ms to 100 s per pixel."""
    px = 10 ** draw(st.floats(-2, 5))
    width = draw(st.integers(400, 2000))
    x0 = draw(st.floats(-1e4, 5e5))
    return x0, x0 + width * px, px


def union(iv: Intervals) -> tuple[np.ndarray, np.ndarray]:
    """Components (start, end) of the union of a lane's intervals."""
    if not len(iv):
        return np.zeros(0), np.zeros(0)
    new = np.r_[True, iv.start[1:] > iv.reach[:-1]]
    first = np.flatnonzero(new)
    return iv.start[first], np.maximum.reduceat(iv.end, first)


def lane_pieces(drawn, lane: int):
    s, e, k, owner = drawn
    m = owner == lane
    return s[m], e[m], k[m]


@settings(max_examples=150, deadline=None)
@given(lanes(), views(), st.sampled_from([1.0, 3.0]), st.booleans())
def test_frame_keeps_gaps_and_bars_and_draws_few_pieces(parts, view, narrow_px, mixed_max):
    x0, x1, px = view
    stack = Stack(parts, mixed_max)
    drawn = stack.drawable(x0, x1, px, narrow_px)
    assert (drawn[1] - drawn[0] >= px * (1 - TOL)).all()  # at least a pixel wide
    for lane, iv in enumerate(parts):
        s, e, k = lane_pieces(drawn, lane)
        assert (np.diff(s) >= 0).all()
        a, b = union(iv)
        # No bar where there is no interval: a piece starts at an interval, bridges only
        # holes narrower than a pixel and ends at most a pixel past the last one it covers.
        assert np.isin(s, iv.start).all()
        for s_i, e_i in zip(s.tolist(), e.tolist(), strict=True):
            j = int(np.searchsorted(a, s_i, side="right")) - 1
            while j + 1 < len(a) and a[j + 1] <= e_i:
                assert a[j + 1] - b[j] < px * (1 + TOL), "a piece bridges a hole of a pixel"
                j += 1
            assert e_i <= max(b[j], s_i + px) + TOL * px
        # Every gap of a pixel or more stays open but for the pixel a narrow piece widens by.
        for g0 in b[:-1][a[1:] - b[:-1] >= px].tolist():
            before = s <= g0
            assert (e[before] <= g0 + px * (1 + TOL)).all()
        # No interval that meets the view is dropped: a piece covers each of them.
        meets = (iv.end > x0) & (iv.start < x1)
        for a_i, b_i in zip(iv.start[meets].tolist(), iv.end[meets].tolist(), strict=True):
            j = int(np.searchsorted(s, a_i, side="right")) - 1
            assert j >= 0 and e[j] >= b_i - TOL * max(px, 1.0)
        # A few pieces start in any pixel column, and the keys are the intervals' own.
        seen = s[(s >= x0) & (s < x1)]
        if len(seen):
            assert np.bincount(((seen - x0) // px).astype(np.int64)).max() <= 3
        assert np.isin(k, np.r_[iv.key, MIXED]).all()
        if mixed_max:
            assert (k != MIXED).all()


@settings(max_examples=100, deadline=None)
@given(lanes(), views(), st.sampled_from([1.0, 3.0]))
def test_stacked_lanes_merge_as_each_lane_alone(parts, view, narrow_px) -> None:
    """All lanes at once give what merging each lane's copy on its own gives."""
    x0, x1, px = view
    stack = Stack(parts)
    drawn = stack.drawable(x0, x1, px, narrow_px)
    level = stack.level(level_of(px))
    lo, hi = level.cut(x0, x1)
    for lane, (a, b) in enumerate(level.spans):
        sl = slice(lo[lane], hi[lane])
        want = coalesce(level.start[sl], level.end[sl], level.key[sl], px, narrow_px=narrow_px)
        got = lane_pieces(drawn, lane)
        assert a <= lo[lane] <= hi[lane] <= b
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(w, g)


@settings(max_examples=60, deadline=None)
@given(lanes(), st.booleans())
def test_levels_shrink_and_keep_each_lane_sorted_with_its_reach(parts, mixed_max) -> None:
    stack = Stack(parts, mixed_max)
    previous = len(stack)
    for k in range(1, 24):
        level = stack.level(k)
        assert len(level) <= previous
        previous = len(level)
        for lane, (a, b) in enumerate(level.spans):
            if b == a:
                continue
            assert (np.diff(level.start[a:b]) >= 0).all()
            np.testing.assert_array_equal(level.reach[a:b], np.maximum.accumulate(level.end[a:b]))
            # A copy only closes holes narrower than its pixel.
            hole = level.start[a + 1 : b] - level.reach[a : b - 1]
            raw = union(parts[lane])
            raw_holes = raw[0][1:] - raw[1][:-1]
            wide_holes = int((raw_holes >= LEVEL_STEP**k).sum())
            assert int((hole > 0).sum()) >= wide_holes


def test_lanes_hold_views_into_the_stack() -> None:
    parts = [Intervals.make([0.0, 5.0], [1.0, 6.0], [0, 1]), Intervals.make([2.0], [3.0], [4])]
    stack = Stack(parts)
    views = stack.lane_views()
    assert [v.start.tolist() for v in views] == [[0.0, 5.0], [2.0]]
    assert all(v.ls.base is not None and v.le.base is not None for v in views)
    assert views[1].at(2.5) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_subnormal=False), max_size=300),
    st.floats(-1e6, 1e6),
    st.floats(1.0, 1e6),
    st.floats(1e-3, 1e4),
)
def test_markers_thin_to_the_first_in_each_column(times, x0, span, step) -> None:
    """One binary search per column picks what a pass over every marker in view would
    (columns fixed in time: multiples of ``step``)."""
    times = np.sort(np.array(times, dtype=np.float64))
    x1 = x0 + span
    got = first_per_column(times, x0, x1, step)
    lo, hi = np.searchsorted(times, [x0, x1])
    idx = np.arange(lo, hi)
    column = np.floor(times[idx] / step)
    want = idx[np.r_[True, column[1:] != column[:-1]]] if len(idx) else idx
    if span / step <= MAX_COLUMNS:
        assert got.tolist() == want.tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(lanes(), st.sampled_from([1.0, 3.0]), st.booleans()), max_size=4), views()
)
def test_layers_merged_in_one_pass_as_each_alone(layers, view) -> None:
    """Several stacks (each with its narrow width and worst-key rule) in one merge give
    what each stack gives on its own, lanes numbered on from stack to stack."""
    x0, x1, px = view
    stacks = [(Stack(parts, worst), narrow_px, None) for parts, narrow_px, worst in layers]
    s, e, k, lane = drawable(stacks, x0, x1, px)
    base = 0
    for stack, narrow_px, _ in stacks:
        alone = stack.drawable(x0, x1, px, narrow_px)
        mine = (lane >= base) & (lane < base + len(stack.level(0).spans))
        for got, want in zip((s[mine], e[mine], k[mine], lane[mine] - base), alone, strict=True):
            np.testing.assert_array_equal(got, want)
        base += len(stack.level(0).spans)


def _typical(iv: Intervals) -> float:
    """The typical length as first written: the median of every len // 1000-th length."""
    step = max(1, len(iv) // 1000)
    sample = iv.end[::step] - iv.start[::step]
    return float(np.median(sample)) if len(sample) else 0.0


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 80), st.booleans())
def test_stack_of_lanes_is_the_stack_of_each_lane(seed, n_lanes, one_long_lane) -> None:
    """Intervals in any order with the lane of each stack as each lane's ``Intervals``
    do (10^5 synthesis rows are built so), and a cut of every lane at once (many lanes)
    finds what a search per lane finds."""
    from unittest import mock

    from viewer.lanes import lod

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400)) + (2500 if one_long_lane else 0)
    lane = rng.integers(0, n_lanes, n)
    if one_long_lane:
        lane[:2500] = 0
    start = np.round(rng.uniform(0, 1000, n))  # ties: equal starts keep their order
    end = start + np.round(rng.exponential(20, n)) - (rng.random(n) < 0.05)  # a few end early
    start[rng.random(n) < 0.03] = np.nan
    key, row = rng.integers(0, 5, n), np.arange(n)
    parts = [Intervals.make(start[lane == i], end[lane == i], key[lane == i], row[lane == i])
             for i in range(n_lanes)]  # fmt: skip
    want, got = Stack(parts), Stack.of_lanes(start, end, key, row, lane, n_lanes)
    a, b = want.level(0), got.level(0)
    for name in ("start", "end", "key", "reach", "bounds"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(want.row, got.row)
    np.testing.assert_array_equal(got.typical, [_typical(p) for p in parts])
    assert want.typical.tolist() == got.typical.tolist()
    heads = list(zip(a.bounds[:-1].tolist(), parts, strict=True))
    for x0, x1 in rng.uniform(-50, 1100, (20, 2)):
        x0, x1 = min(x0, x1), max(x0, x1)
        lo = [s + int(np.searchsorted(p.reach, x0)) for s, p in heads]
        hi = [s + int(np.searchsorted(p.start, x1, "right")) for s, p in heads]
        for few in (0, 10**9):
            with mock.patch.object(lod, "FEW_LANES", few):
                cut_lo, cut_hi = b.cut(x0, x1)
            assert cut_lo.tolist() == lo
            assert cut_hi.tolist() == np.maximum(lo, hi).tolist()


def test_reach_is_the_end_array_itself_where_no_interval_overlaps_the_next() -> None:
    """A lane of calls one after another keeps one array for ``end`` and ``reach`` (8 bytes
    an interval for nothing, at every level); overlapping intervals keep their own."""
    apart = Intervals.make(np.array([0.0, 10.0, 20.0]), np.array([5.0, 15.0, 25.0]), np.zeros(3))
    stack = Stack([apart, apart])
    assert stack.level(0).lr is stack.level(0).le
    over = Intervals.make(np.array([0.0, 1.0, 20.0]), np.array([10.0, 5.0, 25.0]), np.zeros(3))
    stack = Stack([over])
    level = stack.level(0)
    assert level.lr is not level.le
    assert level.reach.tolist() == [10.0, 10.0, 25.0]
    for k in range(1, 8):
        lvl = Stack([apart]).level(k)
        np.testing.assert_array_equal(lvl.reach, np.maximum.accumulate(lvl.end))


def _lanes_at(origin: float, fraction: float = 0.0):
    from tests.analysis.builders import pipeline
    from viewer.lanes.data import build_lanes

    ready = [origin + 40_000.0 + 37_000 * j + fraction for j in range(6)]
    return build_lanes(pipeline(ready, start_ms=origin))


@pytest.mark.parametrize("fraction", [0.0, 0.5])
def test_lanes_on_wall_clock_ms_draw_as_lanes_on_session_ms(fraction) -> None:
    """A log whose offsets are wall-clock ms (1.7e12) keeps its lanes as int32 offsets and
    draws, picks and cuts exactly as the same log from 0; a fraction of a ms keeps float64."""
    from viewer.lanes.data import SessionLanes

    unix = 1_771_462_800_000.0
    near, far = _lanes_at(0.0, fraction), _lanes_at(unix, fraction)
    assert isinstance(far, SessionLanes)
    if fraction:  # the synthesis rows start at a fraction of a ms: kept as they are
        assert far.groups[-1].stacks()["synth"].data.level(0).ls.dtype == np.float64
    for g_near, g_far in zip(near.groups, far.groups, strict=True):
        for name, s_far in g_far.stacks().items():
            s_near = g_near.stacks()[name].data
            if not fraction:
                assert not len(s_far.data) or s_far.data.level(0).ls.dtype == np.int32
            for k in (0, 3, 9, 14):
                a, b = s_near.level(k), s_far.data.level(k)
                assert np.array_equal(a.start + unix, b.start) and np.array_equal(a.key, b.key)
            for x0, x1, px in ((0, 3e5, 300.0), (41_000, 46_000, 2.0), (-5, 2e5, 0.5)):
                want = s_near.drawable(x0, x1, px)
                got = s_far.data.drawable(x0 + unix, x1 + unix, px)
                assert np.array_equal(want[0] + unix, got[0])
                assert np.array_equal(want[1] + unix, got[1])
                assert np.array_equal(want[2], got[2]) and np.array_equal(want[3], got[3])
            for lane_near, lane_far in zip(g_near.lanes, g_far.lanes, strict=True):
                if name not in lane_far.layers:
                    continue
                iv_near, iv_far = lane_near.layers[name], lane_far.layers[name]
                for x in (41_700.5, 45_000.0, 120_000.25):
                    assert iv_near.at(x, 3.0) == iv_far.at(x + unix, 3.0)
                    assert iv_near.visible(x, x + 9e3) == iv_far.visible(x + unix, x + 9e3 + unix)


@pytest.mark.parametrize(
    "shifts, dtype",
    [
        ((0.0, 1e9), np.int32),  # parts on other origins, moved onto one
        ((0.0, 3e9), np.float64),  # too far apart for an int32: kept in ms
        ((0.0, 0.5), np.float64),  # a part off whole ms
    ],
)
def test_parts_on_other_origins_stack_as_their_ms_would(shifts, dtype) -> None:
    rng = np.random.default_rng(7)
    parts, plain = [], []
    for shift in shifts:
        start = np.sort(rng.integers(0, 10**6, 300)).astype(np.float64) + shift
        end = start + rng.integers(0, 5000, 300)
        key = rng.integers(0, 5, 300)
        parts.append(Intervals.make(start, end, key))
        plain.append((start, end, key))
    stack = Stack(parts)
    assert stack.level(0).ls.dtype == dtype
    for (start, end, key), view in zip(plain, stack.lane_views(), strict=True):
        order = np.argsort(start, kind="stable")
        assert np.array_equal(view.start, start[order]) and np.array_equal(view.end, end[order])
        assert np.array_equal(view.key, key[order])
    for x0, x1, px in ((0, 4e9, 1e6), (shifts[1], shifts[1] + 1e5, 20.0), (5e5, 6e5, 1.0)):
        s, e, k, lane = stack.drawable(x0, x1, px)
        for i in range(len(parts)):
            mine = lane == i
            start, end, key = plain[i]
            if mine.any():  # every drawn piece covers an interval of its lane
                assert np.isin(s[mine], start).all() and (e[mine] >= s[mine]).all()


def test_a_cross_layer_of_every_gap_is_the_gap_layers_stack() -> None:
    """Where every gap is cross-sector (a job a call), the busy lane's cross layer is its gap
    layer, stacked once (24 MB on 1.5 M one-call jobs), and draws what it drew."""
    from tests.analysis.builders import call, session
    from viewer.lanes.data import build_lanes

    one_call = session(*(call(f"j{i}", -1, 100.0 * i, 100.0 * i + 60, i % 2) for i in range(9)))
    mixed = session(call("a", 0, 0, 60, 0), call("a", 1, 80, 140, 0), call("b", 0, 200, 260, 0))
    for s, shared in ((one_call, True), (mixed, False)):
        busy = build_lanes(s).groups[0]
        stacks = busy.stacks()
        assert (stacks["cross"].data is stacks["gap"].data) == shared
        lane = next(lane for lane in busy.lanes if lane.kind == "busy")
        gap, cross = lane.layers["gap"], lane.layers["cross"]
        starts, kinds = gap.start.tolist(), gap.key.tolist()
        assert cross.start.tolist() == [a for a, k in zip(starts, kinds, strict=True) if k >= 2]


def _made_by_copies(start, end, key, row=None):
    """``Intervals.make`` as first written, every column copied in turn (the reference)."""
    from viewer.analysis import local_time

    start = np.asarray(start, dtype=np.float64)
    end = np.asarray(end, dtype=np.float64)
    ok = np.isfinite(start) & np.isfinite(end)
    start, end = start[ok], np.maximum(end[ok], start[ok])
    key = np.asarray(key, dtype=np.int32)[ok]
    row = np.full(len(start), -1, np.int32) if row is None else np.asarray(row)[ok]
    order = np.argsort(start, kind="stable")
    end = end[order]
    reach = np.maximum.accumulate(end) if len(end) else end.copy()
    (ls, le, lr), origin = local_time.compact_all((start[order], end, reach))
    return Intervals(ls, le, key[order], row[order].astype(np.int32), lr, origin)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 60),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_intervals_made_in_place_are_those_made_by_copies(seed, n, ordered, gaps, rows) -> None:
    """Kept in order or not, with NaN or not, in whole ms or not, with rows or none: the
    same intervals as when every column was copied, and the inputs are not written."""
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, 1000, n)
    if seed % 2:
        start = np.round(start)
    if ordered:
        start.sort()
    end = start + rng.uniform(-5, 50, n)
    if gaps and n:
        start[rng.random(n) < 0.1] = np.nan
        end[rng.random(n) < 0.1] = np.inf
    key = rng.integers(0, 9, n).astype(np.int32)
    row = rng.integers(0, 10**6, n) if rows else None
    given_ = [a.copy() for a in (start, end, key)]
    got = Intervals.make(start, end, key, row)
    want = _made_by_copies(start, end, key, row)
    for name in ("ls", "le", "lr", "key", "row"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert got.origin == want.origin
    for a, b in zip((start, end, key), given_, strict=True):
        assert np.array_equal(a, b, equal_nan=True)
