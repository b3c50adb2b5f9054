"""GPU calls as intervals, and the vectorized merge / clip every figure is built on.

Range rules shared by the whole package (``rng`` = ``(start_ms, end_ms)`` in
session offsets, or None for the whole session):

- busy intervals (GPU_START -> GPU_END, an open call running to the session's
  last event) and kernel intervals are clipped to the range;
- idle gaps are the session's gaps clipped to the range, and a GPU's span is
  its first GPU_START -> last GPU_END clipped to the range, so busy + idle =
  span and efficiency = busy / span inside any window;
- measured throughput uses the jobs completed inside the range;
- transitions are those whose next job's first GPU_START lies inside it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.stages import stages
from viewer.model import Session
from viewer.model.frame import Frame, run_of, take_rows
from viewer.model.keys import unique

Range = tuple[float, float] | None


def check_range(rng: Range) -> Range:
    """``rng`` as floats with start <= end (None stays None)."""
    if rng is None:
        return None
    a, b = float(rng[0]), float(rng[1])
    if not a <= b:
        raise ValueError(f"range start {a} is after its end {b}")
    return a, b


@per_session
def calls(session: Session) -> Frame:
    """The started GPU calls: ``job, worker, gpu, start, end, closed, ready, free, row`` plus
    the raw columns.

    ``gpu`` falls back to the workers table when the row carries none; ``end``
    of an open call is the session's last event; ``ready`` and ``free`` (the end of the
    worker's previous call) are ``stages``'; ``row`` is the call's row in
    ``session.partitions``.
    """
    st, parts = stages(session), session.partitions
    gpu_start = parts["gpu_start"]
    started = np.flatnonzero(~np.isnan(gpu_start))
    row = started[np.argsort(gpu_start[started], kind="stable")]  # by start, ties in row order
    # The tables keep their rows in GPU_START order, the unstarted last: the started calls
    # are one run of their rows, as they are (views, not a copy of every column read).
    rows = run_of(row)
    gpu = parts["gpu"][rows]
    unknown = gpu < 0
    if unknown.any() and len(session.workers):
        w = session.workers
        table = dict(zip(w["worker"].tolist(), w["gpu"].tolist(), strict=True))
        gpu = gpu.copy()
        gpu[unknown] = [table.get(int(w), -1) for w in parts["worker"][rows][unknown]]
    start, end = gpu_start[rows], parts["gpu_end"][rows]
    closed = np.isfinite(end)
    if not closed.all():
        end = np.where(closed, end, np.maximum(session.end_ms, start))
    table = parts.take(row, lazy=True)
    return table.assign(
        row=row,
        ready=st["ready"][rows],
        free=st["worker_free"][rows],
        gpu=gpu.astype("int32", copy=False),
        start=start,
        end=end,
        closed=closed,
    )


def merge(groups: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Frame:
    """Union of intervals per group: ``group, start, end, first, last`` (touching ones merge).

    ``first`` / ``last`` are the input positions of the interval that opens /
    closes each merged block, so callers can name what lies on a gap's sides.
    """
    order = np.lexsort((starts, groups))
    # In order already (a GPU's calls one after another): views, not copies of each column.
    in_order = run_of(order)
    g, s, e = (take_rows(x, in_order) for x in (groups, starts, ends))
    if len(g) == 0:
        return Frame(
            {
                "group": g,
                "start": s,
                "end": e,
                "first": np.zeros(0, dtype=np.int64),
                "last": np.zeros(0, dtype=np.int64),
            }
        )
    reach = group_cummax(g, e)
    new = np.ones(len(g), dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (s[1:] > reach[:-1])
    block = np.cumsum(new) - 1
    heads = np.flatnonzero(new)
    alone = len(heads) == len(g)  # every interval a block of its own: the columns as they are
    block_end = e if alone else np.maximum.reduceat(e, heads)
    # The closing interval of a block: the last position whose end is the block's end.
    is_closer = e == block_end[block]
    closer = np.full(len(heads), -1, dtype=np.int64)
    np.maximum.at(closer, block[is_closer], np.flatnonzero(is_closer))
    index = np.int32 if len(g) < 2**31 else np.int64  # (12 MB less for 1.5 M calls)
    return Frame(
        {
            "group": g if alone else g[heads],
            "start": s if alone else s[heads],
            "end": block_end,
            "first": order[heads].astype(index),
            "last": order[closer].astype(index),
        }
    )


def group_cummax(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` within each run of equal ``groups`` (sorted by group):
    one ``np.maximum.accumulate`` over integer ranks banded by group, so a group's running
    maximum never reaches into the one before it."""
    same = groups[1:] == groups[:-1]
    if not (same & ~(values[1:] >= values[:-1])).any():  # never falls (nor meets a NaN)
        return values.copy()  # (calls ending in the order they start: no sort, no ranks)
    gid = np.cumsum(np.concatenate([[0], ~same]))
    uniq, rank = unique(values, return_inverse=True)
    band = gid * (len(uniq) + 1)
    return uniq[np.maximum.accumulate(band + rank.reshape(-1)) - band]


@per_session
def busy_blocks(session: Session) -> Frame:
    """``merge`` of the started calls per GPU: the blocks of each GPU's busy union."""
    c = calls(session)
    return merge(c["gpu"], c["start"], c["end"])


#: Instants counted at a time (``held_at_changes``): two int64 positions each.
_CHUNK = 1 << 20


def held_at_changes(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each instant of ``starts`` and ``ends`` (both sorted) once, in order, and how many of
    the intervals hold just after every change there: the starts by then less the ends
    (int32), counted a piece of the instants at a time.  No sort order of every change is
    held (a counter of 1.5 M one-call jobs: ~200 MB; a played run's load profile: 96 MB)."""
    t = np.concatenate([starts, ends])
    t.sort()
    t = t[np.r_[t[1:] != t[:-1], True]] if len(t) else t  # each instant once
    count = np.empty(len(t), np.int32)
    for i in range(0, len(t), _CHUNK):
        at = t[i : i + _CHUNK]
        count[i : i + _CHUNK] = np.searchsorted(starts, at, "right") - np.searchsorted(
            ends, at, "right"
        )
    return t, count


def clip(starts: np.ndarray, ends: np.ndarray, rng: Range) -> tuple[np.ndarray, np.ndarray]:
    """Intervals clipped to ``rng`` (those outside it come back with zero length)."""
    if rng is None:
        return starts, ends
    s = np.clip(starts, rng[0], rng[1])
    e = np.clip(ends, rng[0], rng[1])
    return s, np.maximum(e, s)


def chosen(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``values[mask]``; ``values`` itself where every row is chosen (a whole run's calls:
    no copy of a 12 MB column for one sum or mean)."""
    return values if mask.all() else values[mask]


def known_or(values: np.ndarray, fallback: Callable[[], np.ndarray]) -> np.ndarray:
    """``values`` where finite, ``fallback()``'s elsewhere; ``values`` itself, with no
    fallback made, where every one is known (a whole run's columns: no 12 MB copy)."""
    known = np.isfinite(values)
    return values if known.all() else np.where(known, values, fallback())


def overlap_ms(starts: np.ndarray, ends: np.ndarray, rng: Range) -> np.ndarray:
    """Length of each interval inside ``rng``."""
    s, e = clip(starts, ends, rng)
    return e - s


def busy_union(session: Session, gpu: int, rng: Range = None) -> np.ndarray:
    """Merged GPU_START -> GPU_END intervals of ``gpu``'s workers, clipped to ``rng``: (n, 2)."""
    rng = check_range(rng)
    # The GPU's blocks of the session's (a merge per group: the same blocks a merge of its
    # calls alone makes), not a copy of its calls merged again (147 MB at 1.5 M calls).
    blocks = busy_blocks(session)
    mine = np.flatnonzero(blocks["group"] == gpu)
    s, e = clip(blocks["start"][mine], blocks["end"][mine], rng)
    keep = np.flatnonzero(e > s)
    out = np.empty((len(keep), 2))
    out[:, 0], out[:, 1] = s[keep], e[keep]
    return out
