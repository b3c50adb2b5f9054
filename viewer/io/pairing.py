"""Pair the TIMELINE events of every session into GPU calls, vectorized over all of them.

One call per (session, job, partition); monolithic jobs use partition -1.  Each event type
fills one column; the first occurrence wins and repeats count as duplicates.  A GPU_END
whose offset lies before its call's GPU_START is dropped (``gpu_end_before_start``): the
call stays open, as after a crash, rather than run for a negative time.  Sessions are
paired in one pass (a log of 3000 daemon restarts costs one pass, not 3000).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from viewer.io.grammar import (
    GPU_END,
    GPU_PICKUP,
    GPU_START,
    QUEUED,
    SYNTH_END,
    SYNTH_START,
)

TIME_COLUMNS = {
    SYNTH_START: "synth_start",
    SYNTH_END: "synth_end",
    QUEUED: "queued",
    GPU_PICKUP: "pickup",
    GPU_START: "gpu_start",
    GPU_END: "gpu_end",
}


@dataclass
class Paired:
    """The calls of every session plus what the pairing accepted and rejected."""

    #: job (global code), partition, session, times, synth_ms, gpu_ms, worker, start_seq,
    #: end_seq; calls in order of first appearance, so grouped by session, ascending.
    calls: dict[str, np.ndarray]
    accepted: np.ndarray  # per session: events accepted
    skipped: list[Counter[str]]  # per session
    start_ms: np.ndarray  # per session: first accepted event (0 without one)
    end_ms: np.ndarray  # per session: last accepted event (0 without one)


def pair_events(
    ev: dict[str, np.ndarray], session: np.ndarray | None = None, sessions: int = 1
) -> Paired:
    """Calls from the events (arrays in file order) of ``sessions`` sessions; ``session``:
    each event's session, non-decreasing (None: all in session 0).  ``ev["copies"]``, when
    there, counts the exact copies folded into each row: each is a repeat of its row."""
    job, part, event = ev["job"], ev["partition"], ev["event"]
    n = len(job)
    if session is None:
        session = np.zeros(n, np.int32)
    per_session = _Counts(session, sessions)
    sj, sj_session, sj_job = _session_jobs(session, job, sessions)
    # A partition-less event of a partitioned job is a torn line, not a monolithic job.
    partitioned = np.zeros(len(sj_job), dtype=bool)
    partitioned[sj[part >= 0]] = True
    torn = (part < 0) & partitioned[sj]
    per_session.add("malformed_timeline", torn)
    call_key = sj.astype(np.int64) * (1 << 32) + (part.astype(np.int64) + 1)
    dense = _dense(sj, part)
    dup = _repeats(event, call_key, dense) & ~torn
    per_session.add("duplicate_event", dup)
    if "copies" in ev:  # exact copies folded into their rows: torn as theirs, else repeats
        per_session.add("malformed_timeline", torn, ev["copies"])
        per_session.add("duplicate_event", ~torn, ev["copies"])
    idx = np.flatnonzero(~(torn | dup))
    codes, uniques = _factorize(call_key[idx], None if dense is None else dense[idx])
    calls = len(uniques)
    sj_call = uniques >> 32
    cols: dict[str, np.ndarray] = {
        "job": sj_job[sj_call].astype(np.int32),
        "partition": ((uniques & 0xFFFFFFFF) - 1).astype(np.int32),
        "session": sj_session[sj_call].astype(np.int32),
    }
    off = ev["offset"][idx].astype(np.float64)
    ev_k = event[idx]
    start = _fill(calls, codes, ev_k == GPU_START, off, np.nan)
    backwards = (ev_k == GPU_END) & (off < start[codes])
    if backwards.any():
        per_session.add("gpu_end_before_start", backwards, at=idx)
        keep = ~backwards
        idx, codes, off, ev_k = idx[keep], codes[keep], off[keep], ev_k[keep]
    for code, name in TIME_COLUMNS.items():
        col = np.full(calls, np.nan)
        sel = ev_k == code
        col[codes[sel]] = off[sel]
        cols[name] = col
    cols["synth_ms"] = _fill(calls, codes, ev_k == SYNTH_END, ev["synth_ms"][idx], np.nan)
    cols["gpu_ms"] = _fill(calls, codes, ev_k == GPU_END, ev["gpu_ms"][idx], np.nan)
    worker = np.full(calls, -1, dtype=np.int32)
    ev_worker = ev["worker"][idx]
    for code in (GPU_END, GPU_PICKUP, GPU_START):  # GPU_START's worker wins
        sel = ev_k == code
        worker[codes[sel]] = ev_worker[sel]
    cols["worker"] = worker
    seq = ev["seq"][idx]
    cols["start_seq"] = _fill(calls, codes, ev_k == GPU_START, seq, -1).astype(np.int64)
    cols["end_seq"] = _fill(calls, codes, ev_k == GPU_END, seq, -1).astype(np.int64)
    accepted_session = session[idx]
    lo, hi = _bounds(accepted_session, ev["offset"][idx], sessions)
    return Paired(
        calls=cols,
        accepted=np.bincount(accepted_session, minlength=sessions),
        skipped=per_session.counters(),
        start_ms=lo,
        end_ms=hi,
    )


class _Counts:
    """Skipped events per session and reason."""

    def __init__(self, session: np.ndarray, sessions: int) -> None:
        self.session = session
        self.sessions = sessions
        self.by_reason: dict[str, np.ndarray] = {}

    def add(
        self,
        reason: str,
        rows: np.ndarray,
        weights: np.ndarray | None = None,
        at: np.ndarray | None = None,
    ) -> None:
        """Count the events ``rows`` (a mask over ``at``, the event rows; all by default),
        each ``weights`` times."""
        s = self.session if at is None else self.session[at]
        w = None if weights is None else weights[rows]
        got = np.bincount(s[rows], weights=w, minlength=self.sessions)
        if reason in self.by_reason:
            got = got + self.by_reason[reason]
        self.by_reason[reason] = got

    def counters(self) -> list[Counter[str]]:
        out = [Counter() for _ in range(self.sessions)]
        for reason, counts in self.by_reason.items():
            for s in np.flatnonzero(counts).tolist():
                out[s][reason] += int(counts[s])
        return out


def _session_jobs(
    session: np.ndarray, job: np.ndarray, sessions: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A code of each event's (session, job) in ``[0, m)``, and the session and job of each
    code: the job code itself when there is one session."""
    if sessions <= 1 or not len(job):
        top = int(job.max()) + 1 if len(job) else 0
        return job, np.zeros(top, np.int32), np.arange(top, dtype=np.int32)
    width = int(job.max()) + 1
    key = session.astype(np.int64) * width + job
    if sessions * width <= len(job) + DENSE_SLACK:  # a table, not a hash
        cells = np.arange(sessions * width)
        return key, (cells // width).astype(np.int32), (cells % width).astype(np.int32)
    codes, uniques = pd.factorize(key)
    return codes, (uniques // width).astype(np.int32), (uniques % width).astype(np.int32)


def _bounds(session: np.ndarray, offset: np.ndarray, sessions: int):
    """Per session: the least and the greatest ``offset`` (0.0 where there is none);
    ``session`` non-decreasing."""
    lo, hi = np.zeros(sessions), np.zeros(sessions)
    if len(session):
        starts = np.searchsorted(session, np.arange(sessions))
        has = np.bincount(session, minlength=sessions) > 0
        at = starts[has]
        lo[has] = np.minimum.reduceat(offset, at)
        hi[has] = np.maximum.reduceat(offset, at)
    return lo, hi


def _fill(
    n: int, codes: np.ndarray, sel: np.ndarray, values: np.ndarray, missing: float
) -> np.ndarray:
    out = np.full(n, missing, dtype=np.float64)
    out[codes[sel]] = values[sel]
    return out


DENSE_SLACK = 1 << 16  # a dense table may have this many more cells than there are
# events: a damaged partition=1000000 must not make it a gigabyte (hash instead)


def _dense(job: np.ndarray, part: np.ndarray) -> np.ndarray | None:
    """A dense code of (job, partition) in ``[0, jobs * (partitions + 1))``, or None when
    that table would be too big (odd partition numbers)."""
    if not len(job):
        return None
    width = int(part.max()) + 2
    size = (int(job.max()) + 1) * width
    if int(part.min()) < -1 or int(job.min()) < 0 or size > len(job) + DENSE_SLACK:
        return None
    return job.astype(np.int64) * width + (part.astype(np.int64) + 1)


def _repeats(event: np.ndarray, key: np.ndarray, dense: np.ndarray | None) -> np.ndarray:
    """True for every (call, event type) seen before in file order."""
    if dense is None:
        return pd.Series(key * 8 + event).duplicated(keep="first").to_numpy()
    cell = dense * 8 + event
    first = np.full(int(cell.max()) + 1, len(cell), dtype=np.int64)
    np.minimum.at(first, cell, np.arange(len(cell)))
    return first[cell] != np.arange(len(cell))


def _factorize(key: np.ndarray, dense: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(key)`` (codes in order of first appearance); through the dense codes
    of the same calls when there are some (a table lookup instead of a hash)."""
    if dense is None:
        return pd.factorize(key)
    n = len(dense)
    first = np.full(int(dense.max()) + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(first, dense, np.arange(n))
    seen = np.flatnonzero(first < n)
    order = seen[np.argsort(first[seen], kind="stable")]
    rank = np.empty(len(first), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[dense], key[first[order]]
