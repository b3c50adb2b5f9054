"""Counters as step functions, and their per-pixel min / max from the merged copies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.analysis.builders import pipeline
from viewer.analysis.counters import Envelope, counters, level_of, step_counts
from viewer.analysis.stages import stages


def exact(steps, x0: float, px: float, n: int, edge: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Min and max over each column, one column at a time; ``edge``: of the column less
    that much at each side (a change that close to a pixel's edge may fall in the pixel
    either side of it: the envelope reads the times as offsets from the log's start, and
    an edge less that origin rounds)."""
    lo, hi = np.zeros(n, int), np.zeros(n, int)
    for c in range(n):
        a, b = x0 + c * px + edge, x0 + (c + 1) * px - edge
        inside = steps.value[(steps.time >= a) & (steps.time < b)]
        values = np.r_[steps.at(a), inside]
        lo[c], hi[c] = values.min(), values.max()
    return lo, hi


#: How close to a pixel's edge a change may fall in the pixel beside it (ms).
ROUNDING = 1e-9


def test_step_counts_of_intervals() -> None:
    steps = step_counts(np.array([0, 10, 10, 30, np.nan]), np.array([20, 20, 15, np.nan, 5]))
    assert steps.time.tolist() == [0, 10, 15, 20, 30]
    assert steps.value.tolist() == [1, 3, 2, 0, 1]  # the NaN end never ends
    assert steps.peak == 3 and steps.at(-1) == 0 and steps.at(12) == 3


def test_counters_follow_the_stages() -> None:
    session = pipeline([40_000.0 + 37_000 * j for j in range(5)])
    c = counters(session)
    st = stages(session)
    p = session.partitions
    t = float(p["gpu_start"][20]) + 10
    gpu = ((p["gpu_start"] <= t) & (p["gpu_end"] > t)).sum()
    queue = ((st["ready"] <= t) & (st["wait_end"] > t)).sum()
    synth = ((p["synth_start"] <= t) & (p["synth_end"] > t)).sum()
    assert (c["gpu"].at(t), c["queue"].at(t), c["synth"].at(t)) == (gpu, queue, synth)
    assert c["gpu"].peak == 2  # two workers on one GPU
    assert c["synth"].peak == 10  # a job's 10 partitions synthesize together


@settings(max_examples=60, deadline=None)
@given(
    starts=st.lists(st.integers(0, 5000), min_size=1, max_size=300),
    lengths=st.lists(st.integers(0, 800), min_size=300, max_size=300),
    x0=st.floats(-100, 4000),
    px=st.sampled_from([0.5, 1.0, 3.0, 7.5, 16.0, 40.0, 130.0]),
)
def test_columns_hold_every_value_and_little_more(starts, lengths, x0, px) -> None:
    start = np.array(starts, float)
    steps = step_counts(start, start + np.array(lengths[: len(starts)], float))
    env = Envelope(steps)
    n = 60
    lo, hi = env.columns(x0, px, n)
    want_lo, want_hi = exact(steps, x0, px, n, ROUNDING)
    assert (lo <= want_lo).all() and (hi >= want_hi).all()
    # No more than what lies within one bucket of the column.
    bucket = 2.0 ** level_of(px)
    wide_lo, wide_hi = exact(steps, x0 - bucket, px, n + 2)
    for c in range(n):
        around = slice(c, c + 3) if bucket <= px else slice(0, n + 2)
        assert lo[c] >= min(wide_lo[around]) and hi[c] <= max(wide_hi[around])
    if px < 2:  # level 0: the exact envelope, but for a change on a pixel's very edge
        at_lo, at_hi = exact(steps, x0, px, n)
        assert ((lo == want_lo) | (lo == at_lo)).all() and ((hi == want_hi) | (hi == at_hi)).all()


def test_merged_copies_stay_small() -> None:
    rng = np.random.default_rng(3)
    start = np.sort(rng.uniform(0, 1e7, 200_000))
    steps = step_counts(start, start + rng.uniform(10, 5000, len(start)))
    env = Envelope(steps)
    env.build_levels(1e7 / 400)
    levels = (env.level(k) for k in range(1, level_of(1e7 / 400) + 1))
    copies = {id(lvl): lvl for lvl in levels if lvl is not env.level(0)}
    total = sum(len(lvl) for lvl in copies.values())
    # A copy is kept at a quarter of the finer one: all together about a third of the
    # counter (at a half they held 0.5 of it here, up to as much as the counter).
    assert 0 < total <= len(steps) / 3
    lo, hi = env.columns(0.0, 1e7 / 1600, 1600)
    assert len(lo) == 1600 and (hi >= lo).all()


@pytest.mark.parametrize("px", [0.5, 64.0])
def test_an_empty_counter_is_zero(px) -> None:
    env = Envelope(step_counts(np.zeros(0), np.zeros(0)))
    lo, hi = env.columns(0.0, px, 10)
    assert (lo == 0).all() and (hi == 0).all()


def test_counts_are_kept_in_two_bytes_where_they_fit() -> None:
    """A counter's values are int16 up to 32767 (2 bytes a step on logs of 10^6 steps) and
    int32 past it (40 000 intervals at once), read alike."""
    few = step_counts(np.arange(5.0), np.arange(5.0) + 2)
    many = step_counts(np.zeros(40_000), np.ones(40_000))
    assert few.value.dtype == np.int16 and many.value.dtype == np.int32
    assert many.peak == 40_000 and many.at(0.5) == 40_000 and few.at(2.5) == 2
    lo, hi = Envelope(many).columns(-1.0, 1.0, 3)
    assert lo.tolist() == [0, 40_000, 0] and hi.tolist() == [0, 40_000, 0]


def test_the_lanes_let_the_synthesis_packing_go_unless_it_was_made_before() -> None:
    from viewer.analysis.cache import made
    from viewer.analysis.stages import synthesis_rows
    from viewer.lanes.data import build_lanes

    session = pipeline([40_000.0 + 37_000 * j for j in range(3)])
    lanes = build_lanes(session)
    packing = synthesis_rows.__wrapped__  # the function the memo is keyed on
    assert packing not in made(session)
    assert any(group.name == "synthesis" for group in lanes.groups)
    other = pipeline([40_000.0 + 37_000 * j for j in range(3)])
    synthesis_rows(other)
    build_lanes(other)
    assert packing in made(other)


@pytest.mark.parametrize("seed", range(4))
def test_buckets_of_int32_offsets_are_the_float_buckets(seed: int) -> None:
    """A level's buckets of int32 offsets, found in int32, change where those of the same
    times in float64 do (negative offsets and the largest included)."""
    from viewer.analysis.counters import _bucket_changes

    rng = np.random.default_rng(seed)
    s = np.sort(rng.integers(-(2**31), 2**31 - 1, 5000, dtype=np.int64)).astype(np.int32)
    s[:100] = np.sort(rng.integers(-50, 50, 100))  # near zero, where floor and trunc part
    s.sort()
    for k in range(0, 31):
        got = _bucket_changes(s, k)
        want = _bucket_changes(s.astype(np.float64), k)
        assert np.array_equal(got, want), k


def _steps_by_one_sort(start, end):
    """The step function as first counted: every change in one stable sort order, the
    running sum kept after the last change of each instant (the reference)."""
    start, end = np.asarray(start, np.float64), np.asarray(end, np.float64)
    ok = np.isfinite(start)
    start, end = start[ok], end[ok]
    ends = end[np.isfinite(end)]
    t = np.concatenate([start, ends])
    d = np.r_[np.ones(len(start), np.int64), -np.ones(len(ends), np.int64)]
    order = np.argsort(t, kind="stable")
    t, count = t[order], np.cumsum(d[order])
    last = np.r_[t[1:] != t[:-1], True] if len(t) else np.zeros(0, bool)
    return t[last], count[last]


@pytest.mark.parametrize("seed", range(10))
def test_step_counts_are_those_of_one_sort_of_every_change(seed, monkeypatch) -> None:
    """Ties, empty intervals, ends before starts, NaN and infinite starts and ends, whole
    ms or not, counted a piece at a time: the same steps as one sort of every change."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 500))
    start = rng.uniform(0, 1000, n)
    if seed % 2:
        start = np.round(start / 10) * 10  # many ties
    end = start + rng.choice([0.0, 5.0, 30.0, -3.0, 200.0], n)
    start[rng.random(n) < 0.05] = np.nan
    end[rng.random(n) < 0.05] = np.nan
    end[rng.random(n) < 0.02] = np.inf
    if seed % 3 == 0:
        monkeypatch.setattr("viewer.analysis.intervals._CHUNK", 7)
    got = step_counts(start, end)
    t, count = _steps_by_one_sort(start, end)
    assert np.array_equal(got.time, t) and got.value.tolist() == count.tolist()


@pytest.mark.parametrize("name", ["phase8_pw20.log", "two_gpus.log", "budget_gated.log"])
def test_the_memory_track_is_the_upper_curve_at_its_own_times(name: str) -> None:
    """The memory counter reads the upper curve alone (no lower curve made): at every
    instant of either, and before the first, the value the whole memory curve gives."""
    from pathlib import Path

    from viewer.analysis.memory import memory
    from viewer.io import open_log

    sample = Path(__file__).resolve().parents[2] / "sample_logs" / name
    for session in open_log(sample).sessions:
        whole = memory(session)
        track = counters(session)["memory"]
        assert len(track) <= len(whole.time)
        points = np.union1d(whole.time, track.time)
        points = np.r_[points[:1] - 1.0, points]
        i = np.searchsorted(whole.time, points, "right") - 1
        want = np.where(i >= 0, np.rint(whole.hi)[np.maximum(i, 0)], 0)
        assert [track.at(float(x)) for x in points] == want.astype(int).tolist()
        assert track.peak == int(np.rint(whole.hi).max())
