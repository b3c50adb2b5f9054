"""Counters over time: how many partitions were queued, synthesizing, or in a GPU call, and
the memory they hold (``viewer.analysis.memory``, its upper end in whole GiB).

Each counter is a step function of the intervals of ``stages`` (a partition counts from
its start, inclusive, to its end, exclusive): queue depth over [ready, wait_end),
syntheses in flight over [synth_start, synth_end), GPU calls in flight over
[gpu_start, gpu_end); what never ended runs to the session's end.  ``Envelope`` keeps
the min / max of a step function per bucket of 2 ** k ms, so the min and max of every
pixel column of a view come from O(pixels) pieces, however many steps it holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from viewer.analysis import local_time
from viewer.analysis.cache import per_session
from viewer.analysis.intervals import chosen, held_at_changes
from viewer.analysis.memory import memory_upper
from viewer.analysis.stages import stages
from viewer.model import Session

#: Counter key -> its name, in the order the tracks are drawn.
COUNTERS = {
    "queue": "queue depth",
    "synth": "syntheses in flight",
    "gpu": "GPU calls in flight",
    "memory": "memory, GiB (est.)",
}
#: Buckets of LEVEL_STEP ** k ms.
LEVEL_STEP = 2.0
#: A merged copy is kept where it has at most this share of the pieces of the finer copy
#: kept; elsewhere that finer copy serves (a view then reads at most about 1 / KEPT_BELOW
#: pieces a pixel). At a half, the copies of a dense counter held as much as the counter
#: (20 MB for the three tracks of 105 000 one-call jobs); at a quarter, a third of it (47 MB
#: for the four of 1.5 M jobs); at a tenth, a ninth (22 MB), and a view of 1600 pixels reads
#: at most 16 000 pieces a track, each a finer copy's (nearer the exact step function).
KEPT_BELOW = 0.1


@dataclass(frozen=True)
class Steps:
    """A step function: ``value[i]`` holds on [time[i], time[i + 1]), 0 before time[0].

    Its times are kept as ``local`` offsets from ``origin`` (``local_time.compact``: int32
    where exact, 4 bytes a step rather than 8)."""

    local: np.ndarray  # time - origin, strictly increasing
    value: np.ndarray  # int16 or int32
    origin: float = 0.0

    @classmethod
    def of(cls, time: np.ndarray, value: np.ndarray) -> Steps:
        """Steps at ``time`` (ms): times as offsets, values as int16 where they fit (a
        counter's are counts and whole GiB: 2 bytes a step rather than 4)."""
        local, origin = local_time.compact(time)
        if len(value) and value.min() >= -(2**15) and value.max() < 2**15:
            value = value.astype(np.int16)
        return cls(local, value, origin)

    @property
    def time(self) -> np.ndarray:
        """The step times (float64, made when asked for)."""
        return local_time.in_ms(self.local, self.origin)

    def __len__(self) -> int:
        return len(self.local)

    def at(self, t: float) -> int:
        i = int(local_time.search(self.local, t - self.origin, "right")) - 1
        return int(self.value[i]) if i >= 0 else 0

    @cached_property
    def peak(self) -> int:
        """The highest count."""
        return int(self.value.max()) if len(self.value) else 0


def step_counts(start: np.ndarray, end: np.ndarray) -> Steps:
    """How many of the intervals [start, end) hold at each time (NaN starts are skipped;
    a NaN end never ends)."""
    start = np.asarray(start, dtype=np.float64)
    end = np.asarray(end, dtype=np.float64)
    ok = np.isfinite(start)
    starts, end = np.sort(chosen(start, ok)), chosen(end, ok)
    ends = end[np.isfinite(end)]
    ends.sort()
    del ok, end
    t, count = held_at_changes(starts, ends)
    return Steps.of(t, count)


@per_session
def counters(session: Session) -> dict[str, Steps]:
    """The ``COUNTERS`` of ``session`` as step functions."""
    p = session.partitions
    st = stages(session)
    end = session.end_ms

    def col(name: str) -> np.ndarray:
        return p[name].astype(np.float64, copy=False)

    def open_to_end(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(np.isfinite(a) & ~np.isfinite(b), max(end, np.nanmax(a, initial=end)), b)

    ready, wait_end = st["ready"], st["wait_end"]
    s0, s1 = col("synth_start"), col("synth_end")
    g0, g1 = col("gpu_start"), col("gpu_end")
    queued = np.isfinite(ready) & np.isfinite(wait_end)
    t, held = memory_upper(session)  # the upper end: what a machine must have for the run
    return {
        "queue": step_counts(ready[queued], wait_end[queued]),
        "synth": step_counts(s0, open_to_end(s0, s1)),
        "gpu": step_counts(g0, open_to_end(g0, g1)),
        "memory": Steps.of(t, np.rint(held).astype(np.int32)),
    }


@dataclass(frozen=True)
class _Level:
    """Pieces of a step function: over [s, b) it moves within [lo, hi]; from b to the next
    piece's s it holds e (at level 0, b = s and lo = hi = e)."""

    s: np.ndarray
    b: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    e: np.ndarray

    def __len__(self) -> int:
        return len(self.s)


def _bucket_changes(s: np.ndarray, k: int) -> np.ndarray:
    """Where the bucket of LEVEL_STEP ** k ms changes from one piece start to the next:
    of int32 offsets, by a floor division in int32 (the float64 buckets of the 6 M steps of
    1.5 M jobs' memory counter took 48 MB a level tried), the same buckets."""
    if s.dtype == np.int32 and LEVEL_STEP == 2.0 and k <= 30:
        bucket = np.floor_divide(s, np.int32(1 << k))
    else:
        bucket = np.floor(s / LEVEL_STEP**k)
    return bucket[1:] != bucket[:-1]


def level_of(px: float) -> int:
    """The level a view of ``px`` ms per pixel reads: buckets of LEVEL_STEP ** k <= px."""
    return int(math.floor(math.log(px, LEVEL_STEP))) if px >= LEVEL_STEP else 0


class Envelope:
    """Per-pixel min / max of a step function, from copies merged per 2 ** k ms bucket
    (of its local times: buckets from its origin)."""

    def __init__(self, steps: Steps) -> None:
        self.steps = steps
        self.origin = steps.origin
        t, v = steps.local, steps.value
        self._levels = {0: _Level(t, t, v, v, v)}

    def level(self, k: int) -> _Level:
        if k <= 0:
            return self._levels[0]
        cached = self._levels.get(k)
        if cached is None:
            finer = self.level(k - 1)
            cached = finer
            if len(finer) > 1:
                changes = _bucket_changes(finer.s, k)
                if np.count_nonzero(changes) + 1 <= len(finer) * KEPT_BELOW:
                    first = np.flatnonzero(np.r_[True, changes])
                    last = np.append(first[1:], len(finer)) - 1
                    cached = _Level(
                        finer.s[first],
                        np.maximum.reduceat(finer.b, first),
                        np.minimum.reduceat(finer.lo, first),
                        np.maximum.reduceat(finer.hi, first),
                        finer.e[last],
                    )
            self._levels[k] = cached
        return cached

    def build_levels(self, max_px: float) -> None:
        """The merged copies for views of up to ``max_px`` ms per pixel (off the GUI thread)."""
        self.level(level_of(max_px))

    def columns(self, x0: float, px: float, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(min, max) of the function over each of the ``n`` columns [x0 + c px,
        x0 + (c + 1) px), from O(n) pieces."""
        lvl = self.level(level_of(px))
        if not len(lvl):
            return np.zeros(n, np.int32), np.zeros(n, np.int32)
        x0 = x0 - self.origin
        edges = x0 + np.arange(n) * px
        j = local_time.search(lvl.s, edges, "right") - 1
        before = j < 0
        j = np.maximum(j, 0)
        inside = edges < lvl.b[j]
        lo = np.where(before, 0, np.where(inside, lvl.lo[j], lvl.e[j])).astype(np.int32)
        hi = np.where(before, 0, np.where(inside, lvl.hi[j], lvl.e[j])).astype(np.int32)
        a, z = local_time.search(lvl.s, [x0, x0 + n * px], "left")
        if z > a:
            col = np.minimum(((lvl.s[a:z] - x0) / px).astype(np.int64), n - 1)
            first = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])
            at = col[first]
            lo[at] = np.minimum(lo[at], np.minimum.reduceat(lvl.lo[a:z], first))
            hi[at] = np.maximum(hi[at], np.maximum.reduceat(lvl.hi[a:z], first))
        return lo, hi
