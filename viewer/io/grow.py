"""``Growing``: a numpy column that grows at its end while a log is read a piece at a time,
its rows written anywhere below its length (a call's GPU_END, a block's late line)."""

from __future__ import annotations

import mmap

import numpy as np

#: Rows a column first makes room for; it then doubles its room.
FIRST_ROOM = 1 << 8
#: A column of this many bytes or more lives in pages mapped for it alone.
MAPPED_BYTES = 1 << 16
#: A private anonymous map (a shared one cannot grow: its pages past the first size fault
#: with SIGBUS); None where the system has none (Windows): heap buffers throughout.
PRIVATE = (
    mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    if hasattr(mmap, "MAP_PRIVATE") and hasattr(mmap, "MAP_ANONYMOUS")
    else None
)


class Growing:
    """Rows ``[0, len)`` of a buffer with room to grow; new rows hold ``fill``; rows are
    written with ``put`` (or ``append``).

    ``compact`` (a float64 column): held as float32 as long as every value written is one
    exactly (the daemon writes its kernel times and durations as whole milliseconds), and
    made float64 at the first that is not: half the memory, the same values.

    From MAPPED_BYTES on, the buffer is an anonymous memory map that grows in place
    (``mremap``: no row is copied) and whose room stays unmapped until written.  A heap
    buffer copied into a larger one at each growth left the old one in malloc's free
    lists, resident: on a 10^6-event log, 11-15 MB more at each of the last growths, and
    0.15 s of copying."""

    def __init__(self, dtype: np.dtype | type, fill: object, *, compact: bool = False) -> None:
        self.fill = fill
        self.wide = np.dtype(dtype)
        self.compact = compact and self.wide == np.float64
        self.dtype = np.dtype(np.float32) if self.compact else self.wide
        self.buf = np.empty(0, self.dtype)
        self.map: mmap.mmap | None = None
        self.n = 0

    def put(self, index: object, values: object, exact: bool | None = None) -> None:
        """Write ``values`` at the rows ``index`` (below ``len``); ``exact``: whether
        float32 holds them all (None: find out)."""
        if self.compact and not (exact if exact is not None else exact32(values)):
            self._widen()
        self.buf[: self.n][index] = values

    def _widen(self) -> None:
        """Hold the column as float64 from now on."""
        rows = self.buf[: self.n].astype(self.wide)
        self.compact, self.dtype = False, self.wide
        self.buf, self.map, self.n = np.empty(0, self.dtype), None, 0
        self.append(rows)

    def __len__(self) -> int:
        return self.n

    @property
    def rows(self) -> np.ndarray:
        """The rows so far (a view: valid until the column grows again)."""
        return self.buf[: self.n]

    def grow(self, count: int) -> None:
        """``count`` new rows at the end, holding ``fill``."""
        n = self.n + count
        if n > len(self.buf):
            self._make_room(max(n, 2 * len(self.buf), FIRST_ROOM))
        self.buf[self.n : n] = self.fill
        self.n = n

    def _make_room(self, rows: int) -> None:
        nbytes = rows * self.dtype.itemsize
        if nbytes < MAPPED_BYTES or PRIVATE is None:
            buf = np.empty(rows, self.dtype)
            buf[: self.n] = self.buf[: self.n]
            self.buf = buf
            return
        if self.map is not None:
            self.buf = np.empty(0, self.dtype)  # the map's only view, let go to move it
            try:
                self.map.resize(nbytes)
                self.buf = np.frombuffer(self.map, self.dtype)
                return
            except (BufferError, OSError, SystemError):  # a view still held; no mremap
                self.buf = np.frombuffer(self.map, self.dtype)
        new = mmap.mmap(-1, nbytes, flags=PRIVATE)
        buf = np.frombuffer(new, self.dtype)
        buf[: self.n] = self.buf[: self.n]
        self.map, self.buf = new, buf

    def append(self, values: np.ndarray) -> None:
        """``values`` as new rows at the end (written once: not filled first)."""
        if self.compact and not exact32(values):
            self._widen()  # before the room: its rows are not written yet
        n, m = self.n, self.n + len(values)
        if m > len(self.buf):
            self._make_room(max(m, 2 * len(self.buf), FIRST_ROOM))
        self.buf[n:m] = values
        self.n = m

    def take(self) -> np.ndarray:
        """The rows (a view of the buffer, whose room was never written; float32 for a
        compact column still held so), the column let go."""
        rows = self.buf[: self.n]
        self.buf, self.map, self.n = np.empty(0, self.dtype), None, 0
        return rows

    def shrink(self) -> None:
        """Give back the room not used (the column is not expected to grow again)."""
        if self.n < len(self.buf):
            self.buf, self.map = self.buf[: self.n].copy(), None


def exact32(values: object) -> bool:
    """Whether float32 holds every one of ``values`` exactly (NaN included)."""
    v = np.asarray(values)
    if v.dtype == np.float32 or not v.size:
        return True
    if v.dtype.kind not in "fiub":
        return False
    with np.errstate(over="ignore", invalid="ignore"):  # too big for float32: inf, unequal
        narrow = v.astype(np.float32)
    return bool(np.array_equal(narrow.astype(np.float64), v, equal_nan=True))
