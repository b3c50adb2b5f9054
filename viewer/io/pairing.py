"""Pair the TIMELINE events of one session into GPU calls, vectorized.

One call per (job, partition); monolithic jobs use partition -1.  Each event type
fills one column; the first occurrence wins and repeats count as duplicates.  A GPU_END
whose offset lies before its call's GPU_START is dropped (``gpu_end_before_start``): the
call stays open, as after a crash, rather than run for a negative time.
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
    """Calls from the events of one session (arrays in file order; ``copies``, when there,
    counts the exact copies folded into each row: each is a repeat of its row)."""
    job, part, event = ev["job"], ev["partition"], ev["event"]
    skipped: Counter[str] = Counter()
    # A partition-less event of a partitioned job is a torn line, not a monolithic job.
    partitioned = np.zeros(int(job.max()) + 1 if len(job) else 0, dtype=bool)
    partitioned[job[part >= 0]] = True  # job codes are small: a table, not a set
    torn = (part < 0) & partitioned[job]
    skipped["malformed_timeline"] += int(torn.sum())
    call_key = job.astype(np.int64) * (1 << 32) + (part.astype(np.int64) + 1)
    dense = _dense(job, part)
    dup = _repeats(event, call_key, dense) & ~torn
    skipped["duplicate_event"] += int(dup.sum())
    if "copies" in ev:  # exact copies folded into their rows: torn as theirs, else repeats
        copies = ev["copies"]
        skipped["malformed_timeline"] += int(copies[torn].sum())
        skipped["duplicate_event"] += int(copies[~torn].sum())
    keep = ~(torn | dup)
    idx = np.flatnonzero(keep)
    codes, uniques = _factorize(call_key[idx], None if dense is None else dense[idx])
    n = len(uniques)
    cols: dict[str, np.ndarray] = {
        "job": (uniques >> 32).astype(np.int32),
        "partition": ((uniques & 0xFFFFFFFF) - 1).astype(np.int32),
    }
    off = ev["offset"][idx].astype(np.float64)
    ev_k = event[idx]
    start = _fill(n, codes, ev_k == GPU_START, off, np.nan)
    backwards = (ev_k == GPU_END) & (off < start[codes])
    if backwards.any():
        skipped["gpu_end_before_start"] += int(backwards.sum())
        idx, codes, off, ev_k = (x[~backwards] for x in (idx, codes, off, ev_k))
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


DENSE_SLACK = 1 << 16  # a dense (job, partition) table may have this many more cells than
# there are events: a damaged partition=1000000 must not make it a gigabyte (hash instead)


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
