"""Values by int64 key, as sorted runs merged as they grow (the pairing's calls by key, the
reader's job codes by the hash of their ids)."""

from __future__ import annotations

import numpy as np


class Index:
    """Rows (values >= 0) by key, as sorted runs merged as they grow: each piece's new keys
    are a run, merged with the run before while that one is not over twice its size.  A
    piece is looked up with a search a run (a few dozen at most), and each call is copied
    O(log calls) times in all (one sorted array, grown by insertion, was copied whole at
    every piece: calls x pieces on a long session)."""

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []  # (keys sorted, rows)

    def find(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions of the ``keys`` found, their rows)."""
        rows = np.full(len(keys), -1, np.int64)
        if self.runs and len(keys):
            # Searched in order: each search starts where the one before ended (a piece's
            # keys in their own order, hashes of job ids, were 3x slower to look up).
            order = np.argsort(keys, kind="stable")
            ordered = keys[order]
            for k, r in self.runs:
                at = np.minimum(np.searchsorted(k, ordered), len(k) - 1)
                hit = np.flatnonzero(k[at] == ordered)
                rows[order[hit]] = r[at[hit]]
        found = np.flatnonzero(rows >= 0)
        return found, rows[found]

    def add(self, keys: np.ndarray, rows: np.ndarray) -> None:
        """Keys not in the index yet, and their rows."""
        if not len(keys):
            return
        order = np.argsort(keys, kind="stable")
        self.runs.append((keys[order], rows[order]))
        while len(self.runs) > 1 and len(self.runs[-2][0]) <= 2 * len(self.runs[-1][0]):
            (k2, r2), (k1, r1) = self.runs.pop(), self.runs.pop()
            k, r = np.concatenate([k1, k2]), np.concatenate([r1, r2])
            order = np.argsort(k, kind="stable")
            self.runs.append((k[order], r[order]))
