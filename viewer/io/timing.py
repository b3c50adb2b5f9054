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

import re
from collections import Counter, deque
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from viewer.io.scan import ANSI_RE

ACQUIRE_RE = re.compile(rb"pre_lock_cpu_ms=(\d{1,12})\s+mutex_wait_ms=(\d{1,12})")
METRIC_RES = {
    "ntt_msm_h_ms": re.compile(rb"ntt_msm_h_ms=(\d{1,12})"),
    "batch_add_ms": re.compile(rb"batch_add_ms=(\d{1,12})"),
    "kernel_ms": re.compile(rb"tail_msm_ms=\d{1,12}\s+gpu_total_ms=(\d{1,12})"),
}
TAIL_RE = re.compile(rb"tail_msm_ms=(\d{1,12})")
KEYS = (b"pre_lock_cpu_ms", b"ntt_msm_h_ms", b"batch_add_ms", b"tail_msm_ms")
#: kernel starts within this many ms of each other make a multi-GPU match ambiguous
AMBIGUOUS_MS = 50.0


@dataclass
class Block:
    seq: int
    lock_ms: float  # pre_lock_cpu_ms + mutex_wait_ms
    values: dict[str, float] = field(default_factory=dict)


def parse_blocks(
    lines: list[tuple[int, bytes]], single_gpu: bool
) -> tuple[list[Block], Counter[str]]:
    """Blocks from (seq, text) CUZK_TIMING lines in file order."""
    blocks: list[Block] = []
    skipped: Counter[str] = Counter()
    for seq, text in lines:
        if b"\x1b" in text:
            text = ANSI_RE.sub(b"", text)
        if not any(k in text for k in KEYS):
            continue  # prep_msm, barrier_wait, mutex_held, b_g2_msm: not needed
        m = ACQUIRE_RE.search(text)
        if m:
            blocks.append(Block(seq, float(m[1]) + float(m[2])))
            continue
        if b"pre_lock_cpu_ms" in text:
            skipped["malformed_cuzk_timing"] += 1
            continue
        for name, rx in METRIC_RES.items():
            m = rx.search(text)
            if not m:
                continue
            target = _block_for(blocks, name, single_gpu)
            if target is None:
                skipped["orphan_cuzk_timing"] += 1
            else:
                target.values[name] = float(m[1])
                if name == "kernel_ms":
                    tail = TAIL_RE.search(text)
                    target.values["tail_msm_ms"] = float(tail[1]) if tail else np.nan
            break
        else:
            skipped["malformed_cuzk_timing"] += 1
    return blocks, skipped


def _block_for(blocks: list[Block], name: str, single_gpu: bool) -> Block | None:
    """The block a metric line belongs to: the latest one (one GPU), else the oldest open."""
    if single_gpu:
        if blocks and name not in blocks[-1].values:
            return blocks[-1]
        return None
    for b in blocks[-64:]:  # interleaved blocks of several GPUs: oldest first
        if name not in b.values and "kernel_ms" not in b.values:
            return b
    return None


def attribute(
    calls: pd.DataFrame, blocks: list[Block], event_seq: np.ndarray, event_offset: np.ndarray
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
    for block in blocks:
        while nxt < len(order) and start_seq[order[nxt]] < block.seq:
            queues.setdefault(int(gpus[order[nxt]]), deque()).append(order[nxt])
            nxt += 1
        fronts = []
        for g, q in queues.items():
            while q and end_seq[q[0]] < block.seq:
                q.popleft()  # ended before the block: it never got (or logged) the lock
            if q:
                fronts.append((g, q[0]))
        if not fronts:
            skipped["orphan_cuzk_timing"] += 1
            continue
        if len(fronts) > 1:
            g, c, close = _best_front(fronts, block, gpu_start, last_end, event_seq, event_offset)
            ambiguous += close
        else:
            g, c = fronts[0]
        queues[g].popleft()
        ks = gpu_start[c] + block.lock_ms
        out["kernel_start"][c] = ks
        for name, value in block.values.items():
            out[name][c] = value
        last_end[g] = ks + block.values.get("kernel_ms", 0.0)
    if len(queues) > 1 and blocks:
        notes.append(
            f"CUZK_TIMING blocks matched to GPU calls on {len(queues)} GPUs by best effort "
            f"({ambiguous} of {len(blocks)} blocks had several plausible calls): per-call "
            "kernel times may be swapped between GPUs; their total is exact."
        )
    return out, skipped, notes


def _best_front(
    fronts: list[tuple[int, int]],
    block: Block,
    gpu_start: np.ndarray,
    last_end: dict[int, float],
    event_seq: np.ndarray,
    event_offset: np.ndarray,
) -> tuple[int, int, int]:
    """The (gpu, call) whose kernel start fits the file position and its GPU's last kernel."""
    i = int(np.searchsorted(event_seq, block.seq))
    lo = float(event_offset[i - 1]) if i > 0 else -np.inf
    hi = float(event_offset[i]) if i < len(event_offset) else np.inf
    scored = []
    for g, c in fronts:
        ks = gpu_start[c] + block.lock_ms
        score = max(0.0, lo - ks) + max(0.0, ks - hi) + max(0.0, last_end.get(g, -np.inf) - ks)
        scored.append((score, ks, g, c))
    scored.sort()
    close = int(len(scored) > 1 and scored[1][0] - scored[0][0] <= AMBIGUOUS_MS)
    return scored[0][2], scored[0][3], close
