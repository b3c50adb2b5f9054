"""Follow a log that is still being written (``tail -f``): ``LogFollower.poll()``.

A poll reads the file up to its last complete line, never a partial last line.  When
the file shrinks or its bytes before our end change (truncation), or the path names
another inode (rotation), what was read so far stays as earlier sessions and the new
content starts new sessions after them, with ``Session.index`` renumbered.

Cost: a poll scans only the bytes added since the last one (a ``reader.LogScan`` kept
between polls), then rebuilds the sessions from all events read so far exactly as
``open_log`` does (pairing, kernel attribution: about 0.5 s per 10^6 events).  The result
equals a full re-read of ``[0, last line end)`` (tested).  Poll at ``next_interval()``,
max(0.5 s, 2 x the last poll's duration), which adapts to the log's size.
"""

from __future__ import annotations

import dataclasses
import os
import time
from os import PathLike
from typing import BinaryIO

from viewer.io import reader
from viewer.io.errors import LogError
from viewer.io.facts import HEAD_BYTES, Facts, from_text, give
from viewer.io.grammar import TL
from viewer.io.reader import LogScan
from viewer.io.records import last_line_end
from viewer.io.source import (
    GZIP_MAGIC,
    ZSTD_MAGIC,
    log_path,
    missing,
    open_regular,
    unreadable,
)
from viewer.model import Session, Timeline

MIN_INTERVAL_S = 0.5
TAIL_BYTES = 64  # bytes before our end compared on every poll: a truncate-and-regrow shows
BLOCK = 1 << 16  # backwards search for the last line end


class LogFollower:
    """Tail ``path``: ``poll()`` returns the whole Timeline read so far when it changed,
    else None.  Raises ``LogError`` for a compressed or non-log file."""

    def __init__(self, path: str | bytes | PathLike, workers_per_gpu: int | None = None) -> None:
        self.path = log_path(path)
        self.workers_per_gpu = workers_per_gpu
        self.last_read_s = 0.0  # duration of the last poll
        self._kept: list[Session] = []  # sessions of rotated-away or truncated content
        self._current: list[Session] = []  # sessions of the file followed now
        self._file: BinaryIO | None = None  # held open: a rotated inode can still be drained
        self._id: tuple[int, int] | None = None  # (st_dev, st_ino) of ``_file``
        self._end = 0  # offset past the last complete line read from ``_file``
        self._tail = b""  # the bytes just before ``_end``
        self._seen_tl = 0  # bytes of ``_file`` searched for a TIMELINE line, in vain
        self._has_tl = False
        self._scan = LogScan()
        if self.path.is_file():
            self._open()  # pin the file as it is now: a rotation before the first poll shows

    @property
    def end(self) -> int:
        """Bytes of the current file read (up to the end of its last complete line)."""
        return self._end

    def next_interval(self) -> float:
        """Seconds to wait before the next poll."""
        return max(MIN_INTERVAL_S, 2 * self.last_read_s)

    def poll(self) -> Timeline | None:
        t0 = time.perf_counter()
        try:
            changed = self._poll()
        finally:
            self.last_read_s = time.perf_counter() - t0
        return self.timeline() if changed else None

    def timeline(self) -> Timeline:
        """Everything read so far: earlier files' sessions first, renumbered."""
        sessions = [
            dataclasses.replace(s, index=i) for i, s in enumerate(self._kept + self._current)
        ]
        return Timeline(source=self.path, sessions=sessions, skipped={})

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    # ----------------------------------------------------------------- polling
    def _poll(self) -> bool:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            st = None  # between a rotation's rename and the new file's creation
        except OSError as exc:
            raise unreadable(self.path, exc) from exc
        changed = False
        if self._file is not None and (st is None or (st.st_dev, st.st_ino) != self._id):
            changed = self._grow()  # the rotated file's last lines
            self._retire()
            self.close()
        if st is None:
            if not (changed or self._kept):
                raise LogError(f"{self.path}: {missing(self.path)}")
            return changed
        if self._file is None:
            self._open()
        return self._grow() or changed

    def _open(self) -> None:
        self._file = open_regular(self.path)
        st = os.fstat(self._file.fileno())
        self._id = (st.st_dev, st.st_ino)
        self._restart()

    def _restart(self) -> None:
        self._end, self._tail, self._seen_tl, self._has_tl = 0, b"", 0, False
        self._scan = LogScan()
        self._facts: Facts | None = None  # the file's head, read once it has sessions

    def _retire(self) -> None:
        """The current file's content is done: keep its sessions, start afresh."""
        self._kept += self._current
        self._current = []
        self._restart()

    def _grow(self) -> bool:
        """Read the new complete lines of ``_file``, if any; True when sessions changed."""
        assert self._file is not None
        size = os.fstat(self._file.fileno()).st_size
        if size < self._end or self._pread(len(self._tail), self._end - len(self._tail)) != (
            self._tail
        ):
            self._retire()  # truncated, maybe written again since
        if size <= self._end:
            return False
        if self._end == 0:
            self._check_plain()
        end = self._last_line_end(size)
        if end <= self._end or not self._timeline_lines(end):
            return False
        self._scan.feed(self._file.fileno(), self._end, end)
        self._end = end
        self._tail = self._pread(min(TAIL_BYTES, end), end - min(TAIL_BYTES, end))
        sessions = self._scan.sessions(self.workers_per_gpu)
        if not sessions:
            return False  # TIMELINE lines, none readable yet
        if self._facts is None:  # the head of what is followed states facts
            self._facts = from_text(self._pread(min(HEAD_BYTES, end), 0))
        give(sessions, self._facts, first=not self._kept)
        self._current = sessions
        return True

    def _check_plain(self) -> None:
        magic = self._pread(4, 0)
        kind = "gzip" if magic.startswith(GZIP_MAGIC) else "zstd" if magic == ZSTD_MAGIC else ""
        if kind:
            raise LogError(
                f"{self.path}: a {kind}-compressed log cannot be followed (it only reads whole);"
                " open it without Follow"
            )

    def _last_line_end(self, size: int) -> int:
        """Offset past the last line end in ``[_end, size)``, or ``_end`` if there is none."""
        hi = size
        while hi > self._end:
            lo = max(self._end, hi - BLOCK)
            data = self._pread(hi - lo, lo)
            cut = last_line_end(data, 0, len(data))
            if cut >= 0:
                return lo + cut + 1
            hi = lo
        return self._end

    def _timeline_lines(self, end: int) -> bool:
        """Whether ``[0, end)`` holds a TIMELINE line yet: until then a new file (a daemon
        just started) is waited for rather than refused, unless it is binary."""
        if self._has_tl:
            return True
        pos = self._seen_tl
        while pos < end:
            hi = min(end, pos + BLOCK)
            start = max(0, pos - len(TL) + 1)  # a TIMELINE token across two blocks
            if TL in self._pread(hi - start, start):
                self._has_tl = True
                return True
            pos = hi
        self._seen_tl = end
        if b"\x00" in self._pread(min(4096, end), 0):
            reader.open_log(self.path, end=end)  # raises the reader's own "binary data" error
        return False

    def _pread(self, n: int, offset: int) -> bytes:
        assert self._file is not None
        return os.pread(self._file.fileno(), n, offset) if n > 0 else b""
