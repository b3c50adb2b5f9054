"""Attribute CUZK_TIMING blocks (true CUDA kernel times) to GPU calls.

The "mutex acquired" line (``pre_lock_cpu_ms=X mutex_wait_ms=Y``) opens a block; the
kernel region starts X + Y ms after its call's GPU_START.  The mutex serializes kernel
regions per GPU, so on one GPU the k-th block belongs to the k-th call to reach the
lock: the oldest call still open (GPU_START seen, GPU_END not yet) at the block's place
in the file and not yet given a block.  With several GPUs the lines do not say which
GPU wrote them; we pick the call whose kernel start best fits the file position and
its GPU's previous kernel region, and say in the notes that this is a best effort.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from viewer.io.scan import (
    CUZK_ACQUIRE,
    CUZK_BATCH,
    CUZK_MALFORMED,
    CUZK_NTT,
    CUZK_TAIL,
    CuzkLines,
)

#: kernel starts within this many ms of each other make a multi-GPU match ambiguous
AMBIGUOUS_MS = 50.0
METRICS = {CUZK_NTT: "ntt_msm_h_ms", CUZK_BATCH: "batch_add_ms", CUZK_TAIL: "tail_msm_ms"}


@dataclass
class Blocks:
    """One row per mutex-acquired block, in file order."""

    seq: np.ndarray  # byte position of the acquire line
    lock_ms: np.ndarray  # pre_lock_cpu_ms + mutex_wait_ms
    values: dict[str, np.ndarray]  # kernel_ms, ntt_msm_h_ms, batch_add_ms, tail_msm_ms


def build_blocks(lines: CuzkLines, single_gpu: bool) -> tuple[Blocks, Counter[str]]:
    """Group metric lines under their acquire line.

    One GPU: a metric line belongs to the latest acquire before it (regions are
    serialized).  Several GPUs: blocks interleave, so the k-th line of each metric goes
    to the oldest acquire before it that lacks that metric (FIFO).
    """
    skipped: Counter[str] = Counter()
    skipped["malformed_cuzk_timing"] += int((lines.kind == CUZK_MALFORMED).sum())
    acq = np.flatnonzero(lines.kind == CUZK_ACQUIRE)
    acq_seq = lines.seq[acq]
    n = len(acq)
    values = {name: np.full(n, np.nan) for name in ("kernel_ms", *METRICS.values())}
    for code, name in METRICS.items():
        sel = np.flatnonzero(lines.kind == code)
        owner = _owners(acq_seq, lines.seq[sel], single_gpu)
        ok = owner >= 0
        skipped["orphan_cuzk_timing"] += int((~ok).sum())
        values[name][owner[ok]] = lines.a[sel][ok]
        if code == CUZK_TAIL:
            values["kernel_ms"][owner[ok]] = lines.b[sel][ok]
    blocks = Blocks(acq_seq, lines.a[acq] + lines.b[acq], values)
    return blocks, +skipped


def _owners(acq_seq: np.ndarray, seq: np.ndarray, single_gpu: bool) -> np.ndarray:
    """Index of the block each metric line belongs to; -1 for orphans and repeats."""
    if single_gpu:
        owner = np.searchsorted(acq_seq, seq, side="right") - 1
        repeat = pd.Series(owner).duplicated(keep="first").to_numpy()
        return np.where(repeat, -1, owner)
    owner = [-1] * len(seq)
    starts = acq_seq.tolist()
    nxt, n = 0, len(starts)
    for i, s in enumerate(seq.tolist()):
        if nxt < n and starts[nxt] < s:
            owner[i] = nxt
            nxt += 1
    return np.array(owner, dtype=np.int64)


def attribute(
    calls: pd.DataFrame, blocks: Blocks, event_seq: np.ndarray, event_offset: np.ndarray
) -> tuple[dict[str, np.ndarray], Counter[str], list[str]]:
    """Kernel columns for ``calls`` (needs gpu_start, start_seq, end_seq, gpu)."""
    n = len(calls)
    out = {
        k: np.full(n, np.nan)
        for k in ("kernel_start", "kernel_ms", "ntt_msm_h_ms", "batch_add_ms", "tail_msm_ms")
    }
    skipped: Counter[str] = Counter()
    notes: list[str] = []
    owner, gpus_seen, ambiguous = _match(calls, blocks, event_seq, event_offset)
    hit = np.flatnonzero(owner >= 0)
    skipped["orphan_cuzk_timing"] += len(owner) - len(hit)
    chosen = owner[hit]
    out["kernel_start"][chosen] = calls["gpu_start"].to_numpy()[chosen] + blocks.lock_ms[hit]
    for name, col in blocks.values.items():
        out[name][chosen] = col[hit]
    if gpus_seen > 1 and len(blocks.seq):
        notes.append(
            f"CUZK_TIMING blocks matched to GPU calls on {gpus_seen} GPUs by best effort "
            f"({ambiguous} of {len(blocks.seq)} blocks had several plausible calls): per-call "
            "kernel times may be swapped between GPUs; their total is exact."
        )
    return out, +skipped, notes


def _match(
    calls: pd.DataFrame, blocks: Blocks, event_seq: np.ndarray, event_offset: np.ndarray
) -> tuple[np.ndarray, int, int]:
    """(call of every block or -1, GPUs that had calls open, ambiguous blocks).

    Each GPU keeps a queue of its started calls in start order; a block drops the calls
    that ended before it and takes the front of a queue (see the module docstring).  The
    queues are precomputed per GPU (how many calls had started by each block is one
    ``searchsorted``), so the pass over the blocks only moves integer heads.
    """
    start_seq = calls["start_seq"].to_numpy()
    end_seq = calls["end_seq"].to_numpy()
    gpu = calls["gpu"].to_numpy()
    order = np.argsort(start_seq, kind="stable")
    order = order[start_seq[order] >= 0]
    end = np.where(end_seq < 0, np.iinfo(np.int64).max, end_seq)
    gpu_start = calls["gpu_start"].to_numpy().tolist()
    bseqs = blocks.seq.tolist()
    locks = blocks.lock_ms.tolist()
    kernels = np.nan_to_num(blocks.values["kernel_ms"], nan=0.0).tolist()
    where = np.searchsorted(event_seq, blocks.seq)
    offsets = np.concatenate([[-np.inf], event_offset.astype(np.float64), [np.inf]])
    lows, highs = offsets[where].tolist(), offsets[where + 1].tolist()
    queues, ends, started, ids = [], [], [], []
    for g in np.unique(gpu[order]).tolist():
        mine = order[gpu[order] == g]
        queues.append(mine.tolist())
        ends.append(end[mine].tolist())
        started.append(np.searchsorted(start_seq[mine], blocks.seq, side="left").tolist())
        ids.append(g)
    n_gpus = len(ids)
    heads = [0] * n_gpus
    last_end = [-np.inf] * n_gpus
    owner = [-1] * len(bseqs)
    ambiguous = 0
    for b, bseq in enumerate(bseqs):
        fronts = []
        for k in range(n_gpus):
            h, lim, e = heads[k], started[k][b], ends[k]
            while h < lim and e[h] < bseq:
                h += 1  # ended before the block: it never got (or logged) the lock
            heads[k] = h
            if h < lim:
                fronts.append(k)
        if not fronts:
            continue
        lock = locks[b]
        if len(fronts) > 1:
            lo, hi = lows[b], highs[b]
            scored = []
            for k in fronts:
                c = queues[k][heads[k]]
                ks = gpu_start[c] + lock
                score = max(0.0, lo - ks) + max(0.0, ks - hi) + max(0.0, last_end[k] - ks)
                scored.append((score, ks, ids[k], c, k))
            scored.sort()
            ambiguous += scored[1][0] - scored[0][0] <= AMBIGUOUS_MS
            k = scored[0][4]
        else:
            k = fronts[0]
        c = queues[k][heads[k]]
        heads[k] += 1
        owner[b] = c
        last_end[k] = gpu_start[c] + lock + kernels[b]
    seen = sum(1 for k in range(n_gpus) if bseqs and started[k][-1] > 0)
    return np.array(owner, dtype=np.int64), seen, ambiguous
