"""Times held as 4-byte offsets where that loses nothing.

A log's offsets are whole milliseconds, and a session spans far less than 2^31 ms (24.8
days): the times the view keeps for every event (counter steps, lane intervals) are then
exactly ``origin + offset`` with an int32 offset, half the bytes of float64 (on 1.5 M
one-call jobs the counters alone held 120 MB of float64 times).  Times that are not whole
ms (a simulated log's, a kernel's start inside a call) or that span more stay float64
with origin 0: nothing is ever rounded.

A search must use a key of the array's own type: numpy would otherwise convert the whole
array for each search (50-120 ms on 30 M offsets).  ``search`` does that.
"""

from __future__ import annotations

import numpy as np

#: Offsets below this many ms from the origin are held as int32 (a difference of two fits
#: too, and a search key clipped to it lies after every offset).
SPAN = 2**31 - 1


def compact(t: np.ndarray) -> tuple[np.ndarray, float]:
    """(offsets, origin) with ``offsets + origin == t`` exactly: int32 offsets from the
    smallest time where every time is finite, whole and less than ``SPAN`` from it; else
    ``(t, 0.0)`` as it is."""
    (offsets,), origin = compact_all((t,))
    return offsets, origin


def compact_all(arrays: tuple[np.ndarray, ...]) -> tuple[tuple[np.ndarray, ...], float]:
    """``compact`` of several arrays with one origin (all of them int32, or none)."""
    arrays = tuple(np.asarray(t) for t in arrays)
    full = [t for t in arrays if len(t)]
    if not full or any(t.dtype.kind not in "fiu" for t in full):
        return arrays, 0.0
    lo = min(float(np.min(t)) for t in full)
    hi = max(float(np.max(t)) for t in full)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi - lo >= SPAN or lo != np.floor(lo):
        return arrays, 0.0
    out = []
    for t in arrays:
        offsets = np.empty(len(t), np.int32)
        for a in range(0, len(t), 1 << 20):  # a float64 copy of a piece at a time
            piece = t[a : a + (1 << 20)] - lo
            offsets[a : a + len(piece)] = piece
            if not np.array_equal(offsets[a : a + len(piece)], piece):
                return arrays, 0.0
        out.append(offsets)
    return tuple(out), lo


def in_ms(offsets: np.ndarray, origin: float) -> np.ndarray:
    """Offsets (``compact``) back as ms: float64, ``offsets + origin``."""
    return offsets + origin if origin else offsets.astype(np.float64, copy=False)


def search(offsets: np.ndarray, x, side: str = "left"):
    """``np.searchsorted(offsets, x, side)`` for offsets (``compact``) and keys ``x`` on
    the same scale (already less the origin), without converting ``offsets``: an int32
    array is searched with whole keys (a time is at or before x where it is at or before
    floor(x), strictly before x where strictly before ceil(x); a NaN key, as numpy
    sorts it, after every time)."""
    if offsets.dtype != np.int32:
        return np.searchsorted(offsets, x, side)
    x = np.asarray(x, dtype=np.float64)
    whole = np.floor(x) if side == "right" else np.ceil(x)
    keys = np.clip(np.nan_to_num(whole, nan=np.inf), -(2.0**31), SPAN).astype(np.int32)
    return np.searchsorted(offsets, keys, side)
