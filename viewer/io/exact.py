"""The exact parser: TIMELINE and CUZK_TIMING records in any shape, damage included, by
regular expressions built from the grammar.  It defines the behaviour; the strict numpy
parser (``strict``) and the compiled scanner take the daemon's strict forms faster, and
hand everything else here.
"""

from __future__ import annotations

import re

import numpy as np

from viewer.io.batch import CuzkLines, EventBatch, empty_batch, no_cuzk
from viewer.io.grammar import (
    CUZK_FORMS,
    CUZK_KEYS,
    CUZK_MALFORMED,
    DETAIL_KEYS,
    EVENTS,
    GPU_END,
    GPU_PICKUP,
    GPU_TID,
    MAX_MS_DIGITS,
    MAX_OFFSET_DIGITS,
    NEEDS_WORKER,
    NUMBER_KEYS,
    QUEUED,
    SYNTH_END,
    SYNTH_START,
)
from viewer.io.records import JobIds, job_codes
from viewer.model.keys import factorize

EVENT_CODES = dict(EVENTS)
ANSI_RE = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")
#: A job id or a text value: printable, no space, no comma.
WORD = rb"[!-+\--~]+"
# offset, event, job, detail | anything else (kept to keep rows aligned with payloads)
LINE_RE = re.compile(
    rb"^(?:(\d{1,%d}),([A-Z][A-Z0-9_]*),(%s)(?:,([ -~]*))?|(.*))$" % (MAX_OFFSET_DIGITS, WORD),
    re.M,
)


def _detail_re() -> re.Pattern[bytes]:
    """The detail in the key order the daemon writes: one group per key of the grammar,
    then the rest (anything else falls to ``_parse_detail_slow``)."""
    parts = []
    for k in DETAIL_KEYS:
        name = re.escape(k.name)
        if k.kind == "flag":
            parts.append(b"(" + name + b"$)?")
        else:
            value = rb"\d{1,%d}" % k.digits if k.digits else WORD
            parts.append(b"(?:" + name + b"=(" + value + b")(?:,|$))?")
    return re.compile(b"^" + b"".join(parts) + b"(.*)$", re.M)


DETAIL_RE = _detail_re()
TEXT_KEY = next(k.name for k in DETAIL_KEYS if k.kind == "text")  # kind=
FLAG_KEY = next(k.name for k in DETAIL_KEYS if k.kind == "flag")  # monolithic


def _cuzk_re() -> re.Pattern[bytes]:
    """One alternative of three groups (key, value, second value) per form, then a line
    holding one of our keys in any other shape (damaged), then any other line."""
    num = rb"(\d{1,%d})" % MAX_MS_DIGITS
    forms = [
        b"(" + first + b")=" + num + (rb"[ \t]+" + second + b"=" + num if second else b"()")
        for first, second in CUZK_FORMS
    ]
    return re.compile(
        rb"^[ \t]*(?:" + GPU_TID + rb"\d+[ \t]+)?(?:" + b"|".join(forms) + rb")[ \t]*$"
        rb"|^(.*(?:" + b"|".join(CUZK_KEYS) + rb").*)$|^.*$",
        re.M,
    )


CUZK_RE = _cuzk_re()


def parse_cuzk(texts: list[bytes], positions: list[int]) -> CuzkLines:
    """Keep the records of ``CUZK_FORMS``; damaged ones are kept as ``CUZK_MALFORMED``."""
    if not texts:
        return no_cuzk()
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


def parse_exact(payloads: list[bytes], positions: list[int], jobs: JobIds) -> EventBatch:
    """Parse TIMELINE payloads (after ``TIMELINE,``) into columns, whatever their damage."""
    joined = b"\n".join(payloads)
    if b"\x1b" in joined:
        joined = ANSI_RE.sub(b"", joined)
    n = len(payloads)
    seq = np.array(positions, dtype=np.int64)
    rows = LINE_RE.findall(joined) if n else []
    if len(rows) != n:  # cannot happen with LINE_RE; never trust it blindly either
        raise AssertionError(f"LINE_RE returned {len(rows)} rows for {n} payloads")
    if not n:
        return empty_batch()
    offs, evs, jids, details, rest = zip(*rows, strict=True)
    off_raw = np.array(offs)
    good = off_raw != b""
    skipped: list[tuple[int, str]] = [
        (int(seq[i]), _line_reason(rest[i])) for i in np.flatnonzero(~good)
    ]

    ev_codes, ev_uniques = factorize(np.array(evs, dtype=object))
    lut = np.array([EVENT_CODES.get(u, -1) for u in ev_uniques] + [-1], dtype=np.int8)
    event = lut[ev_codes]
    unknown = good & (event < 0)
    skipped += [(int(seq[i]), "unknown_event") for i in np.flatnonzero(unknown)]
    good &= ~unknown

    groups = zip(*DETAIL_RE.findall(b"\n".join(details)), strict=True)
    found = dict(zip([k.name for k in DETAIL_KEYS] + [b""], groups, strict=True))
    values = {
        k.name: _to_int(found[k.name]) if k.kind == "id" else _to_float(found[k.name])
        for k in DETAIL_KEYS
        if k.kind in ("id", "ms")
    }
    kind_arr = np.array(found[TEXT_KEY], dtype=object)  # bytes would cut longer kinds
    mono_word = np.array(found[FLAG_KEY]) != b""
    for i in np.flatnonzero((np.array(found[b""]) != b"") & good):
        parsed = _parse_detail_slow(details[i])
        if isinstance(parsed, str):
            skipped.append((int(seq[i]), parsed))
            good[i] = False
            continue
        for name, col in values.items():
            col[i] = parsed.get(name, -1 if col.dtype.kind == "i" else np.nan)
        kind_arr[i] = parsed.get(TEXT_KEY, b"")
        mono_word[i] = bool(parsed.get(FLAG_KEY))
    worker, partition = values[b"worker"], values[b"partition"]
    synth_ms, gpu_ms = values[b"synth_ms"], values[b"gpu_ms"]

    has_kind = kind_arr != b""
    mono, bad = trust(event, worker, partition, synth_ms, has_kind, mono_word)
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
    return EventBatch(
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
        cuzk=no_cuzk(),
        markers=[],
    )


def trust(
    event: np.ndarray,
    worker: np.ndarray,
    partition: np.ndarray,
    synth_ms: np.ndarray,
    has_kind: np.ndarray,
    mono_word: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(mono, bad): GPU events must name a worker; partition-less rows must carry the
    evidence of a monolithic job, else they are torn partitioned lines.  The evidence is
    looked at for the partition-less rows only (few, in a partitioned run's log)."""
    bad = (event >= GPU_PICKUP) & (event <= GPU_END) & (worker < 0)  # NEEDS_WORKER
    mono = np.zeros(len(event), dtype=bool)
    loose = np.flatnonzero(partition < 0)
    if len(loose):
        e = event[loose]
        evidence = np.select(
            [e == SYNTH_START, e == SYNTH_END, e == QUEUED],
            [has_kind[loose], ~np.isnan(synth_ms[loose]), mono_word[loose]],
            default=worker[loose] >= 0,
        )
        mono[loose] = evidence
        bad[loose] |= ~evidence
    return mono, bad


assert tuple(range(GPU_PICKUP, GPU_END + 1)) == NEEDS_WORKER, "trust() tests a code range"


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
        if part == FLAG_KEY:
            out[FLAG_KEY] = True
            continue
        key, eq, value = part.partition(b"=")
        if not eq or not key:
            return "malformed_timeline"
        if key in NUMBER_KEYS:
            most = NUMBER_KEYS[key]
            if not value.isdigit() or len(value) > MAX_MS_DIGITS:
                return "bad_number"
            out[key] = int(value)
            if most is not None and out[key] > most:
                return "bad_number"
        elif key == TEXT_KEY:
            out[key] = value
    return out


def _to_int(col: tuple[bytes, ...]) -> np.ndarray:
    a = np.array(col)
    return np.where(a == b"", b"-1", a).astype(np.int64)


def _to_float(col: tuple[bytes, ...]) -> np.ndarray:
    a = np.array(col)
    return np.where(a == b"", b"nan", a).astype(np.float64)


def _job_codes(jids: tuple[bytes, ...], jobs: JobIds) -> np.ndarray:
    """Global job codes, numbering new job ids in order of appearance."""
    codes, uniques = factorize(np.array(jids, dtype=object))
    lut = np.array([*job_codes(uniques, jobs), -1], dtype=np.int32)
    return lut[codes]
