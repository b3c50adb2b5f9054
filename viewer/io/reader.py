"""``open_log``: read one cuzk daemon log into a ``Timeline``.

Scan the file once in chunks (see ``scan``), then cut the events into sessions,
pair them into GPU calls, map workers to GPUs and attribute CUZK_TIMING blocks.
"""

from __future__ import annotations

import gc
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd

from viewer.io import source
from viewer.io.errors import LoadCancelled, LogError
from viewer.io.fastscan import Ordinals, scan_chunks, scan_range
from viewer.io.pairing import pair_events
from viewer.io.parse import EVENT_COLUMNS, merge_batches
from viewer.io.scan import (
    ANSI_RE,
    MARK_DAEMON,
    MARK_WORKER,
    CuzkLines,
    EventBatch,
)
from viewer.io.sessions import session_of, split_sessions
from viewer.io.source import Chunk, Skip, Source, checked, log_path
from viewer.io.timing import VALUES, Attribution, attribute, build_blocks
from viewer.model import Session, Timeline, session_tables
from viewer.model.timeline import KERNEL_SOURCE_GPU_MS, KERNEL_SOURCE_TIMING, NO_BLOCKS

EXPECTED = "expected a cuzk daemon log with lines like TIMELINE,<ms>,<EVENT>,<job>,<detail>"
WORKER_RE = re.compile(rb"worker_id=(\d{1,9})\D.*?\bgpu=(\d{1,9})")


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
    are read whole.  The returned Timeline's ``bytes_read`` is the number of file bytes
    consumed (compressed bytes for .gz / .zst).
    """
    path = log_path(path)
    jobs: dict[bytes, int] = {}
    batches, head, src, consumed = _read(path, jobs, progress, cancel, end)
    batch = merge_batches(batches)
    found = len(batch.seq) + len(batch.skipped_seq)
    if not found and src.damage:
        raise LogError(f"{path}: {src.damage}; no TIMELINE line before the damage")
    if not found:
        raise LogError(f"{path}: {_not_a_log_reason(head)}")
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
    job_ids = [j.decode("utf-8", "replace") for j in jobs]
    sessions = _sessions(batch, job_ids, workers_per_gpu)
    if src.damage:
        sessions[-1].notes.append(f"{src.damage}; the rest of the file is lost")
    elif src.truncated:
        sessions[-1].notes.append("the compressed stream ends early: the file is cut short")
    timeline = Timeline(source=path, sessions=sessions, skipped={})
    timeline.bytes_read = consumed  # an attribute of the reader, not a model field
    return timeline


def read_events(path: str | bytes | PathLike) -> dict[str, np.ndarray]:
    """The parsed TIMELINE columns of ``path`` in file order, before sessions and pairing."""
    batches, *_ = _read(log_path(path), {}, None, None)
    batch = merge_batches(batches)
    return {f: getattr(batch, f) for f in EVENT_COLUMNS}


def _read(
    path: Path,
    jobs: dict[bytes, int],
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
    end: int | None = None,
) -> tuple[list[EventBatch], bytes, Source, int]:
    """The batches, the first bytes of the text, the (closed) source, which says how the
    read ended, and the file bytes it consumed."""
    with Source(path, end) as src:
        was_enabled = gc.isenabled()
        gc.disable()  # millions of short-lived objects: the collector would rescan them all
        try:
            batches, head = _scan(src, jobs, progress, cancel)
        finally:
            if was_enabled:
                gc.enable()
        return batches, head, src, src.position()


def _scan(
    src: Source,
    jobs: dict[bytes, int],
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
) -> tuple[list[EventBatch], bytes]:
    ords = Ordinals()
    if src.compression == "plain":  # the file itself, read in pieces by a few threads
        head = os.pread(src.fileno(), 4096, 0)
        step = None if progress is None else (lambda at: progress(at, src.total))
        try:
            batches = scan_range(src.fileno(), 0, src.total, ords, jobs, step, cancel)
        except OSError as exc:
            raise LogError(f"{src.path}: cannot be read ({exc.strerror or exc})") from exc
        if cancel is not None and cancel():
            raise LoadCancelled(f"{src.path}: loading cancelled")
        src.mark_read()
        return batches, head
    first: list[bytes] = []

    def chunks() -> Iterator[Chunk | Skip]:
        for chunk in checked(src.chunks(), src, progress, cancel):
            if not first and not isinstance(chunk, Skip):
                buf, start, _ = chunk
                first.append(buf[start : start + 4096])
            yield chunk

    batches = scan_chunks(chunks(), ords, jobs)
    return batches, first[0] if first else b""


def _not_a_log_reason(head: bytes) -> str:
    """The one-line reason a file without TIMELINE lines is not a log."""
    text_bytes = sum(1 for c in head if c in (9, 10, 13) or 32 <= c < 127 or c >= 128)
    if b"\x00" in head or (head and text_bytes < 0.9 * len(head)):
        return f"binary data, not a text log; {EXPECTED}"
    return f"no TIMELINE lines found; {EXPECTED}"


def _sessions(batch: EventBatch, job_ids: list[str], workers_per_gpu: int | None) -> list[Session]:
    """The sessions of everything read (``batch``: the whole file's lines, merged), built
    in one pass over all of them."""
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

    paired = pair_events(ev, sid, n)
    calls = paired.calls
    for s, counts in enumerate(paired.skipped):
        skipped[s].update(counts)
    notes: list[list[str]] = [[] for _ in range(n)]
    calls["gpu"] = _gpus(calls, mapping, workers_per_gpu, notes)

    kernel_source = [KERNEL_SOURCE_GPU_MS] * n
    blocks = [(0, 0, None)] * n  # (blocks read, ambiguous, unattributed) per session
    cz = batch.cuzk
    if len(cz.seq):
        for name in ("kernel_start", *VALUES):
            calls[name] = np.full(len(calls["job"]), np.nan)
        c_bounds = np.searchsorted(session_of(cz.seq, ev["seq"], sid, daemon_starts), range(n + 1))
        e_bounds = np.searchsorted(sid, np.arange(n + 1))
        k_bounds = np.searchsorted(calls["session"], np.arange(n + 1))
        for s in np.flatnonzero(np.diff(c_bounds)).tolist():
            rows = slice(k_bounds[s], k_bounds[s + 1])
            events = slice(e_bounds[s], e_bounds[s + 1])
            att = _attribute(
                {k: v[rows] for k, v in calls.items()},
                _slice_cuzk(cz, c_bounds[s], c_bounds[s + 1]),
                ev["seq"][events],
                ev["offset"][events],
            )
            skipped[s].update(att.skipped)
            notes[s] += att.notes
            for name, col in att.columns.items():
                calls[name][rows] = col
            if np.isfinite(att.columns["kernel_start"]).any():
                kernel_source[s] = KERNEL_SOURCE_TIMING
            blocks[s] = (att.blocks, att.ambiguous, att.unattributed)
    tables = session_tables(calls, job_ids, kinds, mapping, session=calls["session"])
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


def _skipped_lines(
    batch: EventBatch, sid: np.ndarray, daemon_starts: np.ndarray, n: int
) -> list[Counter[str]]:
    """The lines the scanners skipped, counted per session and reason."""
    out = [Counter() for _ in range(n)]
    if batch.skipped_reason:
        where = session_of(batch.skipped_seq, batch.seq, sid, daemon_starts)
        codes, reasons = pd.factorize(np.array(batch.skipped_reason, dtype=object))
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


def _attribute(
    calls: dict[str, np.ndarray], cuzk: CuzkLines, seq: np.ndarray, offset: np.ndarray
) -> Attribution:
    """One session's CUZK_TIMING blocks matched to its calls."""
    gpus_used = np.unique(calls["gpu"][calls["start_seq"] >= 0])
    blocks, cz_skipped = build_blocks(cuzk, single_gpu=len(gpus_used) <= 1)
    att = attribute(calls, blocks, seq, offset)
    att.skipped.update(cz_skipped)
    return att


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
