"""The compiled scanner (``_cscan``, an optional C extension) as the reader's backend.

``_cscan.c`` finds the same records with the same ordinals as the pure-Python scanner and
parses those in the daemon's strict form; every other record it finds comes back whole and
goes through ``parse.parse_records``, which defines the behaviour.  A plain file is cut into
pieces at line starts and the pieces are scanned by a few threads at once (the scan runs
without the GIL, reading the file itself with ``pread``): no copy of the file is held.
Importing this module raises ImportError when the extension is not built.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from viewer.io import _cscan, source
from viewer.io.batch import CuzkLines, EventBatch, fold_copies, merge_cuzk, merge_exact
from viewer.io.batch import skipped_batch as _skipped_batch
from viewer.io.exact import trust
from viewer.io.grammar import DETAIL_KEYS, SYNTH_START
from viewer.io.parse import parse_records
from viewer.io.records import SEQ_SHIFT, JobIds, Ordinals, RawBatch, job_codes, line_end
from viewer.io.source import Chunk, Skip

NAME = "compiled"
PIECE_BYTES = 64 << 20  # the largest piece a thread scans at once (a progress step)
MIN_PIECE_BYTES = 1 << 20  # the smallest, but for the last (and PIECE_BYTES smaller)
FIRST_PIECE_BYTES = 2 << 20  # before the density of the file is known
PIECE_RECORDS = 1 << 15  # records a piece of a dense log is sized to hold
DENSE_RECORD_BYTES = 64  # a dense log's bytes a record (TIMELINE and CUZK_TIMING only)
MOST_PIECE_RECORDS = 1 << 17  # records a piece of a sparse log may hold
#: A piece weighs at most this share of the bytes scanned (but SMALL_PIECE_BYTES): the
#: pieces in flight and the ones the reader holds, ~5, stay a small part of a small file.
PIECE_SHARE = 32
SMALL_PIECE_BYTES = 256 << 10
BOUNDARY_PROBE = 1 << 16  # a piece boundary moves to the next line start within this
#: The number keys' columns the scanner returns (``tl_<key>``).
NUMBER_COLUMNS = {k.name.decode(): f"tl_{k.name.decode()}" for k in DETAIL_KEYS if k.digits}
I64, I32 = np.dtype("<i8"), np.dtype("<i4")


def iter_chunks(
    chunks: Iterable[Chunk | Skip], ords: Ordinals, jobs: JobIds
) -> Iterator[EventBatch]:
    """The events of ``(buffer, start, end)`` chunks of whole lines, in order, and the
    lines the chunks' cutter skipped, each as soon as it is scanned."""
    for chunk in chunks:
        if isinstance(chunk, Skip):
            yield _skipped_batch(ords.base, chunk.reason)
        else:
            yield _to_batch(_cscan.scan(*chunk), ords, jobs)


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
    cut as ``source.whole_lines`` cuts them: a last line without a line end counts as a
    line, unless the file ends before ``hi``; each piece's as soon as it is scanned.
    ``progress(offset)`` after each piece; ``cancel()`` is checked between pieces (the
    caller raises)."""
    threads = max(1, min(4, os.cpu_count() or 1))
    pieces = _Pieces(fd, lo, hi)
    with ThreadPoolExecutor(threads, thread_name_prefix="cuzk-scan") as pool:
        # At most threads + 1 pieces in flight: results wait in memory only that long.
        flight: deque[tuple[Future, int, int]] = deque()

        def submit(count: int) -> None:
            for a, b in itertools.islice(pieces, count):
                fut = pool.submit(_cscan.scan_file, fd, a, b, source.MAX_LINE)
                flight.append((fut, a, b))

        try:
            submit(threads + 1)
            while flight:
                fut, a, b = flight.popleft()
                if cancel is not None and cancel():
                    break
                res = fut.result()
                del fut
                pieces.scanned(b - a, res["matches"])
                batch = _to_batch(res, ords, jobs)
                del res
                submit(1)
                if progress is not None:
                    progress(b)
                yield batch
                del batch
        finally:
            for fut, _, _ in flight:
                fut.cancel()


class _Pieces:
    """The pieces ``[a, b)`` of ``[lo, hi)`` the threads scan, cut at line starts, each
    sized by the density of the records scanned so far (between MIN_PIECE_BYTES and
    PIECE_BYTES, and at most 1/PIECE_SHARE of the range): PIECE_RECORDS records in a
    dense log (TIMELINE and CUZK_TIMING lines only: ~2 MB), more in one with other lines
    between, as many as weigh the same share of the file (the 10^6-event log with its
    other lines: ~100 000 records, 45 MB).  The pieces in flight and the one being read
    weigh what the file allows, and a sparse log is not cut into a thousand pieces of
    fixed costs."""

    def __init__(self, fd: int, lo: int, hi: int) -> None:
        self.fd, self.at, self.hi = fd, lo, hi
        self.bytes = self.records = 0
        # A 13.6 MB log of 3000 daemon runs was read in 2 MB pieces, ~8 MB with those in
        # flight and held: its peak went from 17-18.5 MB to 15 MB with 425 KB pieces.
        self.most = min(PIECE_BYTES, max(SMALL_PIECE_BYTES, (hi - lo) // PIECE_SHARE))

    def scanned(self, size: int, records: int) -> None:
        self.bytes += size
        self.records += records

    def size(self) -> int:
        most = self.most
        least = min(MIN_PIECE_BYTES, most)
        if not self.records:
            return min(FIRST_PIECE_BYTES, most)
        # A sparse log's pieces hold more records: a piece weighs the same share of the file
        # (and the reader's peak memory is judged against the file), in fewer pieces.
        per_record = self.bytes / self.records
        records = min(MOST_PIECE_RECORDS, PIECE_RECORDS * max(1.0, per_record / DENSE_RECORD_BYTES))
        return max(least, min(most, int(records * per_record)))

    def __iter__(self):
        return self

    def __next__(self) -> tuple[int, int]:
        a = self.at
        if a >= self.hi:
            raise StopIteration
        step = self.size()
        x = a + step
        while x < self.hi:
            probe = os.pread(self.fd, min(BOUNDARY_PROBE, self.hi - x + 1), x - 1)
            k = line_end(probe, 0, len(probe))
            if k >= 0 and x + k < self.hi:  # else a very long line: no cut here
                self.at = x + k
                return a, x + k
            x += step
        self.at = self.hi
        return a, self.hi


def _to_batch(res: dict, ords: Ordinals, jobs: JobIds) -> EventBatch:
    """An ``EventBatch`` from one result of the compiled scanner (ordinals from ``ords``)."""
    base = ords.base
    ords.base += res["matches"]
    lut = np.array([*job_codes(res["jobs"], jobs), -1], dtype=np.int32)
    seq = (np.frombuffer(res["tl_ord"], I64) + base) << SEQ_SHIFT
    event = np.frombuffer(res["tl_event"], np.int8)
    num = {name: np.frombuffer(res[col], I64) for name, col in NUMBER_COLUMNS.items()}
    worker, partition = num["worker"], num["partition"]
    flags = np.frombuffer(res["tl_flags"], np.uint8)
    synth = _ms(num["synth_ms"])
    mono, bad = trust(event, worker, partition, synth, (flags & 1) > 0, (flags & 2) > 0)
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
        "gpu_ms": _ms(num["gpu_ms"]),
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


def _ms(packed: bytes | np.ndarray) -> np.ndarray:
    """Packed int64 milliseconds, -1 absent, as float64 with NaN."""
    v = np.frombuffer(packed, I64).astype(np.float64)
    v[v < 0] = np.nan
    return v


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
    """``pure.match_blocks`` in C, over packed arrays."""
    if not len(bseq):
        return np.empty(0, np.int64), 0
    i64, f64 = (
        (lambda a: np.ascontiguousarray(a, np.int64)),
        (lambda a: np.ascontiguousarray(a, np.float64)),
    )  # no copy of a column already so (a 10^6-event log's blocks: 1.3 MB each)
    packed, ambiguous = _cscan.match_blocks(
        i64(np.concatenate([np.empty(0, np.int64), *queues])),
        np.cumsum([0] + [len(q) for q in queues]).astype(np.int64),
        i64(np.concatenate([np.empty(0, np.int64), *ends])),
        i64(np.concatenate([np.empty(0, np.int64), *started])),
        f64(gpu_start),
        i64(bseq),
        f64(locks),
        f64(kernels),
        f64(lows),
        f64(highs),
        i64(ids),
        ambiguous_ms,
    )
    return np.frombuffer(packed, np.int64).copy(), ambiguous


def pack_sorted(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``pure.pack_sorted`` in C."""
    packed = _cscan.pack_sorted(
        np.ascontiguousarray(start, dtype=np.float64), np.ascontiguousarray(end, dtype=np.float64)
    )
    return np.frombuffer(packed, np.int32).copy()
