"""``Frame``: the model's tables, named numpy columns of one length, and nothing more.

The figures of a session read its tables' columns a few hundred times; a pandas DataFrame
builds a Series for each read (8-60 µs) and each new frame costs 50-300 µs, which made a
log of thousands of short daemon runs take 10 ms a session, and pandas' import alone took
a third of a report's time on a big log (issue 15).  A ``Frame`` hands out its numpy
arrays as they are (read-only: tables are shared, never written), so a column read is a
dict lookup and a frame is a dict.  Reductions follow pandas' rules where the code needs
them (``viewer.analysis.groups``: NaN skipped).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np


def _column(value: object, n: int) -> np.ndarray:
    """A read-only column of ``n`` times ``value``."""
    array = np.full(n, value, dtype=object if isinstance(value, str) else None)
    array.flags.writeable = False
    return array


def constant(value: object, n: int, dtype: object = None) -> np.ndarray:
    """A read-only column of ``n`` times ``value`` that holds one value (stride 0): the
    CUZK_TIMING columns of a log without those lines, 13 of ~27, were ~100 bytes a call
    of NaN (1.5 M calls: 156 MB)."""
    return np.broadcast_to(np.array(value, dtype=dtype), (n,))


def is_constant(col: np.ndarray) -> bool:
    """Whether ``col`` is a ``constant`` column (of more than one row)."""
    return col.ndim == 1 and len(col) > 1 and col.strides == (0,)


def take_rows(col: np.ndarray, rows: np.ndarray | slice) -> np.ndarray:
    """``col[rows]``; of a ``constant`` column, a constant column again (no copy); rows
    given as a slice (``run_of``): a view of ``col``, no copy either."""
    if isinstance(rows, slice):
        return col[rows]
    if is_constant(col):
        return constant(col[0], len(rows), col.dtype)
    return col[rows]


def where(
    cond: np.ndarray, a: np.ndarray | float, b: np.ndarray | float | Callable[[], np.ndarray]
) -> np.ndarray:
    """``np.where(cond, a, b)`` (``b`` made by calling it where it is a function); the
    array ``a`` or ``b`` itself where ``cond`` is all true or all false (the columns of a
    whole log of one shape are views, not copies: 1.5 M calls held five more 12 MB
    columns)."""
    if cond.all() and isinstance(a, np.ndarray):
        return a
    b = b() if callable(b) else b
    if not cond.any() and isinstance(b, np.ndarray):
        return b
    return np.where(cond, a, b)


def run_of(rows: np.ndarray) -> slice | np.ndarray:
    """``rows`` as a slice where they are one run of consecutive positions (every started
    call of a log whose calls all started: ``analysis.calls`` of 1.5 M one-call jobs
    copied 132 MB of columns the partitions table holds), else ``rows`` themselves."""
    n = len(rows)
    if n and rows[-1] - rows[0] == n - 1 and (n < 2 or bool((np.diff(rows) == 1).all())):
        return slice(int(rows[0]), int(rows[0]) + n)
    return rows


class _Lazy(Mapping):
    """Columns made by their functions when first read, and kept: a whole-session table
    of ~17 columns of which a report reads 7 (1.5 M calls: 12 MB a column not made)."""

    __slots__ = ("_makers", "_made")

    def __init__(self, makers: Mapping[str, Callable[[], np.ndarray]]) -> None:
        self._makers, self._made = makers, {}

    def _make(self, name: str) -> np.ndarray:
        return np.asarray(self._makers[name]())

    def __getitem__(self, name: str) -> np.ndarray:
        col = self._made.get(name)
        if col is None:
            col = self._make(name)
            if col.flags.writeable:
                col = col.view()
                col.flags.writeable = False
            col = self._made.setdefault(name, col)  # two threads: one copy is kept
        return col

    def forget(self) -> None:
        """Let go of the columns made (made again when read)."""
        self._made.clear()

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)

    def __contains__(self, name: object) -> bool:
        return name in self._makers


class _Taken(_Lazy):
    """The columns of ``source`` at rows ``rows``, each made when first read and kept: a
    table of every started call in start order (``analysis.calls``) is read for a handful
    of its ~30 columns, and a copy of all of them cost ~30 MB at 10^6 events."""

    __slots__ = ("_rows",)

    def __init__(self, source: Mapping[str, np.ndarray], rows: np.ndarray | slice) -> None:
        super().__init__(source)  # its names are the source's
        self._rows = rows

    def _make(self, name: str) -> np.ndarray:
        return take_rows(self._makers[name], self._rows)


class _Assigned(Mapping):
    """The columns of ``base`` with ``extra`` added or put in place (a lazy frame's
    ``assign``: its unread columns stay unread)."""

    __slots__ = ("_base", "_extra", "_names")

    def __init__(self, base: Mapping[str, np.ndarray], extra: dict[str, np.ndarray]) -> None:
        self._base, self._extra = base, extra
        self._names = [*base, *(k for k in extra if k not in base)]

    def __getitem__(self, name: str) -> np.ndarray:
        col = self._extra.get(name)
        return self._base[name] if col is None else col

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._extra or name in self._base


class Frame:
    """Columns by name, in order, all of one length.

    ``frame["x"]`` is column ``x`` (a read-only numpy array); ``frame[["x", "y"]]`` the
    frame of those columns; ``frame[mask]`` or ``frame.take(rows)`` the chosen rows;
    ``frame.row(i)`` row ``i`` as a dict.  Frames are never written: ``assign`` and
    ``rename`` give new frames sharing the unchanged columns.
    """

    __slots__ = ("__weakref__", "_base", "_cols", "_len", "_span")

    def __init__(self, columns: Mapping[str, object] | None = None, length: int | None = None):
        cols: dict[str, np.ndarray | None] = {}
        n = length
        scalars = []
        for name, values in (columns or {}).items():
            name = str(name)
            if isinstance(values, np.ndarray) and values.ndim == 1:
                array = values
            elif np.ndim(values) == 0:
                cols[name] = None  # filled in once the arrays set the length
                scalars.append((name, values))
                continue
            else:
                array = np.asarray(values)
                if array.ndim != 1:
                    raise ValueError(f"column {name!r} must be 1-d, got shape {array.shape}")
            if array.flags.writeable:
                array = array.view()
                array.flags.writeable = False
            if n is None:
                n = len(array)
            elif len(array) != n:
                raise ValueError(f"column {name!r} has {len(array)} rows, not {n}")
            cols[name] = array
        n = 0 if n is None else n
        for name, value in scalars:
            cols[name] = _column(value, n)
        self._cols: dict[str, np.ndarray] = cols  # type: ignore[assignment]
        self._len = n
        self._base = self._span = None

    @classmethod
    def lazy(cls, makers: Mapping[str, Callable[[], np.ndarray]], n: int) -> Frame:
        """A frame of ``n`` rows whose column ``name`` is ``makers[name]()``, made when first
        read (a maker may read the frame's other columns)."""
        return cls._trusted(_Lazy(makers), n)  # type: ignore[arg-type]

    @classmethod
    def _trusted(cls, cols: dict[str, np.ndarray], n: int) -> Frame:
        """A frame of read-only 1-d arrays of length ``n``, taken as they are."""
        f = object.__new__(cls)
        f._cols, f._len, f._base, f._span = cols, n, None, None
        return f

    def rows_of(self, a: int, b: int) -> Frame:
        """Rows ``[a, b)``, whose column views are made each when first read and dropped by
        ``release``: a session's tables are parts of the log's shared ones, and 3000 daemon
        runs of ~30 columns each held 14 MB of views made up front (30 000 runs whose
        ``info`` read one column each made all ~30: ~150 MB)."""
        f = object.__new__(Frame)
        f._base, f._span = self._cols, slice(a, b)
        f._len = len(range(self._len)[f._span])
        return f

    def __getattr__(self, name: str):
        # Only an unread ``rows_of`` frame lacks ``_cols``: its views, each made when read.
        if name != "_cols" or self._base is None:
            raise AttributeError(name)
        self._cols = _Taken(self._base, self._span)
        return self._cols

    def _eager(self) -> dict[str, np.ndarray] | None:
        """The columns as a dict where they are one: a dict frame's own, or a ``rows_of``
        table's views of the log's (a take of it copies them, as before its views were made
        when read, holding none of the log's columns: a consumed what-if's bare session
        kept the whole log's, 136 MB at 1.5 M jobs); None for a lazy frame."""
        if self._base is not None:
            return {k: v[self._span] for k, v in self._base.items()}
        return self._cols if isinstance(self._cols, dict) else None

    def release(self) -> None:
        """Let go of the column views of a ``rows_of`` frame, and of the columns a lazy
        frame made (made again when read)."""
        if self._base is not None:
            with contextlib.suppress(AttributeError):  # never read: nothing to let go
                del self._cols
        elif isinstance(self._cols, _Lazy):
            self._cols.forget()

    # ---- shape -------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._len

    @property
    def columns(self) -> list[str]:
        return list(self._cols)

    @property
    def empty(self) -> bool:
        return self._len == 0

    def __contains__(self, name: object) -> bool:
        return name in self._cols

    def __iter__(self) -> Iterator[str]:
        return iter(self._cols)

    def items(self) -> Iterable[tuple[str, np.ndarray]]:
        return self._cols.items()

    def __repr__(self) -> str:
        return f"Frame({self._len} rows: {', '.join(self._cols)})"

    # ---- access ------------------------------------------------------------------------

    def __getitem__(self, key: object):
        if isinstance(key, str):
            return self._cols[key]
        if isinstance(key, list | tuple):
            if isinstance(self._cols, _Lazy):  # columns not made yet stay so
                cols = self._cols
                return Frame.lazy(
                    {k: functools.partial(cols.__getitem__, k) for k in key}, self._len
                )
            return Frame._trusted({k: self._cols[k] for k in key}, self._len)
        if isinstance(key, slice):  # views of read-only arrays are read-only
            span = range(self._len)[key]
            cols = self._eager()
            if cols is None:  # a lazy frame's unread columns stay so
                rows = slice(span.start, span.stop) if span.step == 1 else np.array(span)
                return Frame._trusted(_Taken(self._cols, rows), len(span))  # type: ignore[arg-type]
            return Frame._trusted({k: v[key] for k, v in cols.items()}, len(span))
        rows = np.asarray(key)
        if rows.dtype == bool:
            if len(rows) != self._len:
                raise ValueError(f"a mask of {len(rows)} rows for a frame of {self._len}")
            if rows.all():  # frames are never written: every row is this frame itself
                return self
            rows = np.flatnonzero(rows)
        return self.take(rows)

    def get(self, name: str, default: object = None):
        return self._cols.get(name, default)

    def take(self, rows: object, *, lazy: bool = False) -> Frame:
        """The rows at positions ``rows``, in that order.  ``lazy``: each column is made when
        first read (and this frame's columns are kept until then): for a table derived
        from a long-lived one and read for a few columns.  Rows of a lazy frame are lazy."""
        rows = np.asarray(rows, dtype=np.intp)
        n, rows = len(rows), run_of(rows)
        source = None if lazy else self._eager()
        if source is None:
            return Frame._trusted(_Taken(self._cols, rows), n)  # type: ignore[arg-type]
        cols = {k: take_rows(v, rows) for k, v in source.items()}
        for v in cols.values():
            if v.flags.writeable:
                v.flags.writeable = False  # new arrays of this frame's own
        return Frame._trusted(cols, n)

    def row(self, i: int, columns: Iterable[str] | None = None) -> dict[str, object]:
        """Row ``i`` as ``{column: value}`` (numpy scalars), of ``columns`` only if given (a
        lazy frame's other columns stay unmade)."""
        if not -self._len <= i < self._len:
            raise IndexError(f"row {i} of a frame of {self._len}")
        names = self._cols if columns is None else columns
        return {k: self._cols[k][i] for k in names}

    def rows(self) -> Iterator[tuple]:
        """Every row as a tuple of plain Python values, in column order."""
        return zip(*(v.tolist() for v in self._cols.values()), strict=True)

    def to_numpy(self, dtype: object = None) -> np.ndarray:
        """The columns side by side, one row per row: shape (rows, columns)."""
        if not self._cols:
            return np.zeros((self._len, 0), dtype=dtype or np.float64)
        return np.column_stack([np.asarray(v, dtype=dtype) for v in self._cols.values()])

    def nbytes(self) -> int:
        """Bytes of the columns' values, the objects of an object column included."""
        total = 0
        for v in self._cols.values():
            total += v.nbytes
            if v.dtype == object:
                total += sum(map(sys.getsizeof, v.tolist()))
            elif v.dtype.kind == "T":  # numpy's strings: past 15 bytes, held out of line
                sizes = (len(s.encode("utf-8")) for s in v.tolist())
                total += sum(n for n in sizes if n > 15)
        return total

    def to_dict(self) -> dict[str, np.ndarray]:
        return dict(self._cols)

    # ---- new frames --------------------------------------------------------------------

    def assign(self, **columns: object) -> Frame:
        """This frame with ``columns`` added or replaced (a scalar fills its column)."""
        cols = self._eager()
        if cols is not None:
            return Frame({**cols, **columns}, self._len)
        extra = Frame(columns, self._len)._cols
        return Frame._trusted(_Assigned(self._cols, extra), self._len)  # type: ignore[arg-type]

    def rename(self, names: Mapping[str, str]) -> Frame:
        return Frame._trusted({names.get(k, k): v for k, v in self._cols.items()}, self._len)

    def sort_by(self, name: str) -> Frame:
        """Rows sorted by column ``name`` (stable; NaN last): the frame itself when they
        already are (no copy of every column)."""
        col = self._cols[name]
        if len(col) < 2 or bool((col[1:] >= col[:-1]).all()):
            return self
        return self.take(np.argsort(col, kind="stable"))

    @staticmethod
    def concat(frames: Sequence[Frame]) -> Frame:
        """The rows of ``frames`` one after the other (the columns of the first)."""
        if not frames:
            return Frame()
        names = frames[0].columns
        return Frame(
            {k: np.concatenate([f[k] for f in frames]) for k in names}, sum(map(len, frames))
        )

    def equals(self, other: object) -> bool:
        """Same columns in the same order, same dtypes and values (NaN equal to NaN)."""
        if not isinstance(other, Frame) or self.columns != other.columns or len(self) != len(other):
            return False
        for k, a in self._cols.items():
            b = other[k]
            if a.dtype != b.dtype:
                return False
            if a.dtype.kind == "f":
                if not np.array_equal(a, b, equal_nan=True):
                    return False
            elif not np.array_equal(a, b):
                return False
        return True

    def to_pandas(self):
        """A pandas DataFrame of the same columns (pandas is imported only here)."""
        import pandas as pd

        return pd.DataFrame(
            {
                k: pd.Series(v.astype(object), dtype=object) if v.dtype.kind in "OT" else v
                for k, v in self.items()
            }
        )


def empty_like(columns: Mapping[str, str]) -> Frame:
    """A zero-row frame with ``columns`` (name -> dtype)."""
    return Frame({k: np.zeros(0, dtype=dtype) for k, dtype in columns.items()}, 0)
