"""``open_log``: read one cuzk daemon log into a ``Timeline``.

Scan the file once (``scan_log``: the records of every line, through ``scanner``), then
cut the events into sessions, pair them into GPU calls, map workers to GPUs and attribute
CUZK_TIMING blocks (``LogScan.sessions``).  Follow mode feeds a ``LogScan`` the lines each
poll adds.
"""

from __future__ import annotations

import gc
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from os import PathLike

import numpy as np

from viewer.io import source
from viewer.io.batch import (
    EVENT_COLUMNS,
    CuzkLines,
    EventBatch,
    empty_batch,
    merge_batches,
    no_cuzk,
)
from viewer.io.errors import LoadCancelled, LogError
from viewer.io.exact import ANSI_RE
from viewer.io.grammar import GPU_START, MARK_DAEMON, MARK_WORKER
from viewer.io.pairing import pair_events
from viewer.io.records import Ordinals
from viewer.io.scanner import scan_chunks, scan_range
from viewer.io.sessions import session_of, split_sessions
from viewer.io.source import Chunk, Skip, Source, checked, log_path
from viewer.io.timing import Blocks, attribute, build_blocks
from viewer.model import Session, Timeline, session_tables
from viewer.model.keys import factorize, unique
from viewer.model.timeline import KERNEL_SOURCE_GPU_MS, KERNEL_SOURCE_TIMING, NO_BLOCKS

EXPECTED = "expected a cuzk daemon log with lines like TIMELINE,<ms>,<EVENT>,<job>,<detail>"
WORKER_RE = re.compile(rb"worker_id=(\d{1,9})\D.*?\bgpu=(\d{1,9})")
HEAD_BYTES = 4096  # the text's first bytes, to say what a file without records is


class LogScan:
    """Everything scanned of one file so far, merged (``batch``), and how the read went.
    ``scan_log`` scans a file once; ``LogFollower`` feeds one the lines each poll adds."""

    def __init__(self) -> None:
        self.jobs: dict[bytes, int] = {}  # job id -> global code, in order of appearance
        self.ords = Ordinals()
        self.batch: EventBatch = empty_batch()
        self.head = b""  # the first bytes of the text
        self.damage = ""  # why a compressed file could not be read on (``Source.damage``)
        self.truncated = False  # a compressed file ended early
        self.consumed = 0  # file bytes read (compressed bytes for .gz / .zst)

    @property
    def events(self) -> int:
        """TIMELINE events read (exact copies included)."""
        return len(self.batch.seq) + int(self.batch.copy_n.sum())

    def feed(
        self,
        fd: int,
        lo: int,
        hi: int,
        progress: Callable[[int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> None:
        """Scan the bytes ``[lo, hi)`` of the plain file ``fd`` (``lo`` a line start)."""
        self._add(scan_range(fd, lo, hi, self.ords, self.jobs, progress, cancel))

    def feed_chunks(self, chunks: Iterator[Chunk | Skip]) -> None:
        """Scan chunks of whole lines (a decompressed stream)."""
        self._add(scan_chunks(chunks, self.ords, self.jobs))

    def _add(self, batches: list[EventBatch]) -> None:
        if batches:  # an empty range scans no piece
            self.batch = merge_batches([self.batch, *batches])

    def sessions(
        self, workers_per_gpu: int | None = None, *, consume: bool = False
    ) -> list[Session]:
        """The sessions of everything scanned (none until an event could be read).
        ``consume``: the scan is not needed afterwards (``open_log``): its columns are let
        go as soon as the sessions no longer need them, which lowers the peak memory."""
        if not len(self.batch.seq):
            return []
        job_ids = [j.decode("utf-8", "replace") for j in self.jobs]
        batch = self.batch
        if consume:
            self.batch = empty_batch()
        return _sessions(batch, job_ids, workers_per_gpu, consume)


def scan_log(
    path: str | bytes | PathLike,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    end: int | None = None,
) -> LogScan:
    """The records of every line of ``path`` (plain, .gz or .zst), before sessions are
    built; see ``open_log`` for the arguments."""
    path = log_path(path)
    scan = LogScan()
    with Source(path, end) as src:
        was_enabled = gc.isenabled()
        gc.disable()  # millions of short-lived objects: the collector would rescan them all
        try:
            _scan(src, scan, progress, cancel)
        finally:
            if was_enabled:
                gc.enable()
        scan.damage, scan.truncated, scan.consumed = src.damage, src.truncated, src.position()
    return scan


def open_log(
    path: str | bytes | PathLike,
    *,
    workers_per_gpu: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    end: int | None = None,
) -> Timeline:
    """Read ``path`` (plain, .gz or .zst); raise ``LogError`` if it is not a cuzk log.

    ``end``: read only the bytes ``[0, end)`` of a plain file (a file still being written;
    a line cut at ``end`` reads as a torn line).  It is ignored for .gz / .zst files, which
    are read whole.  ``progress(done_bytes, total_bytes)`` now and then; ``cancel()``
    returning True raises ``LoadCancelled``.  (``scan_log(...).consumed`` says how many file
    bytes a scan read: compressed bytes for .gz / .zst.)
    """
    path = log_path(path)
    scan = scan_log(path, progress=progress, cancel=cancel, end=end)
    _check_found(path, scan)
    sessions = scan.sessions(workers_per_gpu, consume=True)
    if scan.damage:
        sessions[-1].notes.append(f"{scan.damage}; the rest of the file is lost")
    elif scan.truncated:
        sessions[-1].notes.append("the compressed stream ends early: the file is cut short")
    return Timeline(source=path, sessions=sessions, skipped={})


def _check_found(path: PathLike, scan: LogScan) -> None:
    """``LogError`` naming why no event could be read, if none could."""
    batch = scan.batch
    found = len(batch.seq) + len(batch.skipped_seq)
    if not found and scan.damage:
        raise LogError(f"{path}: {scan.damage}; no TIMELINE line before the damage")
    if not found:
        raise LogError(f"{path}: {_not_a_log_reason(scan.head)}")
    if not len(batch.seq):
        reasons = Counter(batch.skipped_reason)
        listed = ", ".join(f"{k}: {v}" for k, v in reasons.most_common())
        if set(reasons) == {"oversized_line"}:  # what such a line holds is unknown
            most = source.MAX_LINE
            size = f"{most >> 20} MB" if most >= 1 << 20 else f"{most} bytes"
            raise LogError(
                f"{path}: no TIMELINE line could be read; {found} line(s) of {size} or more "
                f"skipped whole ({listed})"
            )
        raise LogError(f"{path}: {found} TIMELINE lines found but none could be read ({listed})")


def _scan(
    src: Source,
    scan: LogScan,
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
) -> None:
    if src.compression == "plain":  # the file itself, read in pieces by a few threads
        scan.head = os.pread(src.fileno(), HEAD_BYTES, 0)
        step = None if progress is None else (lambda at: progress(at, src.total))
        try:
            scan.feed(src.fileno(), 0, src.total, step, cancel)
        except OSError as exc:
            raise LogError(f"{src.path}: cannot be read ({exc.strerror or exc})") from exc
        if cancel is not None and cancel():
            raise LoadCancelled(f"{src.path}: loading cancelled")
        src.mark_read()
        return

    def chunks() -> Iterator[Chunk | Skip]:
        for chunk in checked(src.chunks(), src, progress, cancel):
            if not scan.head and not isinstance(chunk, Skip):
                buf, start, _ = chunk
                scan.head = bytes(buf[start : start + HEAD_BYTES])
            yield chunk

    scan.feed_chunks(chunks())


def _not_a_log_reason(head: bytes) -> str:
    """The one-line reason a file without TIMELINE lines is not a log."""
    text_bytes = sum(1 for c in head if c in (9, 10, 13) or 32 <= c < 127 or c >= 128)
    if b"\x00" in head or (head and text_bytes < 0.9 * len(head)):
        return f"binary data, not a text log; {EXPECTED}"
    return f"no TIMELINE lines found; {EXPECTED}"


#: CUZK_TIMING lines from which a session's blocks are built on a thread of their own.
EARLY_BLOCKS_LINES = 50_000
#: The event columns nothing needs once the events are paired.
PAIRED_AWAY = ("event", "job", "partition", "worker", "synth_ms", "gpu_ms", "mono")


def _sessions(
    batch: EventBatch, job_ids: list[str], workers_per_gpu: int | None, consume: bool = False
) -> list[Session]:
    """The sessions of everything read (``batch``: the whole file's lines, merged), built
    in one pass over all of them.  ``consume``: empty ``batch``'s columns as they stop being
    needed (the events' after pairing, the CUZK_TIMING lines' once grouped into blocks)."""
    ev = {f: getattr(batch, f) for f in EVENT_COLUMNS}
    if len(batch.copy_seq):  # exact copies folded into their rows: how many, per row
        ev["copies"] = np.zeros(len(batch.seq), np.int64)
        ev["copies"][np.searchsorted(batch.seq, batch.copy_seq)] = batch.copy_n
    kinds = {job_ids[j]: k for _, j, k in batch.kinds}
    markers = batch.markers
    daemon_starts = np.array([s for s, k, _ in markers if k == MARK_DAEMON], dtype=np.int64)
    sid = split_sessions(ev["seq"], ev["offset"], daemon_starts, ev.get("copies"))
    n = int(sid[-1]) + 1
    skipped = _skipped_lines(batch, sid, daemon_starts, n)
    mapping = _worker_lines(batch, sid, daemon_starts, n)

    # One big session: its CUZK_TIMING lines are grouped into blocks on a second thread
    # while the events are paired (both are numpy work that lets the GIL go).  Whether the
    # calls ran on one GPU is known only after the pairing: guessed from every GPU_START,
    # and the blocks built again in the rare case the guess was wrong.
    early = None
    guess = None
    if n == 1 and len(batch.cuzk.seq) >= EARLY_BLOCKS_LINES:
        guess = _one_gpu_guess(ev["event"], ev["worker"], mapping[0], workers_per_gpu)
    if consume:  # pairing lets each column go once used: ``ev`` holds the only reference
        for name in PAIRED_AWAY:  # new empty arrays: an empty view would keep the column
            setattr(batch, name, np.empty(0, getattr(batch, name).dtype))
    if guess is not None:
        with ThreadPoolExecutor(1, thread_name_prefix="cuzk-blocks") as pool:
            early = (guess, pool.submit(build_blocks, batch.cuzk, guess))
            paired = pair_events(ev, sid, n, consume=consume)
    else:
        paired = pair_events(ev, sid, n, consume=consume)
    if consume:
        for name in (*PAIRED_AWAY, "copies"):
            ev.pop(name, None)
    calls = paired.calls
    for s, counts in enumerate(paired.skipped):
        skipped[s].update(counts)
    notes: list[list[str]] = [[] for _ in range(n)]
    calls["gpu"] = _gpus(calls, mapping, workers_per_gpu, notes)

    kernel_source = [KERNEL_SOURCE_GPU_MS] * n
    blocks = [(0, 0, None)] * n  # (blocks read, ambiguous, unattributed) per session
    cz = batch.cuzk
    if len(cz.seq):
        c_bounds = np.searchsorted(session_of(cz.seq, ev["seq"], sid, daemon_starts), range(n + 1))
        e_bounds = np.searchsorted(sid, np.arange(n + 1))
        k_bounds = np.searchsorted(calls["session"], np.arange(n + 1))
        with_blocks = np.flatnonzero(np.diff(c_bounds)).tolist()

        def blocks_of(s: int) -> tuple[Blocks, Counter[str]]:
            rows = slice(k_bounds[s], k_bounds[s + 1])
            cuzk = _slice_cuzk(cz, c_bounds[s], c_bounds[s + 1])
            return _blocks(calls["gpu"][rows], calls["start_seq"][rows], cuzk)

        # One session (a big log): its lines can go once grouped into blocks, before the
        # matching.  Several hold views of the lines until the last is done.
        only = None
        if early is not None:
            guess, built = early
            one_gpu = _one_gpu(calls["gpu"], calls["start_seq"])
            only = built.result() if one_gpu == guess else build_blocks(cz, single_gpu=one_gpu)
        elif consume and len(with_blocks) == 1:
            only = blocks_of(with_blocks[0])
        if only is not None and consume:  # a followed log's scan keeps its lines
            batch.cuzk = cz = no_cuzk()
        for s in with_blocks:
            session_blocks, cz_skipped = only or blocks_of(s)
            rows = slice(k_bounds[s], k_bounds[s + 1])
            events = slice(e_bounds[s], e_bounds[s + 1])
            att = attribute(
                {k: v[rows] for k, v in calls.items()},
                session_blocks,
                ev["seq"][events],
                ev["offset"][events],
            )
            att.skipped.update(cz_skipped)
            skipped[s].update(att.skipped)
            notes[s] += att.notes
            if np.isfinite(att.columns["kernel_start"]).any():
                kernel_source[s] = KERNEL_SOURCE_TIMING
            blocks[s] = (att.blocks, att.ambiguous, att.unattributed)
            _fill(calls, rows, att.columns)  # (columns no session filled: NaN in the tables)
            del att
    tables = session_tables(
        calls, job_ids, kinds, mapping, session=calls.pop("session"), consume=True
    )
    return [
        Session(
            index=s,
            partitions=t.partitions,
            jobs=t.jobs,
            workers=t.workers,
            events=int(paired.accepted[s]),
            skipped=dict(sorted(skipped[s].items())),
            start_ms=float(paired.start_ms[s]),
            end_ms=float(paired.end_ms[s]),
            kernel_source=kernel_source[s],
            notes=notes[s],
            kernel_blocks=blocks[s][0],
            ambiguous_blocks=blocks[s][1],
            unattributed=NO_BLOCKS if blocks[s][2] is None else blocks[s][2],
        )
        for s, t in enumerate(tables)
    ]


def _fill(calls: dict[str, np.ndarray], rows: slice, columns: dict[str, np.ndarray]) -> None:
    """Write ``columns`` (one session's) into the ``rows`` of ``calls``; a column spanning
    every call is taken as it is, not copied into a new one."""
    n = len(calls["job"])
    for name, col in columns.items():
        if rows.start == 0 and rows.stop == n and name not in calls:
            calls[name] = col
            continue
        if name not in calls:
            calls[name] = np.full(n, np.nan)
        calls[name][rows] = col


def _skipped_lines(
    batch: EventBatch, sid: np.ndarray, daemon_starts: np.ndarray, n: int
) -> list[Counter[str]]:
    """The lines the scanners skipped, counted per session and reason."""
    out = [Counter() for _ in range(n)]
    if batch.skipped_reason:
        where = session_of(batch.skipped_seq, batch.seq, sid, daemon_starts)
        codes, reasons = factorize(np.array(batch.skipped_reason, dtype=object))
        counts = np.bincount(where * len(reasons) + codes, minlength=n * len(reasons))
        for cell in np.flatnonzero(counts).tolist():
            out[cell // len(reasons)][reasons[cell % len(reasons)]] += int(counts[cell])
    return out


def _worker_lines(
    batch: EventBatch, sid: np.ndarray, daemon_starts: np.ndarray, n: int
) -> list[dict[int, int]]:
    """Worker -> GPU per session, from the "GPU worker started" lines (each belongs to the
    run whose first event follows it)."""
    worker_lines = [(s, t) for s, k, t in batch.markers if k == MARK_WORKER]
    w_sid = session_of(
        np.array([s for s, _ in worker_lines], dtype=np.int64),
        batch.seq,
        sid,
        daemon_starts,
        prefer_next=True,
    )
    mapping: list[dict[int, int]] = [{} for _ in range(n)]
    for (_, text), s in zip(worker_lines, w_sid.tolist(), strict=True):
        m = WORKER_RE.search(ANSI_RE.sub(b"", text))
        if m:
            mapping[s][int(m[1])] = int(m[2])
    return mapping


def _gpus(
    calls: dict[str, np.ndarray],
    mapping: list[dict[int, int]],
    workers_per_gpu: int | None,
    notes: list[list[str]],
) -> np.ndarray:
    """The GPU of every call; the workers no line maps get one by rule, said in the
    session's notes (``mapping`` gains them)."""
    worker, session = calls["worker"], calls["session"]
    known = worker >= 0
    keys = (session[known].astype(np.int64) << 32) | worker[known].astype(np.int64)
    pairs, where = np.unique(keys, return_inverse=True)
    unmapped: dict[int, list[int]] = {}
    for key in pairs.tolist():
        s, w = key >> 32, key & 0xFFFFFFFF
        if w not in mapping[s]:
            unmapped.setdefault(s, []).append(w)
    for s, ws in unmapped.items():
        if workers_per_gpu:
            mapping[s].update({w: w // workers_per_gpu for w in ws})
            rule = f"gpu = worker // {workers_per_gpu} (--workers-per-gpu)"
        else:
            mapping[s].update({w: 0 for w in ws})
            rule = "all on GPU 0; pass --workers-per-gpu N for a multi-GPU run"
        notes[s].append(f"no 'GPU worker started' line for worker(s) {_ranges(ws)}: {rule}")
    gpu = np.full(len(worker), -1, np.int32)
    table = np.array([mapping[k >> 32][k & 0xFFFFFFFF] for k in pairs.tolist()], np.int32)
    gpu[known] = table[where] if len(table) else []
    return gpu


def _blocks(gpu: np.ndarray, start_seq: np.ndarray, cuzk: CuzkLines) -> tuple[Blocks, Counter]:
    """One session's CUZK_TIMING lines grouped into blocks (``gpu``, ``start_seq``: its
    calls'), and the lines skipped."""
    return build_blocks(cuzk, single_gpu=_one_gpu(gpu, start_seq))


def _one_gpu(gpu: np.ndarray, start_seq: np.ndarray) -> bool:
    """Whether the calls that started all ran on one GPU (how ``build_blocks`` groups)."""
    used = gpu[start_seq >= 0]
    return not len(used) or bool((used == used[0]).all())


def _one_gpu_guess(
    event: np.ndarray, worker: np.ndarray, mapping: dict[int, int], workers_per_gpu: int | None
) -> bool:
    """``_one_gpu`` of one session's calls before they are paired: the GPUs of the workers of
    every GPU_START (the paired calls keep a subset of them, so "one GPU" is never wrong;
    "several" is, when only a repeated or torn GPU_START names another GPU's worker)."""
    named = unique(worker[(event == GPU_START) & (worker >= 0)]).tolist()
    rule = (lambda w: w // workers_per_gpu) if workers_per_gpu else (lambda w: 0)
    return len({mapping[w] if w in mapping else rule(w) for w in named}) <= 1


def _slice_cuzk(cz: CuzkLines, a: int, b: int) -> CuzkLines:
    return CuzkLines(cz.seq[a:b], cz.kind[a:b], cz.a[a:b], cz.b[a:b])


def _ranges(values: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``."""
    out: list[str] = []
    for v in values:
        if out and v == int(out[-1].split("-")[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return ", ".join(out)
