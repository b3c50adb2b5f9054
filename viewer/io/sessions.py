"""Cut the event stream into daemon runs (sessions) and place other lines in them.

A session starts at the first TIMELINE event after a ``cuzk-daemon starting`` line,
or where the offsets restart: an event more than ``RESTART_DROP_MS`` below the median
of the ``PREV_WINDOW`` events before it, with the median of it and the next two events
also that far below.  Threads write lines a few ms out of order, far under one second,
and one damaged offset (a lost or extra digit) cannot split a session: both medians
would have to move.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

RESTART_DROP_MS = 1000
PREV_WINDOW = 8
NEXT_WINDOW = 3


def split_sessions(
    seq: np.ndarray,
    offset: np.ndarray,
    daemon_starts: np.ndarray,
    copies: np.ndarray | None = None,
) -> np.ndarray:
    """Session number of every event (events in file order).  ``copies``: how many exact
    copies of each event were folded into it (``parse.fold_copies``); the windows count
    them as the events they are."""
    n = len(seq)
    starts = np.zeros(n, dtype=bool)
    if not n:
        return np.zeros(0, dtype=np.int32)
    forced = np.searchsorted(seq, daemon_starts)
    edges = sorted({0, *(int(i) for i in forced if i < n), n})
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        i = a
        while i < b:
            starts[i] = True
            w = None if copies is None else copies[i:b] + 1
            hit = _first_restart(offset[i:b].astype(np.float64), w)
            if hit is None:
                break
            i += hit
    return (np.cumsum(starts) - 1).astype(np.int32)


def _first_restart(o: np.ndarray, w: np.ndarray | None = None) -> int | None:
    """Index (> 0) of the first event where the offsets start again, else None.

    ``w``: how many times each event occurs in a row (copies folded into it); the result
    is that of the events repeated so, and a copy never qualifies (the event before it,
    equal, would qualify first).  An event can only qualify if it lies that far below the
    largest of the events before it (the median is no larger): that cheap rolling maximum
    picks the few candidates (with copies, over the rows before: they hold the events
    before), and the medians are computed for those alone.
    """
    n = len(o)
    if n < 2:
        return None
    before = np.concatenate([np.full(PREV_WINDOW, o[0]), o])
    prev_max = before[:n].copy()
    for k in range(1, PREV_WINDOW):
        np.maximum(prev_max, before[k : k + n], out=prev_max)
    cand = np.flatnonzero(o < prev_max - RESTART_DROP_MS)
    cand = cand[cand > 0]
    if not cand.size:
        return None
    if w is None or (w == 1).all():
        prev = np.median(sliding_window_view(before, PREV_WINDOW)[cand], axis=1)
        after = np.concatenate([o, np.full(NEXT_WINDOW - 1, o[-1])])
        nxt = np.median(sliding_window_view(after, NEXT_WINDOW)[cand], axis=1)
    else:
        prev, nxt = _repeated_windows(o, w, cand)
    hits = cand[(o[cand] < prev - RESTART_DROP_MS) & (nxt < prev - RESTART_DROP_MS)]
    return int(hits[0]) if hits.size else None


def _repeated_windows(o: np.ndarray, w: np.ndarray, rows: np.ndarray):
    """The medians of the windows before and from ``rows``, counting event k ``w[k]``
    times: the windows of the expanded stream (``np.repeat(o, w)``), not built whole."""
    ends = np.cumsum(w)  # one past the last expanded event of each row
    head = ends[rows] - w[rows]  # expanded index of each row's first event
    back = head[:, None] + np.arange(-PREV_WINDOW, 0)
    ahead = np.minimum(head[:, None] + np.arange(NEXT_WINDOW), ends[-1] - 1)

    def value(x: np.ndarray) -> np.ndarray:
        return o[np.searchsorted(ends, np.maximum(x, 0), side="right")]

    prev = np.where(back < 0, o[0], value(back))
    return np.median(prev, axis=1), np.median(value(ahead), axis=1)


def session_of(
    positions: np.ndarray,
    event_seq: np.ndarray,
    event_session: np.ndarray,
    daemon_starts: np.ndarray,
    *,
    prefer_next: bool = False,
) -> np.ndarray:
    """Session of lines at ``positions`` (seq numbers) between events.

    A line belongs to the session of the event before it (a CUZK_TIMING block follows its
    GPU_START), unless a daemon start lies in between or ``prefer_next`` (worker-started
    lines precede their run's first event): then to the session of the event after it.
    """
    last = int(event_session[-1]) if len(event_seq) else 0
    if last == 0:  # one session (or none): nothing to look up
        return np.zeros(len(positions), dtype=np.int32)
    nxt_i = np.searchsorted(event_seq, positions)
    nxt = np.where(
        nxt_i < len(event_seq), event_session[np.minimum(nxt_i, len(event_seq) - 1)], last
    )
    prev_i = nxt_i - 1
    prev = np.where(prev_i >= 0, event_session[np.maximum(prev_i, 0)], nxt)
    if prefer_next:
        return nxt.astype(np.int32)
    prev_seq = np.where(prev_i >= 0, event_seq[np.maximum(prev_i, 0)], -1)
    starts = np.sort(daemon_starts)
    restarted = np.searchsorted(starts, positions) > np.searchsorted(starts, prev_seq)
    return np.where(restarted & (prev_i >= 0), nxt, prev).astype(np.int32)
