"""Find our lines in a chunk of bytes, and the exact (slow) parse of TIMELINE / CUZK fields.

``find_records`` runs one compiled regex per chunk: its literal ``TIM`` prefix is searched
in C and each match is one ``TIMELINE,`` or ``CUZK_TIMING:`` line, in file order.  Lines
are numbered by their match ordinal (``seq``), not their byte position, so nothing is
done per line in Python.  ``parse`` parses batches with numpy and hands the rows it does
not accept to ``parse_exact`` / ``parse_cuzk`` here, which define the behaviour.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

TL = b"TIMELINE,"
CZ = b"CUZK_TIMING:"
DAEMON = b"cuzk-daemon starting"
WORKER = b"GPU worker started"

MARK_DAEMON, MARK_WORKER, MARK_CUZK = 0, 1, 2
MARKERS = ((DAEMON, MARK_DAEMON), (WORKER, MARK_WORKER))

#: Event name -> code; both queue events (CHAN_SEND, older; GPU_QUEUE, newer) mean "queued".
EVENTS = {
    b"SYNTH_START": 0,
    b"SYNTH_END": 1,
    b"CHAN_SEND": 2,
    b"GPU_QUEUE": 2,
    b"GPU_PICKUP": 3,
    b"GPU_START": 4,
    b"GPU_END": 5,
}
SYNTH_START, SYNTH_END, QUEUED, GPU_PICKUP, GPU_START, GPU_END = range(6)
NEEDS_WORKER = (GPU_PICKUP, GPU_START, GPU_END)

MAX_OFFSET_DIGITS = 15  # int64 offsets, exact as float64 times (below 2^53)
MAX_MS_DIGITS = 12  # a figure of more digits is damaged
ANSI_RE = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")
# offset, event, job, detail | anything else (kept to keep rows aligned with payloads)
LINE_RE = re.compile(
    rb"^(?:(\d{1,%d}),([A-Z][A-Z0-9_]*),([!-+\--~]+)(?:,([ -~]*))?|(.*))$" % MAX_OFFSET_DIGITS,
    re.M,
)
# The detail orders the daemon writes; anything else falls to ``_parse_detail_slow``.
DETAIL_RE = re.compile(
    rb"^(?:worker=(\d{1,9})(?:,|$))?(?:partition=(\d{1,9})(?:,|$))?"
    rb"(?:synth_ms=(\d{1,12})(?:,|$))?(?:gpu_ms=(\d{1,12})(?:,|$))?"
    rb"(?:kind=([!-+\--~]+)(?:,|$))?(monolithic$)?(.*)$",
    re.M,
)
#: Detail keys with a number, and the largest value each column holds: worker and
#: partition are int32 columns (a larger number would wrap), ms values are float64
#: (exact to 2^53; the regexes take at most MAX_MS_DIGITS digits).
INT_KEYS = {b"worker": 2**31 - 1, b"partition": 2**31 - 1, b"synth_ms": None, b"gpu_ms": None}

#: The CUZK_TIMING lines of one GPU call, in the form the daemon writes them after
#: ``CUZK_TIMING: [gpu_tid=N ]``: (first key, second key or None); a line's code is its
#: position here.  The one table of these forms: ``CUZK_RE``, ``fastparse.parse_cuzk`` and
#: the compiled scanner (``_cscan.CUZK_FORMS``, tested equal) follow it.  Other
#: CUZK_TIMING lines (async_dealloc_ms, split_vectors_ms, ...) are ignored.
CUZK_FORMS: tuple[tuple[bytes, bytes | None], ...] = (
    (b"pre_lock_cpu_ms", b"mutex_wait_ms"),  # the mutex is acquired: opens a block
    (b"ntt_msm_h_ms", None),
    (b"batch_add_ms", None),
    (b"tail_msm_ms", b"gpu_total_ms"),  # the kernel region ends
    (b"prep_msm_ms", None),  # CPU prep thread: before its block's acquire line
    (b"barrier_wait_ms", None),
    (b"mutex_held_ms", b"total_start_fn_ms"),  # before the release
    (b"b_g2_msm_ms", b"num_circuits"),  # after the release
)
(
    CUZK_ACQUIRE, CUZK_NTT, CUZK_BATCH, CUZK_TAIL, CUZK_PREP, CUZK_BARRIER, CUZK_HELD, CUZK_BG2,
) = range(len(CUZK_FORMS))  # fmt: skip
CUZK_KEYS = tuple(first for first, _ in CUZK_FORMS)
CUZK_MALFORMED = -2  # one of our keys, damaged


def _cuzk_re() -> re.Pattern[bytes]:
    """One alternative of three groups (key, value, second value) per form, then a line
    holding one of our keys in any other shape (damaged), then any other line."""
    num = rb"(\d{1,%d})" % MAX_MS_DIGITS
    forms = [
        b"(" + first + b")=" + num + (rb"[ \t]+" + second + b"=" + num if second else b"()")
        for first, second in CUZK_FORMS
    ]
    return re.compile(
        rb"^[ \t]*(?:gpu_tid=\d+[ \t]+)?(?:" + b"|".join(forms) + rb")[ \t]*$"
        rb"|^(.*(?:" + b"|".join(CUZK_KEYS) + rb").*)$|^.*$",
        re.M,
    )


CUZK_RE = _cuzk_re()


@dataclass
class CuzkLines:
    """The CUZK_TIMING lines that matter, as columns (file order)."""

    seq: np.ndarray  # int64 byte position
    kind: np.ndarray  # int8: the line's position in CUZK_FORMS, or CUZK_MALFORMED
    a: np.ndarray  # float64: the value of the first key
    b: np.ndarray  # float64: the value of the second key (NaN when the form has none)


def parse_cuzk(texts: list[bytes], positions: list[int]) -> CuzkLines:
    """Keep the lines of ``CUZK_FORMS``; damaged ones are kept as ``CUZK_MALFORMED``."""
    if not texts:
        return CuzkLines(np.empty(0, np.int64), np.empty(0, np.int8), np.empty(0), np.empty(0))
    joined = b"\n".join(texts)
    if b"\x1b" in joined:
        joined = ANSI_RE.sub(b"", joined)
    cols = [np.array(c) for c in zip(*CUZK_RE.findall(joined), strict=True)]
    kinds = np.full(len(texts), -1, dtype=np.int8)
    a, b = np.full(len(texts), np.nan), np.full(len(texts), np.nan)
    for code in range(len(CUZK_FORMS)):
        name, first, second = cols[3 * code : 3 * code + 3]
        sel = name != b""
        kinds[sel] = code
        a[sel] = _to_float(first[sel])
        b[sel] = _to_float(second[sel])
    kinds[cols[-1] != b""] = CUZK_MALFORMED
    keep = kinds != -1
    seq = np.array(positions, dtype=np.int64)
    return CuzkLines(seq[keep], kinds[keep], a[keep], b[keep])


#: One regex for both kinds of lines: the literal prefix keeps the C search fast.  A line
#: ends at LF, CR (old Mac files) or CRLF.  A match runs from the line's first record to
#: the line end; ``records`` cuts it where a torn write glued more records to it.
SCAN_RE = re.compile(rb"TIM(?:ELINE,|(?<=CUZK_TIM)ING:)[^\r\n]*")
#: Where a record starts: a ``CUZK_TIMING:`` record's text starts at ``TIMING:``, but the
#: record before it ends before ``CUZK_``.
RECORD_RE = re.compile(rb"TIMELINE,|CUZK_TIMING:")
EOL_RE = re.compile(rb"[\r\n]")


def line_end(buf: bytes, pos: int, end: int) -> int:
    """Index of the first CR or LF in ``buf[pos:end]``, or -1."""
    m = EOL_RE.search(buf, pos, end)
    return m.start() if m else -1


def last_line_end(buf: bytes, pos: int, end: int) -> int:
    """Index of the last CR or LF in ``buf[pos:end]``, or -1 (LF first: it is near the end
    of any chunk of a usual log, and only what follows it is searched for a CR)."""
    lf = buf.rfind(b"\n", pos, end)
    return max(lf, buf.rfind(b"\r", max(lf + 1, pos), end))


#: ``seq`` of a record = its ordinal << SEQ_SHIFT; a line skipped or marker found before
#: record k sorts at (k << SEQ_SHIFT) - 1.
SEQ_SHIFT = 20


@dataclass
class RawBatch:
    """What ``find_records`` collected: matched lines from ordinal ``base`` on, and markers."""

    base: int = 0
    items: list[bytes] = field(default_factory=list)  # "TIMELINE,..." / "TIMING: ..." lines
    markers: list[tuple[int, int, bytes]] = field(default_factory=list)  # (seq, kind, text)


def records(buf: bytes, start: int, end: int) -> list[bytes]:
    """The records of the whole lines ``buf[start:end]``, in order: each ``TIMELINE,`` or
    ``CUZK_TIMING:`` starts one, which runs to the next one on its line or to the line end
    (a torn write glues records into one line)."""
    found = SCAN_RE.findall(buf, start, end)
    if buf.count(TL, start, end) + buf.count(CZ, start, end) == len(found):
        return found  # one record per line: nothing glued
    del found
    out: list[bytes] = []
    for line in SCAN_RE.finditer(buf, start, end):
        at, stop = line.span()
        for m in RECORD_RE.finditer(buf, at + 1, stop):
            out.append(buf[at : m.start()])
            at = m.start() + (len(CZ) - len(b"TIMING:")) * (m[0] == CZ)
        out.append(buf[at:stop])
    return out


def find_records(buf: bytes, start: int, end: int, out: RawBatch) -> None:
    """Append the records of ``buf[start:end]`` (whole lines) to ``out``."""
    items = out.items
    # Two long needles are found at bytes.find speed; one short probe common to both
    # (" start") would be slower than the pair.
    first = [buf.find(DAEMON, start, end), buf.find(WORKER, start, end)]
    if first == [-1, -1]:
        items += records(buf, start, end)
        return
    found: list[tuple[int, int, bytes]] = []
    for (needle, kind), p in zip(MARKERS, first, strict=True):
        while p >= 0:
            e = line_end(buf, p, end)
            e = end if e < 0 else e
            found.append((p, kind, buf[p + len(needle) : e]))
            p = buf.find(needle, e, end)
    pos = start
    for p, kind, text in sorted(found):
        line = last_line_end(buf, start, p) + 1 or start
        if line > pos:  # the lines before the marker's line, so the marker sorts after them
            items += records(buf, pos, line)
            pos = line
        out.markers.append((((out.base + len(items)) << SEQ_SHIFT) - 1, kind, text))
    items += records(buf, pos, end)


@dataclass
class EventBatch:
    """Parsed TIMELINE events (one row per well-formed line) plus what was skipped."""

    seq: np.ndarray  # int64 position in the file's record order
    offset: np.ndarray  # int64 ms
    event: np.ndarray  # int8, see EVENTS
    job: np.ndarray  # int32 global job code
    partition: np.ndarray  # int32, -1 when absent
    worker: np.ndarray  # int32, -1 when absent
    synth_ms: np.ndarray  # float64
    gpu_ms: np.ndarray  # float64
    mono: np.ndarray  # bool: the detail proves a monolithic event (kind=, monolithic, ...)
    kinds: list[tuple[int, int, str]]  # (seq, job code, kind) from monolithic SYNTH_START
    skipped_seq: np.ndarray  # int64
    skipped_reason: list[str]
    cuzk: CuzkLines
    markers: list[tuple[int, int, bytes]]  # (seq, kind, text) of tracing lines
    # Rows followed by exact copies of themselves (``parse.fold_copies``): seq, copies.
    copy_seq: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    copy_n: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))


def parse_exact(payloads: list[bytes], positions: list[int], jobs: dict[bytes, int]) -> EventBatch:
    """Parse TIMELINE payloads (after ``TIMELINE,``) into columns, whatever their damage."""
    joined = b"\n".join(payloads)
    if b"\x1b" in joined:
        joined = ANSI_RE.sub(b"", joined)
    n = len(payloads)
    seq = np.array(positions, dtype=np.int64)
    rows = LINE_RE.findall(joined) if n else []
    if len(rows) != n:  # cannot happen with LINE_RE; never trust it blindly either
        raise AssertionError(f"LINE_RE returned {len(rows)} rows for {n} payloads")
    cuzk = parse_cuzk([], [])
    if not n:
        return empty_batch()
    offs, evs, jids, details, rest = zip(*rows, strict=True)
    off_raw = np.array(offs)
    good = off_raw != b""
    skipped: list[tuple[int, str]] = [
        (int(seq[i]), _line_reason(rest[i])) for i in np.flatnonzero(~good)
    ]

    ev_codes, ev_uniques = pd.factorize(pd.Series(evs, dtype=object))
    lut = np.array([EVENTS.get(u, -1) for u in ev_uniques] + [-1], dtype=np.int8)
    event = lut[ev_codes]
    unknown = good & (event < 0)
    skipped += [(int(seq[i]), "unknown_event") for i in np.flatnonzero(unknown)]
    good &= ~unknown

    fields = DETAIL_RE.findall(b"\n".join(details))
    w, p, s, g, kind, mono_word, tail = zip(*fields, strict=True)
    worker, partition = _to_int(w), _to_int(p)
    synth_ms, gpu_ms = _to_float(s), _to_float(g)
    kind_arr = np.array(kind, dtype=object)  # bytes dtype would cut longer slow-path kinds
    mono_word_arr = np.array(mono_word) != b""
    for i in np.flatnonzero((np.array(tail) != b"") & good):
        parsed = _parse_detail_slow(details[i])
        if isinstance(parsed, str):
            skipped.append((int(seq[i]), parsed))
            good[i] = False
            continue
        worker[i], partition[i] = parsed.get(b"worker", -1), parsed.get(b"partition", -1)
        synth_ms[i] = parsed.get(b"synth_ms", np.nan)
        gpu_ms[i] = parsed.get(b"gpu_ms", np.nan)
        kind_arr[i] = parsed.get(b"kind", b"")
        mono_word_arr[i] = bool(parsed.get(b"monolithic"))

    has_kind = kind_arr != b""
    mono, bad = trust(event, worker, partition, synth_ms, has_kind, mono_word_arr)
    bad &= good
    skipped += [(int(seq[i]), "malformed_timeline") for i in np.flatnonzero(bad)]
    good &= ~bad

    job = _job_codes(jids, jobs)
    idx = np.flatnonzero(good)
    kinds = [
        (int(seq[i]), int(job[i]), kind_arr[i].decode("ascii", "replace"))
        for i in np.flatnonzero(good & has_kind & (event == SYNTH_START))
    ]
    skipped.sort()
    batch = EventBatch(
        seq=seq[idx],
        offset=off_raw[idx].astype(np.int64),
        event=event[idx],
        job=job[idx],
        partition=partition[idx].astype(np.int32),
        worker=worker[idx].astype(np.int32),
        synth_ms=synth_ms[idx],
        gpu_ms=gpu_ms[idx],
        mono=mono[idx],
        kinds=kinds,
        skipped_seq=np.array([s for s, _ in skipped], dtype=np.int64),
        skipped_reason=[r for _, r in skipped],
        cuzk=cuzk,
        markers=[],
    )
    return batch


def trust(
    event: np.ndarray,
    worker: np.ndarray,
    partition: np.ndarray,
    synth_ms: np.ndarray,
    has_kind: np.ndarray,
    mono_word: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(mono, bad): GPU events must name a worker; partition-less rows must carry the
    evidence of a monolithic job, else they are torn partitioned lines."""
    mono = np.select(
        [event == SYNTH_START, event == SYNTH_END, event == QUEUED],
        [has_kind, ~np.isnan(synth_ms), mono_word],
        default=worker >= 0,
    ) & (partition < 0)
    bad = (np.isin(event, NEEDS_WORKER) & (worker < 0)) | ((partition < 0) & ~mono)
    return mono, bad


def empty_batch() -> EventBatch:
    i64, i32 = np.empty(0, np.int64), np.empty(0, np.int32)
    return EventBatch(
        i64, i64, np.empty(0, np.int8), i32, i32, i32, np.empty(0), np.empty(0),
        np.empty(0, bool), [], i64, [], parse_cuzk([], []), [],
    )  # fmt: skip


def _line_reason(text: bytes) -> str:
    """Why a TIMELINE payload did not parse (rare path)."""
    if any(c < 9 or 13 < c < 32 or c > 126 for c in text if c != 0x1B):
        return "binary"
    parts = text.split(b",")
    bad_offset = not parts[0].isdigit() or len(parts[0]) > MAX_OFFSET_DIGITS
    if len(parts) >= 3 and parts[1].isupper() and bad_offset:
        return "bad_number"
    return "malformed_timeline"


def _parse_detail_slow(detail: bytes) -> dict[bytes, int | float | bytes | bool] | str:
    """Any key order, unknown keys ignored; a reason string when the detail is damaged."""
    out: dict[bytes, int | float | bytes | bool] = {}
    for part in detail.split(b","):
        part = part.strip()
        if part == b"monolithic":
            out[b"monolithic"] = True
            continue
        key, eq, value = part.partition(b"=")
        if not eq or not key:
            return "malformed_timeline"
        if key in INT_KEYS:
            most = INT_KEYS[key]
            if not value.isdigit() or len(value) > MAX_MS_DIGITS:
                return "bad_number"
            out[key] = int(value)
            if most is not None and out[key] > most:
                return "bad_number"
        elif key == b"kind":
            out[key] = value
    return out


def _to_int(col: tuple[bytes, ...]) -> np.ndarray:
    a = np.array(col)
    return np.where(a == b"", b"-1", a).astype(np.int64)


def _to_float(col: tuple[bytes, ...]) -> np.ndarray:
    a = np.array(col)
    return np.where(a == b"", b"nan", a).astype(np.float64)


def _job_codes(jids: tuple[bytes, ...], jobs: dict[bytes, int]) -> np.ndarray:
    """Global job codes, numbering new job ids in order of appearance."""
    codes, uniques = pd.factorize(pd.Series(jids, dtype=object))
    lut = np.empty(len(uniques) + 1, dtype=np.int32)
    for k, u in enumerate(uniques):
        lut[k] = jobs.setdefault(u, len(jobs))
    lut[-1] = -1
    return lut[codes]


def count_reasons(reasons: list[str]) -> dict[str, int]:
    return dict(Counter(reasons))
