"""The pure-Python scanner: records found by one regex per chunk (``records``), parsed by
the strict numpy parser and the exact one (``parse``); used when the compiled scanner is
not built (or ``CUZK_PURE_PYTHON=1``), and as the reference the differential tests hold
the compiled one to."""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from viewer.io.batch import EventBatch, fold_copies, skipped_batch
from viewer.io.parse import parse_records
from viewer.io.records import FLUSH_RECORDS, SEQ_SHIFT, JobIds, Ordinals, RawBatch, find_records
from viewer.io.source import Chunk, Skip, whole_lines

NAME = "python"
READ_BYTES = 1 << 20  # bytes of a plain file read at once (see source.CHUNK_BYTES)
BATCH_RECORDS = 1 << 15  # records parsed at once


def iter_chunks(
    chunks: Iterable[Chunk | Skip], ords: Ordinals, jobs: JobIds
) -> Iterator[EventBatch]:
    """The events of ``(buffer, start, end)`` chunks of whole lines, in order, and the
    lines the chunks' cutter skipped, each batch once its chunk is parsed."""
    raw = RawBatch(base=ords.base)
    batches: list[EventBatch] = []
    for chunk in chunks:
        if isinstance(chunk, Skip):
            raw = _parse_all(raw, jobs, batches)
            batches.append(skipped_batch(raw.base, chunk.reason))
        else:
            # A long line of glued records is parsed as it is cut, a small batch at a
            # time: parsing holds ~400 bytes a record, beside the line itself.
            find_records(*chunk, raw, lambda raw=raw: _parse_all(raw, jobs, batches, whole=False))
            del chunk  # a long line's chunk is freed before the next one is read
            if len(raw.items) >= BATCH_RECORDS:
                raw = _parse_all(raw, jobs, batches)
        yield from batches
        batches.clear()
    ords.base = _parse_all(raw, jobs, batches).base
    yield from batches


def _parse_all(
    raw: RawBatch, jobs: JobIds, out: list[EventBatch], *, whole: bool = True
) -> RawBatch:
    """Parse ``raw`` into ``out`` at most BATCH_RECORDS records at a time (a line of glued
    records holds any number of them), freeing the records as they are parsed; the empty
    batch that follows it.  ``whole`` False (a long line is being cut): batches of
    FLUSH_RECORDS, only full ones, and ``raw`` itself keeps the rest (records are still
    being added to it)."""
    end = raw.base + len(raw.items)
    size = BATCH_RECORDS if whole else FLUSH_RECORDS
    while whole or len(raw.items) >= size:
        part = RawBatch(base=raw.base, items=raw.items[:size])
        del raw.items[:size]
        last = not raw.items
        limit = (raw.base + len(part.items)) << SEQ_SHIFT  # markers before the next part
        part.markers = [m for m in raw.markers if last or m[0] < limit]
        raw.markers = raw.markers[len(part.markers) :]
        out.append(fold_copies(parse_records(part, jobs)))
        raw.base += len(part.items)
        if last and whole:
            return RawBatch(base=end)
    return raw


def iter_range(
    fd: int,
    lo: int,
    hi: int,
    ords: Ordinals,
    jobs: JobIds,
    progress: Callable[[int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Iterator[EventBatch]:
    """The events of the file bytes ``[lo, hi)`` of ``fd`` (``lo`` a line start), its lines
    cut by ``source.whole_lines``; ``progress(offset)`` after each chunk, ``cancel()``
    checked between chunks (the caller raises)."""
    at = [lo]  # file offset read so far

    def blocks() -> Iterator[bytes]:
        while at[0] < hi:
            data = os.pread(fd, min(READ_BYTES, hi - at[0]), at[0])
            if not data:
                return  # the file shrank under us: its last line may be cut
            at[0] += len(data)
            yield data

    def chunks() -> Iterator[Chunk | Skip]:
        for chunk in whole_lines(blocks(), lambda: at[0] < hi):
            if cancel is not None and cancel():
                return
            yield chunk
            del chunk  # a long line's chunk is not held while the next one is joined
            if progress is not None:
                progress(at[0])

    return iter_chunks(chunks(), ords, jobs)


def match_blocks(
    queues: list[np.ndarray],
    ends: list[np.ndarray],
    started: list[np.ndarray],
    gpu_start: np.ndarray,
    bseq: np.ndarray,
    locks: np.ndarray,
    kernels: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    ids: np.ndarray,
    ambiguous_ms: float,
) -> tuple[np.ndarray, int]:
    """The pass of ``timing._match`` over the blocks (``_cscan.match_blocks`` is its twin):
    (the call of every block or -1, blocks that had several plausible calls)."""
    queue, end = [q.tolist() for q in queues], [e.tolist() for e in ends]
    starts = [s.tolist() for s in started]
    start, lock_ms, kernel_ms = gpu_start.tolist(), locks.tolist(), kernels.tolist()
    lo_ms, hi_ms, gpus = lows.tolist(), highs.tolist(), ids.tolist()
    n_gpus = len(gpus)
    heads = [0] * n_gpus  # per GPU: the oldest call perhaps still open and free
    pushed = [0] * n_gpus  # per GPU: the calls started so far, in ``soonest``
    soonest: list[list[tuple[int, int]]] = [[] for _ in range(n_gpus)]  # (end, place) heaps
    given = [[False] * len(q) for q in queue]
    last_end = [-np.inf] * n_gpus
    owner = [-1] * len(bseq)
    ambiguous = 0
    seqs = bseq.tolist()
    for b, at in enumerate(seqs):
        after = seqs[b + 1] if b + 1 < len(seqs) else np.inf
        fronts = []  # (GPU, place of its call)
        for k in range(n_gpus):
            lim, e, heap, done = starts[k][b], end[k], soonest[k], given[k]
            while pushed[k] < lim:
                heapq.heappush(heap, (e[pushed[k]], pushed[k]))
                pushed[k] += 1
            while heap and (heap[0][0] < at or done[heap[0][1]]):
                heapq.heappop(heap)  # ended before the block (it never got the lock), or given
            h = heads[k]
            while h < lim and (e[h] < at or done[h]):
                h += 1
            heads[k] = h
            if heap:  # the oldest call, unless one ends before the next block: that one
                fronts.append((k, heap[0][1] if heap[0][0] < after else h))
        if not fronts:
            continue
        lock = lock_ms[b]
        if len(fronts) > 1:
            lo, hi = lo_ms[b], hi_ms[b]
            scored = []
            for k, place in fronts:
                c = queue[k][place]
                ks = start[c] + lock
                score = max(0.0, lo - ks) + max(0.0, ks - hi) + max(0.0, last_end[k] - ks)
                scored.append((score, ks, gpus[k], c, k, place))
            scored.sort()
            ambiguous += scored[1][0] - scored[0][0] <= ambiguous_ms
            k, place = scored[0][4], scored[0][5]
        else:
            k, place = fronts[0]
        c = queue[k][place]
        given[k][place] = True
        owner[b] = c
        last_end[k] = start[c] + lock + kernel_ms[b]
    return np.array(owner, dtype=np.int64), ambiguous


def pack_sorted(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The loop of ``analysis.packing.pack_rows`` (``_cscan.pack_sorted`` is its twin) over
    intervals sorted by (start, end), ``end >= start`` (inf: never freed): each takes the
    lowest row free at its start.  The rows, int32."""
    busy: list[tuple[float, int]] = []  # (end, row) of the rows in use
    free: list[int] = []  # rows that became free, lowest first
    used = 0
    out = []
    for s, e in zip(start.tolist(), end.tolist(), strict=True):
        while busy and busy[0][0] <= s:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            r = heapq.heappop(free)
        else:
            r, used = used, used + 1
        out.append(r)
        heapq.heappush(busy, (e, r))
    return np.asarray(out, dtype=np.int32)
