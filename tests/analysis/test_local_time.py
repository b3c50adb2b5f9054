"""Times kept as int32 offsets where exact, and searched as their float64 would be."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.analysis import local_time
from viewer.analysis.counters import Envelope, Steps, step_counts

UNIX_MS = 1_771_462_800_000.0  # 2026-02-19 in ms since 1970: a log's wall-clock offsets


@pytest.mark.parametrize("origin", [0.0, -5000.0, UNIX_MS])
def test_whole_ms_within_the_span_become_int32_offsets(origin) -> None:
    t = origin + np.array([0.0, 3.0, 2**31 - 2.0, 17.0])
    offsets, at = local_time.compact(t)
    assert offsets.dtype == np.int32 and at == origin
    assert np.array_equal(offsets + at, t)


@pytest.mark.parametrize(
    "t",
    [
        np.array([0.0, 0.5, 3.0]),  # a fraction of a ms
        np.array([0.0, 2.0**31]),  # past the span
        np.array([0.0, 2.0**31 - 1]),  # at it: a key clipped there would not lie after it
        np.array([0.0, np.nan]),
        np.array([0.0, np.inf]),
        np.array([1e300, 2e300]),
        np.array([UNIX_MS + 0.25, UNIX_MS + 1]),
    ],
)
def test_anything_else_stays_as_it_is(t) -> None:
    offsets, at = local_time.compact(t)
    assert offsets is t and at == 0.0


def test_a_late_fraction_keeps_every_time() -> None:
    """A fraction far into a long array (past the first piece checked) is still seen."""
    t = np.arange(3_000_000, dtype=np.float64)
    t[-1] += 0.5
    offsets, at = local_time.compact(t)
    assert offsets is t


@settings(max_examples=200, deadline=None)
@given(
    times=st.lists(st.integers(-(10**6), 10**6), min_size=0, max_size=60),
    keys=st.lists(
        st.one_of(
            st.floats(-2e6, 2e6),
            st.sampled_from([np.nan, np.inf, -np.inf, 1e300, -1e300, 2.0**31, -(2.0**31) - 5]),
        ),
        min_size=1,
        max_size=20,
    ),
    side=st.sampled_from(["left", "right"]),
)
def test_search_finds_what_numpy_finds_on_the_float_times(times, keys, side) -> None:
    t = np.sort(np.array(times, np.float64)) + UNIX_MS
    offsets, origin = local_time.compact(t)
    x = np.array(keys) + (origin if len(t) else 0.0)
    want = np.searchsorted(t, x, side)
    got = local_time.search(offsets, x - origin, side)
    assert got.tolist() == want.tolist()


def test_a_search_never_converts_the_offsets(monkeypatch) -> None:
    offsets, _ = local_time.compact(np.arange(1000, dtype=np.float64))
    seen = []
    real = np.searchsorted

    def spy(a, v, side="left"):
        seen.append((a.dtype, np.asarray(v).dtype))
        return real(a, v, side)

    monkeypatch.setattr(local_time.np, "searchsorted", spy)
    local_time.search(offsets, 3.5, "right")
    local_time.search(offsets, np.array([1.2, 7.0]), "left")
    assert seen == [(np.int32, np.int32)] * 2


@settings(max_examples=60, deadline=None)
@given(
    starts=st.lists(st.integers(0, 5000), min_size=1, max_size=200),
    lengths=st.lists(st.integers(0, 800), min_size=200, max_size=200),
    x0=st.integers(-800, 32_000).map(lambda v: v / 8),  # exact beside UNIX_MS too
    px=st.sampled_from([0.5, 1.0, 3.0, 16.0, 130.0]),
)
def test_a_counter_on_wall_clock_ms_reads_as_on_session_ms(starts, lengths, x0, px) -> None:
    """The same steps shifted by a wall-clock origin give the same columns and values (the
    offsets are int32 there; float64 times of that size are also exact)."""
    start = np.array(starts, float)
    end = start + np.array(lengths[: len(starts)], float)
    near, far = step_counts(start, end), step_counts(start + UNIX_MS, end + UNIX_MS)
    assert far.local.dtype == np.int32 and np.array_equal(far.time, near.time + UNIX_MS)
    columns = Envelope(near).columns(x0, px, 40), Envelope(far).columns(x0 + UNIX_MS, px, 40)
    for n, f in zip(*columns, strict=True):
        assert n.tolist() == f.tolist()
    assert far.at(x0 + UNIX_MS) == near.at(x0)


def test_steps_of_fractional_times_keep_them() -> None:
    steps = Steps.of(np.array([0.25, 1.5]), np.array([1, 0], np.int32))
    assert steps.local.dtype == np.float64 and steps.time.tolist() == [0.25, 1.5]
    assert steps.at(1.0) == 1 and steps.at(0.2) == 0


@pytest.mark.parametrize("side", ["left", "right"])
def test_keys_at_and_past_the_span_find_what_numpy_finds(side) -> None:
    """The last offset a compact array may hold lies before any key clipped to the span
    (an offset at the span itself was missed by a key past it: found by a review)."""
    t = np.array([0.0, 2.0**31 - 2])
    offsets, origin = local_time.compact(t)
    assert offsets.dtype == np.int32
    keys = np.array([2.0**31 - 2.5, 2.0**31 - 2, 2.0**31 - 1.5, 2.0**31 + 5, np.inf, np.nan])
    want = np.searchsorted(t, keys, side)
    assert local_time.search(offsets, keys - origin, side).tolist() == want.tolist()
