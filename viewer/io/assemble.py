"""``Assembler``: the sessions of a log from its scanned batches, read a piece at a time.

Each piece's events are cut into sessions (``SessionSplit``), paired into the calls begun
so far (``Pairing``) and let go; its CUZK_TIMING lines are grouped into their session's
blocks (``BlockBuilder``) and let go.  What is held between pieces is what the sessions
keep (their calls and blocks) and a few events at the edges, so the peak memory follows
the calls, not the file.  At the end the workers are mapped to GPUs, the blocks are given
to their calls and the tables built (``finish``).

A piece is read once the NEXT_WINDOW - 1 events after it are scanned (a restart among its
last events is confirmed by them), and the lines after its last event wait for the next
piece (where they stand among the events decides their session and their block's place).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from viewer import heap
from viewer.io.batch import CuzkLines, EventBatch, fold_copies, merge_batches
from viewer.io.exact import ANSI_RE
from viewer.io.grammar import CUZK_ACQUIRE, MARK_DAEMON, MARK_WORKER
from viewer.io.grow import Growing
from viewer.io.pairing import Pairing
from viewer.io.sessions import NEXT_WINDOW, SessionSplit
from viewer.io.timing import BlockBuilder, attribute
from viewer.model import Session, session_tables
from viewer.model.keys import factorize
from viewer.model.timeline import KERNEL_SOURCE_GPU_MS, KERNEL_SOURCE_TIMING, NO_BLOCKS

WORKER_RE = re.compile(rb"worker_id=(\d{1,9})\D.*?\bgpu=(\d{1,9})")
#: Scanned batches are read together once they hold this many rows (events and lines): a
#: decompressed stream comes a megabyte at a time, and each piece costs a few numpy calls.
PIECE_ROWS = 1 << 15
#: The event columns pairing takes.
PAIRED = ("seq", "offset", "event", "job", "partition", "worker", "synth_ms", "gpu_ms")


class Assembler:
    """Sessions from batches fed in file order (``add``), built by ``finish``.  The batches
    become the assembler's: merging small ones into a piece empties them (a followed log's
    kept scan is fed as ``batch.slices``, new batches over its columns)."""

    def __init__(self, workers_per_gpu: int | None = None) -> None:
        self.workers_per_gpu = workers_per_gpu
        self.split = SessionSplit()
        self.pairing = Pairing()
        self.waiting: list[EventBatch] = []  # batches not yet a piece
        self.waiting_rows = 0
        self.pieces: deque[EventBatch] = deque()  # pieces waiting for the events after them
        self.pending = 0  # their events
        self.daemon_starts = np.empty(0, np.int64)
        self.worker_lines: list[tuple[int, int, int]] = []  # (seq, worker, gpu)
        # Per job code, its kind (the last one read) as a code into ``kind_names``: a
        # number a job, not a dict entry and a string (1.5 M PoSt jobs: ~150 MB less).
        self.kind_names: dict[str, int] = {}
        self.job_kind = Growing(np.int32, -1)
        self.events = 0  # TIMELINE events read (exact copies included)
        self.skipped: Counter[str] = Counter()  # the scanners' skipped lines, by reason
        self.by_session: list[Counter[str]] = []  # the same per session
        self.blocks = BlockBuilder()
        self.last_seq: list[int] = []  # per session: its last event so far
        self.last: tuple[int, float, int] | None = None  # (seq, offset, session) so far
        self.lines = _Lines()  # lines after the last event read, waiting for the next

    def add(self, batch: EventBatch) -> None:
        """The next batch in file order."""
        n = len(batch.seq) + len(batch.cuzk.seq) + len(batch.skipped_seq)
        self.events += len(batch.seq) + int(batch.copy_n.sum())
        self.skipped.update(batch.skipped_reason)
        self.waiting.append(batch)
        self.waiting_rows += n
        if self.waiting_rows >= PIECE_ROWS // 2:  # (a compiled scanner's piece is one)
            self._piece()
        self._read(final=False)

    def _piece(self) -> None:
        """The waiting batches as one piece, its copies folded."""
        if not self.waiting:
            return
        if len(self.waiting) == 1:
            piece = fold_copies(self.waiting[0])
        else:
            piece = merge_batches(self.waiting)
        self.waiting, self.waiting_rows = [], 0
        starts = [s for s, k, _ in piece.markers if k == MARK_DAEMON]
        if starts:
            self.daemon_starts = np.sort(np.concatenate([self.daemon_starts, starts]))
        for at, kind, text in piece.markers:  # kept as numbers, not as the lines' text
            m = WORKER_RE.search(ANSI_RE.sub(b"", text)) if kind == MARK_WORKER else None
            if m:
                self.worker_lines.append((at, int(m[1]), int(m[2])))
        if piece.kinds:
            names = self.kind_names
            job = np.array([j for _, j, _ in piece.kinds], np.int64)
            kind = [names.setdefault(k, len(names)) for _, _, k in piece.kinds]
            if int(job.max()) >= len(self.job_kind):
                self.job_kind.grow(int(job.max()) + 1 - len(self.job_kind))
            self.job_kind.put(job, np.array(kind, np.int32))  # of repeats, the last wins
        self.pieces.append(piece)
        self.pending += len(piece.seq)

    def _read(self, final: bool) -> None:
        """Read the pieces whose next events are scanned (all of them at the end)."""
        while self.pieces:
            after = self.pending - len(self.pieces[0].seq)
            if after < NEXT_WINDOW - 1 and not final:
                return
            piece = self.pieces.popleft()
            self.pending -= len(piece.seq)
            self._read_piece(piece, self._ahead())

    def _ahead(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(seq, offset, copies) of the first events of the pieces after the one read."""
        seq, offset, copies = [], [], []
        left = NEXT_WINDOW - 1
        for p in self.pieces:
            k = min(len(p.seq), left)
            if k:
                seq.append(p.seq[:k])
                offset.append(p.offset[:k])
                copies.append(_copies(p, k))
                left -= k
            if not left:
                break
        if not seq:
            return None
        return np.concatenate(seq), np.concatenate(offset), np.concatenate(copies)

    def _read_piece(self, piece: EventBatch, ahead) -> None:
        seq, offset = piece.seq, piece.offset
        copies = _copies(piece)
        sid = self.split.feed(seq, offset, self.daemon_starts, copies, ahead)
        self.lines.add(piece)
        if len(seq):
            self._sessions_seen(seq, sid)
            # The waiting lines that stand before this piece's last event are placed now.
            for lines in self.lines.take_before(int(seq[-1])):
                self._place(lines, seq, offset, sid)
            self.last = (int(seq[-1]), float(offset[-1]), int(sid[-1]))
        if len(seq):
            ev = {name: getattr(piece, name) for name in PAIRED}
            if len(piece.copy_seq):
                ev["copies"] = copies
            self.pairing.feed(ev, sid, consume=True)

    def _sessions_seen(self, seq: np.ndarray, sid: np.ndarray) -> None:
        """Note the sessions the piece begins, and where each of its sessions ends so far."""
        for _ in np.flatnonzero(np.diff(sid, prepend=len(self.last_seq) - 1)).tolist():
            self.last_seq.append(-1)
            self.by_session.append(Counter())
        for i in np.flatnonzero(np.diff(sid, append=sid[-1] + 1)).tolist():
            self.last_seq[int(sid[i])] = int(seq[i])

    def _place(self, lines: _Placed, seq: np.ndarray, offset: np.ndarray, sid: np.ndarray) -> None:
        """Give lines standing before ``seq[-1]`` (or all, at the end) their session:
        that of the event before them, unless a daemon start lies in between (the next
        event's, a new one), and each acquire line where it stands among its session's
        events (``timing.attribute``)."""
        if self.last is not None:
            seq = np.concatenate([[self.last[0]], seq])
            offset = np.concatenate([[self.last[1]], offset])
            sid = np.concatenate([[self.last[2]], sid])
        n = len(seq)

        def session_of(at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """(session, index of the event before) of lines at ``at``."""
            prev = np.searchsorted(seq, at) - 1
            p = np.maximum(prev, 0)
            s = sid[p].astype(np.int64)
            if len(self.daemon_starts):  # a daemon start since the event before: the next's
                starts = self.daemon_starts
                restarted = np.searchsorted(starts, at) > np.searchsorted(starts, seq[p])
                s += restarted & (prev + 1 < n) & (prev >= 0)
            return np.where(prev >= 0, s, 0), prev

        if len(lines.skipped_seq):
            where, _ = session_of(lines.skipped_seq)
            codes, reasons = factorize(np.array(lines.skipped_reason, dtype=object))
            cells = np.bincount(where * len(reasons) + codes)
            for cell in np.flatnonzero(cells).tolist():
                s, reason = divmod(cell, len(reasons))
                self.by_session[s][reasons[reason]] += int(cells[cell])
        cz = lines.cuzk
        if not len(cz.seq):
            return
        where, prev = session_of(cz.seq)
        acq = np.flatnonzero(cz.kind == CUZK_ACQUIRE)
        s, p = where[acq], prev[acq]
        before = np.maximum(p, 0)
        low = np.where((p >= 0) & (sid[before] == s), offset[before], -np.inf)
        after = np.minimum(p + 1, n - 1)
        high = np.where((p + 1 < n) & (sid[after] == s), offset[after], np.inf)
        self.blocks.feed(cz, (low.astype(np.float64), high.astype(np.float64)), session=where)

    def finish(self, job_ids: list[str]) -> list[Session]:
        """The sessions of everything fed (none without an event); the assembler is spent."""
        self._piece()
        self._read(final=True)
        n = self.split.sessions
        if not n:
            return []
        empty = np.empty(0, np.int64)
        for lines in self.lines.take_before(None):
            self._place(lines, empty, empty.astype(np.float64), empty.astype(np.int32))
        heap.release_free_memory()
        paired = self.pairing.result(n)
        heap.release_free_memory()
        skipped = self.by_session
        for s, counts in enumerate(paired.skipped):
            skipped[s].update(counts)
        mapping = self._worker_map(n)
        notes: list[list[str]] = [[] for _ in range(n)]
        calls = paired.calls
        calls["gpu"] = _gpus(calls, mapping, self.workers_per_gpu, notes)
        kernel_source, blocks = self._kernels(calls, n, skipped, notes)
        kinds = self._kinds(len(job_ids))
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

    def _kinds(self, jobs: int) -> np.ndarray:
        """The kind of every job (by code; None without one), sharing one string a kind."""
        codes = self.job_kind.take()
        names = np.array([None, *self.kind_names], dtype=object)
        out = np.full(jobs, None, dtype=object)
        out[: len(codes)] = names[codes + 1]
        return out

    def _kernels(self, calls: dict, n: int, skipped: list[Counter[str]], notes: list[list[str]]):
        """Give each session's blocks to its calls (kernel columns into ``calls``, lines
        skipped and notes into ``skipped`` and ``notes``); per session, where its kernel
        times come from and (blocks read, ambiguous, unattributed)."""
        kernel_source = [KERNEL_SOURCE_GPU_MS] * n
        blocks = [(0, 0, None)] * n
        k_bounds = np.searchsorted(calls["session"], np.arange(n + 1))
        one_gpu = _one_gpu(calls["gpu"], calls["start_seq"], k_bounds)
        all_blocks, cz_skipped, with_lines = self.blocks.result(one_gpu)
        b_bounds = np.searchsorted(all_blocks.session, np.arange(n + 1))
        # One session with lines: its blocks are all of them, given up as they are attributed.
        alone = len(with_lines) == 1
        for s in with_lines:
            rows = slice(k_bounds[s], k_bounds[s + 1])
            mine = all_blocks if alone else all_blocks.rows(b_bounds[s], b_bounds[s + 1])
            att = attribute({k: v[rows] for k, v in calls.items()}, mine)
            del mine
            att.skipped.update(cz_skipped[s])
            skipped[s].update(att.skipped)
            notes[s] += att.notes
            if np.isfinite(att.columns["kernel_start"]).any():
                kernel_source[s] = KERNEL_SOURCE_TIMING
            blocks[s] = (att.blocks, att.ambiguous, att.unattributed)
            _fill(calls, rows, att.columns)  # (columns no session filled: NaN in the tables)
            del att
        del all_blocks
        heap.release_free_memory()
        return kernel_source, blocks

    def _worker_map(self, n: int) -> list[dict[int, int]]:
        """Worker -> GPU per session, from the "GPU worker started" lines (each belongs to
        the run whose first event follows it: the first session whose last event is
        after it, else the last)."""
        mapping: list[dict[int, int]] = [{} for _ in range(n)]
        if not self.worker_lines:
            return mapping
        at = np.array([s for s, _, _ in self.worker_lines], np.int64)
        where = np.minimum(np.searchsorted(np.array(self.last_seq, np.int64), at), n - 1)
        for (_, worker, gpu), s in zip(self.worker_lines, where.tolist(), strict=True):
            mapping[s][worker] = gpu
        return mapping


class _Lines:
    """CUZK_TIMING and skipped lines waiting for the event after them, as the pieces they
    came in (a long stretch of lines without an event is placed a piece at a time)."""

    def __init__(self) -> None:
        self.parts: deque[_Placed] = deque()

    def add(self, piece: EventBatch) -> None:
        if len(piece.cuzk.seq) or len(piece.skipped_seq):
            self.parts.append(_Placed(piece.cuzk, piece.skipped_seq, piece.skipped_reason))

    def take_before(self, seq: int | None) -> Iterator[_Placed]:
        """The lines before ``seq`` (all: None), a piece's at a time, in file order; the
        rest wait on."""
        while self.parts:
            part = self.parts[0]
            cz = part.cuzk
            k = len(cz.seq) if seq is None else int(np.searchsorted(cz.seq, seq))
            j = (
                len(part.skipped_seq)
                if seq is None
                else int(np.searchsorted(part.skipped_seq, seq))
            )
            if k == len(cz.seq) and j == len(part.skipped_seq):
                yield self.parts.popleft()
                continue
            self.parts[0] = _Placed(
                CuzkLines(cz.seq[k:], cz.kind[k:], cz.a[k:], cz.b[k:]),
                part.skipped_seq[j:],
                part.skipped_reason[j:],
            )
            if k or j:
                yield _Placed(
                    CuzkLines(cz.seq[:k], cz.kind[:k], cz.a[:k], cz.b[:k]),
                    part.skipped_seq[:j],
                    part.skipped_reason[:j],
                )
            return


class _Placed(NamedTuple):
    """Lines to place: CUZK_TIMING ones and skipped ones."""

    cuzk: CuzkLines
    skipped_seq: np.ndarray
    skipped_reason: list[str]


def _copies(piece: EventBatch, rows: int | None = None) -> np.ndarray:
    """Exact copies folded into each of the piece's rows (its first ``rows``)."""
    n = len(piece.seq) if rows is None else rows
    copies = np.zeros(n, np.int64)
    if len(piece.copy_seq):
        at = np.searchsorted(piece.seq, piece.copy_seq)
        mine = at < n
        copies[at[mine]] = piece.copy_n[mine]
    return copies


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


def _one_gpu(gpu: np.ndarray, start_seq: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per session (its calls ``bounds[s]:bounds[s + 1]``): whether the calls that started
    all ran on one GPU (how ``build_blocks`` groups)."""
    started = np.flatnonzero(start_seq >= 0)
    session = np.searchsorted(bounds, started, side="right") - 1
    out = np.ones(len(bounds) - 1, bool)
    if len(started):
        g = gpu[started].astype(np.int64)
        at = np.flatnonzero(np.diff(session, prepend=-1))
        low, high = np.minimum.reduceat(g, at), np.maximum.reduceat(g, at)
        out[session[at]] = low == high
    return out


def _ranges(values: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``."""
    out: list[str] = []
    for v in values:
        if out and v == int(out[-1].split("-")[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return ", ".join(out)
