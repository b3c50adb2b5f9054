"""Codes for keys in order of first appearance, in numpy (no pandas on the report path).

``factorize(values)`` gives each value the number of distinct values seen before its first
occurrence, and the distinct values in that order: what ``pandas.factorize`` gives, except
that a missing value (None, NaN) is a value like any other, not -1.
"""

from __future__ import annotations

import numpy as np


def factorize(values: object) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` with ``uniques[codes] == values``, ``uniques`` in order of first
    appearance: numbers through one sort (``np.unique``), other values (text) through a
    dict."""
    values = np.asarray(values)
    if values.dtype.kind in "biufmM":
        uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        return rank[inverse.reshape(-1)], uniq[order]
    table: dict[object, int] = {}
    codes = np.fromiter(
        (table.setdefault(v, len(table)) for v in values.tolist()), np.int64, len(values)
    )
    uniques = np.empty(len(table), dtype=object)
    uniques[:] = list(table)
    return codes, uniques


def first_seen(values: np.ndarray) -> np.ndarray:
    """True at the first occurrence of each value (in order), False at its repeats."""
    values = np.asarray(values)
    out = np.zeros(len(values), dtype=bool)
    if len(values):
        out[np.unique(values, return_index=True)[1]] = True
    return out
