"""Find our lines in a chunk of bytes and parse TIMELINE fields into numpy columns.

Two stages keep Python work per *event*, never per line: ``find_records`` jumps from
one ``TIMELINE,`` to the next with ``bytes.find`` (C speed over the noise) and keeps
the payloads; ``parse_records`` joins a batch of payloads and parses them with two
multi-line regexes into tuples, turned into numpy arrays column by column.
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
# Both tracing markers contain it: one cheap probe per chunk before the two exact ones.
START_PROBE = b" start"

MARK_DAEMON, MARK_WORKER, MARK_CUZK = 0, 1, 2

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

ANSI_RE = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")
# offset, event, job, detail | anything else (kept to keep rows aligned with payloads)
LINE_RE = re.compile(
    rb"^(?:(\d{1,15}),([A-Z][A-Z0-9_]*),([!-+\--~]+)(?:,([ -~]*?))?[ \t\r]*|(.*))$", re.M
)
# The detail orders the daemon writes; anything else falls to ``_parse_detail_slow``.
DETAIL_RE = re.compile(
    rb"^(?:worker=(\d{1,9})(?:,|$))?(?:partition=(\d{1,9})(?:,|$))?"
    rb"(?:synth_ms=(\d{1,12})(?:,|$))?(?:gpu_ms=(\d{1,12})(?:,|$))?"
    rb"(?:kind=([!-+\--~]+)(?:,|$))?(monolithic$)?(.*)$",
    re.M,
)
INT_KEYS = (b"worker", b"partition", b"synth_ms", b"gpu_ms")


@dataclass
class RawBatch:
    """What ``find_records`` collected: TIMELINE payloads and the marker lines between them."""

    payloads: list[bytes] = field(default_factory=list)
    #: (index of the next payload, marker kind, text after the needle)
    markers: list[tuple[int, int, bytes]] = field(default_factory=list)


def find_records(buf: bytes, start: int, end: int, out: RawBatch) -> None:
    """Append the TIMELINE payloads and marker lines of ``buf[start:end]`` to ``out``."""
    find = buf.find
    needles: list[tuple[bytes, int]] = []
    if find(CZ, start, end) >= 0:
        needles.append((CZ, MARK_CUZK))
    if find(START_PROBE, start, end) >= 0:
        if find(DAEMON, start, end) >= 0:
            needles.append((DAEMON, MARK_DAEMON))
        if find(WORKER, start, end) >= 0:
            needles.append((WORKER, MARK_WORKER))
    if not needles:
        _find_timeline(buf, start, end, out.payloads)
    else:
        _find_mixed(buf, start, end, out, needles)


def _find_timeline(buf: bytes, start: int, end: int, payloads: list[bytes]) -> None:
    """The hot loop: one ``find`` per event to skip the noise, one to find its line end."""
    find = buf.find
    append = payloads.append
    p = find(TL, start, end)
    while p >= 0:
        e = find(b"\n", p, end)
        if e < 0:
            e = end
        append(buf[p + 9 : e])
        p = find(TL, e, end)


def _find_mixed(
    buf: bytes, start: int, end: int, out: RawBatch, needles: list[tuple[bytes, int]]
) -> None:
    """Like ``_find_timeline`` but also keeps marker lines, in file order."""
    find = buf.find
    heads = [[find(TL, start, end), TL, -1]] + [[find(n, start, end), n, k] for n, k in needles]
    heads = [h for h in heads if h[0] >= 0]
    payloads, markers = out.payloads, out.markers
    while heads:
        head = min(heads, key=lambda h: h[0])
        p, needle, kind = head
        e = find(b"\n", p, end)
        if e < 0:
            e = end
        if kind < 0:
            payloads.append(buf[p + 9 : e])
        else:
            markers.append((len(payloads), kind, buf[p + len(needle) : e]))
        for h in heads:
            if h[0] < e:
                h[0] = find(h[1], e, end)
        heads = [h for h in heads if h[0] >= 0]


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
    kinds: list[tuple[int, str]]  # (job code, kind) from monolithic SYNTH_START
    skipped_seq: np.ndarray  # int64
    skipped_reason: list[str]
    markers: list[tuple[int, int, bytes]]  # (seq, kind, text)


def parse_records(raw: RawBatch, seq0: int, jobs: dict[bytes, int]) -> tuple[EventBatch, int]:
    """Parse a batch; ``seq0`` numbers its records. Returns the batch and the next seq0.

    Payload ``i`` gets seq ``2*(seq0+i)+1``; a marker before it gets ``2*(seq0+i)``, so
    one sort by seq restores file order.
    """
    payloads, markers = raw.payloads, raw.markers
    joined = b"\n".join(payloads)
    if TL in joined:  # two lines glued together: split them, shift the markers
        payloads, markers = _unglue(payloads, markers)
        joined = b"\n".join(payloads)
    if b"\x1b" in joined:
        joined = ANSI_RE.sub(b"", joined)
    n = len(payloads)
    seq = 2 * (seq0 + np.arange(n, dtype=np.int64)) + 1
    marks = [(2 * (seq0 + i), k, t) for i, k, t in markers]
    rows = LINE_RE.findall(joined) if n else []
    if len(rows) != n:  # cannot happen with LINE_RE; never trust it blindly either
        raise AssertionError(f"LINE_RE returned {len(rows)} rows for {n} payloads")
    if not n:
        return _empty_batch(marks), seq0
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
    kind_arr = np.array(kind)
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

    # Rows the pairing can trust: GPU events name a worker; partition-less rows carry the
    # evidence of a monolithic job, else they are torn partitioned lines.
    has_kind = kind_arr != b""
    mono = np.select(
        [event == SYNTH_START, event == SYNTH_END, event == QUEUED],
        [has_kind, ~np.isnan(synth_ms), mono_word_arr],
        default=worker >= 0,
    ) & (partition < 0)
    bad = good & ((np.isin(event, NEEDS_WORKER) & (worker < 0)) | ((partition < 0) & ~mono))
    skipped += [(int(seq[i]), "malformed_timeline") for i in np.flatnonzero(bad)]
    good &= ~bad

    job = _job_codes(jids, jobs)
    idx = np.flatnonzero(good)
    kinds = [
        (int(job[i]), kind_arr[i].decode("ascii", "replace"))
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
        markers=marks,
    )
    return batch, seq0 + n


def _empty_batch(marks: list[tuple[int, int, bytes]]) -> EventBatch:
    i64, i32 = np.empty(0, np.int64), np.empty(0, np.int32)
    return EventBatch(
        i64, i64, np.empty(0, np.int8), i32, i32, i32, np.empty(0), np.empty(0),
        np.empty(0, bool), [], i64, [], marks,
    )  # fmt: skip


def _unglue(
    payloads: list[bytes], markers: list[tuple[int, int, bytes]]
) -> tuple[list[bytes], list[tuple[int, int, bytes]]]:
    """Split payloads that contain another ``TIMELINE,`` (lines glued by a torn write)."""
    out: list[bytes] = []
    new_index = []
    for p in payloads:
        new_index.append(len(out))
        out.extend(p.split(TL))
    new_index.append(len(out))
    return out, [(new_index[i], k, t) for i, k, t in markers]


def _line_reason(text: bytes) -> str:
    """Why a TIMELINE payload did not parse (rare path)."""
    if any(c < 9 or 13 < c < 32 or c > 126 for c in text if c != 0x1B):
        return "binary"
    parts = text.split(b",")
    if len(parts) >= 3 and parts[1] and parts[1].isupper() and not parts[0].isdigit():
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
            if not value.isdigit() or len(value) > 12:
                return "bad_number"
            out[key] = int(value)
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
