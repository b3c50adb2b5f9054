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
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from viewer.io import _cscan, source
from viewer.io.batch import CuzkLines, EventBatch, fold_copies, merge_cuzk, merge_exact
from viewer.io.batch import skipped_batch as _skipped_batch
from viewer.io.exact import trust
from viewer.io.grammar import DETAIL_KEYS, SYNTH_START
from viewer.io.parse import parse_records
from viewer.io.records import SEQ_SHIFT, Ordinals, RawBatch, line_end
from viewer.io.source import Chunk, Skip

NAME = "compiled"
PIECE_BYTES = 16 << 20  # one piece per thread task; also the progress step
BOUNDARY_PROBE = 1 << 16  # a piece boundary moves to the next line start within this
#: The number keys' columns the scanner returns (``tl_<key>``).
NUMBER_COLUMNS = {k.name.decode(): f"tl_{k.name.decode()}" for k in DETAIL_KEYS if k.digits}
I64, I32 = np.dtype("<i8"), np.dtype("<i4")


def scan_chunks(
    chunks: Iterable[Chunk | Skip], ords: Ordinals, jobs: dict[bytes, int]
) -> list[EventBatch]:
    """The events of ``(buffer, start, end)`` chunks of whole lines, in order, and the
    lines the chunks' cutter skipped."""
    out = []
    for chunk in chunks:
        if isinstance(chunk, Skip):
            out.append(_skipped_batch(ords.base, chunk.reason))
        else:
            out.append(_to_batch(_cscan.scan(*chunk), ords, jobs))
    return out


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


def _to_batch(res: dict, ords: Ordinals, jobs: dict[bytes, int]) -> EventBatch:
    """An ``EventBatch`` from one result of the compiled scanner (ordinals from ``ords``)."""
    base = ords.base
    ords.base += res["matches"]
    lut = np.array([jobs.setdefault(j, len(jobs)) for j in res["jobs"]] + [-1], dtype=np.int32)
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
    packed, ambiguous = _cscan.match_blocks(
        np.concatenate([np.empty(0, np.int64), *queues]).astype(np.int64),
        np.cumsum([0] + [len(q) for q in queues]).astype(np.int64),
        np.concatenate([np.empty(0, np.int64), *ends]).astype(np.int64),
        np.concatenate([np.empty(0, np.int64), *started]).astype(np.int64),
        gpu_start.astype(np.float64),
        bseq.astype(np.int64),
        locks.astype(np.float64),
        kernels.astype(np.float64),
        lows.astype(np.float64),
        highs.astype(np.float64),
        ids.astype(np.int64),
        ambiguous_ms,
    )
    return np.frombuffer(packed, np.int64).copy(), ambiguous


def pack_sorted(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``pure.pack_sorted`` in C."""
    packed = _cscan.pack_sorted(
        np.ascontiguousarray(start, dtype=np.float64), np.ascontiguousarray(end, dtype=np.float64)
    )
    return np.frombuffer(packed, np.int32).copy()
