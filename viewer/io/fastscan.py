"""Scanning whole lines into ``EventBatch``es: the compiled scanner when it is built, the
pure-Python one (``scan.find_records`` + ``parse.parse_records``) otherwise.

The compiled scanner (``_cscan.c``) finds the same lines with the same ordinals and parses
those in the daemon's exact form; every other line it finds comes back whole and goes
through ``parse_records``, which defines the behaviour.  A plain file is cut into pieces
at line starts and the pieces are scanned by a few threads at once (the scan runs
without the GIL, reading the file itself with ``pread``): no copy of the file is held.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from viewer.io import source
from viewer.io.parse import fold_copies, merge_cuzk, merge_exact, parse_records
from viewer.io.scan import (
    SEQ_SHIFT,
    SYNTH_START,
    CuzkLines,
    EventBatch,
    RawBatch,
    empty_batch,
    find_records,
    line_end,
)
from viewer.io.scan import trust as trust_rows
from viewer.io.source import Chunk, Skip, whole_lines

try:
    from viewer.io import _cscan
except ImportError:  # no compiler when installed: the pure-Python scanner does the work
    _cscan = None

PIECE_BYTES = 16 << 20  # one piece per thread task; also the progress step
PY_CHUNK = 1 << 20  # pure-Python path: bytes scanned at once (see source.CHUNK_BYTES)
BATCH_RECORDS = 100_000  # pure-Python path: records parsed at once
BOUNDARY_PROBE = 1 << 16  # a piece boundary moves to the next line start within this


def compiled() -> bool:
    """True when the compiled scanner is built and in use."""
    return _cscan is not None and not os.environ.get("CUZK_PURE_PYTHON")


class Ordinals:
    """The record ordinals used so far in a file (``seq = ordinal << SEQ_SHIFT``)."""

    def __init__(self, base: int = 0) -> None:
        self.base = base


def scan_chunks(
    chunks: Iterable[Chunk | Skip], ords: Ordinals, jobs: dict[bytes, int]
) -> list[EventBatch]:
    """The events of ``(buffer, start, end)`` chunks of whole lines, in order, and the
    lines the chunks' cutter skipped."""
    if compiled():
        return [
            _skipped(ords, chunk)
            if isinstance(chunk, Skip)
            else _to_batch(_cscan.scan(*chunk), ords, jobs)
            for chunk in chunks
        ]
    raw = RawBatch(base=ords.base)
    batches: list[EventBatch] = []
    for chunk in chunks:
        if isinstance(chunk, Skip):
            raw = _parse_all(raw, jobs, batches)
            batches.append(_skipped(Ordinals(raw.base), chunk))
            continue
        find_records(*chunk, raw)
        del chunk  # a long line's chunk is freed before the next one is read
        if len(raw.items) >= BATCH_RECORDS:
            raw = _parse_all(raw, jobs, batches)
    ords.base = _parse_all(raw, jobs, batches).base
    return batches


def _parse_all(raw: RawBatch, jobs: dict[bytes, int], out: list[EventBatch]) -> RawBatch:
    """Parse ``raw`` into ``out`` at most BATCH_RECORDS records at a time (a line of glued
    records holds any number of them), freeing the records as they are parsed; the empty
    batch that follows it."""
    end = raw.base + len(raw.items)
    while True:
        part = RawBatch(base=raw.base, items=raw.items[:BATCH_RECORDS])
        del raw.items[:BATCH_RECORDS]
        last = not raw.items
        limit = (raw.base + len(part.items)) << SEQ_SHIFT  # markers before the next part
        part.markers = [m for m in raw.markers if last or m[0] < limit]
        raw.markers = raw.markers[len(part.markers) :]
        out.append(fold_copies(parse_records(part, jobs)))
        raw.base += len(part.items)
        if last:
            return RawBatch(base=end)


def _skipped(ords: Ordinals, skip: Skip) -> EventBatch:
    """A batch of one skipped line, placed before the next record."""
    batch = empty_batch()
    batch.skipped_seq = np.array([(ords.base << SEQ_SHIFT) - 1], np.int64)
    batch.skipped_reason = [skip.reason]
    return batch


def scan_range(
    fd: int,
    lo: int,
    hi: int,
    ords: Ordinals,
    jobs: dict[bytes, int],
    progress: Callable[[int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> list[EventBatch]:
    """The events of the file bytes ``[lo, hi)`` of ``fd`` (``lo`` a line start), its lines
    cut as ``source.whole_lines`` cuts them: a last line without a line end counts as a
    line, unless the file ends before ``hi``.  ``progress(offset)`` after each piece;
    ``cancel()`` is checked between pieces (the caller raises)."""
    if not compiled():
        return _scan_range_python(fd, lo, hi, ords, jobs, progress, cancel)
    cuts = _piece_starts(fd, lo, hi)
    pieces = iter(zip(cuts, cuts[1:], strict=False))
    threads = max(1, min(4, os.cpu_count() or 1, len(cuts) - 1))
    batches: list[EventBatch] = []
    with ThreadPoolExecutor(threads, thread_name_prefix="cuzk-scan") as pool:
        # At most threads + 1 pieces in flight: results wait in memory only that long.
        flight: deque[tuple[Future, int]] = deque()

        def submit(count: int) -> None:
            for a, b in itertools.islice(pieces, count):
                flight.append((pool.submit(_cscan.scan_file, fd, a, b, source.MAX_LINE), b))

        try:
            submit(threads + 1)
            while flight:
                fut, b = flight.popleft()
                if cancel is not None and cancel():
                    break
                batches.append(_to_batch(fut.result(), ords, jobs))
                submit(1)
                if progress is not None:
                    progress(b)
        finally:
            for fut, _ in flight:
                fut.cancel()
    return batches


def _piece_starts(fd: int, lo: int, hi: int) -> list[int]:
    """Line starts about PIECE_BYTES apart from ``lo`` to ``hi`` (both included)."""
    cuts = [lo]
    for x in range(lo + PIECE_BYTES, hi, PIECE_BYTES):
        probe = os.pread(fd, min(BOUNDARY_PROBE, hi - x + 1), x - 1)
        k = line_end(probe, 0, len(probe))
        if k >= 0 and x + k < hi:  # else a very long line: no cut here
            cuts.append(x + k)
    cuts.append(hi)
    return sorted(set(cuts))


def _scan_range_python(
    fd: int,
    lo: int,
    hi: int,
    ords: Ordinals,
    jobs: dict[bytes, int],
    progress: Callable[[int], None] | None,
    cancel: Callable[[], bool] | None,
) -> list[EventBatch]:
    at = [lo]  # file offset read so far

    def blocks() -> Iterator[bytes]:
        while at[0] < hi:
            data = os.pread(fd, min(PY_CHUNK, hi - at[0]), at[0])
            if not data:
                return  # the file shrank under us: its last line may be cut
            at[0] += len(data)
            yield data

    def chunks() -> Iterator[Chunk | Skip]:
        for chunk in whole_lines(blocks(), lambda: at[0] < hi):
            if cancel is not None and cancel():
                return
            yield chunk
            if progress is not None:
                progress(at[0])

    return scan_chunks(chunks(), ords, jobs)


I64, I32 = np.dtype("<i8"), np.dtype("<i4")


def _to_batch(res: dict, ords: Ordinals, jobs: dict[bytes, int]) -> EventBatch:
    """An ``EventBatch`` from one result of the compiled scanner (ordinals from ``ords``)."""
    base = ords.base
    ords.base += res["matches"]
    lut = np.array([jobs.setdefault(j, len(jobs)) for j in res["jobs"]] + [-1], dtype=np.int32)
    seq = (np.frombuffer(res["tl_ord"], I64) + base) << SEQ_SHIFT
    event = np.frombuffer(res["tl_event"], np.int8)
    worker = np.frombuffer(res["tl_worker"], I64)
    partition = np.frombuffer(res["tl_part"], I64)
    flags = np.frombuffer(res["tl_flags"], np.uint8)
    synth = _ms(res["tl_synth"])
    mono, bad = trust_rows(event, worker, partition, synth, (flags & 1) > 0, (flags & 2) > 0)
    good = ~bad
    job = lut[np.frombuffer(res["tl_job"], I32)]
    fast = {
        "seq": seq,
        "offset": np.frombuffer(res["tl_off"], I64),
        "event": event,
        "job": job,
        "partition": partition.astype(np.int32),
        "worker": worker.astype(np.int32),
        "synth_ms": synth,
        "gpu_ms": _ms(res["tl_gpu"]),
        "mono": mono,
    }
    kinds = [
        (int(seq[r]), int(job[r]), kind.decode("ascii", "replace"))
        for r, kind in res["kinds"]
        if good[r] and event[r] == SYNTH_START
    ]
    # Exact copies the scanner folded into the row before them: counts on good rows, and
    # a bad row's copies are skipped lines of their own (each the record after the last).
    crow, cn = np.frombuffer(res["copies"], I64).reshape(-1, 2).T
    bad_seq = seq[bad]
    if len(crow) and bad[crow].any():
        reps = np.ones(len(seq), np.int64)
        reps[crow] += cn
        reps = reps[bad]
        ramp = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        bad_seq = np.repeat(bad_seq, reps) + (ramp << SEQ_SHIFT)
    skipped = [(int(s), "malformed_timeline") for s in bad_seq.tolist()]
    skipped += [(((base + before) << SEQ_SHIFT) - 1, r.decode()) for before, r in res["skips"]]
    cz_seq = (np.frombuffer(res["cz_ord"], I64) + base) << SEQ_SHIFT
    cuzk = CuzkLines(
        cz_seq,
        np.frombuffer(res["cz_kind"], np.int8),
        np.frombuffer(res["cz_a"], I64).astype(np.float64),
        _ms(res["cz_b"]),
    )
    if not good.all():
        fast = {c: v[good] for c, v in fast.items()}
    markers = [
        (((base + before) << SEQ_SHIFT) - 1, kind, text) for before, kind, text in res["markers"]
    ]
    exact = None
    if res["rejects"]:
        ordinals, lines = zip(*res["rejects"], strict=True)
        rest_seq = (np.array(ordinals, dtype=np.int64) + base) << SEQ_SHIFT
        exact = parse_records(RawBatch(items=list(lines)), jobs, seq=rest_seq)
        cuzk = merge_cuzk(cuzk, exact.cuzk)
    batch = merge_exact(fast, kinds, skipped, cuzk, markers, exact)
    if len(crow):
        kept = good[crow]
        batch.copy_seq, batch.copy_n = seq[crow[kept]], cn[kept].copy()
    return fold_copies(batch)


def _ms(packed: bytes) -> np.ndarray:
    """Packed int64 milliseconds, -1 absent, as float64 with NaN."""
    v = np.frombuffer(packed, I64).astype(np.float64)
    v[v < 0] = np.nan
    return v
