"""Level of detail for lanes (numpy only): cut sorted intervals to the view and merge what
is narrower than a pixel.  Every function is vectorized.

One layer of several lanes is kept end to end in one ``Stack``, with merged copies
for pixel sizes of 2 ** k ms (mipmaps): a frame cuts each lane with two binary
searches and then merges and packs every lane of the layer with a fixed number of
numpy calls on O(pixels) pieces, however many intervals the view holds.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from viewer.analysis import local_time
from viewer.analysis.intervals import group_cummax
from viewer.analysis.local_time import in_ms

#: Key of a merged run of intervals with different keys.
MIXED = -1
#: Merged copies are kept for pixel sizes of LEVEL_STEP ** k ms (k >= 1).
LEVEL_STEP = 2.0
#: A merged copy is kept only if it has at most (1 - MERGE_GAIN) of the finer one's pieces.
MERGE_GAIN = 0.5
JOIN_SAMPLE = 4096  # neighbour pairs sampled to tell whether a merge is worth computing


class _Offsets:
    """Intervals held as offsets ``ls``, ``le`` (ends) and ``lr`` (reach) from ``origin``
    (int32 where exact, ``local_time.compact``), read as ms."""

    ls: np.ndarray
    le: np.ndarray
    lr: np.ndarray
    origin: float

    start = property(lambda self: in_ms(self.ls, self.origin), doc="Starts, ms.")
    end = property(lambda self: in_ms(self.le, self.origin), doc="Ends, ms.")
    reach = property(lambda self: in_ms(self.lr, self.origin), doc="Running max of ends, ms.")

    def starts(self, at) -> np.ndarray:
        """The starts at positions ``at``, ms."""
        return in_ms(self.ls[at], self.origin)

    def ends(self, at) -> np.ndarray:
        """The ends at positions ``at``, ms."""
        return in_ms(self.le[at], self.origin)

    def __len__(self) -> int:
        return len(self.ls)

    def edges(self) -> np.ndarray:
        """Every distinct start and end, ms, sorted (no copy of the whole layer in ms)."""
        return in_ms(np.unique(np.concatenate((self.ls, self.le))), self.origin)


@dataclass(frozen=True)
class Intervals(_Offsets):
    """Intervals of one lane layer sorted by start; ``reach`` = running max of ``end``.

    Times are held as offsets from ``origin`` (``ls``, ``le``, ``lr``: int32 where exact,
    ``local_time.compact``); ``start``, ``end`` and ``reach`` read them as ms."""

    ls: np.ndarray
    le: np.ndarray
    key: np.ndarray  # int32 colour key (job index, gap kind ...)
    row: np.ndarray  # int32 row in Session.partitions (-1 none): rows are far below 2^31
    lr: np.ndarray
    origin: float = 0.0

    @classmethod
    def make(
        cls,
        start: np.ndarray,
        end: np.ndarray,
        key: np.ndarray,
        row: np.ndarray | None = None,
    ) -> Intervals:
        start = np.asarray(start, dtype=np.float64)
        end = np.asarray(end, dtype=np.float64)
        ok = np.isfinite(start) & np.isfinite(end)
        # Every interval kept and already in order (a worker's calls, a GPU's gaps): the
        # columns as given, no copy of each in turn (~100 MB at 1.5 M one-call jobs).
        every = bool(ok.all())
        if not every:
            start, end = start[ok], end[ok]
        end = np.maximum(end, start)
        key = np.asarray(key, dtype=np.int32)
        if not every:
            key = key[ok]
            row = None if row is None else np.asarray(row)[ok]
        row = np.full(len(start), -1, np.int32) if row is None else np.asarray(row)
        del ok
        if len(start) > 1 and not bool((start[1:] >= start[:-1]).all()):
            order = np.argsort(start, kind="stable")
            start, end, key, row = start[order], end[order], key[order], row[order]
            del order
        reach = np.maximum.accumulate(end) if len(end) else end.copy()
        (ls, le, lr), origin = local_time.compact_all((start, end, reach))
        return cls(ls, le, key, row.astype(np.int32, copy=False), lr, origin)

    def visible(self, x0: float, x1: float) -> slice:
        """The positions that may intersect [x0, x1]."""
        lo = int(local_time.search(self.lr, x0 - self.origin, "left"))
        hi = int(local_time.search(self.ls, x1 - self.origin, "right"))
        return slice(lo, max(lo, hi))

    def at(self, x: float, slack: float = 0.0) -> int:
        """Position of an interval containing ``x`` (within ``slack``), or -1."""
        sl = self.visible(x - slack, x + slack)
        if sl.stop <= sl.start:
            return -1
        s, e = self.starts(sl), self.ends(sl)
        hit = np.flatnonzero((s <= x + slack) & (e >= x - slack))
        if not len(hit):
            return -1
        # The narrowest hit is the one the user is pointing at.
        best = hit[np.argmin(e[hit] - s[hit])]
        return sl.start + int(best)


def _runs(breaks: np.ndarray) -> np.ndarray:
    """Start positions of the runs delimited by ``breaks`` (break before position i+1)."""
    return np.concatenate(([0], np.flatnonzero(breaks) + 1))


def merge_runs(
    start: np.ndarray,
    end: np.ndarray,
    key: np.ndarray,
    reach: np.ndarray,
    px: float,
    *,
    lane: np.ndarray | None = None,
    mixed_max: bool | np.ndarray = False,
    narrow_px: float | np.ndarray = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge intervals for a view where one pixel is ``px`` ms (``n`` > 0 intervals).

    ``reach`` is the running max of ``end`` within each lane; runs never cross a
    change of ``lane``.  ``mixed_max`` and ``narrow_px`` may be given per interval
    (constant within a lane).  Intervals ``narrow_px`` pixels wide or more stay as they
    are.  Pass 1 joins narrower neighbours of the same key closer than a pixel
    (and MIXED runs closer than a pixel whatever their width);
    pass 2 joins runs of narrow pieces closer than a pixel into one piece keyed
    ``MIXED`` (or the largest key with ``mixed_max``, so the worst gap kind wins).
    What is left has at most a few pieces starting in any pixel column, and no
    hole of a pixel or more is closed.  Returns, per merged piece, the position of
    its first interval, its end and its key.
    """
    n = len(start)
    min_w = narrow_px * px
    wide = (end - start) >= min_w
    # Wide pieces keep their edges (partition boundaries), but two runs of several keys that
    # touch are one run: an edge between them would only show where a coarser copy was cut.
    edge = (wide[1:] | wide[:-1]) & ((key[1:] != MIXED) | (key[:-1] != MIXED))
    breaks = (start[1:] - reach[:-1] >= px) | (key[1:] != key[:-1]) | edge
    if lane is not None:
        breaks |= lane[1:] != lane[:-1]
    first = _runs(breaks)
    e, k = np.maximum.reduceat(end, first), key[first]
    if len(first) > 1:
        s = start[first]
        # The running max of the merged ends is the input's reach at each run's last interval.
        r = reach[np.append(first[1:], n) - 1]
        narrow = (e - s) < (min_w[first] if np.ndim(min_w) else min_w)
        breaks = (s[1:] - r[:-1] >= px) | ~narrow[1:] | ~narrow[:-1]
        if lane is not None:
            run_lane = lane[first]
            breaks |= run_lane[1:] != run_lane[:-1]
        second = _runs(breaks)
        if len(second) < len(first):
            count = np.diff(np.append(second, len(first)))
            largest = np.maximum.reduceat(k, second)
            same = np.minimum.reduceat(k, second) == largest
            worst = mixed_max[first[second]] if np.ndim(mixed_max) else mixed_max
            merged_key = np.where(worst | same, largest, MIXED)
            k = np.where(count > 1, merged_key, k[second]).astype(key.dtype)
            e = np.maximum.reduceat(e, second)
            first = first[second]
    return first, e, k


def level_of(px: float) -> int:
    """The merged copy a view of ``px`` ms per pixel draws from: LEVEL_STEP ** k <= px."""
    return int(math.floor(math.log(px, LEVEL_STEP))) if px >= LEVEL_STEP else 0


@dataclass(frozen=True)
class Level(_Offsets):
    """Pieces of every lane of a stack end to end: lane i owns [bounds[i], bounds[i + 1]).
    Times are offsets from ``origin`` (``ls``, ``le``, ``lr``), as in ``Intervals``."""

    ls: np.ndarray
    le: np.ndarray
    key: np.ndarray
    lr: np.ndarray  # running max of ``le`` within each lane
    bounds: np.ndarray
    origin: float = 0.0

    def lane_ids(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.bounds) - 1), np.diff(self.bounds))

    @property
    def spans(self) -> list[tuple[int, int]]:
        """[first, end) positions of each lane."""
        return list(itertools.pairwise(self.bounds.tolist()))

    def cut(
        self, x0: float, x1: float, lanes: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per lane (of those where ``lanes`` is true), the first and end positions of
        the pieces that may intersect [x0, x1]."""
        first, last = self.bounds[:-1], self.bounds[1:]
        lo = _search(self.lr, first, last, x0 - self.origin, "left")
        hi = np.maximum(lo, _search(self.ls, first, last, x1 - self.origin, "right"))
        return lo, hi if lanes is None else np.where(lanes, hi, lo)


#: Up to this many lanes, a cut searches lane by lane (a few binary searches); above it, all
#: lanes at once (10^5 synthesis rows: a Python call per lane and frame took ~0.2 s).
FEW_LANES = 32


def _search(values: np.ndarray, first: np.ndarray, last: np.ndarray, x: float, side: str):
    """Per lane, ``first + values[first:last].searchsorted(x, side)`` (each lane sorted):
    for many lanes a bisection of all of them together, log2 of the longest lane steps."""
    if len(first) <= FEW_LANES:
        pairs = zip(first.tolist(), last.tolist(), strict=True)
        return np.array([a + local_time.search(values[a:b], x, side) for a, b in pairs], np.int64)
    lo, hi = first.astype(np.int64), last.astype(np.int64)
    live = np.flatnonzero(lo < hi)
    while live.size:
        mid = (lo[live] + hi[live]) // 2
        right = values[mid] < x if side == "left" else values[mid] <= x
        lo[live[right]] = mid[right] + 1
        hi[live[~right]] = mid[~right]
        live = live[lo[live] < hi[live]]
    return lo


class Stack:
    """One layer of several lanes, end to end, with its merged copies per zoom level.

    ``mixed_max`` says how runs of different keys merge (largest key, or MIXED).
    Lanes then hold views into the stack (``lane_views``), so the data is kept once.
    """

    def __init__(self, parts: list[Intervals], mixed_max: bool = False) -> None:
        bounds = np.zeros(len(parts) + 1, np.int64)
        bounds[1:] = np.cumsum([len(p) for p in parts])
        row = np.concatenate([p.row for p in parts]) if parts else np.zeros(0, np.int32)
        self._init(_joined(parts, bounds), row, mixed_max)

    @staticmethod
    def _compacted(level: Level) -> Level:
        """``level`` with its times as offsets from one origin (int32 where exact)."""
        if level.ls.dtype == np.int32:
            return level  # its parts' offsets, already on one origin
        (ls, le, lr), origin = local_time.compact_all((level.ls, level.le, level.lr))
        return replace(level, ls=ls, le=le, lr=lr, origin=level.origin + origin)

    @classmethod
    def of_lanes(
        cls,
        start: np.ndarray,
        end: np.ndarray,
        key: np.ndarray,
        row: np.ndarray,
        lane: np.ndarray,
        lanes: int,
        mixed_max: bool = False,
    ) -> Stack:
        """The stack of ``lanes`` lanes that ``Stack([Intervals.make(...) of each lane])``
        builds, from intervals in any order with the ``lane`` of each: a fixed number of
        numpy calls however many lanes (10^5 synthesis rows)."""
        start = np.asarray(start, dtype=np.float64)
        end = np.asarray(end, dtype=np.float64)
        ok = np.flatnonzero(np.isfinite(start) & np.isfinite(end))
        ok = ok[np.lexsort((start[ok], lane[ok]))]  # stable: ties keep their order
        s, e, lane = start[ok], np.maximum(end[ok], start[ok]), np.asarray(lane)[ok]
        reach = group_cummax(lane, e) if len(e) else e.copy()
        bounds = np.searchsorted(lane, np.arange(lanes + 1)).astype(np.int64)
        key, row = np.asarray(key, dtype=np.int32)[ok], np.asarray(row, dtype=np.int32)[ok]
        stack = cls([], mixed_max)
        stack._init(Level(s, e, key, reach, bounds), row, mixed_max)
        return stack

    def _init(self, level: Level, row: np.ndarray, mixed_max: bool) -> None:
        self.mixed_max = mixed_max
        level = _reach_shared(self._compacted(level))
        self.row = row
        self._levels = {0: level}

    @functools.cached_property
    def typical(self) -> np.ndarray:
        """Median length of each lane's intervals (made when first read: only the layers
        drawn by detail read it, and 2 * 10^5 synthesis rows took 1.6 MB a layer)."""
        return _typical(self._levels[0])

    def __len__(self) -> int:
        return len(self._levels[0])

    def share(self, others: list[Stack]) -> None:
        """Hold this stack's keys and rows as arrays of ``others`` where they are equal (a
        worker's pickups and calls, a row's syntheses and their waits: the same partitions in
        the same order), or as one value where every entry is it (the busy lane's): on
        1.5 M one-call jobs each was 6 MB.  Before any merged copy is made."""
        held = [a for o in others for a in (o._levels[0].key, o.row)]
        level = self._levels[0]
        key = _one_of(level.key, held)
        if key is not level.key:
            self._levels[0] = replace(level, key=key)
        self.row = _one_of(self.row, [*held, key])

    def lane_view(self, lane: int) -> Intervals:
        """Lane ``lane``'s intervals, as views into the stack."""
        lvl = self._levels[0]
        a, b = int(lvl.bounds[lane]), int(lvl.bounds[lane + 1])
        return Intervals(
            lvl.ls[a:b], lvl.le[a:b], lvl.key[a:b], self.row[a:b], lvl.lr[a:b], lvl.origin
        )

    def lane_views(self) -> list[Intervals]:
        """Each lane's intervals, as views into the stack."""
        return [self.lane_view(i) for i in range(len(self._levels[0].bounds) - 1)]

    def level(self, k: int) -> Level:
        """The stack merged at LEVEL_STEP ** k ms per pixel (k = 0: itself), built once.

        A copy is kept only where merging at least halves the finer one; elsewhere
        the finer copy serves (its pieces are then already about a pixel apart), so
        all copies together hold at most as many pieces as the stack itself.
        """
        if k <= 0 or len(self) < 2:
            return self._levels[0]
        cached = self._levels.get(k)
        if cached is None:
            finer = self.level(k - 1)
            px = LEVEL_STEP**k
            cached = finer
            if _joinable(finer, px) >= MERGE_GAIN:
                merged = self._merge(finer, px)
                if len(merged) <= (1 - MERGE_GAIN) * len(finer):
                    cached = merged
            self._levels[k] = cached
        return cached

    def _merge(self, finer: Level, px: float) -> Level:
        lane = finer.lane_ids()
        first, e, key = merge_runs(
            finer.ls, finer.le, finer.key, finer.lr, px,
            lane=lane, mixed_max=self.mixed_max,
        )  # fmt: skip
        reach = finer.lr[np.append(first[1:], len(finer)) - 1]
        bounds = np.searchsorted(lane[first], np.arange(len(finer.bounds)))
        return _reach_shared(Level(finer.ls[first], e, key, reach, bounds, finer.origin))

    def build_levels(self, max_px: float) -> None:
        """Build the merged copies for views up to ``max_px`` ms per pixel (off the GUI thread)."""
        self.level(level_of(max_px))

    def drawable(
        self,
        x0: float,
        x1: float,
        px: float,
        narrow_px: float = 1.0,
        lanes: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What to draw of [x0, x1] at ``px`` ms per pixel, every lane at once (or those
        where ``lanes`` is true): merged, cut, at least a pixel wide; (start, end, key, lane)."""
        return drawable([(self, narrow_px, lanes)], x0, x1, px)


def positions(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lane, position) of every position in [lo[i], hi[i]) of every lane i, in order."""
    count = hi - lo
    at = np.repeat(lo - (np.cumsum(count) - count), count) + np.arange(int(count.sum()))
    return np.repeat(np.arange(len(lo)), count), at


def drawable(
    stacks: list[tuple[Stack, float, np.ndarray | None]],
    x0: float,
    x1: float,
    px: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``Stack.drawable`` of several stacks (each with its ``narrow_px`` and shown lanes)
    in one merge; lanes are numbered on from one stack to the next."""
    level = level_of(px)
    parts = []
    lane_base = 0
    for stack, narrow_px, lanes in stacks:
        lvl = stack.level(level)
        lo, hi = lvl.cut(x0, x1, lanes)
        lane, idx = positions(lo, hi)
        if total := len(idx):
            lane += lane_base
            extra = (np.full(total, narrow_px), np.full(total, stack.mixed_max))
            times = (lvl.starts(idx), lvl.ends(idx), in_ms(lvl.lr[idx], lvl.origin))  # ms
            parts.append((times[0], times[1], lvl.key[idx], times[2], lane, *extra))
        lane_base += len(lo)
    if not parts or px <= 0:
        empty = np.zeros(0)
        return empty, empty, np.zeros(0, np.int32), np.zeros(0, np.int64)
    start, end, key, reach, lane, narrow, worst = (
        np.concatenate([p[i] for p in parts]) if len(parts) > 1 else parts[0][i] for i in range(7)
    )
    first, e, k = merge_runs(
        start, end, key, reach, px, lane=lane, mixed_max=worst, narrow_px=narrow
    )
    s = start[first]
    return s, np.maximum(e, s + px), k, lane[first]


def _joinable(level: Level, px: float) -> float:
    """About what fraction of ``level``'s neighbours merging at ``px`` would join (a sample)."""
    n = len(level)
    if n < 2:
        return 0.0
    i = np.arange(0, n - 1, max(1, (n - 1) // JOIN_SAMPLE))
    narrow = (level.le[i] - level.ls[i] < px) & (level.le[i + 1] - level.ls[i + 1] < px)
    mixed = (level.key[i] == MIXED) & (level.key[i + 1] == MIXED)
    close = level.ls[i + 1] - level.lr[i] < px
    return float(np.mean(close & (narrow | mixed)))


def _typical(level: Level) -> np.ndarray:
    """Median length of each lane's intervals (of every ``len // 1000``-th of a longer
    lane), 0 for an empty lane: for all lanes at once.  A lane of one interval is its
    length, read in place (2 * 10^5 rows of one synthesis each took 21 MB of sorting)."""
    counts = np.diff(level.bounds)
    out = np.zeros(len(counts))
    one = np.flatnonzero(counts == 1)
    at = level.bounds[one]
    out[one] = (level.le[at] - level.ls[at]).astype(np.float64)
    many = np.flatnonzero(counts > 1)
    if not len(many):
        return out
    counts = counts[many]
    head = np.repeat(level.bounds[many], counts)
    step = np.repeat(np.maximum(1, counts // 1000), counts)
    offset = np.arange(len(head)) - np.repeat(np.cumsum(counts) - counts, counts)
    taken = np.flatnonzero(offset % step == 0)
    del step
    lane = np.repeat(np.arange(len(counts)), counts)[taken]
    at = head[taken] + offset[taken]
    del head, offset, taken
    length = (level.le[at] - level.ls[at]).astype(np.float64)
    length = length[np.lexsort((length, lane))]
    n = np.bincount(lane, minlength=len(counts))
    first = np.cumsum(n) - n
    lo, hi = first + (n - 1) // 2, first + n // 2
    out[many] = (length[lo] + length[hi]) / 2  # the middle one, or the mean of the two
    return out


def _one_of(a: np.ndarray, held: list[np.ndarray]) -> np.ndarray:
    """``a``; or an array of ``held`` equal to it; or, where every entry is one value, that
    value held once (a read-only column of stride 0)."""
    if len(a) > 1 and a.strides != (0,) and bool((a == a[0]).all()):
        return np.broadcast_to(a[:1].copy(), a.shape)
    for other in held:
        if other is a or (other.dtype == a.dtype and np.array_equal(other, a)):
            return other
    return a


def _reach_shared(level: Level) -> Level:
    """``level`` with ``reach`` the very array ``end`` where they are equal, as they are
    wherever no interval of a lane overlaps the next (a worker's calls, its kernels): the
    copy held 8 bytes an interval for nothing (4 MB on 10^5 one-call jobs)."""
    if level.lr is level.le or not np.array_equal(level.lr, level.le):
        return level
    return replace(level, lr=level.le)


def _joined(parts: list[Intervals], bounds: np.ndarray) -> Level:
    """The parts end to end: their int32 offsets moved onto one origin where they all
    have them and it holds them all (no float64 copy of every part); else in ms."""
    key = np.concatenate([p.key for p in parts]) if parts else np.zeros(0, np.int32)
    full = [p for p in parts if len(p)]
    if full and all(p.ls.dtype == np.int32 for p in full):
        origin = min(p.origin for p in full)
        if max(p.origin - origin + float(p.le.max()) for p in full) < local_time.SPAN:

            def moved(p: Intervals, name: str) -> np.ndarray:
                local = getattr(p, name)
                return local + np.int32(p.origin - origin) if p.origin != origin else local

            times = [np.concatenate([moved(p, n) for p in full]) for n in ("ls", "le", "lr")]
            return Level(times[0], times[1], key, times[2], bounds, origin)
    if not parts:
        empty = np.zeros(0, np.float64)
        return Level(empty, empty, key, empty, bounds)
    times = [np.concatenate([getattr(p, n) for p in parts]) for n in ("start", "end", "reach")]
    return Level(times[0], times[1], key, times[2], bounds)
