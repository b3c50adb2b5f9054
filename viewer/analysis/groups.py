"""Reductions by group in numpy: per job, per GPU, per worker.

pandas' ``groupby`` costs 0.3-1 ms a call whatever the size, which is most of a session's
figures when a log holds thousands of short daemon runs (issue 13, item 13).  ``Groups``
sorts the keys once and reduces any number of columns with ``ufunc.reduceat``; the
results follow pandas' rules: NaN is skipped (a group of only NaN gives NaN), and
``mean`` is over the finite values.
"""

from __future__ import annotations

import numpy as np


class Groups:
    """Rows grouped by ``keys`` (integers).  ``keys`` gives the groups present, ascending;
    a reduction returns one value per present group, or, with ``size``, an array indexed
    by key from 0 to ``size - 1`` with ``fill`` where a key has no row.  ``alone``: every
    row is a group of its own (the keys ascending, each once)."""

    def __init__(self, keys: np.ndarray, size: int | None = None) -> None:
        keys = np.asarray(keys)
        self.size = size
        # A job of one call each, in order: a reduction is the column itself, not a copy
        # of it (1.5 M one-call jobs: ~12 MB a column a reduction; the job table held 8).
        self.alone = bool(len(keys) < 2 or (keys[1:] > keys[:-1]).all())
        if self.alone:
            self._order = self._starts = None
            self.keys = keys.view()
            self.keys.flags.writeable = False
            return
        self._order = np.argsort(keys, kind="stable")
        sorted_keys = keys[self._order]
        cut = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
        self._starts = np.concatenate([[0], cut])
        self.keys = sorted_keys[self._starts]

    def _reduce(self, ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
        if self.alone:  # read-only: the caller's column is not the caller's to write
            out = np.asarray(values).view()
            out.flags.writeable = False
            return out
        values = np.asarray(values)[self._order]
        return ufunc.reduceat(values, self._starts)

    def _out(self, per_group: np.ndarray, fill: float) -> np.ndarray:
        if self.size is None or (self.alone and len(self.keys) == self.size and self._dense()):
            return per_group
        out = np.full(self.size, fill, dtype=np.result_type(per_group.dtype, type(fill)))
        out[self.keys] = per_group
        return out

    def min(self, values: np.ndarray) -> np.ndarray:
        """Smallest non-NaN value per group (NaN when the group has none)."""
        return self._out(self._reduce(np.fmin, np.asarray(values, dtype=np.float64)), np.nan)

    def max(self, values: np.ndarray) -> np.ndarray:
        """Largest non-NaN value per group (NaN when the group has none)."""
        return self._out(self._reduce(np.fmax, np.asarray(values, dtype=np.float64)), np.nan)

    def sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of the non-NaN values per group (0 when there is none)."""
        v = np.asarray(values, dtype=np.float64)
        return self._out(self._reduce(np.add, np.where(np.isnan(v), 0.0, v)), 0.0)

    def mean(self, values: np.ndarray) -> np.ndarray:
        """Mean of the non-NaN values per group (NaN when there is none)."""
        v = np.asarray(values, dtype=np.float64)
        if self.alone:  # the mean of one value is the value (NaN stays NaN)
            return self._out(self._reduce(np.add, v), np.nan)
        finite = ~np.isnan(v)
        total = self._reduce(np.add, np.where(finite, v, 0.0))
        count = self._reduce(np.add, finite.astype(np.int64))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        return self._out(mean, np.nan)

    def any(self, values: np.ndarray) -> np.ndarray:
        """True where any value of the group is true (False for a key with no row)."""
        flags = self._reduce(np.logical_or, np.asarray(values, dtype=bool))
        if self.size is None:
            return flags
        out = np.zeros(self.size, dtype=bool)
        out[self.keys] = flags
        return out

    def as_dict(self, per_group: np.ndarray) -> dict[int, float]:
        """A reduction of the present groups (``size`` None) as ``{key: value}``, in plain
        Python numbers."""
        return dict(zip(self.keys.tolist(), np.asarray(per_group).tolist(), strict=True))

    def _dense(self) -> bool:
        """Whether the keys are 0, 1, ... (every key of ``size`` present, in order)."""
        k = self.keys
        return not len(k) or (k[0] == 0 and k[-1] == len(k) - 1)

    def split(self, values: np.ndarray) -> list[np.ndarray]:
        """The values of each group, in the original order within it."""
        values = np.asarray(values)
        if self.alone:
            return [values[i : i + 1] for i in range(len(values))]
        return np.split(values[self._order], self._starts[1:])

    def first_rows(self) -> np.ndarray:
        """Position (in the original order) of each group's first row."""
        if self.alone:
            return np.arange(len(self.keys))
        return self._order[self._starts]
