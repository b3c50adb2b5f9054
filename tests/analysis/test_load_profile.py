"""The load profile (``analysis.load``): the busy threads over time and integrals over it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from viewer.analysis.load import COARSE, WAKERS, _column_medians, profile
from viewer.sim.contention import CLASSES, Contention


def _spans(rng: np.random.Generator, n: int, whole_ms: bool) -> dict:
    out = {}
    for name in ("synth", "prep", "kernel", "post"):
        a = rng.uniform(0, 1000, n)
        b = a + rng.uniform(-5, 200, n)  # some empty or reversed: left out
        if whole_ms:
            a, b = np.rint(a), np.rint(b)
        a[rng.random(n) < 0.05] = np.nan
        out[name] = (a, b)
    return out


def _busy_at(spans: dict, t: float) -> int:
    """Brute force: the intervals (start <= t < end) holding ``t``."""
    return sum(int(((a <= t) & (t < b) & (b > a)).sum()) for a, b in spans.values())


@pytest.mark.parametrize("seed", range(6))
def test_integrals_match_a_brute_force_sum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    spans = _spans(rng, 40, whole_ms=seed % 2 == 0)
    prof = profile(spans)
    weight = rng.uniform(0.5, 2.0, 200)
    starts = rng.uniform(0, 1100, 30)
    ends = starts + rng.uniform(1, 300, 30)
    got = prof.integral(starts, ends, weight)
    cuts = np.unique(np.r_[prof.t, starts, ends])
    for s, e, g in zip(starts, ends, got, strict=True):
        # Time outside the profile (before its first instant, after its last) counts for
        # nothing: a stage's own interval always lies inside it.
        s, e = max(s, prof.t[0]), min(e, prof.t[-1])
        if e <= s:
            assert g == 0
            continue
        pts = np.r_[s, cuts[(cuts > s) & (cuts < e)], e]
        mids = (pts[:-1] + pts[1:]) / 2
        want = sum(
            weight[_busy_at(spans, m)] * (q - p)
            for m, p, q in zip(mids, pts[:-1], pts[1:], strict=True)
        )
        assert g == pytest.approx(want, rel=1e-9, abs=1e-6)
    levels = np.arange(int(prof.busy.max()) + 2, dtype=np.float64)
    assert np.allclose(
        prof.mean_busy(starts, ends), prof.integral(starts, ends, levels) / (ends - starts)
    )


def test_cumulative_is_the_sum_it_replaced_to_the_bit() -> None:
    """``cumulative`` is made in one array: the same numbers as ``r_[0, cumsum(diff * w)]``."""
    rng = np.random.default_rng(7)
    prof = profile(_spans(rng, 5000, whole_ms=False))
    weight = 1.0 / (1.0 + 0.05 * np.arange(64))
    level = weight[np.minimum(prof.busy[:-1], len(weight) - 1)]
    want = np.r_[0.0, np.cumsum(np.diff(prof.t) * level)]
    assert np.array_equal(prof.cumulative(weight), want)
    levels = np.arange(int(prof.busy.max()) + 2, dtype=np.float64)
    a = np.sort(rng.uniform(0, 1000, 100))
    b = a + 10
    old = (
        np.interp(b, prof.t, np.r_[0.0, np.cumsum(np.diff(prof.t) * levels[prof.busy[:-1]])])
        - np.interp(a, prof.t, np.r_[0.0, np.cumsum(np.diff(prof.t) * levels[prof.busy[:-1]])])
    ) / (b - a)
    assert np.array_equal(prof.mean_busy(a, b), old)


def test_a_profile_of_nothing_or_one_instant() -> None:
    empty = profile({"synth": (np.zeros(0), np.zeros(0))})
    assert empty.integral(np.array([0.0]), np.array([5.0]), np.ones(3)).tolist() == [0.0]
    assert empty.mean_busy(np.array([0.0]), np.array([5.0])).tolist() == [0.0]
    one = profile({"synth": (np.array([2.0]), np.array([4.0]))})
    assert one.mean_busy(np.array([2.0, 3.0]), np.array([4.0, 4.0])).tolist() == [1.0, 1.0]


def _profile_by_one_sort(spans: dict):
    """The profile as it was made before: every change sorted in one order, the running
    count kept after the last change of each instant (the reference for ``profile``)."""
    kept = []
    for a, b in spans.values():
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        ok = np.isfinite(a) & np.isfinite(b) & (b > a)
        kept.append((a[ok], b[ok]))
    starts = sum(len(a) for a, _ in kept)
    t = np.concatenate([a for a, _ in kept] + [b for _, b in kept])
    step = np.ones(len(t), np.int8)
    step[starts:] = -1
    order = np.argsort(t)
    busy = np.maximum(np.cumsum(step[order], dtype=np.int32), 0)
    t = t[order]
    keep = np.r_[t[1:] != t[:-1], True]
    return t[keep], busy[keep]


@pytest.mark.parametrize("seed", range(12))
def test_the_profile_is_the_one_every_change_sorted_gives(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted from the sorted starts and ends, in floats or whole ms, in chunks: the same
    instants and counts to the bit as one sort of every change (ties and all)."""
    rng = np.random.default_rng(seed)
    spans = _spans(rng, int(rng.integers(1, 400)), whole_ms=seed % 3 != 0)
    if seed % 3 == 2:  # a played run's spans: whole ms in int32, -1 for never
        spans = {
            k: tuple(np.nan_to_num(x, nan=-1).astype(np.int32) for x in ab)
            for k, ab in spans.items()
        }
    if seed % 4 == 1:  # many chunks, some cut inside a run of ties
        monkeypatch.setattr("viewer.analysis.intervals._CHUNK", 7)
    prof = profile(spans)
    t, busy = _profile_by_one_sort(spans)
    assert prof.t.dtype == np.float64 and np.array_equal(prof.t, t)
    assert np.array_equal(prof.busy, busy)


def test_a_profile_of_nothing_is_empty_but_usable() -> None:
    prof = profile({"synth": (np.array([np.nan, 3.0]), np.array([1.0, 3.0]))})
    assert len(prof.t) == 2 and prof.busy.max() == 0
    assert profile({}).busy.max() == 0


@pytest.mark.parametrize("seed", range(10))
def test_level_times_are_each_levels_integral_to_the_bit(seed: int) -> None:
    """The fit's table (time at each busy count) from the bracketing instants alone is the
    stack of ``integral`` with each level's weight, to the bit: intervals before, after and
    across the profile, on its instants, in floats or whole ms."""
    rng = np.random.default_rng(seed)
    prof = profile(_spans(rng, int(rng.integers(1, 300)), whole_ms=seed % 2 == 0))
    n = int(rng.integers(1, 200))
    a = rng.uniform(-100, 1300, n)
    a[: n // 4] = rng.choice(prof.t, n // 4)  # on the profile's own instants
    b = a + rng.uniform(0, 400, n)
    levels = int(prof.busy.max()) + 2 + seed % 3  # and levels no span reaches
    want = np.stack(
        [prof.integral(a, b, (np.arange(levels) == v).astype(float)) for v in range(levels)],
        axis=1,
    )
    got = prof.level_times(a, b, levels)
    assert got.shape == (n, levels) and np.array_equal(got, want)
    # Several sets of intervals at once (a sample's stages): each its own table, to the bit.
    tables = prof.level_tables([(a[:3], b[:3]), (b, b + 7.0), (a, b)], levels)
    assert np.array_equal(tables[0], want[:3]) and np.array_equal(tables[2], want)
    assert np.array_equal(tables[1], prof.level_times(b, b + 7.0, levels))
    one = profile({"synth": (np.array([2.0]), np.array([4.0]))})
    assert np.array_equal(
        one.level_times(a, b, 3),
        np.stack([one.integral(a, b, (np.arange(3) == v).astype(float)) for v in range(3)], 1),
    )


@pytest.mark.parametrize("cores", [None, 2.0, 7.0, 12.5])
@pytest.mark.parametrize("cap", [None, 5.0])
@pytest.mark.parametrize("waker", [0.0, 0.3, 1.0])
def test_a_grid_of_slopes_or_wakers_is_each_models_factor_to_the_bit(
    cores: float | None, cap: float | None, waker: float
) -> None:
    """The fit tries its grids as one array (``Contention.factors``): each column is
    ``factor`` of the model with that slope or share, bit for bit (a slope that wins by an
    ulp picks the same)."""
    busy = np.r_[np.arange(40), 0.5, 3.7, 17.25, 100.0]
    for cls in CLASSES:
        m = Contention(synth=0.3, cpu=0.02, cores=cores, cap=cap, waker=waker)
        grid = m.factors(cls, busy, slopes=COARSE)
        one = [replace(m, **{cls: float(a)}).factor(cls, busy) for a in COARSE]
        assert np.array_equal(grid, np.stack(one, 1))
        grid = m.factors(cls, busy, wakers=WAKERS)
        one = [replace(m, waker=float(w)).factor(cls, busy) for w in WAKERS]
        assert np.array_equal(grid, np.stack(one, 1))
        assert np.array_equal(m.factors(cls, busy), m.factor(cls, busy))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 1999, 2000])
def test_column_medians_are_numpys_to_the_bit(n: int) -> None:
    rng = np.random.default_rng(n)
    rows = np.log(rng.random((n, 39)) * 5 + 0.1)
    rows[:, 3] = 1.0  # every row tied
    rows[: n // 2, 5] = -2.0  # half tied at the bottom
    assert np.array_equal(_column_medians(rows), np.median(rows, axis=0))
    rows[0, 7] = np.nan  # numpy's answer where a value is not a number
    assert np.array_equal(_column_medians(rows), np.median(rows, axis=0), equal_nan=True)
