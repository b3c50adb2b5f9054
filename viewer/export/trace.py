"""Chrome Trace Event Format export, for Perfetto (ui.perfetto.dev) and chrome://tracing.

Layout, per session: one process per GPU ("GPU 0") holding a track per GPU
worker ("GPU 0 · worker 1": each call an "X" slice with its CUDA kernel region
nested inside) and a "GPU 0 · busy" track (the busy union, the leading cold
start, idle gaps as instants); then a "synthesis" process whose rows pack
SYNTH_START -> SYNTH_END and the queue wait after it (``viewer.analysis.packing``,
as the GUI does).  Sector transitions are process-scoped instants on the GPU
that moved on; flow arrows link each synthesis to its GPU call.  Slices are
named after their job: Perfetto colours by name without digits, so a job keeps
one colour.  Times are integer microseconds in the session's own epoch (the
TIMELINE offsets), so the figures match the report.

Events are made CHUNK_ROWS at a time from the columns they come from (``_Cols``) and
``write_trace`` writes each chunk as it is made: a trace of 1.5 M one-call jobs, ~10^7
events, held every event as a dict (and each column as Python numbers) until the end,
11 GB (issue 27 item 9).  Each session's track names follow its events.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from viewer import __version__
from viewer.analysis import cold_start_regions, idle_gaps, transitions
from viewer.analysis.cache import drop, forget_since, made
from viewer.analysis.gaps import TABLE as gaps_table
from viewer.analysis.groups import Groups
from viewer.analysis.intervals import Range, busy_blocks, calls, check_range
from viewer.analysis.packing import pack_rows
from viewer.analysis.stages import synthesis_rows
from viewer.analysis.transitions import TABLE as transitions_table
from viewer.export.files import open_output, resolve_output
from viewer.export.format import Chunked, Rows, display_path, json_bytes
from viewer.export.tables import select_sessions
from viewer.model import KERNEL_SOURCE_TIMING, Session, Timeline
from viewer.model.frame import Frame

SCHEMA = "cuzk-timeline-trace/1"
BREAKDOWN = {"ntt_msm_h": "ntt_msm_h_ms", "batch_add": "batch_add_ms", "tail_msm": "tail_msm_ms"}


def _us(ms: np.ndarray) -> np.ndarray:
    """Milliseconds -> integer microseconds (integers make nesting exact)."""
    return np.rint(np.asarray(ms, dtype=np.float64) * 1000.0).astype(np.int64)


def _vals(a: np.ndarray) -> list:
    """A float column as JSON-safe values: rounded to the microsecond, NaN / inf -> None."""
    a = np.asarray(a, dtype=np.float64)
    out = np.round(a, 3).astype(object)
    out[~np.isfinite(a)] = None
    return out.tolist()


def _in_us(ms: np.ndarray) -> Chunked:
    """``_us(ms)`` a chunk at a time."""
    return Chunked(lambda a, b: _us(ms[a:b]))


def _ids(ids: np.ndarray, job: np.ndarray) -> Chunked:
    """The ids of jobs ``job`` (rows of ``ids``), a chunk at a time."""
    return Chunked(lambda a, b: ids[job[a:b]])


def _window(start: np.ndarray, end: np.ndarray, rng: Range) -> tuple[np.ndarray, ...]:
    """(keep, start, end, clipped): the intervals touching ``rng``, clipped to it; ``keep``
    a mask, or every row (a slice: the columns as they are, no copies) without a range."""
    if rng is None:
        return slice(None), start, end, np.zeros(len(start), dtype=bool)
    keep = (start <= rng[1]) & (end >= rng[0])
    s, e = np.clip(start, *rng), np.clip(end, *rng)
    return keep, s, np.maximum(e, s), (s != start) | (e != end)


def _labels(s: Session, job: np.ndarray, part: np.ndarray, is_open: np.ndarray) -> Chunked:
    """Slice names: 'a1b2c3d4 p7' (job id prefix, partition or proof kind), '... (open)',
    made a chunk of rows at a time."""
    ids, kinds = s.jobs["job_id"], s.jobs["kind"]

    def rows(a: int, b: int) -> list[str]:
        j = job[a:b]
        short = [str(i)[:8] for i in ids[j].tolist()]
        what = [
            f"p{p}" if p >= 0 else (k or "monolithic")
            for p, k in zip(part[a:b].tolist(), kinds[j].tolist(), strict=True)
        ]
        return [
            f"{h} {w} (open)" if o else f"{h} {w}"
            for h, w, o in zip(short, what, is_open[a:b].tolist(), strict=True)
        ]

    return Chunked(rows)


#: Events made (and written) at once: ~10 MB of dicts.
CHUNK_ROWS = 1 << 14


def Floats(values: np.ndarray) -> tuple[np.ndarray, Callable[[np.ndarray], list]]:  # noqa: N802
    """A float column of a ``Rows``, made JSON-safe (``_vals``) a chunk at a time."""
    return np.asarray(values, dtype=np.float64), _vals


#: The events' columns (``format.Rows``: arrays, ``Chunked``, ``Floats``, nested tables).
_Cols = Rows


def _tracks(keys: np.ndarray | tuple[np.ndarray, ...], table: dict) -> np.ndarray:
    """Track id of each row: ``table[key]``, -1 for a key not in it (vectorized lookup).

    ``keys`` is one array (``table`` keyed by its values) or a tuple of arrays (keyed by
    tuples); any integers, so ids of any size never collide.  Each key column becomes its
    position among the table's few values of it, and those one number a row, looked up
    among the table's: a few arrays of the rows, not a sort of a table of them all.
    """
    multi = isinstance(keys, tuple)
    cols = keys if multi else (keys,)
    n = len(cols[0])
    out = np.full(n, -1, dtype=np.int64)
    if not table:
        return out
    known = np.array(list(table), dtype=np.int64).reshape(len(table), -1)
    sizes = [len(np.unique(known[:, j])) for j in range(known.shape[1])]
    if float(np.prod(sizes, dtype=np.float64)) >= 2**62:  # (never for tracks of one trace)
        return _tracks_by_rows(cols, known, table)
    row_key = np.zeros(n, dtype=np.int64)
    table_key = np.zeros(len(known), dtype=np.int64)
    found = np.ones(n, dtype=bool)
    for j, col in enumerate(cols):
        values = np.unique(known[:, j])
        col = np.asarray(col, dtype=np.int64)
        at = np.minimum(np.searchsorted(values, col), len(values) - 1)
        found &= values[at] == col
        row_key = row_key * len(values) + at
        table_key = table_key * len(values) + np.searchsorted(values, known[:, j])
    order = np.argsort(table_key)
    table_key = table_key[order]
    at = np.minimum(np.searchsorted(table_key, row_key), len(table_key) - 1)
    found &= table_key[at] == row_key
    tids = np.array(list(table.values()), dtype=np.int64)[order]
    out[found] = tids[at[found]]
    return out


def _tracks_by_rows(cols: tuple[np.ndarray, ...], known: np.ndarray, table: dict) -> np.ndarray:
    """``_tracks`` through the distinct rows of the table and the keys together."""
    _, code = _row_codes(np.concatenate([known, np.column_stack(cols).astype(np.int64)]))
    tid_of = np.full(int(code.max()) + 1, -1, dtype=np.int64)
    tid_of[code[: len(known)]] = np.array(list(table.values()), dtype=np.int64)
    return tid_of[code[len(known) :]]


def _row_codes(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-d integer array, and the code of each row among them."""
    distinct, code = np.unique(rows, axis=0, return_inverse=True)
    return distinct, code.reshape(-1)


def _rows_by_pair(a: np.ndarray, b: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    """Rows of each (a, b) pair present, ascending within a pair."""
    if not len(a):
        return {}
    pairs, code = _row_codes(np.column_stack([a, b]).astype(np.int64))
    g = Groups(code)
    keys = map(tuple, pairs[g.keys].tolist())
    return dict(zip(keys, g.split(np.arange(len(a))), strict=True))


# ---- one session ----------------------------------------------------------------------------


class _Builder:
    """Makes the events of a trace, handing out process and track ids in order, and gives
    them to ``sink`` a chunk at a time (each session's track names after its events); by
    default they are kept in ``events``."""

    def __init__(self, flows: bool, sink=None) -> None:
        self.events: list[dict] = []
        self.sink = self.events.extend if sink is None else sink
        self.meta: list[dict] = []
        self.next_pid = 1
        # process of each track id (ids are handed out from 1), its first ``tracks`` cells
        # used; grown by doubling, so that a trace of 10^4 sessions never copies it per call
        self.pid_of = np.zeros(64, dtype=np.int64)
        self.tracks = 1
        self.flows = flows
        self.flow_id = 1

    def process(self, name: str) -> int:
        pid = self.next_pid
        self.next_pid += 1
        self.meta += [
            {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": name}},
            {"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
             "args": {"sort_index": pid}},
        ]  # fmt: skip
        return pid

    def thread(self, pid: int, k: int, name: str) -> int:
        """A new track ``name`` in process ``pid``, sorted at ``k``; its id (unique in
        the whole trace)."""
        tid = self.tracks
        if tid == len(self.pid_of):
            self.pid_of = np.concatenate([self.pid_of, np.zeros_like(self.pid_of)])
        self.pid_of[tid] = pid
        self.tracks += 1
        self.meta += [
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}},
            {"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
             "args": {"sort_index": k}},
        ]  # fmt: skip
        return tid

    def _pids(self, tid: np.ndarray) -> Chunked:
        """The process of each track in ``tid``, a chunk at a time."""
        return Chunked(lambda a, b: self.pid_of[np.asarray(tid[a:b], dtype=np.int64)])

    def _emit(self, **fields: object) -> None:
        """The events of ``fields`` (``_Cols``' columns), a chunk at a time."""
        cols = _Cols(**fields)
        n = len(cols)
        for a in range(0, n, CHUNK_ROWS):
            self.sink(cols.rows(a, min(a + CHUNK_ROWS, n)))

    def _slices(
        self, name, cat: str, t0: np.ndarray, t1: np.ndarray, tid: np.ndarray, args, ms=False
    ):
        """Complete ("X") events from microsecond bounds on tracks ``tid`` (``ms``: bounds
        in milliseconds, made microseconds a chunk at a time)."""
        if ms:
            start, end = t0, t1
            t0 = Chunked(lambda a, b: _us(start[a:b]))
            dur = Chunked(lambda a, b: _us(end[a:b]) - _us(start[a:b]))
        else:
            dur = Chunked(lambda a, b: t1[a:b] - t0[a:b])
        self._emit(
            name=name, cat=cat, ph="X", ts=t0, dur=dur, pid=self._pids(tid), tid=tid, args=args
        )

    def _instants(self, name, cat: str, scope: str, ts: np.ndarray, tid: np.ndarray, args):
        self._emit(
            name=name, cat=cat, ph="i", s=scope, ts=ts, pid=self._pids(tid), tid=tid, args=args
        )

    def session(self, s: Session, rng: Range, prefix: str) -> dict:
        """Add the events of ``s``; returns its entry for the trace metadata."""
        had = made(s)
        c = calls(s)
        # calls() keeps the started rows in gpu_start order: map partition rows to calls.
        started = np.flatnonzero(~np.isnan(s.partitions["gpu_start"]))
        order = np.argsort(s.partitions["gpu_start"][started], kind="stable")
        call_of = np.full(len(s.partitions), -1, dtype=np.int64)
        call_of[started[order]] = np.arange(len(started))
        pids, call_tid, worker_tid, busy_tid = self._gpu_tracks(s, c, prefix)
        self._calls(s, c, call_tid, rng)
        self._busy(s, c, busy_tid, rng)
        drop(s, busy_blocks, gaps_table, unless=had)  # each table only while it is needed
        self._transitions(s, worker_tid, rng)
        drop(s, transitions_table, unless=had)
        synth_pid = self._synthesis(s, c, call_of, call_tid, rng, prefix)
        if synth_pid is not None:
            pids["synthesis"] = synth_pid
        self.sink(self.meta)  # the session's process and track names
        self.meta = []
        # Nothing reads the session's tables again: 30 000 restarts kept ~20 KB each.
        forget_since(s, had)
        return {
            "session": s.number,
            "index": s.index,
            "start_ms": _vals(np.array([s.start_ms]))[0],
            "end_ms": _vals(np.array([s.end_ms]))[0],
            "kernel_source": s.kernel_source,
            "notes": list(s.notes),
            "pids": pids,
        }

    def _gpu_tracks(self, s: Session, c: Frame, prefix: str) -> tuple:
        """A process per GPU with a track per worker, overflow tracks for calls that overlap
        on one worker (a lost GPU_END), and a busy track.

        Returns (pid by name, tid of each call, main tid per (gpu, worker), busy tid per gpu).
        """
        gpu, worker = c["gpu"], c["worker"]
        t0, t1 = _us(c["start"]), _us(c["end"])
        row = np.zeros(len(c), dtype=np.int64)
        groups = _rows_by_pair(gpu, worker)
        for idx in groups.values():
            row[idx] = pack_rows(t0[idx], t1[idx])
        tracks: dict[tuple[int, int, int], int] = {}
        pids: dict[str, int] = {}
        busy_tid: dict[int, int] = {}
        for g in sorted(set(s.gpus) | set(gpu.tolist())):
            gname = f"GPU {g}" if g >= 0 else "GPU ?"
            pid = pids[gname] = self.process(prefix + gname)
            k = 0
            for w in sorted(set(s.gpus.get(g, [])) | set(worker[gpu == g].tolist())):
                label = f"{gname} · worker {w}" if w >= 0 else f"{gname} · worker ?"
                idx = groups.get((g, w), np.zeros(0, dtype=np.int64))
                for r in range(int(row[idx].max(initial=0)) + 1):
                    k += 1
                    name = label if r == 0 else f"{label} · overlapping {r}"
                    tracks[(g, w, r)] = self.thread(pid, k, name)
            busy_tid[g] = self.thread(pid, k + 1, f"{gname} · busy")
        worker_tid = {(g, w): tid for (g, w, r), tid in tracks.items() if r == 0}
        return pids, _tracks((gpu, worker, row), tracks), worker_tid, busy_tid

    def _calls(self, s: Session, c: Frame, tid: np.ndarray, rng: Range) -> None:
        """GPU calls on their worker's track, each with its kernel region nested inside."""
        keep, start, end, clipped = _window(c["start"], c["end"], rng)
        if not isinstance(keep, slice):  # (a frame of every row is the frame itself)
            c, tid = c[keep], tid[keep]
        t0, t1 = _us(start[keep]), _us(end[keep])
        job, part = c["job"], c["partition"]
        is_open = ~c["closed"]
        ids = s.jobs["job_id"][job]
        kms = c["kernel_ms"]
        breakdown = _Cols(**{k: Floats(c[col]) for k, col in BREAKDOWN.items()})
        args = _Cols(
            job=ids,
            partition=part,
            worker=c["worker"],
            gpu=c["gpu"],
            gpu_ms=Floats(c["gpu_ms"]),
            kernel_ms=Floats(kms),
            breakdown=breakdown,
            queued_ms=Floats(c["queued"]),
            pickup_ms=Floats(c["pickup"]),
            open=is_open,
            clipped=clipped[keep],
        )
        self._slices(_labels(s, job, part, is_open), "gpu_call", t0, t1, tid, args)
        if s.kernel_source != KERNEL_SOURCE_TIMING:
            return  # no CUDA region known: the call is all there is
        k0 = c["kernel_start"]
        k0 = np.where(np.isfinite(k0), k0, c["start"])
        has = np.isfinite(kms)
        # Clip to the call in integer microseconds, so the kernel always nests inside it.
        ks = np.clip(_us(np.where(has, k0, 0.0)), t0, t1)
        ke = np.clip(_us(np.where(has, k0 + kms, 0.0)), ks, t1)
        has &= (ke > ks) | (kms == 0)
        kargs = _Cols(job=ids[has], kernel_ms=Floats(kms[has]))
        self._slices("CUDA kernel", "kernel", ks[has], ke[has], tid[has], kargs)

    def _busy(self, s: Session, c: Frame, tid: dict[int, int], rng: Range) -> None:
        """Busy-union blocks, the leading cold start and the idle gaps on each busy track."""
        blocks = busy_blocks(s)  # (``merge`` of these calls by GPU, as the gaps take it)
        keep, bs, be, _ = _window(blocks["start"], blocks["end"], rng)
        bs, be = _us(bs[keep]), _us(be[keep])
        bt = _tracks(blocks["group"][keep], tid)
        self._slices("busy", "busy", bs, be, bt, _Cols(busy_ms=Floats((be - bs) / 1e3)))

        cold = cold_start_regions(s)
        head = cold[(cold["label"] == "cold start") & np.isin(cold["gpu"], list(tid))]
        keep, cs, ce, _ = _window(head["start"], head["end"], rng)
        keep = (ce > cs) if rng is None else keep & (ce > cs)
        cs, ce = _us(cs[keep]), _us(ce[keep])
        ct = _tracks(head["gpu"][keep], tid)
        cargs = _Cols(cold_start_ms=Floats((ce - cs) / 1e3))
        self._slices("cold start", "cold_start", cs, ce, ct, cargs)

        gaps = idle_gaps(s, rng)
        on_track = np.isin(gaps["gpu"], list(tid))
        if not on_track.all():
            gaps = gaps[on_track]
        gpu, start, end = gaps["gpu"], gaps["start"], gaps["end"]
        is_cold = np.zeros(len(gaps), dtype=bool)
        for g, a, b in zip(*(cold[k].tolist() for k in ("gpu", "start", "end")), strict=True):
            is_cold |= (gpu == g) & (start < b) & (end > a)
        ids = s.jobs["job_id"]
        starved = gaps["starved"]
        args = _Cols(
            gap_ms=Floats(gaps["ms"]),
            starved=starved,
            cross_sector=gaps["cross_sector"],
            cold_start=is_cold,
            before_job=_ids(ids, gaps["before_job"]),
            after_job=_ids(ids, gaps["after_job"]),
        )
        names = Chunked(  # (a numpy array of these names: 76 bytes a gap)
            lambda a, b: [
                "idle gap (starved)" if x else "idle gap (dispatch)" for x in starved[a:b].tolist()
            ]
        )
        self._instants(names, "idle_gap", "t", _in_us(start), _tracks(gpu, tid), args)

    def _transitions(self, s: Session, worker_tid: dict, rng: Range) -> None:
        """Sector transitions: process-scoped instants on the GPU whose worker moved on."""
        t = transitions(s, rng)
        tid = _tracks(t["worker"], {w: tid for (_, w), tid in worker_tid.items()})
        if not (tid >= 0).all():
            t, tid = t[tid >= 0], tid[tid >= 0]
        ids = s.jobs["job_id"]
        args = _Cols(
            from_job=_ids(ids, t["from_job"]),
            to_job=_ids(ids, t["to_job"]),
            gap_ms=Floats(t["gap_ms"]),
            overlap_ms=Floats(t["overlap_ms"]),
            starved=t["starved"],
            cold_start=t["cold_start"],
            worker=t["worker"],
        )
        a_job, b_job = t["from_job"], t["to_job"]
        names = Chunked(
            lambda a, b: [
                f"sector {x}->{y}"
                for x, y in zip(a_job[a:b].tolist(), b_job[a:b].tolist(), strict=True)
            ]
        )
        self._instants(names, "transition", "p", _in_us(t["time"]), tid, args)

    def _synthesis(
        self,
        s: Session,
        c: Frame,
        call_of: np.ndarray,
        call_tid: np.ndarray,
        rng: Range,
        prefix: str,
    ) -> int | None:
        """Synthesis rows: SYNTH_START -> SYNTH_END, then the queue wait, packed greedily."""
        sr = synthesis_rows(s)
        if len(sr.rows) == 0:
            return None
        rows, row = sr.rows, sr.row_of
        p = s.partitions.take(rows, lazy=True)  # (the columns read: 3 of 27)
        s0, s1, synth_open = sr.start, sr.end, sr.open
        q0, q1, has_wait, wait_open = sr.wait_from, sr.wait_to, sr.has_wait, sr.wait_open
        pid = self.process(prefix + "synthesis")
        table = {r: self.thread(pid, r + 1, f"synthesis · row {r}") for r in range(row.max() + 1)}
        tid = _tracks(row, table)
        job, part = p["job"], p["partition"]
        ids = s.jobs["job_id"][job]

        keep, a, b, clipped = _window(s0, s1, rng)
        args = _Cols(
            job=ids[keep],
            partition=part[keep],
            synth_ms=Floats(p["synth_ms"][keep]),
            open=synth_open[keep],
            clipped=clipped[keep],
        )
        labels = _labels(s, job[keep], part[keep], synth_open[keep])
        ts, te = a[keep], b[keep]  # ms: microseconds a chunk at a time
        self._slices(labels, "synthesis", ts, te, tid[keep], args, ms=True)

        wkeep, a, b, clipped = _window(q0, q1, rng)
        wkeep = has_wait if rng is None else wkeep & has_wait
        wkeep = slice(None) if wkeep.all() else wkeep  # (every row: views, not copies)
        args = _Cols(
            job=ids[wkeep],
            partition=part[wkeep],
            wait_ms=Floats((q1 - q0)[wkeep]),
            open=wait_open[wkeep],
            clipped=clipped[wkeep],
        )
        self._slices("queued", "queue", a[wkeep], b[wkeep], tid[wkeep], args, ms=True)
        if self.flows:
            self._flows(call_of[rows[keep]], ts, te, tid[keep], c, call_tid, rng)
        return pid

    def _flows(
        self,
        target: np.ndarray,
        ts: np.ndarray,
        te: np.ndarray,
        tid: np.ndarray,
        c: Frame,
        call_tid: np.ndarray,
        rng: Range,
    ) -> None:
        """An arrow from each synthesis slice (``ts``..``te`` ms) to its GPU call (``target``
        row of ``c``; -1 for none), for the calls that start inside the range.

        Both ends sit 1 µs inside their slice, so "enclosing slice" binding never
        depends on how a viewer orders events with equal timestamps.
        """
        start, end = c["start"], c["end"]
        ok = target >= 0
        if rng is not None and len(start):
            at = start[np.maximum(target, 0)]
            ok &= (at >= rng[0]) & (at <= rng[1])
            end = np.minimum(end, rng[1])
        if not ok.all():
            target, ts, te, tid = target[ok], ts[ok], te[ok], tid[ok]
        first = self.flow_id
        self.flow_id += len(target)
        common = {"name": "synthesis -> GPU", "cat": "flow"}
        ids = Chunked(lambda a, b: list(range(first + a, first + b)))

        def source(a: int, b: int) -> np.ndarray:
            s0, s1 = _us(ts[a:b]), _us(te[a:b])
            return s0 + (s1 - s0 >= 2)

        self._emit(**common, id=ids, ph="s", ts=Chunked(source), pid=self._pids(tid), tid=tid)

        def dest(a: int, b: int) -> np.ndarray:
            d0, d1 = _us(start[target[a:b]]), _us(end[target[a:b]])
            return d0 + (d1 - d0 >= 2)

        tids = call_tid[target]
        self._emit(
            **common, id=ids, ph="f", bp="e", ts=Chunked(dest), pid=self._pids(tids), tid=tids
        )


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic GC while building ~10^6 acyclic dicts: it would rescan them
    over and over and take ~40 % of the time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# ---- public API -----------------------------------------------------------------------------


def trace_events(
    timeline: Timeline, session: int | None = None, rng: Range = None, *, flows: bool = True
) -> dict:
    """The trace of ``timeline`` (or of session ``session``), clipped to ``rng`` (ms).

    Returns the JSON object form ``{"traceEvents", "displayTimeUnit", "metadata"}``;
    the same input always gives the same output.  Raises ValueError for a missing session.
    """
    rng = check_range(rng)
    chosen = select_sessions(timeline, session)
    b = _Builder(flows)
    entries = _sessions(b, timeline, chosen, rng)
    return {"traceEvents": b.events, **_tail(timeline, rng, entries)}


def _sessions(b: _Builder, timeline: Timeline, chosen: list[Session], rng: Range) -> list[dict]:
    """Give ``b`` the events of the ``chosen`` sessions; their metadata entries."""
    multi = len(timeline.sessions) > 1
    with _no_gc():
        return [b.session(s, rng, f"session {s.number} · " if multi else "") for s in chosen]


def _tail(timeline: Timeline, rng: Range, entries: list[dict]) -> dict:
    """What follows the events in the trace's JSON object."""
    return {
        "displayTimeUnit": "ms",
        "metadata": {
            "schema": SCHEMA,
            "generator": f"cuzk-timeline-viewer {__version__}",
            "source": display_path(timeline.source),
            "time_unit": "microseconds since the session's engine start (TIMELINE offset)",
            "range_ms": None if rng is None else list(rng),
            "sessions": entries,
        },
    }


def write_trace(
    timeline: Timeline,
    path: str | os.PathLike,
    session: int | None = None,
    rng: Range = None,
    *,
    flows: bool = True,
) -> Path:
    """Write ``trace_events(...)`` as compact JSON to ``path`` (the same bytes), a chunk of
    events at a time as they are made, through ``open_output``: never over the log it comes
    from, and a failure leaves no half-written file.  Returns the file written."""
    target = resolve_output(path, [timeline.source])  # before the work of building the trace
    rng = check_range(rng)
    chosen = select_sessions(timeline, session)
    with open_output(target, [timeline.source]) as fh:
        fh.write(b'{"traceEvents":[')
        written = False

        def sink(rows: list[dict]) -> None:
            nonlocal written
            if rows:
                data = json_bytes(rows, newline=False)[1:-1]  # the items, without [ ]
                fh.write(b"," + data if written else data)
                written = True

        entries = _sessions(_Builder(flows, sink), timeline, chosen, rng)
        fh.write(b"]," + json_bytes(_tail(timeline, rng, entries), newline=False)[1:])
    return target
