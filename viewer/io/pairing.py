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

from viewer.io.grammar import (
    GPU_END,
    GPU_PICKUP,
    GPU_START,
    QUEUED,
    SYNTH_END,
    SYNTH_START,
)
from viewer.model.keys import factorize, first_seen

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
    ev: dict[str, np.ndarray],
    session: np.ndarray | None = None,
    sessions: int = 1,
    *,
    consume: bool = False,
) -> Paired:
    """Calls from the events (arrays in file order) of ``sessions`` sessions; ``session``:
    each event's session, non-decreasing (None: all in session 0).  ``ev["copies"]``, when
    there, counts the exact copies folded into each row: each is a repeat of its row.
    ``consume``: ``ev`` gives up each column once used (``seq`` and ``offset`` stay), so
    a caller that holds no other reference to them lowers the peak memory."""
    take = ev.pop if consume else ev.__getitem__
    if consume:
        ev.pop("mono", None)
    job, part, event = take("job"), take("partition"), ev["event"]
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
    dense, width = _dense(sj, part)
    call_key = None
    if dense is None:
        call_key = sj.astype(np.int64) * (1 << 32) + (part.astype(np.int64) + 1)
    del job, part, sj, partitioned  # (the scan's columns: gone when consumed)
    dup = _repeats(event, call_key, dense) & ~torn
    per_session.add("duplicate_event", dup)
    if "copies" in ev:  # exact copies folded into their rows: torn as theirs, else repeats
        copies = take("copies")
        per_session.add("malformed_timeline", torn, copies)
        per_session.add("duplicate_event", ~torn, copies)
        del copies
    kept = ~(torn | dup)
    del torn, dup  # a 10^6-event log's pairing peaks here: every byte let go counts
    idx = None if kept.all() else np.flatnonzero(kept)  # the usual log drops nothing
    del kept

    def rows(col: np.ndarray) -> np.ndarray:
        return col if idx is None else col[idx]

    if dense is None:
        codes, uniques = factorize(rows(call_key))
        sj_call, call_part = uniques >> 32, (uniques & 0xFFFFFFFF) - 1
    else:
        codes, cells = _first_codes(rows(dense))
        sj_call, call_part = cells // width, cells % width - 1
    del dense, call_key
    calls = len(sj_call)
    cols: dict[str, np.ndarray] = {
        "job": sj_job[sj_call].astype(np.int32),
        "partition": call_part.astype(np.int32),
        "session": sj_session[sj_call].astype(np.int32),
    }
    # One value per (event type, call): the times as rows of one table (one scatter), the
    # other values only for the event types that carry them (a 10^6-event log's pairing
    # held 20 MB more as full tables).
    ev_k = rows(event)
    times = _table(calls, ev_k, codes, rows(ev["offset"]), np.nan)
    at = {k: _rows_of(ev_k == k) for k in (SYNTH_END, GPU_PICKUP, GPU_START, GPU_END)}

    def column(name: str, code: int, missing: float, dtype: type | None = None) -> np.ndarray:
        values = ev[name] if name in ("worker", "seq") else take(name)
        out = np.full(calls, missing, dtype=dtype or values.dtype)
        sel = at[code] if idx is None else idx[at[code]]
        out[codes[at[code]]] = values[sel]
        return out

    synth_ms = column("synth_ms", SYNTH_END, np.nan)
    gpu_ms = column("gpu_ms", GPU_END, np.nan)
    worker = column("worker", GPU_START, -1)  # GPU_START's worker wins, then PICKUP's, END's
    pickup_worker = column("worker", GPU_PICKUP, -1)
    end_worker = column("worker", GPU_END, -1)
    if consume:
        ev.pop("worker")
    start_seq = column("seq", GPU_START, -1, np.int64)
    end_seq = column("seq", GPU_END, -1, np.int64)
    accepted = session if idx is None else session[idx]
    offsets = rows(ev["offset"])
    backwards = times[GPU_END] < times[GPU_START]  # per call
    if backwards.any():
        dropped = (ev_k == GPU_END) & backwards[codes]
        per_session.add("gpu_end_before_start", dropped, at=idx)
        times[GPU_END][backwards] = np.nan
        for col, missing in ((gpu_ms, np.nan), (end_worker, -1), (end_seq, -1)):
            col[backwards] = missing
        accepted, offsets = accepted[~dropped], offsets[~dropped]
    for code, name in TIME_COLUMNS.items():
        cols[name] = times[code]
    cols["synth_ms"] = synth_ms
    cols["gpu_ms"] = gpu_ms
    for other in (pickup_worker, end_worker):
        worker = np.where(worker >= 0, worker, other)
    cols["worker"] = worker.astype(np.int32)
    cols["start_seq"] = start_seq
    cols["end_seq"] = end_seq
    lo, hi, counts = _bounds(accepted, offsets, sessions)
    return Paired(
        calls=cols,
        accepted=counts,
        skipped=per_session.counters(),
        start_ms=lo,
        end_ms=hi,
    )


def _table(
    calls: int, event: np.ndarray, codes: np.ndarray, values: np.ndarray, missing: float
) -> np.ndarray:
    """``values`` by (event type, call): row k holds each call's value of its event k (each
    pair occurs once: repeats are gone)."""
    out = np.full((len(TIME_COLUMNS), calls), missing)
    out[event, codes] = values  # cast as stored: no float copy of 10^6 int64 offsets
    return out


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
    codes, uniques = factorize(key)
    return codes, (uniques // width).astype(np.int32), (uniques % width).astype(np.int32)


def _bounds(session: np.ndarray, offset: np.ndarray, sessions: int):
    """Per session: the least and the greatest ``offset`` (0.0 where there is none), and
    how many rows it has; ``session`` non-decreasing."""
    lo, hi = np.zeros(sessions), np.zeros(sessions)
    edges = np.searchsorted(session, np.arange(sessions + 1))
    counts = np.diff(edges)
    has = counts > 0
    if has.any():
        at = edges[:-1][has]
        lo[has] = np.minimum.reduceat(offset, at)
        hi[has] = np.maximum.reduceat(offset, at)
    return lo, hi, counts


DENSE_SLACK = 1 << 16  # a dense table may have this many more cells than there are
# events: a damaged partition=1000000 must not make it a gigabyte (hash instead)


def _dense(job: np.ndarray, part: np.ndarray) -> tuple[np.ndarray | None, int]:
    """A dense code of (job, partition) in ``[0, jobs * width)`` and the width (partitions
    + 1), or (None, 0) when that table would be too big (odd partition numbers)."""
    if not len(job):
        return None, 0
    width = int(part.max()) + 2
    size = (int(job.max()) + 1) * width
    if int(part.min()) < -1 or int(job.min()) < 0 or size > len(job) + DENSE_SLACK:
        return None, 0
    dtype = _index_type(size * 8)  # room for _repeats' cells too
    code = job.astype(dtype)
    code *= width
    code += part
    code += 1
    return code, width


def _index_type(most: int) -> type:
    """int32 for indices below ``most`` when they fit (half the memory of 10^6-row
    temporaries), else int64."""
    return np.int32 if most < 2**31 else np.int64


def _repeats(event: np.ndarray, key: np.ndarray, dense: np.ndarray | None) -> np.ndarray:
    """True for every (call, event type) seen before in file order."""
    if dense is None:
        return ~first_seen(key * 8 + event)
    cell = dense * 8
    cell += event
    first, ramp = _first_rows(cell)
    return first[cell] != ramp


def _first_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each value in ``[0, max]`` the row of its first occurrence (``len(values)`` for
    none), and the row numbers themselves (a ramp: int32 when the rows fit)."""
    n = len(values)
    ramp = np.arange(n, dtype=_index_type(n + 1))
    first = np.full(int(values.max()) + 1 if n else 0, n, dtype=ramp.dtype)
    np.minimum.at(first, values, ramp)
    return first, ramp


def _rows_of(mask: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(mask)``, int32 when the rows fit (half the memory)."""
    return np.flatnonzero(mask).astype(_index_type(len(mask) + 1), copy=False)


def _first_codes(dense: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the dense values in order of first appearance (``factorize`` through a
    table lookup instead of a hash), and the value of each code."""
    n = len(dense)
    first = _first_rows(dense)[0]  # the ramp goes at once
    seen = np.flatnonzero(first < n)
    order = seen[np.argsort(first[seen], kind="stable")]
    rank = np.empty(len(first), dtype=_index_type(len(order) + 1))
    rank[order] = np.arange(len(order))
    return rank[dense], order
