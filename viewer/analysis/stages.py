"""The life of every GPU call in stages: the one place per-partition durations are derived.

A partition is synthesized (SYNTH_START -> SYNTH_END), queued (the queue event,
``ready``), taken by a free GPU worker, started after a dispatch latency
(GPU_START), runs CPU prep (``pre_lock_cpu_ms``), waits for its GPU's kernel
mutex, runs the CUDA kernels and ends after its post-processing (b_g2_msm and
the epilogue: GPU_END minus the end of the kernel region).  The lanes, panels,
report, exports and the replay all read these columns; none derives them again.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.packing import pack_rows
from viewer.model import Session
from viewer.model.frame import Frame, constant, is_constant, where

#: A SYNTH_END -> queue delay longer than this is backpressure: the queue was full and the
#: finished partition held its synthesis slot (shorter ones are two log lines' jitter).
BLOCKED_MS = 50.0

#: Column -> meaning, in the order of a partition's life (all float64 ms, NaN = unknown).
STAGE_COLUMNS: dict[str, str] = {
    "synth_ms": "SYNTH_START -> SYNTH_END (the reported synth_ms when an end is missing)",
    "queue_delay_ms": "SYNTH_END -> queue event (backpressure: the queue was full)",
    "slot_end": "when the synthesis slot was free again: SYNTH_END, or the queue event "
    "after a backpressure delay (over BLOCKED_MS)",
    "ready": "when the partition could be picked up: its queue event, else its SYNTH_END",
    "wait_end": "GPU_PICKUP, else GPU_START; the session's end while it still waits",
    "queue_wait_ms": "ready -> GPU_PICKUP (or GPU_START): time spent queued",
    "worker_free": "the GPU_END of the worker's previous call (NaN for its first call, or "
    "when that call never ended)",
    "worker_first": "the worker's first call (it was free since the session started)",
    "taken": "when the worker took it: the later of ready and worker_free",
    "dispatch_ms": "taken -> GPU_START: dispatch latency",
    "pickup_ms": "taken -> GPU_PICKUP",
    "prep_ms": "GPU_START -> at the kernel mutex: CPU prep (pre_lock_cpu_ms)",
    "mutex_wait_ms": "waiting for the GPU's kernel mutex",
    "kernel_ms": "the CUDA region (gpu_total_ms)",
    "kernel_end": "end of the CUDA region",
    "post_ms": "end of the CUDA region -> GPU_END: b_g2_msm and the epilogue",
    "call_ms": "GPU_START -> GPU_END",
}


@per_session
def stages(session: Session) -> Frame:
    """``STAGE_COLUMNS`` for every row of ``session.partitions`` (same order), each made
    when first read (a report reads 7 of them, the replay 15)."""
    p = session.partitions
    col = _Floats(p)  # read when a column needs them: a played run makes each when read
    end_ms = session.end_ms
    # The makers read the frame's other columns through a weak reference: a strong one would
    # make a cycle, and a dropped frame (a what-if's played run: ~20 MB at 10^6 events) would
    # wait for the collector.
    frame: list[weakref.ref[Frame]] = []

    def own(name: str) -> np.ndarray:
        return frame[0]()[name]

    def synth() -> np.ndarray:
        ms = col["synth_end"] - col["synth_start"]
        return np.where(np.isfinite(ms), ms, col["synth_ms"])

    def wait_end() -> np.ndarray:
        end = where(np.isfinite(col["pickup"]), col["pickup"], col["gpu_start"])
        waiting = ~np.isfinite(end) & np.isfinite(own("ready"))
        return np.where(waiting, np.maximum(end_ms, own("ready")), end) if waiting.any() else end

    def queue_wait() -> np.ndarray:
        waiting = ~np.isfinite(where(np.isfinite(col["pickup"]), col["pickup"], col["gpu_start"]))
        waiting &= np.isfinite(own("ready"))
        return np.where(waiting, np.nan, own("wait_end") - own("ready"))

    def taken() -> np.ndarray:
        free = own("worker_free")
        return np.where(np.isfinite(free), np.fmax(own("ready"), free), np.nan)

    free_first: list[tuple[np.ndarray, np.ndarray]] = []

    def worker(k: int) -> np.ndarray:
        if not free_first:  # both columns from one pass
            free_first.append(_worker_free(p["worker"], col["gpu_start"], col["gpu_end"]))
        return free_first[0][k]

    f = Frame.lazy(
        {
            "synth_ms": synth,
            "queue_delay_ms": lambda: col["queued"] - col["synth_end"],
            "slot_end": lambda: where(  # (the delay not kept: the report reads no other)
                col["queued"] - col["synth_end"] > BLOCKED_MS, col["queued"], col["synth_end"]
            ),
            "ready": lambda: where(np.isfinite(col["queued"]), col["queued"], col["synth_end"]),
            "wait_end": wait_end,
            "queue_wait_ms": queue_wait,
            "worker_free": lambda: worker(0),
            "worker_first": lambda: worker(1),
            "taken": taken,
            "dispatch_ms": lambda: col["gpu_start"] - own("taken"),
            "pickup_ms": lambda: col["pickup"] - own("taken"),
            "prep_ms": lambda: col["pre_lock_cpu_ms"],
            "mutex_wait_ms": lambda: col["mutex_wait_ms"],
            "kernel_ms": lambda: col["kernel_ms"],
            "kernel_end": lambda: _nan_or(np.add, col["kernel_start"], col["kernel_ms"]),
            "post_ms": lambda: _nan_or(np.subtract, col["gpu_end"], own("kernel_end")),
            "call_ms": lambda: col["gpu_end"] - col["gpu_start"],
        },
        len(p),
    )
    frame.append(weakref.ref(f))
    return f


class _Floats(dict):
    """The columns of ``NEEDED`` of a partitions table as float64, each read when first
    asked for (a played run's columns are made from its schedule when read)."""

    def __init__(self, p: Frame) -> None:
        super().__init__()
        self._p = p

    def __missing__(self, name: str) -> np.ndarray:
        if name not in _NEEDED:
            raise KeyError(name)
        self[name] = values = self._p[name].astype(np.float64, copy=False)
        return values


def _nan_or(op: np.ufunc, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``op(a, b)``; a column of NaN (``frame.constant``) where either is one (the kernel
    region of a log without CUZK_TIMING lines)."""
    for x in (a, b):
        if is_constant(x) and np.isnan(x[0]):
            return constant(np.nan, len(x), np.float64)
    return op(a, b)


_NEEDED = (
    "synth_start",
    "synth_end",
    "synth_ms",
    "queued",
    "pickup",
    "gpu_start",
    "gpu_end",
    "kernel_start",
    "kernel_ms",
    "pre_lock_cpu_ms",
    "mutex_wait_ms",
)


def _worker_free(
    worker: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(end of each started call's previous call on the same worker, NaN for none; True for
    a worker's first call).  An open previous call (no GPU_END) leaves it NaN: the worker's
    free time is unknown."""
    free = np.full(len(worker), np.nan)
    first = np.zeros(len(worker), dtype=bool)
    started = np.flatnonzero(np.isfinite(start) & (worker >= 0))
    order = started[np.lexsort((start[started], worker[started]))]
    same = worker[order][1:] == worker[order][:-1]
    free[order[1:][same]] = end[order[:-1][same]]
    first[order[:1]] = True
    first[order[1:][~same]] = True
    return free, first


@dataclass(frozen=True, eq=False)
class SynthesisRows:
    """Every synthesized partition as the synthesis lanes and the trace draw it: its
    synthesis, then its queue wait, packed greedily into rows (``packing.pack_rows``).

    Arrays are aligned with ``rows`` (rows of ``session.partitions`` with a SYNTH_START).
    A synthesis still open runs to the session's end; the wait runs from ``ready`` (never
    before the synthesis ended) to ``wait_end`` (``stages``: the session's end while still
    queued, ``wait_open``), and only when it is longer than nothing and the synthesis ended
    (``has_wait``).
    """

    rows: np.ndarray
    start: np.ndarray
    end: np.ndarray
    open: np.ndarray
    wait_from: np.ndarray
    wait_to: np.ndarray
    has_wait: np.ndarray
    wait_open: np.ndarray
    row_of: np.ndarray

    @property
    def depth(self) -> int:
        """How many rows the packing needs."""
        return int(self.row_of.max()) + 1 if len(self.row_of) else 0


@per_session
def synthesis_rows(session: Session) -> SynthesisRows:
    """The ``SynthesisRows`` of ``session`` (computed once, read-only)."""
    p, st = session.partitions, stages(session)
    synthesized = np.isfinite(p["synth_start"])
    rows = np.flatnonzero(synthesized)
    # Every row synthesized (a log read whole): the columns as they are, not copies of them
    # (1.5 M one-call jobs: 105 MB of them, held while the log is open).
    at = slice(None) if len(rows) == len(synthesized) else rows
    start, end = p["synth_start"][at], p["synth_end"][at]
    is_open = ~np.isfinite(end)
    if is_open.any() or not (end >= start).all():
        end = np.where(is_open, np.maximum(session.end_ms, start), np.maximum(end, start))
    ready = st["ready"][at]
    wait_from = ready if (ready >= end).all() else np.fmax(ready, end)  # never before it ended
    wait_to = st["wait_end"][at]  # stages runs a wait still open to the session's end
    has_wait = ~is_open & (wait_to > wait_from)
    taken = np.isfinite(p["pickup"][at]) | np.isfinite(p["gpu_start"][at])
    wait_open = has_wait & ~taken
    row_of = pack_rows(start, np.where(has_wait, wait_to, end))
    arrays = (rows, start, end, is_open, wait_from, wait_to, has_wait, wait_open, row_of)
    for a in arrays:
        if a.flags.writeable:
            a.flags.writeable = False
    return SynthesisRows(*arrays)
