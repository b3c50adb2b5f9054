"""Cut the event stream into daemon runs (sessions); ``assemble`` places the other lines.

A session starts at the first TIMELINE event after a ``cuzk-daemon starting`` line,
or where the offsets restart: an event more than ``RESTART_DROP_MS`` below the median
of the ``PREV_WINDOW`` events before it, with the median of it and the next two events
also that far below.  Threads write lines a few ms out of order, far under one second,
and one damaged offset (a lost or extra digit) cannot split a session: both medians
would have to move.
"""

from __future__ import annotations

import statistics

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
    them as the events they are.  (``SessionSplit`` fed all the events at once.)"""
    return SessionSplit().feed(seq, offset, np.sort(daemon_starts), copies)


class SessionSplit:
    """``split_sessions`` a piece of the events at a time (a log read in pieces).  What a
    piece leaves to the next: the last PREV_WINDOW events of the session under way (the
    window its next events are judged by) and the last event's place; what it needs of
    the next: its first NEXT_WINDOW - 1 events (``ahead``), where a restart among its own
    last events is confirmed."""

    def __init__(self) -> None:
        self.sessions = 0  # sessions begun so far
        self.last_seq = -1  # place of the last event so far
        self.tail = (np.empty(0), np.empty(0, np.int64))  # (offsets, copies + 1) of the
        # latest events of the run of events no daemon start cuts, at most PREV_WINDOW

    def feed(
        self,
        seq: np.ndarray,
        offset: np.ndarray,
        daemon_starts: np.ndarray,
        copies: np.ndarray | None = None,
        ahead: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None,
    ) -> np.ndarray:
        """The session of each of the next events (``split_sessions``' arguments;
        ``daemon_starts`` sorted, all known up to ``ahead``); ``ahead``: (seq, offset,
        copies) of the events after these, NEXT_WINDOW - 1 of them will do, none at the
        end of the log."""
        n = len(seq)
        if not n:
            return np.zeros(0, dtype=np.int32)
        starts = np.zeros(n, dtype=bool)
        forced = np.zeros(0, np.int64)
        if len(daemon_starts):  # the first event at or after each daemon start begins one
            at = np.searchsorted(daemon_starts, seq, side="right")
            before = np.searchsorted(daemon_starts, self.last_seq, side="right")
            forced = np.flatnonzero(at > np.concatenate([[before], at[:-1]]))
        if not self.sessions:
            forced = np.union1d([0], forced)
        weights = np.ones(n, np.int64) if copies is None else copies + 1
        o_all = offset.astype(np.float64)
        edges = [0, *(int(i) for i in forced if i > 0), n]
        tail_o, tail_w = self.tail
        forced_at = set(forced.tolist())
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            if a in forced_at:
                starts[a] = True
                tail_o, tail_w = o_all[:0], weights[:0]
            next_o, next_w = (
                self._ahead(seq[-1], daemon_starts, ahead) if b == n else (o_all[:0], weights[:0])
            )
            o = np.concatenate([tail_o, o_all[a:b], next_o])
            w = np.concatenate([tail_w, weights[a:b], next_w])
            hits = _restarts(o, w, len(tail_o), len(tail_o) + b - a)
            i = a
            if hits:
                at = np.array(hits) + (a - len(tail_o))
                starts[at] = True
                i = int(at[-1])
                tail_o, tail_w = o_all[:0], weights[:0]
            tail_o = np.concatenate([tail_o, o_all[i:b]])[-PREV_WINDOW:]
            tail_w = np.concatenate([tail_w, weights[i:b]])[-PREV_WINDOW:]
        self.tail = (tail_o, tail_w)
        self.last_seq = int(seq[-1])
        sid = np.cumsum(starts, dtype=np.int64) + (self.sessions - 1)
        self.sessions = int(sid[-1]) + 1
        return sid.astype(np.int32)

    @staticmethod
    def _ahead(last_seq: int, daemon_starts: np.ndarray, ahead) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, copies + 1) of the events after ``last_seq`` in its run: up to the
        first daemon start after it, NEXT_WINDOW - 1 of them at most."""
        if ahead is None or not len(ahead[0]):
            return np.empty(0), np.empty(0, np.int64)
        seq, offset, copies = ahead
        cut = np.searchsorted(daemon_starts, last_seq, side="right")
        end = (
            len(seq) if cut == len(daemon_starts) else int(np.searchsorted(seq, daemon_starts[cut]))
        )
        end = min(end, NEXT_WINDOW - 1)
        w = np.ones(end, np.int64) if copies is None else copies[:end] + 1
        return offset[:end].astype(np.float64), w


def _restarts(
    o: np.ndarray, w: np.ndarray | None = None, lo: int = 0, hi: int | None = None
) -> list[int]:
    """Indices (> 0) of the events where the offsets start again, in order; only events
    ``[lo, hi)`` are judged (those before are the window of the first, those after the
    window of the last).  After each, the events are judged as a run of their own: the
    window before an event holds no event of the run before it.

    ``w``: how many times each event occurs in a row (copies folded into it); the result
    is that of the events repeated so, and a copy never qualifies (the event before it,
    equal, would qualify first).  An event can only qualify if it lies that far below the
    largest of the events before it (the median is no larger, and a window cut at a
    restart holds no larger event): that cheap rolling maximum picks the few candidates
    (with copies, over the rows before: they hold the events before), whose medians are
    computed at once as if no restart came before them.  Only a candidate less than
    PREV_WINDOW rows after a restart has its window cut, and that one alone is judged
    again: one pass, however many restarts (a restart at a time over the rest of the
    piece was quadratic in them).
    """
    n = len(o)
    hi = n if hi is None else hi
    if n < 2:
        return []
    before = np.concatenate([np.full(PREV_WINDOW, o[0]), o])
    prev_max = before[:n].copy()
    for k in range(1, PREV_WINDOW):
        np.maximum(prev_max, before[k : k + n], out=prev_max)
    cand = np.flatnonzero(o < prev_max - RESTART_DROP_MS)
    cand = cand[(cand >= max(lo, 1)) & (cand < hi)]
    if not cand.size:
        return []
    if w is None or (w == 1).all():
        w = None
        prev = np.median(sliding_window_view(before, PREV_WINDOW)[cand], axis=1)
        after = np.concatenate([o, np.full(NEXT_WINDOW - 1, o[-1])])
        nxt = np.median(sliding_window_view(after, NEXT_WINDOW)[cand], axis=1)
    else:
        prev, nxt = _repeated_windows(o, w, cand)
    low = o[cand]
    hit = (low < prev - RESTART_DROP_MS) & (nxt < prev - RESTART_DROP_MS)
    hits: list[int] = []
    for k, c in enumerate(cand.tolist()):
        if hits and c - hits[-1] < PREV_WINDOW:  # its window reaches back past a restart
            p = _median_since(o, w, hits[-1], c)
            hit[k] = low[k] < p - RESTART_DROP_MS and nxt[k] < p - RESTART_DROP_MS
        if hit[k]:
            hits.append(c)
    return hits


def _median_since(o: np.ndarray, w: np.ndarray | None, start: int, c: int) -> float:
    """Median of the PREV_WINDOW events before event ``c`` in the run that begins at
    event ``start`` (``w[k]`` copies of event k), padded with the run's first event."""
    window: list[float] = []
    for k in range(c - 1, start - 1, -1):
        window += [float(o[k])] * (1 if w is None else min(int(w[k]), PREV_WINDOW - len(window)))
        if len(window) == PREV_WINDOW:
            break
    window += [float(o[start])] * (PREV_WINDOW - len(window))
    return statistics.median(window)


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
