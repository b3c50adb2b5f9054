"""Pair the TIMELINE events of every session into GPU calls, vectorized over all of them.

One call per (session, job, partition); monolithic jobs use partition -1.  Each event type
fills one column; the first occurrence wins and repeats count as duplicates.  A GPU_END
whose offset lies before its call's GPU_START is dropped (``gpu_end_before_start``): the
call stays open, as after a crash, rather than run for a negative time.  Sessions are
paired in one pass (a log of 3000 daemon restarts costs one pass, not 3000).
"""

from __future__ import annotations

import functools
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
from viewer.io.grow import Growing
from viewer.io.index import Index
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
    a caller that holds no other reference to them lowers the peak memory.  (``Pairing``
    fed all the events at once.)"""
    if session is None:
        session = np.zeros(len(ev["job"]), np.int32)
    pairing = Pairing()
    pairing.feed(ev, session, consume=consume)
    return pairing.result(sessions)


#: The columns a call keeps of its events: the event type whose first occurrence fills
#: each, the event column it comes from, its type and its value when there is none.  (The
#: times are kept as one table, a row per event type.)
KEPT = {
    "synth_ms": (SYNTH_END, "synth_ms", np.float64, np.nan),
    "gpu_ms": (GPU_END, "gpu_ms", np.float64, np.nan),
    "start_worker": (GPU_START, "worker", np.int32, -1),
    "pickup_worker": (GPU_PICKUP, "worker", np.int32, -1),
    "end_worker": (GPU_END, "worker", np.int32, -1),
    "start_seq": (GPU_START, "seq", np.int64, -1),
    "end_seq": (GPU_END, "seq", np.int64, -1),
}
#: Where a call's key keeps its partition: key = job << 32 | (partition + PART_BIAS).
PART_BIAS = 1 << 31


class Pairing:
    """``pair_events`` a piece of the events at a time (a log read in pieces).  Each piece
    is paired on its own (the first occurrence of each event type of each call, and how
    many events each call had); its calls then fill the cells still empty of the calls
    pieces before began, or are added after them.  Only the latest session's calls can
    go on in the next piece: they alone are looked up.  What depends on a whole session
    (an event without partition of a job with partitions, a GPU_END before its GPU_START,
    the repeats) is settled in ``result``."""

    def __init__(self) -> None:
        self.cols: dict[str, Growing] = {
            "job": Growing(np.int32, 0),
            "partition": Growing(np.int32, 0),
            "session": Growing(np.int32, 0),
            "events": Growing(np.int64, 0),  # events of the call, copies and repeats too
            **{
                name: Growing(dtype, missing, compact=True)
                for name, (_, _, dtype, missing) in KEPT.items()
            },
        }
        self.times = [Growing(np.float64, np.nan, compact=True) for _ in TIME_COLUMNS]
        self.last = -1  # the latest session
        self.index = Index()  # its calls' rows by key

    def feed(self, ev: dict[str, np.ndarray], session: np.ndarray, *, consume: bool = False):
        """The next events, in file order (``pair_events``' arguments); ``session``: each
        event's session, non-decreasing, from the one of the last piece on."""
        if not len(session):
            return
        piece = _piece_calls(ev, session, consume)
        n = len(piece["key"])
        new = np.arange(n)
        if int(piece["session"][0]) == self.last:
            go_on = int(np.searchsorted(piece["session"], self.last, side="right"))
            found, rows = self.index.find(piece["key"][:go_on])
            self._fill(found, rows, piece)
            taken = np.zeros(n, bool)
            taken[found] = True
            new = np.flatnonzero(~taken)
        first_row = len(self.cols["job"])
        for name, col in self.cols.items():
            col.append(piece[name][new])
        for k, col in enumerate(self.times):
            col.append(piece["times"][k][new])
        self._index(piece["key"][new], piece["session"][new], first_row)

    def _fill(self, found: np.ndarray, rows: np.ndarray, piece: dict) -> None:
        """The piece's calls ``found`` go on calls begun before (``rows``): each cell still
        empty takes the piece's first event of its type."""
        for k, col in enumerate(self.times):
            empty = np.flatnonzero(np.isnan(col.rows[rows]) & ~np.isnan(piece["times"][k][found]))
            col.put(rows[empty], piece["times"][k][found[empty]])
            for name, (code, *_) in KEPT.items():
                if code == k:
                    self.cols[name].put(rows[empty], piece[name][found[empty]])
        events = self.cols["events"]
        events.put(rows, events.rows[rows] + piece["events"][found])

    def _index(self, keys: np.ndarray, session: np.ndarray, first_row: int) -> None:
        """Add the new calls (rows from ``first_row``) of the latest session to the index."""
        if not len(keys):
            return
        last = int(session[-1])
        mine = np.flatnonzero(session == last)
        if last != self.last:
            self.last, self.index = last, Index()
        self.index.add(keys[mine], first_row + mine)

    def result(self, sessions: int) -> Paired:
        """The calls of every session (``sessions`` of them) and what the pairing skipped;
        the pairing is spent."""
        self.index = Index()
        cols = {name: _wide(col) for name, col in self.cols.items()}
        times = [_wide(col) for col in self.times]  # a column per event type
        self.times = []
        job, part, session = cols["job"], cols["partition"], cols["session"]
        events = cols.pop("events")
        per_session = _Counts(session, sessions)
        # An event without partition of a job that has partitions is a torn line: its call
        # and every event of it go.
        torn = part < 0
        if torn.any():
            pair = (session.astype(np.int64) << 32) | job
            torn[torn] = np.isin(pair[torn], pair[part >= 0])
        filled = np.zeros(len(job), np.int64)  # the cells of each call its events filled
        for col in times:
            filled += ~np.isnan(col)
        per_session.add("malformed_timeline", torn, events)
        per_session.add("duplicate_event", ~torn, events - filled)
        backwards = (times[GPU_END] < times[GPU_START]) & ~torn  # per call
        if backwards.any():
            per_session.add("gpu_end_before_start", backwards)
            times[GPU_END][backwards] = np.nan
            for name in ("gpu_ms", "end_worker", "end_seq"):
                cols[name][backwards] = KEPT[name][3]
            filled = filled - backwards
        ok = ~torn
        for reason in ("offset_out_of_order", "offset_outside_session"):
            if reason == "offset_out_of_order":  # then what lies outside, without those
                dropped = _out_of_order(times, ok)
            else:
                dropped = _outside(times, session, ok, sessions)
            for code, rows_ in dropped.items():
                if not len(rows_):
                    continue
                mask = np.zeros(len(job), bool)
                mask[rows_] = True
                per_session.add(reason, mask)
                times[code][rows_] = np.nan
                for name, (event, _k, _t, empty) in KEPT.items():
                    if event == code:
                        cols[name][rows_] = empty
                filled = filled - mask
        keep = None if not torn.any() else np.flatnonzero(~torn)

        def rows(col: np.ndarray) -> np.ndarray:
            return col if keep is None else col[keep]

        kept_session = rows(session)
        lo, hi, counts = _bounds(
            kept_session,
            rows(functools.reduce(np.fmin, times)),
            rows(functools.reduce(np.fmax, times)),
            rows(filled),
            sessions,
        )
        out = {"job": rows(job), "partition": rows(part), "session": kept_session}
        for code, name in TIME_COLUMNS.items():
            out[name] = rows(times[code])
        del times
        out["synth_ms"] = rows(cols["synth_ms"])
        out["gpu_ms"] = rows(cols["gpu_ms"])
        worker = cols["start_worker"]  # GPU_START's worker wins, then PICKUP's, END's
        for other in (cols["pickup_worker"], cols["end_worker"]):
            worker = np.where(worker >= 0, worker, other)
        out["worker"] = rows(worker).astype(np.int32)
        out["start_seq"] = rows(cols["start_seq"])
        out["end_seq"] = rows(cols["end_seq"])
        return Paired(
            calls=out, accepted=counts, skipped=per_session.counters(), start_ms=lo, end_ms=hi
        )


#: Events of one call written out of their order by up to this much are the daemon's threads
#: writing apart, not a torn offset (simulate --disorder-ms stays under it too).
DISORDER_MS = 1000.0
#: An event this far from its session's middle (and ``SPREAD`` x the session's median
#: absolute deviation) lies outside the session: a torn offset, not a late event.
OUTSIDE_MS = 30 * 86_400_000.0
SPREAD = 50.0


def _late(times: list[np.ndarray], ok: np.ndarray) -> np.ndarray:
    """The calls (of those ``ok``) with an event below the running max of the ones before
    it, DISORDER_MS allowed; the running max kept a column at a time (the calls x 6 table
    and its running max took 18 MB, the peak of a 10^6-event log's load)."""
    late = np.zeros(len(ok), bool)
    before = np.where(np.isnan(times[0]), -np.inf, times[0])
    for col in times[1:]:
        late |= col + DISORDER_MS < before  # NaN compares False
        np.fmax(before, col, out=before)
    return np.flatnonzero(late & ok)


def _out_of_order(times: list[np.ndarray], ok: np.ndarray) -> dict[int, np.ndarray]:
    """Per event type, the calls whose event of that type breaks the order of its call
    (SYNTH_START <= SYNTH_END <= queue <= pickup <= GPU_START <= GPU_END, DISORDER_MS
    allowed): the event out of order with most of the others, one at a time (a torn
    SYNTH_START of 4 042 075 s gave a synthesis of minus that)."""
    # Most calls are in order: only those with an event below a running max of the ones
    # before it go through the pairwise count (a 10^6-event log: a few ms, not 90).
    suspects = _late(times, ok)
    if not len(suspects):
        return {}
    t = np.stack([col[suspects] for col in times], axis=1)  # suspects x 6, NaN: not seen
    out: dict[int, list[np.ndarray]] = {}
    k = t.shape[1]
    for _ in range(k - 1):
        count = np.zeros(t.shape, np.int64)
        for i in range(k):
            for j in range(i + 1, k):
                bad = t[:, i] > t[:, j] + DISORDER_MS  # NaN compares False
                count[:, i] += bad
                count[:, j] += bad
        worst = count.max(axis=1)
        rows = np.flatnonzero(worst > 0)
        if not len(rows):
            break
        # The event out of order with the most others; on a tie (two events, one pair), the
        # one furthest from the call's other events.
        c = count[rows]
        mid = np.nanmedian(t[rows], axis=1)
        far = np.abs(t[rows] - mid[:, None])
        far = np.where(c == worst[rows][:, None], np.nan_to_num(far, nan=-1.0), -2.0)
        col = np.argmax(far, axis=1)
        t[rows, col] = np.nan
        for code in np.unique(col).tolist():
            out.setdefault(code, []).append(suspects[rows[col == code]])
    return {code: np.concatenate(parts) for code, parts in out.items()}


def _outside(
    times: list[np.ndarray], session: np.ndarray, ok: np.ndarray, sessions: int
) -> dict[int, np.ndarray]:
    """Per event type, the calls whose event lies outside its session: further than
    OUTSIDE_MS from the session's median event, and SPREAD times the session's median
    absolute deviation (an offset of 10^14 in a 4-minute run made it last 3 million years)."""
    t = np.stack(times, axis=1)
    t[~ok] = np.nan
    # A session whose events all lie within OUTSIDE_MS of each other has none outside:
    # the usual case, found from each session's least and greatest event alone.
    edges = np.searchsorted(session, np.arange(sessions + 1))
    has = np.flatnonzero(np.diff(edges) > 0)
    if len(has):
        low = np.fmin.reduce(t, axis=1)
        high = np.fmax.reduce(t, axis=1)
        low = np.where(np.isnan(low), np.inf, low)
        high = np.where(np.isnan(high), -np.inf, high)
        spread = np.maximum.reduceat(high, edges[has]) - np.minimum.reduceat(low, edges[has])
        if not (spread > OUTSIDE_MS).any():
            return {}
    flat = t.ravel()
    sess = np.repeat(session, t.shape[1])
    seen = np.isfinite(flat)
    if not seen.any():
        return {}
    order = np.lexsort((flat[seen], sess[seen]))
    v, s_ = flat[seen][order], sess[seen][order]
    edges = np.searchsorted(s_, np.arange(sessions + 1))
    has = np.diff(edges) > 0
    middle = (edges[:-1] + np.diff(edges) // 2)[has]  # each session's median, all at once
    mid, dev = np.zeros(sessions), np.zeros(sessions)
    mid[has] = v[middle]
    apart = np.abs(v - mid[s_])
    dev[has] = apart[np.lexsort((apart, s_))][middle]
    limit = np.maximum(OUTSIDE_MS, SPREAD * dev)[session]
    far = np.abs(t - mid[session][:, None]) > limit[:, None]
    out = {}
    for code in range(t.shape[1]):
        rows = np.flatnonzero(far[:, code])
        if len(rows):
            out[code] = rows
    return out


def _wide(col: Growing) -> np.ndarray:
    """A column's rows as the type it stands for (float64 for one held compact)."""
    return col.take().astype(col.wide, copy=False)


def _piece_calls(ev: dict[str, np.ndarray], session: np.ndarray, consume: bool) -> dict:
    """One piece's events paired on their own: per call (in order of first appearance) its
    key, session, job, partition, the first event of each type (``times``, ``KEPT``), and
    how many events it had (copies and repeats too)."""
    take = ev.pop if consume else ev.__getitem__
    if consume:
        ev.pop("mono", None)
    job, part, event = take("job"), take("partition"), ev["event"]
    first = int(session[0])
    local = session - first if first else session
    sj, sj_session, sj_job = _session_jobs(local, job, int(local[-1]) + 1)
    dense, width = _dense(sj, part)
    call_key = None
    if dense is None:
        call_key = (sj.astype(np.int64) << 32) | (part.astype(np.int64) + PART_BIAS)
        codes, uniques = factorize(call_key)
        sj_call, call_part = uniques >> 32, (uniques & 0xFFFFFFFF) - PART_BIAS
    else:
        codes, cells = _first_codes(dense)
        sj_call, call_part = cells // width, cells % width - 1
    dup = _repeats(event, call_key, dense)
    del job, part, sj, dense, call_key
    calls = len(sj_call)
    weights = ev["copies"] + 1 if "copies" in ev else None
    if consume:
        ev.pop("copies", None)
    c_job = sj_job[sj_call].astype(np.int32)
    out: dict = {
        "job": c_job,
        "partition": call_part.astype(np.int32),
        "session": (sj_session[sj_call] + first).astype(np.int32),
        "events": np.bincount(codes, weights=weights, minlength=calls).astype(np.int64),
    }
    out["key"] = (c_job.astype(np.int64) << 32) | (out["partition"].astype(np.int64) + PART_BIAS)
    idx = None if not dup.any() else np.flatnonzero(~dup)  # the usual piece repeats nothing
    del dup

    def rows(col: np.ndarray) -> np.ndarray:
        return col if idx is None else col[idx]

    k_codes, ev_k = rows(codes), rows(event)
    del codes
    out["times"] = _table(calls, ev_k, k_codes, rows(ev["offset"]), np.nan)
    for name, (code, source, dtype, missing) in KEPT.items():
        values = ev[source]
        col = np.full(calls, missing, dtype=dtype)
        at = _rows_of(ev_k == code)
        col[k_codes[at]] = values[at if idx is None else idx[at]]
        out[name] = col
    if consume:
        for name in ("worker", "synth_ms", "gpu_ms"):
            ev.pop(name, None)
    return out


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


def _bounds(
    session: np.ndarray, low: np.ndarray, high: np.ndarray, events: np.ndarray, sessions: int
):
    """Per session (``session`` of each call, non-decreasing): the least ``low`` and the
    greatest ``high`` of its calls (0.0 where it has none), and the sum of ``events``."""
    lo, hi = np.zeros(sessions), np.zeros(sessions)
    counts = np.bincount(session, weights=events, minlength=sessions).astype(np.int64)
    edges = np.searchsorted(session, np.arange(sessions + 1))
    has = np.diff(edges) > 0
    if has.any():
        at = edges[:-1][has]
        lo[has] = np.minimum.reduceat(low, at)
        hi[has] = np.maximum.reduceat(high, at)
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
