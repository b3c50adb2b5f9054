"""The life of every GPU call in stages: the one place per-partition durations are derived.

A partition is synthesized (SYNTH_START -> SYNTH_END), queued (the queue event,
``ready``), taken by a free GPU worker, started after a dispatch latency
(GPU_START), runs CPU prep (``pre_lock_cpu_ms``), waits for its GPU's kernel
mutex, runs the CUDA kernels and ends after its post-processing (b_g2_msm and
the epilogue: GPU_END minus the end of the kernel region).  The lanes, panels,
report, exports and the replay all read these columns; none derives them again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.packing import pack_rows
from viewer.model import Session
from viewer.model.frame import Frame

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
    """``STAGE_COLUMNS`` for every row of ``session.partitions`` (same order)."""
    p = session.partitions
    col = {c: p[c].astype(np.float64, copy=False) for c in _NEEDED}
    synth = col["synth_end"] - col["synth_start"]
    synth = np.where(np.isfinite(synth), synth, col["synth_ms"])
    ready = np.where(np.isfinite(col["queued"]), col["queued"], col["synth_end"])
    wait_end = np.where(np.isfinite(col["pickup"]), col["pickup"], col["gpu_start"])
    waiting = ~np.isfinite(wait_end) & np.isfinite(ready)
    wait_end = np.where(waiting, np.maximum(session.end_ms, ready), wait_end)
    free, first = _worker_free(p["worker"], col["gpu_start"], col["gpu_end"])
    delay = col["queued"] - col["synth_end"]
    slot_end = np.where(delay > BLOCKED_MS, col["queued"], col["synth_end"])
    taken = np.fmax(ready, free)
    taken = np.where(np.isfinite(free), taken, np.nan)
    kernel_end = col["kernel_start"] + col["kernel_ms"]
    return Frame(
        {
            "synth_ms": synth,
            "queue_delay_ms": delay,
            "slot_end": slot_end,
            "ready": ready,
            "wait_end": wait_end,
            "queue_wait_ms": np.where(waiting, np.nan, wait_end - ready),
            "worker_free": free,
            "worker_first": first,
            "taken": taken,
            "dispatch_ms": col["gpu_start"] - taken,
            "pickup_ms": col["pickup"] - taken,
            "prep_ms": col["pre_lock_cpu_ms"],
            "mutex_wait_ms": col["mutex_wait_ms"],
            "kernel_ms": col["kernel_ms"],
            "kernel_end": kernel_end,
            "post_ms": col["gpu_end"] - kernel_end,
            "call_ms": col["gpu_end"] - col["gpu_start"],
        },
        len(p),
    )


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
    rows = np.flatnonzero(np.isfinite(p["synth_start"]))
    start, end = p["synth_start"][rows], p["synth_end"][rows]
    is_open = ~np.isfinite(end)
    end = np.where(is_open, np.maximum(session.end_ms, start), np.maximum(end, start))
    wait_from = np.fmax(st["ready"][rows], end)  # never before the synthesis ended
    wait_to = st["wait_end"][rows]  # stages runs a wait still open to the session's end
    has_wait = ~is_open & (wait_to > wait_from)
    taken = np.isfinite(p["pickup"][rows]) | np.isfinite(p["gpu_start"][rows])
    wait_open = has_wait & ~taken
    row_of = pack_rows(start, np.where(has_wait, wait_to, end))
    arrays = (rows, start, end, is_open, wait_from, wait_to, has_wait, wait_open, row_of)
    for a in arrays:
        a.flags.writeable = False
    return SynthesisRows(*arrays)
