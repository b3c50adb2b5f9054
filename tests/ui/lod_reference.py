"""The level-of-detail merge of one lane on its own: the reference the stacked, leveled
merge of ``viewer.lanes.lod`` is tested against (test code, not the viewer's)."""

from __future__ import annotations

import numpy as np

from viewer.lanes.lod import merge_runs


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
    """``merge_runs`` of one lane's sorted intervals: merged (start, end, key).

    With ``widen`` outputs are at least a pixel wide (drawing); without, they keep
    their true ends.
    """
    if len(start) == 0 or px <= 0:
        return start, np.maximum(end, start + max(px, 0.0)) if widen else end, key
    reach = np.maximum.accumulate(end)
    first, e, k = merge_runs(start, end, key, reach, px, mixed_max=mixed_max, narrow_px=narrow_px)
    s = start[first]
    return s, np.maximum(e, s + px) if widen else e, k
