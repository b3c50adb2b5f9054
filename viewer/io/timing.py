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
from viewer.io.grow import Growing
from viewer.model.frame import Frame

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
    #: The offsets of the session's events before and after each acquire line (-inf / inf
    #: past its ends), when the reader found them; else ``attribute`` finds them.
    around: tuple[np.ndarray, np.ndarray] | None = None


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

    (``BlockBuilder`` fed all the lines at once.)
    """
    builder = BlockBuilder()
    builder.feed(lines)
    return builder.result(single_gpu)


#: The region's lines (grouped one way on one GPU, another on several) and the columns
#: their values fill; the other lines group alike either way.
REGION = (CUZK_NTT, CUZK_BARRIER, CUZK_BATCH, CUZK_TAIL, CUZK_HELD)
REGION_VALUES = tuple(n for code in REGION for n in COLUMNS[code] if n)
SHARED_VALUES = tuple(n for n in VALUES if n not in REGION_VALUES)


class BlockBuilder:
    """``build_blocks`` a piece of the lines at a time (a log read in pieces), grouping the
    region's lines both ways, since whether a session ran on one GPU is known only once
    all its calls are paired.  Each line's block follows from the lines before it (closed
    forms with what the pieces before left over); a ``prep_msm_ms`` line waits for the
    acquire after it.  ``around``: where each block stands among the session's events (the
    offsets of the events before and after its acquire line, ``attribute``), given by a
    reader that lets the events go."""

    def __init__(self) -> None:
        self.seq = Growing(np.int64, 0)
        self.low = Growing(np.float64, np.nan)
        self.high = Growing(np.float64, np.nan)
        self.shared = {name: Growing(np.float64, np.nan) for name in SHARED_VALUES}
        self.region = {
            single: {name: Growing(np.float64, np.nan) for name in REGION_VALUES}
            for single in (True, False)
        }
        self.placed = True  # every piece came with ``around``
        self.malformed = 0
        self.orphans = {True: 0, False: 0}  # region lines no block took, per grouping
        self.shared_orphans = 0
        # What the pieces so far leave to the next: per kind, the blocks FIFO gave out, the
        # latest block of one GPU (as found, repeats included), the last prep's block.
        self.fifo = dict.fromkeys((*REGION, CUZK_BG2), 0)
        self.latest = dict.fromkeys(REGION, -2)
        self.last_tail = (-1, -1)  # (seq, block) of the latest tail line one GPU took
        self.last_prep = -1
        self.preps: list[tuple[np.ndarray, np.ndarray]] = []  # (block, value) not yet open

    def feed(self, lines: CuzkLines, around: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """The next lines in file order."""
        self.malformed += int((lines.kind == CUZK_MALFORMED).sum())
        before = len(self.seq)
        acq = np.flatnonzero(lines.kind == CUZK_ACQUIRE)
        acq_seq = lines.seq[acq]
        self.seq.append(acq_seq)
        if around is None:  # ``attribute`` finds them from the events
            self.placed = False
            around = (np.full(len(acq), np.nan), np.full(len(acq), np.nan))
        self.low.append(around[0])
        self.high.append(around[1])
        for col in (*self.shared.values(), *(c for m in self.region.values() for c in m.values())):
            col.grow(len(acq))
        self.shared["pre_lock_cpu_ms"].rows[before:] = lines.a[acq]
        self.shared["mutex_wait_ms"].rows[before:] = lines.b[acq]
        tails = (acq_seq[:0], acq_seq[:0])  # (seq, block) of the tail lines one GPU took
        for code in (*REGION, CUZK_PREP, CUZK_BG2):
            sel = np.flatnonzero(lines.kind == code)
            if not len(sel):
                continue
            seq = lines.seq[sel]
            if code == CUZK_PREP:
                opened = before + np.searchsorted(acq_seq, seq, side="right")
                owner, self.last_prep = _next_blocks(opened, self.last_prep)
                self.preps.append((owner, lines.a[sel]))
                continue
            opened = before + np.searchsorted(acq_seq, seq, side="left")
            owner, self.fifo[code] = _fifo_blocks(opened, self.fifo[code])
            if code == CUZK_BG2:
                self.shared_orphans += self._put(self.shared, code, owner, sel, lines)
                continue
            self.orphans[False] += self._put(self.region[False], code, owner, sel, lines)
            if code == CUZK_HELD:
                owner = self._after_tails(tails, seq)
            else:  # the latest acquire before each line (acquires and lines never tie)
                at = opened - 1
                owner = np.where(_new_runs(at, self.latest[code]), at, -1)
                self.latest[code] = int(at[-1])
            if code == CUZK_TAIL:
                tails = (seq[owner >= 0], owner[owner >= 0])
            self.orphans[True] += self._put(self.region[True], code, owner, sel, lines)
        if len(tails[0]):
            self.last_tail = (int(tails[0][-1]), int(tails[1][-1]))
        self._open_preps()

    def _after_tails(self, tails: tuple[np.ndarray, np.ndarray], seq: np.ndarray) -> np.ndarray:
        """One GPU: the block of the latest tail line before each mutex_held line (``tails``:
        the (seq, block) this piece's tail lines were given, after the pieces' before);
        repeats -1."""
        t_seq, t_block = tails
        if self.last_tail[1] >= 0:
            t_seq = np.concatenate([[self.last_tail[0]], t_seq])
            t_block = np.concatenate([[self.last_tail[1]], t_block])
        at = np.searchsorted(t_seq, seq, side="right") - 1
        owner = np.where(at >= 0, t_block[np.maximum(at, 0)] if len(t_block) else -1, -1)
        keep = _new_runs(owner, self.latest[CUZK_HELD])
        self.latest[CUZK_HELD] = int(owner[-1])
        return np.where(keep, owner, -1)

    def _put(self, cols: dict[str, Growing], code: int, owner, sel, lines: CuzkLines) -> int:
        """Write the lines' values into their blocks; the lines no block took."""
        ok = owner >= 0
        first, second = COLUMNS[code]
        cols[first].buf[owner[ok]] = lines.a[sel[ok]]
        if second is not None:
            cols[second].buf[owner[ok]] = lines.b[sel[ok]]
        return int((~ok).sum())

    def _open_preps(self) -> None:
        """Give the prep lines waiting for an acquire the blocks now open."""
        n = len(self.seq)
        waiting = []
        for owner, value in self.preps:
            ok = owner < n
            self.shared["prep_msm_ms"].buf[owner[ok]] = value[ok]
            if not ok.all():
                waiting.append((owner[~ok], value[~ok]))
        self.preps = waiting

    def result(self, single_gpu: bool) -> tuple[Blocks, Counter[str]]:
        """The blocks, grouped as on one GPU or on several, and the lines skipped; the
        builder is spent."""
        values = {name: col.take() for name, col in self.shared.items()}
        values.update({name: col.take() for name, col in self.region.pop(single_gpu).items()})
        self.region.clear()
        values = {name: values[name] for name in VALUES}
        skipped: Counter[str] = Counter()
        skipped["malformed_cuzk_timing"] += self.malformed
        waiting = sum(len(owner) for owner, _ in self.preps)
        skipped["orphan_cuzk_timing"] += self.orphans[single_gpu] + self.shared_orphans + waiting
        lock = values["pre_lock_cpu_ms"] + values["mutex_wait_ms"]
        low, high = self.low.take(), self.high.take()
        around = (low, high) if self.placed else None
        return Blocks(self.seq.take(), lock, values, around), +skipped


def _new_runs(values: np.ndarray, last: int) -> np.ndarray:
    """True where a value differs from the one before it (``last`` before the first): the
    first line of each block in a non-decreasing run of blocks."""
    prev = np.empty(len(values), values.dtype)
    prev[0] = last
    prev[1:] = values[:-1]
    return values != prev


def _fifo_blocks(opened: np.ndarray, given: int) -> tuple[np.ndarray, int]:
    """FIFO: the i-th line takes the oldest block not yet given this kind, if that block
    opened before it (``opened``: the blocks opened before each line; ``given``: the blocks
    given before the first).  With x_i the blocks given after line i, x_i = min(x_{i-1} + 1,
    opened_i), whose closed form is below.  (The blocks, -1 for orphans; the blocks given.)"""
    i = np.arange(len(opened))
    taken = np.minimum(np.minimum.accumulate(opened - i) + i, given + i + 1)
    before = np.concatenate([[given], taken[:-1]]).astype(np.int64)
    return np.where(taken > before, before, -1), int(taken[-1])


def _next_blocks(opened: np.ndarray, last: int) -> tuple[np.ndarray, int]:
    """The block each line written before its acquire belongs to: the i-th line takes the
    oldest block opening after it that no earlier line took.  With b_i blocks opened before
    line i, it takes x_i = max(x_{i-1} + 1, b_i) (``last``: x before the first line), whose
    closed form is x_i = max(last + i + 1, i + max_{j <= i} (b_j - j)).  (The blocks, which
    may not be open yet; the last one.)"""
    i = np.arange(len(opened))
    taken = np.maximum(np.maximum.accumulate(opened - i) + i, last + i + 1)
    return taken.astype(np.int64), int(taken[-1])


def _owners(acq_seq: np.ndarray, seq: np.ndarray, single_gpu: bool) -> np.ndarray:
    """Index of the block each line written after its acquire belongs to; -1 for orphans
    and repeats (the lines of one kind, whole)."""
    if not len(seq):
        return np.zeros(0, np.int64)
    if single_gpu:
        at = np.searchsorted(acq_seq, seq, side="right") - 1
        return np.where(_new_runs(at, -2), at, -1)
    return _fifo_blocks(np.searchsorted(acq_seq, seq, side="left"), 0)[0]


def _next_owners(acq_seq: np.ndarray, seq: np.ndarray) -> np.ndarray:
    """Index of the block each line written before its acquire belongs to (-1: none)."""
    if not len(seq):
        return np.zeros(0, np.int64)
    taken = _next_blocks(np.searchsorted(acq_seq, seq, side="right"), -1)[0]
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


def around(
    block_seq: np.ndarray, event_seq: np.ndarray, event_offset: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The offsets of the events before and after each block's acquire line (-inf / inf
    past the ends), read for the blocks only: no copy of the session's 10^6 offsets."""
    where = np.searchsorted(event_seq, block_seq)
    n_events = len(event_offset)
    if not n_events:
        return np.full(len(where), -np.inf), np.full(len(where), np.inf)
    lows = np.where(where > 0, event_offset[np.maximum(where - 1, 0)], -np.inf)
    highs = np.where(where < n_events, event_offset[np.minimum(where, n_events - 1)], np.inf)
    return lows.astype(np.float64), highs.astype(np.float64)


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
    lows, highs = blocks.around or around(blocks.seq, event_seq, event_offset)
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
