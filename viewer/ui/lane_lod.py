"""Level of detail for lanes (numpy only): cut sorted intervals to the view and merge what
is narrower than a pixel.  Every function is vectorized."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: Key of a merged run of intervals with different keys.
MIXED = -1
#: Merged copies are cached for pixel sizes of LEVEL_STEP ** k ms (k >= 1).
LEVEL_STEP = 4.0


@dataclass(frozen=True)
class Intervals:
    """Intervals of one lane layer sorted by start; ``reach`` = running max of ``end``.

    ``merged`` caches coarser copies (merged at LEVEL_STEP ** k ms per pixel),
    so a zoomed-out view merges a few thousand pieces, not every interval.
    """

    start: np.ndarray
    end: np.ndarray
    key: np.ndarray  # int32 colour key (job index, gap kind ...)
    row: np.ndarray  # int64 row in Session.partitions (-1 none)
    reach: np.ndarray
    merged: dict[tuple[int, bool], Intervals] = field(default_factory=dict, compare=False)
    stats: dict[str, float] = field(default_factory=dict, compare=False)

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
        start, end = start[ok], np.maximum(end[ok], start[ok])
        key = np.asarray(key, dtype=np.int32)[ok]
        row = np.full(len(start), -1, np.int64) if row is None else np.asarray(row)[ok]
        order = np.argsort(start, kind="stable")
        end = end[order]
        reach = np.maximum.accumulate(end) if len(end) else end.copy()
        return cls(start[order], end, key[order], row[order].astype(np.int64), reach)

    def __len__(self) -> int:
        return len(self.start)

    def level(self, k: int, mixed_max: bool = False) -> Intervals:
        """This layer merged at LEVEL_STEP ** k ms per pixel (k = 0: itself), built once."""
        if k <= 0 or len(self) < 2 or LEVEL_STEP**k < self.typical_length():
            # Finer than the intervals themselves: a view this close holds few of them.
            return self
        cached = self.merged.get((k, mixed_max))
        if cached is None:
            finer = self.level(k - 1, mixed_max)
            s, e, key = coalesce(
                finer.start, finer.end, finer.key, LEVEL_STEP**k, mixed_max=mixed_max, widen=False
            )
            cached = Intervals(s, e, key, np.full(len(s), -1, np.int64), np.maximum.accumulate(e))
            self.merged[(k, mixed_max)] = cached
        return cached

    def typical_length(self) -> float:
        """Median length of (a sample of) the intervals."""
        if "typical" not in self.stats:
            step = max(1, len(self) // 1000)
            sample = self.end[::step] - self.start[::step]
            self.stats["typical"] = float(np.median(sample)) if len(sample) else 0.0
        return self.stats["typical"]

    def drawable(
        self, x0: float, x1: float, px: float, mixed_max: bool = False, narrow_px: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What to draw of [x0, x1] at ``px`` ms per pixel: merged, cut, at least a pixel wide."""
        k = int(math.floor(math.log(px, LEVEL_STEP))) if px >= LEVEL_STEP else 0
        src = self.level(k, mixed_max)
        sl = src.visible(x0, x1)
        return coalesce(
            src.start[sl], src.end[sl], src.key[sl], px, mixed_max=mixed_max, narrow_px=narrow_px
        )

    def visible(self, x0: float, x1: float) -> slice:
        """The positions that may intersect [x0, x1]."""
        lo = int(np.searchsorted(self.reach, x0, side="left"))
        hi = int(np.searchsorted(self.start, x1, side="right"))
        return slice(lo, max(lo, hi))

    def at(self, x: float, slack: float = 0.0) -> int:
        """Position of an interval containing ``x`` (within ``slack``), or -1."""
        sl = self.visible(x - slack, x + slack)
        if sl.stop <= sl.start:
            return -1
        s, e = self.start[sl], self.end[sl]
        hit = np.flatnonzero((s <= x + slack) & (e >= x - slack))
        if not len(hit):
            return -1
        # The narrowest hit is the one the user is pointing at.
        best = hit[np.argmin(e[hit] - s[hit])]
        return sl.start + int(best)


def _runs(breaks: np.ndarray) -> np.ndarray:
    """Start positions of the runs delimited by ``breaks`` (break before position i+1)."""
    return np.concatenate(([0], np.flatnonzero(breaks) + 1))


def coalesce(
    start: np.ndarray,
    end: np.ndarray,
    key: np.ndarray,
    px: float,
    *,
    mixed_max: bool = False,
    widen: bool = True,
    narrow_px: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge intervals for a view where one pixel is ``px`` ms.

    Intervals ``narrow_px`` pixels wide or more stay as they are.  Pass 1
    joins narrower neighbours of the same key closer than a pixel; pass 2
    joins runs of narrow pieces closer than a pixel into one piece keyed
    ``MIXED`` (or the largest key with ``mixed_max``, so the worst gap kind
    wins).  What is left has at most a few pieces starting in any pixel
    column, and no hole of a pixel or more is closed.  With ``widen`` outputs
    are at least a pixel wide (drawing); without, they keep their true ends.
    """
    n = len(start)
    if n == 0 or px <= 0:
        return start, np.maximum(end, start + max(px, 0.0)) if widen else end, key
    min_w = narrow_px * px
    reach = np.maximum.accumulate(end)
    wide = (end - start) >= min_w
    first = _runs((start[1:] - reach[:-1] >= px) | (key[1:] != key[:-1]) | wide[1:] | wide[:-1])
    s, e, k = start[first], np.maximum.reduceat(end, first), key[first]
    if len(s) > 1:
        narrow = (e - s) < min_w
        reach = np.maximum.accumulate(e)
        first = _runs((s[1:] - reach[:-1] >= px) | ~narrow[1:] | ~narrow[:-1])
        if len(first) < len(s):
            count = np.diff(np.append(first, len(s)))
            if mixed_max:
                merged_key = np.maximum.reduceat(k, first)
            else:
                same = np.minimum.reduceat(k, first) == np.maximum.reduceat(k, first)
                merged_key = np.where(same, k[first], MIXED).astype(k.dtype)
            k = np.where(count > 1, merged_key, k[first]).astype(key.dtype)
            s, e = s[first], np.maximum.reduceat(e, first)
    return s, np.maximum(e, s + px) if widen else e, k
