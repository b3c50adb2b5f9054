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

from collections import Counter, deque
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
    owner = np.full(len(seq), -1)
    nxt = 0
    for i, s in enumerate(seq):
        if nxt < len(acq_seq) and acq_seq[nxt] < s:
            owner[i] = nxt
            nxt += 1
    return owner


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
    start_seq = calls["start_seq"].to_numpy()
    end_seq = np.where(
        calls["end_seq"].to_numpy() < 0, np.iinfo(np.int64).max, calls["end_seq"].to_numpy()
    )
    gpu_start = calls["gpu_start"].to_numpy()
    gpus = calls["gpu"].to_numpy()
    order = [int(i) for i in np.argsort(start_seq, kind="stable") if start_seq[i] >= 0]
    queues: dict[int, deque[int]] = {}
    last_end: dict[int, float] = {}
    nxt = 0
    ambiguous = 0
    for b, (bseq, lock_ms) in enumerate(
        zip(blocks.seq.tolist(), blocks.lock_ms.tolist(), strict=True)
    ):
        while nxt < len(order) and start_seq[order[nxt]] < bseq:
            queues.setdefault(int(gpus[order[nxt]]), deque()).append(order[nxt])
            nxt += 1
        fronts = []
        for g, q in queues.items():
            while q and end_seq[q[0]] < bseq:
                q.popleft()  # ended before the block: it never got (or logged) the lock
            if q:
                fronts.append((g, q[0]))
        if not fronts:
            skipped["orphan_cuzk_timing"] += 1
            continue
        if len(fronts) > 1:
            g, c, close = _best_front(
                fronts, bseq, lock_ms, gpu_start, last_end, event_seq, event_offset
            )
            ambiguous += close
        else:
            g, c = fronts[0]
        queues[g].popleft()
        ks = gpu_start[c] + lock_ms
        out["kernel_start"][c] = ks
        for name, col in blocks.values.items():
            out[name][c] = col[b]
        kernel = blocks.values["kernel_ms"][b]
        last_end[g] = ks + (kernel if kernel == kernel else 0.0)
    if len(queues) > 1 and len(blocks.seq):
        notes.append(
            f"CUZK_TIMING blocks matched to GPU calls on {len(queues)} GPUs by best effort "
            f"({ambiguous} of {len(blocks.seq)} blocks had several plausible calls): per-call "
            "kernel times may be swapped between GPUs; their total is exact."
        )
    return out, skipped, notes


def _best_front(
    fronts: list[tuple[int, int]],
    bseq: int,
    lock_ms: float,
    gpu_start: np.ndarray,
    last_end: dict[int, float],
    event_seq: np.ndarray,
    event_offset: np.ndarray,
) -> tuple[int, int, int]:
    """The (gpu, call) whose kernel start fits the file position and its GPU's last kernel."""
    i = int(np.searchsorted(event_seq, bseq))
    lo = float(event_offset[i - 1]) if i > 0 else -np.inf
    hi = float(event_offset[i]) if i < len(event_offset) else np.inf
    scored = []
    for g, c in fronts:
        ks = gpu_start[c] + lock_ms
        score = max(0.0, lo - ks) + max(0.0, ks - hi) + max(0.0, last_end.get(g, -np.inf) - ks)
        scored.append((score, ks, g, c))
    scored.sort()
    close = int(len(scored) > 1 and scored[1][0] - scored[0][0] <= AMBIGUOUS_MS)
    return scored[0][2], scored[0][3], close
