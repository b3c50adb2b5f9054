"""Codes for keys in order of first appearance, in numpy (no pandas on the report path).

``factorize(values)`` gives each value the number of distinct values seen before its first
occurrence, and the distinct values in that order: what ``pandas.factorize`` gives, except
that a missing value (None, NaN) is a value like any other, not -1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def factorize(values: object) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` with ``uniques[codes] == values``, ``uniques`` in order of first
    appearance: numbers through one sort (``unique``), other values (text) through a
    dict."""
    values = np.asarray(values)
    if values.dtype.kind in "biufmM":
        uniq, first, inverse = unique(values, return_index=True, return_inverse=True)
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


def unique(
    values: object, *, return_index: bool = False, return_inverse: bool = False
) -> np.ndarray | tuple[np.ndarray, ...]:
    """``np.unique`` of a 1-d array through one stable sort (timsort).  The log's columns
    are nearly sorted (times, sequence numbers), where timsort takes a few ms and numpy's
    default quicksort 10x longer (833 350 event times: 4.8 ms against 42 ms).  NaNs count
    as one value, as in ``np.unique``."""
    a = np.asarray(values).reshape(-1)
    order = np.argsort(a, kind="stable")
    s = a[order]
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] != s[:-1]
    if s.dtype.kind in "fc":
        new[1:] &= ~(np.isnan(s[1:]) & np.isnan(s[:-1]))
    uniq = s[new]
    if not (return_index or return_inverse):
        return uniq
    out: list[np.ndarray] = [uniq]
    if return_index:
        out.append(order[new])
    if return_inverse:
        inverse = np.empty(len(a), dtype=np.intp)
        inverse[order] = np.cumsum(new) - 1
        out.append(inverse)
    return tuple(out)


def first_seen(values: np.ndarray) -> np.ndarray:
    """True at the first occurrence of each value (in order), False at its repeats.  Sorted
    numbers (blocks owning CUZK_TIMING lines in file order) take one comparison with the
    value before instead of a sort: 0.2 ms against 5 ms for 170 000."""
    values = np.asarray(values)
    out = np.zeros(len(values), dtype=bool)
    if not len(values):
        return out
    if values.dtype.kind in "biuf" and (values[1:] >= values[:-1]).all():  # NaN: not sorted
        out[0] = True
        out[1:] = values[1:] != values[:-1]
        return out
    out[unique(values, return_index=True)[1]] = True
    return out


#: Text held as UTF-8 in one numpy array (numpy's variable-width strings): a job id of
#: 36 characters takes ~52 bytes there, 93 as a Python str behind an object array.
TEXT = np.dtypes.StringDType()


def text_array(values: object) -> np.ndarray:
    """``values`` (strings) as one ``TEXT`` array, whose items read back as ``str``; an
    object array where one is not a string or cannot be held in UTF-8 (a name decoded
    with surrogate escapes from bytes that were not UTF-8)."""
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    return text_take(items, np.arange(len(items)))


def take_ids(ids: Sequence[str] | np.ndarray, rows: np.ndarray) -> Sequence[str] | np.ndarray:
    """``ids[rows]``: an array's own take (the same array where ``rows`` are all of it, in
    order), a list's entries."""
    rows = np.asarray(rows)
    if isinstance(ids, np.ndarray):
        whole = len(rows) == len(ids) and bool((rows == np.arange(len(ids))).all())
        return ids if whole else ids[rows]
    return [ids[i] for i in rows.tolist()]


#: Ids copied into a ``TEXT`` array at a time (``text_take``).
TEXT_STEP = 1 << 16


def text_take(
    values: Sequence[str] | np.ndarray, rows: np.ndarray, consume: bool = False
) -> np.ndarray:
    """``values[rows]`` as ``text_array`` gives it, filled a slice at a time (a whole
    ``TEXT`` array made first, then indexed, left its ~65 MB of 1.5 M ids in the heap);
    of a ``TEXT`` array, its own take (``take_ids``).  ``consume``: each entry of a list
    ``values`` is set to None once copied for the last time, so that the ids live once,
    not twice, while they are copied."""
    if isinstance(values, np.ndarray) and values.dtype == TEXT:
        return take_ids(values, rows)
    if not _all_text(values):
        return np.asarray(values, dtype=object)[rows]
    out = np.empty(len(rows), dtype=TEXT)
    if consume:  # the position of each entry's last copy (4 bytes an entry)
        last = np.full(len(values), -1, np.int32 if len(rows) < 2**31 else np.int64)
        np.maximum.at(last, rows, np.arange(len(rows), dtype=last.dtype))  # the last of repeats
    for a in range(0, len(rows), TEXT_STEP):
        chunk = rows[a : a + TEXT_STEP]
        out[a : a + len(chunk)] = [values[i] for i in chunk.tolist()]
        if consume:
            for i in chunk[last[chunk] == np.arange(a, a + len(chunk))].tolist():
                values[i] = None
    return out


def _all_text(values: list) -> bool:
    """Whether every one of ``values`` is a str that UTF-8 holds."""
    if not all(isinstance(v, str) for v in values):
        return False
    try:
        for v in values:
            if not v.isascii():
                v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
