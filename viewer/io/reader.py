"""``open_log``: read one cuzk daemon log into a ``Timeline``.

Scan the file once (``scan_log``: the records of every line, through ``scanner``); each
scanned piece goes to an ``Assembler``, which cuts the events into sessions, pairs them
into GPU calls and groups the CUZK_TIMING lines into blocks, then maps workers to GPUs and
gives the blocks to their calls.  Follow mode feeds a ``LogScan`` the lines each poll
adds, and builds the sessions of everything it holds (``LogScan.sessions``).
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections import Counter
from collections.abc import Callable, Iterator
from os import PathLike

from viewer.io import assemble, source
from viewer.io.assemble import Assembler
from viewer.io.batch import EventBatch, empty_batch, merge_batches, slices
from viewer.io.errors import LoadCancelled, LogError
from viewer.io.facts import facts, give
from viewer.io.records import JobIds, Ordinals, job_names
from viewer.io.scanner import iter_chunks, iter_range
from viewer.io.source import Chunk, Skip, Source, checked, log_path
from viewer.model import Session, Timeline

EXPECTED = "expected a cuzk daemon log with lines like TIMELINE,<ms>,<EVENT>,<job>,<detail>"
HEAD_BYTES = 4096  # the text's first bytes, to say what a file without records is


class LogScan:
    """Everything scanned of one file so far, merged (``batch``), and how the read went.
    ``scan_log`` scans a file once; ``LogFollower`` feeds one the lines each poll adds.
    With an ``Assembler`` (``open_log``), the batches go to it as they are scanned and
    none is kept."""

    def __init__(self, assembler: Assembler | None = None) -> None:
        self.jobs = JobIds()  # job id -> global code, in order of appearance
        self.ords = Ordinals()
        self.batch: EventBatch = empty_batch()
        self.assembler = assembler
        self.head = b""  # the first bytes of the text
        self.damage = ""  # why a compressed file could not be read on (``Source.damage``)
        self.truncated = False  # a compressed file ended early
        self.trailing = 0  # bytes after a compressed file's stream that are none of it
        self.compression = "plain"  # ``Source.compression``
        self.consumed = 0  # file bytes read (compressed bytes for .gz / .zst)
        self.shrunk: tuple[int, int] | None = None  # (bytes at the start, at the end)

    @property
    def events(self) -> int:
        """TIMELINE events read (exact copies included)."""
        if self.assembler is not None:
            return self.assembler.events
        return len(self.batch.seq) + int(self.batch.copy_n.sum())

    def skipped(self) -> Counter[str]:
        """The lines the scanners skipped, by reason."""
        if self.assembler is not None:
            return self.assembler.skipped
        return Counter(self.batch.skipped_reason)

    def feed(
        self,
        fd: int,
        lo: int,
        hi: int,
        progress: Callable[[int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> None:
        """Scan the bytes ``[lo, hi)`` of the plain file ``fd`` (``lo`` a line start)."""
        self._add(iter_range(fd, lo, hi, self.ords, self.jobs, progress, cancel))

    def feed_chunks(self, chunks: Iterator[Chunk | Skip]) -> None:
        """Scan chunks of whole lines (a decompressed stream)."""
        self._add(iter_chunks(chunks, self.ords, self.jobs))

    def _add(self, batches: Iterator[EventBatch]) -> None:
        if self.assembler is not None:
            # Closed on any way out: an error in the assembler must not leave the scan's
            # threads reading the file's descriptor after the file is closed (and reused).
            with contextlib.closing(batches):
                for batch in batches:
                    self.assembler.add(batch)
            return
        batches = list(batches)
        if batches:  # an empty range scans no piece
            self.batch = merge_batches([self.batch, *batches])

    def sessions(self, workers_per_gpu: int | None = None) -> list[Session]:
        """The sessions of everything scanned (none until an event could be read); with an
        assembler, those it read as the scan went (it is spent), else those of the scan
        kept whole, read in slices (it stays whole: a followed log appends to it)."""
        job_ids = job_names(self.jobs)
        if self.assembler is not None:
            self.jobs = JobIds()  # spent: the ids live on in ``job_ids``, not twice
            self.assembler.workers_per_gpu = workers_per_gpu
            return self.assembler.finish(job_ids)
        if not len(self.batch.seq):
            return []
        assembler = Assembler(workers_per_gpu)
        for part in slices(self.batch, assemble.PIECE_ROWS):  # a piece at a time, as open_log
            assembler.add(part)
        return assembler.finish(job_ids)


def scan_log(
    path: str | bytes | PathLike,
    *,
    progress: Callable[[int, int], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    end: int | None = None,
    assembler: Assembler | None = None,
) -> LogScan:
    """The records of every line of ``path`` (plain, .gz or .zst), before sessions are
    built (``assembler``: given each batch as it is scanned); see ``open_log`` for the
    arguments."""
    path = log_path(path)
    scan = LogScan(assembler)
    with Source(path, end) as src:
        was_enabled = gc.isenabled()
        gc.disable()  # millions of short-lived objects: the collector would rescan them all
        try:
            _scan(src, scan, progress, cancel)
        finally:
            if was_enabled:
                gc.enable()
        scan.damage, scan.truncated, scan.consumed = src.damage, src.truncated, src.position()
        scan.trailing, scan.compression = src.trailing, src.compression
        try:
            now = os.fstat(src.fileno()).st_size
        except OSError:
            now = src.total
        if now < src.total:  # truncated or replaced in place while it was read
            scan.shrunk = (src.total, now)
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
    assembler = Assembler(workers_per_gpu)
    scan = scan_log(path, progress=progress, cancel=cancel, end=end, assembler=assembler)
    _check_found(path, scan)
    sessions = scan.sessions(workers_per_gpu)
    if sessions:
        give(sessions, facts(path))
    if scan.shrunk is not None:
        was, now = scan.shrunk
        sessions[-1].notes.append(
            f"the file shrank while it was read, from {was} to {now} bytes (truncated or "
            "rotated in place?): the figures are of the part read; open it again for what "
            "it holds now"
        )
    if scan.damage:
        sessions[-1].notes.append(f"{scan.damage}; the rest of the file is lost")
    elif scan.truncated:
        sessions[-1].notes.append("the compressed stream ends early: the file is cut short")
    if scan.trailing:
        what = scan.compression
        sessions[-1].notes.append(
            f"{scan.trailing} trailing bytes after the {what} stream ignored (they are no "
            f"{what} data; the stream before them is read whole)"
        )
    return Timeline(source=path, sessions=sessions, skipped={})


def _check_found(path: PathLike, scan: LogScan) -> None:
    """``LogError`` naming why no event could be read, if none could."""
    reasons = scan.skipped()
    found = scan.events + sum(reasons.values())
    if not found and scan.damage:
        raise LogError(f"{path}: {scan.damage}; no TIMELINE line before the damage")
    if not found:
        raise LogError(f"{path}: {_not_a_log_reason(scan.head)}")
    if not scan.events:
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
    codec = utf16(head)
    if codec:  # a log saved by an editor or PowerShell's `>`: its NULs read as binary
        return (
            f"is {codec} text; cuzk logs are UTF-8 (or ASCII): convert it with "
            f"iconv -f {codec} -t UTF-8"
        )
    text_bytes = sum(1 for c in head if c in (9, 10, 13) or 32 <= c < 127 or c >= 128)
    if b"\x00" in head or (head and text_bytes < 0.9 * len(head)):
        return f"binary data, not a text log; {EXPECTED}"
    return f"no TIMELINE lines found; {EXPECTED}"


def utf16(head: bytes) -> str | None:
    """The iconv name of the UTF-16 that ``head`` (a file's first bytes) is written in:
    ``UTF-16`` after a byte order mark (iconv reads it), ``UTF-16LE`` / ``UTF-16BE`` for
    ASCII text without one (a NUL in every other byte, and in no other); None for any
    other bytes."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        codec = "utf-16-le" if head.startswith(b"\xff") else "utf-16-be"
        text = head[2 : len(head) & ~1].decode(codec, "replace")
        shown = sum(1 for c in text if c.isprintable() or c in "\t\r\n")
        return "UTF-16" if text and shown >= 0.9 * len(text) else None
    pairs = len(head) // 2
    if pairs < 8:
        return None
    even, odd = head[0 : 2 * pairs : 2].count(0), head[1 : 2 * pairs : 2].count(0)
    if min(even, odd) > 0.02 * pairs or max(even, odd) < 0.9 * pairs:
        return None
    return "UTF-16LE" if odd > even else "UTF-16BE"
