"""Attribute CUZK_TIMING blocks (every figure of a GPU call) to GPU calls.

The "mutex acquired" line (``pre_lock_cpu_ms=X mutex_wait_ms=Y``) opens a block; the
kernel region starts X + Y ms after its call's GPU_START.  The call's other lines belong
to the block by when the daemon writes them (see ``build_blocks``).  The mutex serializes
kernel regions per GPU, so on one GPU the k-th block belongs to the k-th call to reach the
lock: the oldest call still open (GPU_START seen, GPU_END not yet) at the block's place
in the file and not yet given a block.  With several GPUs the lines do not say which
GPU wrote them; we pick the call whose kernel start best fits the file position and
its GPU's previous kernel region, and say in the notes that this is a best effort.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from viewer.io import scanner
from viewer.io.batch import CuzkLines
from viewer.io.grammar import (
    CUZK_ACQUIRE,
    CUZK_BARRIER,
    CUZK_BATCH,
    CUZK_BG2,
    CUZK_FORMS,
    CUZK_HELD,
    CUZK_MALFORMED,
    CUZK_NTT,
    CUZK_PREP,
    CUZK_TAIL,
)
from viewer.model.frame import Frame
from viewer.model.keys import first_seen

#: kernel starts within this many ms of each other make a multi-GPU match ambiguous
AMBIGUOUS_MS = 50.0
#: CUZK line code -> the partition columns of its first and second value.
COLUMNS: dict[int, tuple[str, str | None]] = {
    CUZK_ACQUIRE: ("pre_lock_cpu_ms", "mutex_wait_ms"),
    CUZK_PREP: ("prep_msm_ms", None),
    CUZK_NTT: ("ntt_msm_h_ms", None),
    CUZK_BARRIER: ("barrier_wait_ms", None),
    CUZK_BATCH: ("batch_add_ms", None),
    CUZK_TAIL: ("tail_msm_ms", "kernel_ms"),
    CUZK_HELD: ("mutex_held_ms", "total_start_fn_ms"),
    CUZK_BG2: ("b_g2_msm_ms", "num_circuits"),
}
assert sorted(COLUMNS) == list(range(len(CUZK_FORMS)))
#: Every column a block fills.
VALUES = tuple(name for pair in COLUMNS.values() for name in pair if name)
#: The figures a block no call takes keeps (``model.BLOCK_COLUMNS`` but its start).
UNATTRIBUTED_VALUES = ("kernel_ms", "ntt_msm_h_ms", "batch_add_ms", "tail_msm_ms")


@dataclass
class Blocks:
    """One row per mutex-acquired block, in file order."""

    seq: np.ndarray  # ordinal of the acquire line (records.SEQ_SHIFT): file order
    lock_ms: np.ndarray  # pre_lock_cpu_ms + mutex_wait_ms
    values: dict[str, np.ndarray]  # VALUES


def build_blocks(lines: CuzkLines, single_gpu: bool) -> tuple[Blocks, Counter[str]]:
    """Group a call's lines under its acquire line, by when the daemon writes them.

    - Lines of the mutex region (ntt, barrier, batch, tail, mutex_held): one GPU, the
      latest acquire before the line (regions are serialized); several GPUs, blocks
      interleave, so the k-th line of each kind goes to the oldest acquire before it that
      lacks that kind (FIFO).  One GPU, ``mutex_held_ms`` goes to the block of the latest
      tail line before it: it is written at the release, which the next acquire line may
      precede in the same millisecond (our simulator writes it so).
    - ``prep_msm_ms`` (the CPU prep thread, before its call takes the lock): the oldest
      block opening after the line that has no prep yet.
    - ``b_g2_msm_ms`` (after the release, often after the next block's acquire): the oldest
      block opened before the line that lacks b_g2 (FIFO), whatever the GPUs.
    """
    skipped: Counter[str] = Counter()
    skipped["malformed_cuzk_timing"] += int((lines.kind == CUZK_MALFORMED).sum())
    acq = np.flatnonzero(lines.kind == CUZK_ACQUIRE)
    acq_seq = lines.seq[acq]
    n = len(acq)
    values = {name: np.full(n, np.nan) for name in VALUES}
    tails = (np.empty(0, np.int64), np.empty(0, np.int64))  # (seq, block) of tail lines
    for code, (first, second) in COLUMNS.items():  # CUZK_TAIL before CUZK_HELD
        if code == CUZK_ACQUIRE:
            owner, sel = np.arange(n), acq
        else:
            sel = np.flatnonzero(lines.kind == code)
            seq = lines.seq[sel]
            if code == CUZK_PREP:
                owner = _next_owners(acq_seq, seq)
            elif code == CUZK_HELD and single_gpu:
                owner = _latest(*tails, seq)
            else:
                owner = _owners(acq_seq, seq, single_gpu and code != CUZK_BG2)
            ok = owner >= 0
            if code == CUZK_TAIL:
                tails = (seq[ok], owner[ok])
            skipped["orphan_cuzk_timing"] += int((~ok).sum())
            owner, sel = owner[ok], sel[ok]
        values[first][owner] = lines.a[sel]
        if second is not None:
            values[second][owner] = lines.b[sel]
    blocks = Blocks(acq_seq, values["pre_lock_cpu_ms"] + values["mutex_wait_ms"], values)
    return blocks, +skipped


def _owners(acq_seq: np.ndarray, seq: np.ndarray, single_gpu: bool) -> np.ndarray:
    """Index of the block each line written after its acquire belongs to; -1 for orphans
    and repeats."""
    if single_gpu:
        return _latest(acq_seq, np.arange(len(acq_seq)), seq)
    # FIFO: the i-th line takes the oldest block not yet given this metric if that block
    # opened before it.  With a_i blocks opened before line i, the blocks taken after
    # line i are x_i = min(x_{i-1} + 1, a_i), x_{-1} = 0, whose closed form is below.
    opened = np.searchsorted(acq_seq, seq, side="left")
    i = np.arange(len(seq))
    taken = np.minimum(np.minimum.accumulate(opened - i) + i, i + 1) if len(seq) else i
    before = np.concatenate([[0], taken[:-1]]).astype(np.int64)
    return np.where(taken > before, before, -1)


def _latest(marks: np.ndarray, block: np.ndarray, seq: np.ndarray) -> np.ndarray:
    """The ``block`` of the latest of the sorted ``marks`` before each line; -1 for lines
    before every mark and for repeats (a block already taken by an earlier line)."""
    at = np.searchsorted(marks, seq, side="right") - 1
    owner = np.where(at >= 0, block[np.maximum(at, 0)] if len(block) else -1, -1)
    return np.where(first_seen(owner), owner, -1)


def _next_owners(acq_seq: np.ndarray, seq: np.ndarray) -> np.ndarray:
    """Index of the block each line written before its acquire belongs to (-1: none): the
    i-th line takes the oldest block opening after it that no earlier line took.  With b_i
    blocks opened before line i, it takes x_i = max(x_{i-1} + 1, b_i), x_{-1} = -1, whose
    closed form is x_i = i + max_{j <= i} (b_j - j)."""
    i = np.arange(len(seq))
    if not len(seq):
        return i
    taken = i + np.maximum.accumulate(np.searchsorted(acq_seq, seq, side="right") - i)
    return np.where(taken < len(acq_seq), taken, -1)


@dataclass
class Attribution:
    """What ``attribute`` made of a session's blocks."""

    columns: dict[str, np.ndarray]  # kernel_start and VALUES, one row per call
    skipped: Counter[str]
    notes: list[str]
    blocks: int  # blocks read
    ambiguous: int  # blocks matched with several plausible calls
    unattributed: Frame | None  # the blocks no call took (model.BLOCK_COLUMNS)


def attribute(
    calls: Mapping[str, np.ndarray],
    blocks: Blocks,
    event_seq: np.ndarray,
    event_offset: np.ndarray,
) -> Attribution:
    """Kernel columns for ``calls`` (needs gpu_start, start_seq, end_seq, gpu).

    A block no call takes keeps its figures (``Attribution.unattributed``): its kernel time
    is the session's, whichever call ran it, and counts in the kernel total."""
    n = len(calls["gpu_start"])
    out = {k: np.full(n, np.nan) for k in ("kernel_start", *VALUES)}
    skipped: Counter[str] = Counter()
    notes: list[str] = []
    owner, gpus_seen, ambiguous, placed = _match(calls, blocks, event_seq, event_offset)
    hit = np.flatnonzero(owner >= 0)
    skipped["orphan_cuzk_timing"] += len(owner) - len(hit)
    chosen = owner[hit]
    out["kernel_start"][chosen] = np.asarray(calls["gpu_start"])[chosen] + blocks.lock_ms[hit]
    for name, col in blocks.values.items():
        out[name][chosen] = col[hit]
    lost = np.flatnonzero(owner < 0)
    unattributed = None
    if len(lost):
        unattributed = Frame(
            {
                "kernel_start": placed[lost],
                **{name: blocks.values[name][lost] for name in UNATTRIBUTED_VALUES},
            }
        )
    if gpus_seen > 1 and len(blocks.seq):
        notes.append(
            f"CUZK_TIMING blocks matched to GPU calls on {gpus_seen} GPUs by best effort "
            f"({ambiguous} of {len(blocks.seq)} blocks had several plausible calls): per-call "
            "kernel times may be swapped between GPUs; their total is exact."
        )
    if unattributed is not None:
        kernel = float(np.nansum(unattributed["kernel_ms"]))
        notes.append(
            f"{len(lost)} of {len(blocks.seq)} CUZK_TIMING blocks matched no GPU call (a lost "
            f"GPU_START line?): their {kernel:.0f} ms of kernel time count in the session's "
            "kernel total, in no call."
        )
    return Attribution(out, +skipped, notes, len(blocks.seq), ambiguous, unattributed)


def _match(
    calls: Mapping[str, np.ndarray],
    blocks: Blocks,
    event_seq: np.ndarray,
    event_offset: np.ndarray,
) -> tuple[np.ndarray, int, int, np.ndarray]:
    """(call of every block or -1, GPUs that had calls open, ambiguous blocks, where each
    block stands in session time: the offset of the event before its acquire line).

    Each GPU keeps a queue of its started calls in start order; a block drops the calls
    that ended before it and takes the front of a queue (see the module docstring).  The
    queues are precomputed per GPU (how many calls had started by each block is one
    ``searchsorted``), so the pass over the blocks only moves integer heads.
    """
    start_seq = np.asarray(calls["start_seq"])
    end_seq = np.asarray(calls["end_seq"])
    gpu = np.asarray(calls["gpu"])
    order = np.argsort(start_seq, kind="stable")
    order = order[start_seq[order] >= 0]
    end = np.where(end_seq < 0, np.iinfo(np.int64).max, end_seq)
    gpu_start = np.asarray(calls["gpu_start"], dtype=np.float64)
    locks = blocks.lock_ms.astype(np.float64)
    kernels = np.nan_to_num(blocks.values["kernel_ms"], nan=0.0)
    # The offsets of the events around each block (-inf / inf past the ends), read for the
    # blocks only: no copy of the session's 10^6 offsets.
    where = np.searchsorted(event_seq, blocks.seq)
    n_events = len(event_offset)
    if n_events:
        lows = np.where(where > 0, event_offset[np.maximum(where - 1, 0)], -np.inf)
        highs = np.where(where < n_events, event_offset[np.minimum(where, n_events - 1)], np.inf)
    else:
        lows, highs = np.full(len(where), -np.inf), np.full(len(where), np.inf)
    placed = np.where(np.isfinite(lows), lows, highs)
    ids = np.unique(gpu[order]).astype(np.int64)
    queues = [order[gpu[order] == g] for g in ids.tolist()]
    started = [np.searchsorted(start_seq[q], blocks.seq, side="left") for q in queues]
    seen = sum(1 for st in started if len(blocks.seq) and st[-1] > 0)
    owner, ambiguous = scanner.match_blocks(
        queues,
        [end[q] for q in queues],
        started,
        gpu_start,
        blocks.seq,
        locks,
        kernels,
        lows,
        highs,
        ids,
        AMBIGUOUS_MS,
    )
    return owner, seen, ambiguous, placed
