"""Parse one batch of scanned lines into an ``EventBatch``: numpy first, regex for the rest.

``fastparse`` accepts the lines in the exact form the daemon writes (nearly all of
them); every other line goes through ``scan.parse_exact`` / ``scan.parse_cuzk``, which
define the behaviour, and the two results are merged back in file order.
"""

from __future__ import annotations

import numpy as np

from viewer.io import fastparse as fp
from viewer.io.scan import (
    CZ,
    SEQ_SHIFT,
    SYNTH_START,
    TL,
    CuzkLines,
    EventBatch,
    RawBatch,
    parse_cuzk,
    parse_exact,
    trust,
)

WIDTH = 128  # bytes per row of the matrix; longer lines take the exact path
TL_SKIP = len(TL)
CZ_SKIP = len(b"TIMING:")
EVENT_COLUMNS = (
    "seq", "offset", "event", "job", "partition", "worker", "synth_ms", "gpu_ms", "mono",
)  # fmt: skip


def parse_records(raw: RawBatch, jobs: dict[bytes, int]) -> EventBatch:
    """Columns of the TIMELINE events and CUZK_TIMING lines of ``raw``, in file order."""
    items = raw.items
    n = len(items)
    seq = (raw.base + np.arange(n, dtype=np.int64)) << SEQ_SHIFT
    u, length = fp.matrix(items, WIDTH)
    is_tl = u[:, 3] == ord("E") if n else np.zeros(0, bool)  # "TIMELINE," vs "TIMING:"
    tl, cz = np.flatnonzero(is_tl), np.flatnonzero(~is_tl)
    # A glued line may hide the other kind of line after its start: the old byte scan
    # found both, so do we.
    cz_in_tl = _embedded(items, seq, tl, u, length, CZ)
    tl_in_cz = _embedded(items, seq, cz, u, length, TL)
    batch = _events(items, seq, tl, u, length, tl_in_cz, jobs)
    batch.cuzk = _cuzk(items, seq, cz, u, length, cz_in_tl)
    batch.markers = raw.markers
    return batch


def _embedded(
    items: list[bytes],
    seq: np.ndarray,
    rows: np.ndarray,
    u: np.ndarray,
    length: np.ndarray,
    needle: bytes,
) -> tuple[list[bytes], list[int]]:
    """Text after ``needle`` found past the start of the lines ``rows`` (glued lines)."""
    candidates = rows[length[rows] > WIDTH]
    if len(rows) and needle in np.ascontiguousarray(u[rows]).tobytes():
        candidates = rows
    texts: list[bytes] = []
    where: list[int] = []
    for i in candidates.tolist():
        q = items[i].find(needle, 1)
        if q > 0:
            texts.append(items[i][q + len(needle) :])
            where.append(int(seq[i]) + min(q, (1 << SEQ_SHIFT) - 1))
    return texts, where


def _events(
    items: list[bytes],
    seq: np.ndarray,
    tl: np.ndarray,
    u: np.ndarray,
    length: np.ndarray,
    more: tuple[list[bytes], list[int]],
    jobs: dict[bytes, int],
) -> EventBatch:
    fe = fp.parse_events(u[tl, TL_SKIP:], length[tl] - TL_SKIP)
    acc = np.flatnonzero(fe.ok)
    rest = tl[~fe.ok].tolist()
    exact = parse_exact(
        [items[i][TL_SKIP:] for i in rest] + more[0], seq[rest].tolist() + more[1], jobs
    )
    lut = np.array([jobs.setdefault(j, len(jobs)) for j in fe.job_ids] + [-1], dtype=np.int32)
    event = fe.event[acc]
    worker, partition = fe.worker[acc], fe.partition[acc]
    synth_ms = fe.synth_ms[acc]
    has_kind = fe.kind_at[0][acc] >= 0
    mono, bad = trust(event, worker, partition, synth_ms, has_kind, fe.mono_word[acc])
    rows_seq = seq[tl[acc]]
    good = ~bad
    fast = {
        "seq": rows_seq[good],
        "offset": fe.offset[acc][good],
        "event": event[good],
        "job": lut[fe.job[acc]][good],
        "partition": partition[good].astype(np.int32),
        "worker": worker[good].astype(np.int32),
        "synth_ms": synth_ms[good],
        "gpu_ms": fe.gpu_ms[acc][good],
        "mono": mono[good],
    }
    kinds = [
        (int(rows_seq[k]), int(fast_job), _kind(items[tl[acc[k]]], fe, acc[k]))
        for k, fast_job in zip(
            np.flatnonzero(good & has_kind & (event == SYNTH_START)).tolist(),
            lut[fe.job[acc]][good & has_kind & (event == SYNTH_START)].tolist(),
            strict=True,
        )
    ]
    bad_seq = rows_seq[bad]
    order = np.argsort(np.concatenate([fast["seq"], exact.seq]), kind="stable")
    cols = {
        c: np.concatenate([fast[c], getattr(exact, c)]).astype(getattr(exact, c).dtype)[order]
        for c in EVENT_COLUMNS
    }
    skipped = sorted(
        [(int(s), "malformed_timeline") for s in bad_seq.tolist()]
        + list(zip(exact.skipped_seq.tolist(), exact.skipped_reason, strict=True))
    )
    return EventBatch(
        **cols,
        kinds=sorted(kinds + exact.kinds),
        skipped_seq=np.array([s for s, _ in skipped], dtype=np.int64),
        skipped_reason=[r for _, r in skipped],
        cuzk=exact.cuzk,
        markers=[],
    )


def _kind(item: bytes, fe: fp.FastEvents, row: int) -> str:
    start, end = int(fe.kind_at[0][row]), int(fe.kind_at[1][row])
    return item[TL_SKIP + start : TL_SKIP + end].decode("ascii", "replace")


CUZK_NEEDLES = (*fp.CUZK_KEYS, b"\x1b")


def _cuzk(
    items: list[bytes],
    seq: np.ndarray,
    cz: np.ndarray,
    u: np.ndarray,
    length: np.ndarray,
    more: tuple[list[bytes], list[int]],
) -> CuzkLines:
    kind, a, b = fp.parse_cuzk(u[cz, CZ_SKIP:], length[cz] - CZ_SKIP)
    rej = cz[kind < 0]
    candidates = rej[length[rej] > WIDTH]
    if len(rej):
        blob = np.ascontiguousarray(u[rej]).tobytes()
        if any(k in blob for k in CUZK_NEEDLES):
            candidates = rej  # some line has one of our keys in a form we do not accept
    rest = candidates.tolist()
    exact = parse_cuzk([items[i][CZ_SKIP:] for i in rest] + more[0], seq[rest].tolist() + more[1])
    keep = kind >= 0
    order = np.argsort(np.concatenate([seq[cz[keep]], exact.seq]), kind="stable")
    return CuzkLines(
        np.concatenate([seq[cz[keep]], exact.seq])[order],
        np.concatenate([kind[keep], exact.kind]).astype(np.int8)[order],
        np.concatenate([a[keep], exact.a])[order],
        np.concatenate([b[keep], exact.b])[order],
    )
