"""Vectorized parse of the lines as the daemon writes them, on a fixed-width byte matrix.

The scan hands over each line as bytes; ``np.array(lines, "S<w>")`` packs them into one
(n, w) uint8 matrix and every field is then found with a few whole-column numpy
operations, never a Python step per line.  Only the strict forms are accepted here;
a row that deviates at all (ANSI, glued lines, other key orders, binary, too long) is
reported as not accepted and goes to the exact regex path in ``scan``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COMMA, SPACE, CR, EQ = 44, 32, 13, 61
#: Event name -> code, in the order of ``scan.EVENTS`` (both queue events mean "queued").
EVENT_NAMES = (
    (b"SYNTH_START", 0),
    (b"SYNTH_END", 1),
    (b"CHAN_SEND", 2),
    (b"GPU_QUEUE", 2),
    (b"GPU_PICKUP", 3),
    (b"GPU_START", 4),
    (b"GPU_END", 5),
)
#: Detail keys in the only order the fast path accepts (that of ``scan.DETAIL_RE``).
DETAIL_KEYS = (b"worker=", b"partition=", b"synth_ms=", b"gpu_ms=", b"kind=", b"monolithic")
DIGITS = {b"worker=": 9, b"partition=": 9, b"synth_ms=": 12, b"gpu_ms=": 12}
MAX_JOB = 64  # longer job ids take the exact path
MAX_KIND = 32
DETAIL_FIELDS = 3


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
    kind_at: np.ndarray  # (start, end) of the kind value, start -1 when absent
    mono_word: np.ndarray  # bool


def matrix(lines: list[bytes], width: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, width + PAD) uint8 rows of ``lines`` and their true lengths (longer ones are cut).

    The PAD zero columns let every window of up to PAD bytes start anywhere in a row.
    """
    n = len(lines)
    full = width + PAD
    arr = np.array(lines, dtype=f"S{full}") if n else np.zeros(0, f"S{full}")
    lengths = np.fromiter(map(len, lines), dtype=np.int64, count=n)
    return arr.view(np.uint8).reshape(n, full), lengths


PAD = 72


def _strip_cr(u: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Lengths without one trailing CR, which is blanked in ``u``."""
    last = np.clip(length - 1, 0, u.shape[1] - 1)
    rows = np.flatnonzero(
        (length > 0) & (length <= u.shape[1]) & (u[np.arange(len(u)), last] == CR)
    )
    u[rows, length[rows] - 1] = 0
    out = length.copy()
    out[rows] -= 1
    return out


def _clean(u: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Rows that fit and hold only printable ASCII (no NUL, ESC, CR or binary inside)."""
    printable = np.count_nonzero((u - np.uint8(32)) <= 94, axis=1)
    return (length <= u.shape[1] - PAD) & (printable == length)


def _separators(u: np.ndarray, length: np.ndarray, sep: int, k: int) -> tuple[np.ndarray, ...]:
    """Positions of the first ``k`` ``sep`` of each row (``length`` when absent), and the count."""
    hit = u == sep
    count = np.count_nonzero(hit, axis=1)
    rows = np.arange(len(u))
    out = []
    for _ in range(k):
        p = hit.argmax(axis=1)
        found = hit[rows, p]
        out.append(np.where(found, p, length))
        hit[rows[found], p[found]] = False
    return (*out, count)


def _window(u: np.ndarray, start: np.ndarray, k: int) -> np.ndarray:
    """(n, k) bytes from ``start`` of each row (a copy; ``start`` <= width + PAD - k)."""
    view = np.lib.stride_tricks.sliding_window_view(u, k, axis=1)
    return view[np.arange(len(u)), np.minimum(start, view.shape[1] - 1)]


def _is(u: np.ndarray, start: np.ndarray, end: np.ndarray, word: bytes, exact: bool) -> np.ndarray:
    """Rows whose span starts with ``word`` (is exactly ``word`` if ``exact``)."""
    size = end - start
    ok = (size == len(word)) if exact else (size >= len(word))
    return ok & (_window(u, start, len(word)) == np.frombuffer(word, np.uint8)).all(axis=1)


def _digits(
    u: np.ndarray, start: np.ndarray, end: np.ndarray, most: int
) -> tuple[np.ndarray, np.ndarray]:
    """(ok, value) of spans of 1..``most`` ASCII digits."""
    size = end - start
    d = _window(u, start, most) - np.uint8(48)  # non-digits wrap to >= 10
    inside = np.arange(most)[None, :] < size[:, None]
    ok = (size >= 1) & (size <= most) & ((d <= 9) | ~inside).all(axis=1)
    value = np.zeros(len(u), np.int64)
    for j in range(most):
        value = np.where(inside[:, j], value * 10 + d[:, j], value)
    return ok, value


def _no_byte(u: np.ndarray, start: np.ndarray, end: np.ndarray, byte: int, most: int) -> np.ndarray:
    """Rows whose span ``[start, end)`` (at most ``most`` long) has no ``byte``."""
    inside = np.arange(most)[None, :] < (end - start)[:, None]
    return (end - start <= most) & ~((_window(u, start, most) == byte) & inside).any(axis=1)


def _job_codes(u: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
    """Codes of the job spans (first appearance order) and the distinct job ids."""
    n = len(u)
    w = _window(u, start, MAX_JOB)
    w[np.arange(MAX_JOB)[None, :] >= (end - start)[:, None]] = 0
    w[(end - start) > MAX_JOB] = 0  # rejected rows: one dummy job
    if not n:
        return np.zeros(0, np.int64), []
    keys = np.ascontiguousarray(w).view(f"S{MAX_JOB}").ravel()
    uniques, first, codes = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # number jobs by first appearance
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes.ravel()], [bytes(uniques[i]) for i in order]


def parse_events(u: np.ndarray, length: np.ndarray) -> FastEvents:
    """Parse TIMELINE payloads (the bytes after ``TIMELINE,``) in their strict form."""
    n = len(u)
    length = _strip_cr(u, length)
    ok = _clean(u, length)
    c1, c2, c3, c4, c5, commas = _separators(u, length, COMMA, 2 + DETAIL_FIELDS)
    ok &= (commas >= 2) & (commas <= 2 + DETAIL_FIELDS)
    ok_off, offset = _digits(u, np.zeros(n, np.int64), c1, 15)
    ok &= ok_off
    event = np.full(n, -1, np.int8)
    for name, code in EVENT_NAMES:
        event[_is(u, c1 + 1, c2, name, exact=True)] = code
    ok &= event >= 0
    ok &= (c3 - c2 > 1) & (c3 - c2 - 1 <= MAX_JOB) & _no_byte(u, c2 + 1, c3, SPACE, MAX_JOB)
    values = {k: np.full(n, -1, np.int64) for k in DIGITS}
    kind_at = np.stack([np.full(n, -1, np.int64), np.zeros(n, np.int64)])
    mono_word = np.zeros(n, bool)
    rank = np.full(n, -1)  # key order seen so far
    for s, e in ((c3 + 1, c4), (c4 + 1, c5), (c5 + 1, length)):
        present = s <= length
        field_ok = ~present
        for r, key in enumerate(DETAIL_KEYS):
            if key == b"monolithic":
                hit = present & _is(u, s, e, key, exact=True)
                mono_word |= hit
            else:
                hit = present & _is(u, s, e, key, exact=False)
                vs = s + len(key)
                if key == b"kind=":
                    hit &= (e > vs) & _no_byte(u, vs, e, SPACE, MAX_KIND)
                    kind_at[0] = np.where(hit, vs, kind_at[0])
                    kind_at[1] = np.where(hit, e, kind_at[1])
                else:
                    good, val = _digits(u, vs, e, DIGITS[key])
                    hit &= good
                    values[key] = np.where(hit, val, values[key])
            hit &= rank < r
            rank = np.where(hit, r, rank)
            field_ok |= hit
        ok &= field_ok
    job, job_ids = _job_codes(u, c2 + 1, c3)
    synth = values[b"synth_ms="].astype(np.float64)
    gpu = values[b"gpu_ms="].astype(np.float64)
    return FastEvents(
        ok=ok,
        offset=offset,
        event=event,
        job=job,
        job_ids=job_ids,
        worker=values[b"worker="],
        partition=values[b"partition="],
        synth_ms=np.where(synth < 0, np.nan, synth),
        gpu_ms=np.where(gpu < 0, np.nan, gpu),
        kind_at=kind_at,
        mono_word=mono_word,
    )


#: CUZK_TIMING forms the daemon writes: (key, second key or None, code in ``scan``).
CUZK_FORMS = (
    (b"pre_lock_cpu_ms=", b"mutex_wait_ms=", 0),
    (b"ntt_msm_h_ms=", None, 1),
    (b"batch_add_ms=", None, 2),
    (b"tail_msm_ms=", b"gpu_total_ms=", 3),
)
CUZK_KEYS = (b"pre_lock_cpu_ms", b"ntt_msm_h_ms", b"batch_add_ms", b"tail_msm_ms")


def parse_cuzk(u: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kind, a, b) of CUZK_TIMING texts (the bytes after ``CUZK_TIMING:``), strict form.

    Accepted: `` [gpu_tid=N ]KEY=N[ KEY2=N]`` with single spaces, as the daemon writes.
    ``kind`` is the ``scan.CUZK_*`` code, or -1 for a row this path does not accept.
    """
    n = len(u)
    length = _strip_cr(u, length)
    ok = _clean(u, length) & (u[:, 0] == SPACE)
    s1, s2, s3, s4, spaces = _separators(u, length, SPACE, 4)
    tid = _is(u, s1 + 1, s2, b"gpu_tid=", exact=False)
    tid &= _digits(u, s1 + 1 + 8, s2, 9)[0]
    key_s, key_e = np.where(tid, s2, s1) + 1, np.where(tid, s3, s2)
    two_s, two_e = np.where(tid, s3, s2) + 1, np.where(tid, s4, s3)
    kind = np.full(n, -1, np.int8)
    a = np.full(n, np.nan)
    b = np.full(n, np.nan)
    for key, second, code in CUZK_FORMS:
        hit = ok & (spaces == 1 + tid + (second is not None)) & _is(u, key_s, key_e, key, False)
        good, val = _digits(u, key_s + len(key), key_e, 12)
        hit &= good
        if second is not None:
            hit &= _is(u, two_s, two_e, second, exact=False)
            good, val2 = _digits(u, two_s + len(second), two_e, 12)
            hit &= good
            b[hit] = val2[hit]
        kind[hit] = code
        a[hit] = val[hit]
    return kind, a, b
