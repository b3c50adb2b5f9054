"""``Growing``: a numpy column that grows at its end while a log is read a piece at a time,
its rows written anywhere below its length (a call's GPU_END, a block's late line)."""

from __future__ import annotations

import numpy as np

#: Rows a column first makes room for; it then grows by half its size, so a column read
#: in many pieces is copied a few times in all, not once a piece.
FIRST_ROOM = 1 << 12


class Growing:
    """Rows ``[0, len)`` of a buffer with room to grow; new rows hold ``fill``."""

    def __init__(self, dtype: np.dtype | type, fill: object) -> None:
        self.fill = fill
        self.buf = np.empty(0, dtype)
        self.n = 0

    def __len__(self) -> int:
        return self.n

    @property
    def rows(self) -> np.ndarray:
        """The rows so far (a view: valid until the column grows again)."""
        return self.buf[: self.n]

    def grow(self, count: int) -> np.ndarray:
        """``count`` new rows at the end, holding ``fill``; a view of them."""
        n = self.n + count
        if n > len(self.buf):
            room = max(n, len(self.buf) + len(self.buf) // 2, FIRST_ROOM)
            buf = np.empty(room, self.buf.dtype)  # the room past n is never written: the
            buf[: self.n] = self.buf[: self.n]  # pages it spans stay unmapped until used
            self.buf = buf
        new = self.buf[self.n : n]
        new[:] = self.fill
        self.n = n
        return new

    def append(self, values: np.ndarray) -> None:
        self.grow(len(values))[:] = values

    def take(self) -> np.ndarray:
        """The rows as a column of their own (a copy only when the room was not all used),
        the buffer let go."""
        buf, n = self.buf, self.n
        self.buf, self.n = np.empty(0, buf.dtype), 0
        return buf if n == len(buf) else buf[:n].copy()
