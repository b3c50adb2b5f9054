"""The strict parser: records in the exact form the daemon writes, vectorized with numpy on
one flat byte buffer (the pure-Python scanner's fast path; the compiled scanner parses the
same forms).

The scanned lines are joined once into a padded buffer (``flatten``); every row is a
span ``[start, end)`` of it.  Separators (commas, spaces) are found with one pass over
the buffer each, and every field is then read with a few gathers of a handful of bytes
per row: no Python step per line, and no fixed-width matrix.  Only the strict forms are
accepted here; a row that deviates at all (ANSI, glued lines, other key orders, binary)
is reported as not accepted and goes to the exact parser (``exact``).  The forms are the
grammar's (``grammar.EVENTS``, ``DETAIL_KEYS`` in their order, ``CUZK_FORMS``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from viewer.io.grammar import (
    CUZK_FORMS,
    DETAIL_KEYS,
    EVENTS,
    GPU_TID,
    MAX_ID_DIGITS,
    MAX_JOB,
    MAX_KIND,
    MAX_MS_DIGITS,
    MAX_OFFSET_DIGITS,
)
from viewer.model.keys import factorize

COMMA, SPACE = 44, 32
PAD = 64  # zero bytes around the rows: every gather of up to PAD bytes stays inside
assert MAX_JOB <= PAD and MAX_OFFSET_DIGITS < PAD


@dataclass
class Flat:
    """Rows joined into one buffer: row i is ``u[start[i]:end[i]]``."""

    buf: bytes
    u: np.ndarray  # uint8 view of buf
    start: np.ndarray  # int64
    end: np.ndarray  # int64
    commas: np.ndarray  # positions of every comma in u
    spaces: np.ndarray  # positions of every space in u
    bad: np.ndarray  # positions of every byte that is not printable ASCII


def flatten(lines: list[bytes]) -> Flat:
    n = len(lines)
    pad = b"\0" * (PAD - 1)
    # A printable joiner: the bad-byte positions are then only real damage, not one per row.
    buf = b"~".join([pad, *lines, pad])
    u = np.frombuffer(buf, np.uint8)
    lengths = np.fromiter(map(len, lines), np.int64, n)
    start = np.empty(n, np.int64)
    if n:
        start[0] = PAD
        np.cumsum(lengths[:-1] + 1, out=start[1:])
        start[1:] += PAD
    end = start + lengths
    return Flat(
        buf,
        u,
        start,
        end,
        np.flatnonzero(u == COMMA),
        np.flatnonzero(u == SPACE),
        np.flatnonzero((u - np.uint8(32)) > 94),
    )


def count_in(pos: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """How many of the sorted ``pos`` lie in each ``[s, e)``."""
    return np.searchsorted(pos, e) - np.searchsorted(pos, s)


def nth(
    pos: np.ndarray, s: np.ndarray, e: np.ndarray, k: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """The first ``k`` of ``pos`` in each ``[s, e)`` (``e`` when there are fewer), and the count."""
    first = np.searchsorted(pos, s)
    count = np.searchsorted(pos, e) - first
    ext = np.concatenate([pos, np.zeros(k, np.int64)])
    return [np.where(count > j, ext[first + j], e) for j in range(k)], count


def _gather(u: np.ndarray, s: np.ndarray, k: int) -> np.ndarray:
    """(n, k) bytes from each ``s`` (``s`` <= len(u) - k, which the padding ensures).  Wide
    windows are rows of a strided view (an n-wide index, not n * k); narrow ones index."""
    if k >= 8:
        return np.lib.stride_tricks.sliding_window_view(u, k)[s]
    return u[s[:, None] + np.arange(k)]


def starts(u: np.ndarray, s: np.ndarray, e: np.ndarray, word: bytes, exact: bool = False):
    """Rows whose span ``[s, e)`` starts with ``word`` (is ``word`` if ``exact``)."""
    size = e - s
    ok = (size == len(word)) if exact else (size >= len(word))
    return ok & (_gather(u, s, len(word)) == np.frombuffer(word, np.uint8)).all(axis=1)


POW10 = 10 ** np.arange(14, -1, -1, dtype=np.int64)


def digits(u: np.ndarray, s: np.ndarray, e: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray]:
    """(ok, value) of spans of 1..``most`` (<= 15) ASCII digits."""
    size = e - s
    ok = (size >= 1) & (size <= most)
    if not ok.any():
        return ok, np.zeros(len(s), np.int64)
    w = int(size[ok].max())  # the widest span to look at, often far below ``most``
    d = _gather(u, e - w, w) - np.uint8(48)  # right-aligned window
    d[np.arange(w)[None, :] < (w - size)[:, None]] = 0  # bytes before the span
    ok &= (d <= 9).all(axis=1)
    return ok, d.astype(np.int64) @ POW10[-w:]


@dataclass
class FastEvents:
    """Columns of the accepted TIMELINE rows (``ok``); other rows hold garbage."""

    ok: np.ndarray  # bool
    offset: np.ndarray  # int64
    event: np.ndarray  # int8
    job: np.ndarray  # int64 code into ``job_ids``
    job_ids: list[bytes]
    worker: np.ndarray  # int64, -1 absent
    partition: np.ndarray  # int64, -1 absent
    synth_ms: np.ndarray  # float64
    gpu_ms: np.ndarray  # float64
    kind_at: np.ndarray  # (start, end) of the kind value in ``Flat.buf``, start -1 if absent
    mono_word: np.ndarray  # bool


def parse_events(f: Flat, rows: np.ndarray, skip: int) -> FastEvents:
    """Parse TIMELINE rows ``rows`` of ``f`` (payload from ``skip`` bytes in) in strict form."""
    u = f.u
    s, e = f.start[rows] + skip, f.end[rows]
    n = len(rows)
    ok = count_in(f.bad, s, e) == 0
    (c0, c1, c2, c3, c4), commas = nth(f.commas, s, e, 5)
    ok &= (commas >= 3) & (commas <= 5)
    ok_off, offset = digits(u, s, c0, MAX_OFFSET_DIGITS)
    ok &= ok_off
    event = _events(u, c0 + 1, c1)
    ok &= (event >= 0) & (c2 > c1 + 1) & (c2 - c1 - 1 <= MAX_JOB)
    ok &= count_in(f.spaces, c1 + 1, c2) == 0
    values = {k.name: np.full(n, -1, np.int64) for k in DETAIL_KEYS if k.digits}
    kind_at = np.stack([np.full(n, -1, np.int64), np.zeros(n, np.int64)])
    mono_word = np.zeros(n, bool)
    rank = np.full(n, -1)  # key order seen so far
    for m, (fs, fe) in enumerate(((c2 + 1, c3), (c3 + 1, c4), (c4 + 1, e))):
        present = commas > 2 + m
        first = u[fs]
        field_ok = ~present
        for r, k in enumerate(DETAIL_KEYS):
            key = k.name if k.kind == "flag" else k.name + b"="
            sel = np.flatnonzero(present & ok & (first == key[0]) & (rank < r))
            a, b = fs[sel], fe[sel]
            hit = starts(u, a, b, key, exact=k.kind == "flag")
            if k.kind == "flag":
                mono_word[sel[hit]] = True
            elif k.kind == "text":
                hit &= (b - a > len(key)) & (b - a - len(key) <= MAX_KIND)
                hit &= count_in(f.spaces, a, b) == 0
                kind_at[0, sel[hit]] = a[hit] + len(key)
                kind_at[1, sel[hit]] = b[hit]
            else:
                good, val = digits(u, a + len(key), b, k.digits)
                hit &= good
                values[k.name][sel[hit]] = val[hit]
            rank[sel[hit]] = r
            field_ok[sel[hit]] = True
        ok &= field_ok
    job, job_ids = _job_codes(u, c1 + 1, c2, ok)
    synth = values[b"synth_ms"].astype(np.float64)
    gpu = values[b"gpu_ms"].astype(np.float64)
    return FastEvents(
        ok=ok,
        offset=offset,
        event=event,
        job=job,
        job_ids=job_ids,
        worker=values[b"worker"],
        partition=values[b"partition"],
        synth_ms=np.where(synth < 0, np.nan, synth),
        gpu_ms=np.where(gpu < 0, np.nan, gpu),
        kind_at=kind_at,
        mono_word=mono_word,
    )


def _events(u: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Event codes of the spans (-1 if not an event name): guess by length and 5th byte,
    then check the whole name of each guess."""
    event = np.full(len(s), -1, np.int8)
    guess = (e - s) * 256 + u[s + 4]
    for name, code in EVENTS:
        sel = np.flatnonzero(guess == len(name) * 256 + name[4])
        event[sel[starts(u, s[sel], e[sel], name, exact=True)]] = code
    return event


@functools.cache
def _mix() -> np.ndarray:
    """Odd 64-bit multipliers, one per 8-byte word of a job id (made on first use: numpy's
    random module costs the compiled scanner's users 15 ms of start-up)."""
    return np.random.default_rng(0).integers(1, 2**63, MAX_JOB // 8, dtype=np.uint64) | np.uint64(1)


def _job_codes(
    u: np.ndarray, s: np.ndarray, e: np.ndarray, ok: np.ndarray
) -> tuple[np.ndarray, list[bytes]]:
    """Codes of the job spans of the ``ok`` rows (first appearance order), and the job ids.

    Each id is hashed from its bytes as 8-byte words; every row is then compared word by
    word with the first row of its code, so a hash collision cannot merge two jobs (the
    rows of a colliding code are given their own codes by a plain factorize).
    """
    job = np.zeros(len(s), np.int64)
    sel = np.flatnonzero(ok)
    if not len(sel):
        return job, []
    a, size = s[sel], e[sel] - s[sel]
    w = -(-int(size.max()) // 8) * 8
    win = _gather(u, a, w).copy()
    win[np.arange(w)[None, :] >= size[:, None]] = 0  # ids hold no NUL: zeros end them
    words = win.view(np.uint64)
    codes, _ = factorize((words * _mix()[: w // 8]).sum(axis=1, dtype=np.uint64))
    first = np.empty(codes.max() + 1, np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    if not (words == words[first[codes]]).all():
        ids = [win[i].tobytes().rstrip(b"\0") for i in range(len(sel))]
        codes, uniques = factorize(np.array(ids, dtype=object))
        job[sel] = codes
        return job, list(uniques)
    job[sel] = codes
    return job, [win[i, : size[i]].tobytes() for i in first.tolist()]


def parse_cuzk(f: Flat, rows: np.ndarray, skip: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kind, a, b) of CUZK_TIMING rows ``rows`` of ``f`` (text from ``skip`` bytes in).

    Accepted: `` [gpu_tid=N ]KEY=N[ KEY2=N]`` of ``grammar.CUZK_FORMS`` with single spaces, as
    the daemon writes.  ``kind`` is the form's code, or -1 for a row this path does not
    accept.
    """
    u = f.u
    s, e = f.start[rows] + skip, f.end[rows]
    n = len(rows)
    ok = (count_in(f.bad, s, e) == 0) & (e > s) & (u[s] == SPACE)
    (_, s1, s2, s3), spaces = nth(f.spaces, s, e, 4)  # the first is the leading space
    tid = (spaces >= 2) & starts(u, s + 1, s1, GPU_TID)
    tid &= digits(u, s + 1 + len(GPU_TID), s1, MAX_ID_DIGITS)[0]
    key_s, key_e = np.where(tid, s1, s) + 1, np.where(tid, s2, s1)
    two_s, two_e = np.where(tid, s2, s1) + 1, np.where(tid, s3, s2)
    kind = np.full(n, -1, np.int8)
    a = np.full(n, np.nan)
    b = np.full(n, np.nan)
    first = u[key_s]
    for code, (key, second) in enumerate(CUZK_FORMS):
        key += b"="
        want = 1 + tid + (second is not None)
        sel = np.flatnonzero(ok & (spaces == want) & (first == key[0]))
        hit = starts(u, key_s[sel], key_e[sel], key)
        good, val = digits(u, key_s[sel] + len(key), key_e[sel], MAX_MS_DIGITS)
        hit &= good
        if second is not None:
            second += b"="
            hit &= starts(u, two_s[sel], two_e[sel], second)
            good, val2 = digits(u, two_s[sel] + len(second), two_e[sel], MAX_MS_DIGITS)
            hit &= good
            b[sel[hit]] = val2[hit]
        kind[sel[hit]] = code
        a[sel[hit]] = val[hit]
    return kind, a, b
