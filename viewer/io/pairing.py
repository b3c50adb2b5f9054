"""Pair the TIMELINE events of one session into GPU calls, vectorized.

One call per (job, partition); monolithic jobs use partition -1.  Each event type
fills one column; the first occurrence wins and repeats count as duplicates.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from viewer.io.scan import (
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
    """Calls of one session plus what the pairing accepted and rejected."""

    calls: pd.DataFrame  # job (global code), partition, times, worker, start_seq, end_seq
    accepted: int
    skipped: Counter[str]
    start_ms: float
    end_ms: float


def pair_events(ev: dict[str, np.ndarray]) -> Paired:
    """Calls from the events of one session (arrays in file order)."""
    job, part, event = ev["job"], ev["partition"], ev["event"]
    skipped: Counter[str] = Counter()
    # A partition-less event of a partitioned job is a torn line, not a monolithic job.
    torn = (part < 0) & np.isin(job, np.unique(job[part >= 0]))
    skipped["malformed_timeline"] += int(torn.sum())
    call_key = job.astype(np.int64) * (1 << 32) + (part.astype(np.int64) + 1)
    dup = pd.Series(call_key * 8 + event).duplicated(keep="first").to_numpy() & ~torn
    skipped["duplicate_event"] += int(dup.sum())
    keep = ~(torn | dup)
    idx = np.flatnonzero(keep)
    codes, uniques = pd.factorize(call_key[idx])
    n = len(uniques)
    cols: dict[str, np.ndarray] = {
        "job": (uniques >> 32).astype(np.int32),
        "partition": ((uniques & 0xFFFFFFFF) - 1).astype(np.int32),
    }
    off = ev["offset"][idx].astype(np.float64)
    ev_k = event[idx]
    for code, name in TIME_COLUMNS.items():
        col = np.full(n, np.nan)
        sel = ev_k == code
        col[codes[sel]] = off[sel]
        cols[name] = col
    cols["synth_ms"] = _fill(n, codes, ev_k == SYNTH_END, ev["synth_ms"][idx], np.nan)
    cols["gpu_ms"] = _fill(n, codes, ev_k == GPU_END, ev["gpu_ms"][idx], np.nan)
    worker = np.full(n, -1, dtype=np.int32)
    for code in (GPU_END, GPU_PICKUP, GPU_START):  # GPU_START's worker wins
        sel = ev_k == code
        worker[codes[sel]] = ev["worker"][idx][sel]
    cols["worker"] = worker
    seq = ev["seq"][idx]
    cols["start_seq"] = _fill(n, codes, ev_k == GPU_START, seq, -1).astype(np.int64)
    cols["end_seq"] = _fill(n, codes, ev_k == GPU_END, seq, -1).astype(np.int64)
    accepted = len(idx)
    offsets = ev["offset"][idx]
    return Paired(
        calls=pd.DataFrame(cols),
        accepted=accepted,
        skipped=+skipped,
        start_ms=float(offsets.min()) if accepted else 0.0,
        end_ms=float(offsets.max()) if accepted else 0.0,
    )


def _fill(
    n: int, codes: np.ndarray, sel: np.ndarray, values: np.ndarray, missing: float
) -> np.ndarray:
    out = np.full(n, missing, dtype=np.float64)
    out[codes[sel]] = values[sel]
    return out
