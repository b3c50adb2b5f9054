"""Parse one batch of scanned lines into an ``EventBatch``: numpy first, regex for the rest.

``fastparse`` accepts the lines in the exact form the daemon writes (nearly all of
them); every other line goes through ``scan.parse_exact`` / ``scan.parse_cuzk``, which
define the behaviour, and the two results are merged back in file order.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from viewer.io import fastparse as fp
from viewer.io.scan import (
    CUZK_KEYS,
    SEQ_SHIFT,
    SYNTH_START,
    TL,
    CuzkLines,
    EventBatch,
    RawBatch,
    empty_batch,
    parse_cuzk,
    parse_exact,
    trust,
)

TL_SKIP = len(TL)
CZ_SKIP = len(b"TIMING:")
EVENT_COLUMNS = (
    "seq", "offset", "event", "job", "partition", "worker", "synth_ms", "gpu_ms", "mono",
)  # fmt: skip


def parse_records(
    raw: RawBatch, jobs: dict[bytes, int], seq: np.ndarray | None = None
) -> EventBatch:
    """Columns of the TIMELINE events and CUZK_TIMING lines of ``raw``, in file order.

    ``seq``: the lines' record positions when they are not consecutive from ``raw.base``
    (the lines the compiled scanner hands back)."""
    items = raw.items
    n = len(items)
    if seq is None:
        seq = (raw.base + np.arange(n, dtype=np.int64)) << SEQ_SHIFT
    f = fp.flatten(items)
    is_tl = f.u[f.start + 3] == ord("E")  # "TIMELINE," vs "TIMING:"
    tl, cz = np.flatnonzero(is_tl), np.flatnonzero(~is_tl)
    batch = _events(items, seq, tl, f, jobs)
    batch.cuzk = _cuzk(items, seq, cz, f)
    batch.markers = raw.markers
    return batch


def _events(
    items: list[bytes],
    seq: np.ndarray,
    tl: np.ndarray,
    f: fp.Flat,
    jobs: dict[bytes, int],
) -> EventBatch:
    fe = fp.parse_events(f, tl, TL_SKIP)
    acc = np.flatnonzero(fe.ok)
    rest = tl[~fe.ok].tolist()
    exact = parse_exact([items[i][TL_SKIP:] for i in rest], seq[rest].tolist(), jobs)
    lut = np.array([jobs.setdefault(j, len(jobs)) for j in fe.job_ids] + [-1], dtype=np.int32)
    event = fe.event[acc]
    worker, partition = fe.worker[acc], fe.partition[acc]
    synth_ms = fe.synth_ms[acc]
    has_kind = fe.kind_at[0][acc] >= 0
    mono, bad = trust(event, worker, partition, synth_ms, has_kind, fe.mono_word[acc])
    rows_seq = seq[tl[acc]]
    good = ~bad
    job = lut[fe.job[acc]]
    fast = {
        "seq": rows_seq[good],
        "offset": fe.offset[acc][good],
        "event": event[good],
        "job": job[good],
        "partition": partition[good].astype(np.int32),
        "worker": worker[good].astype(np.int32),
        "synth_ms": synth_ms[good],
        "gpu_ms": fe.gpu_ms[acc][good],
        "mono": mono[good],
    }
    with_kind = np.flatnonzero(good & has_kind & (event == SYNTH_START)).tolist()
    kinds = [
        (int(rows_seq[k]), int(job[k]), _kind(f.buf, fe.kind_at[:, acc[k]])) for k in with_kind
    ]
    skipped = [(int(s), "malformed_timeline") for s in rows_seq[bad].tolist()]
    return merge_exact(fast, kinds, skipped, exact.cuzk, [], exact)


def merge_exact(
    fast: dict[str, np.ndarray],
    kinds: list[tuple[int, int, str]],
    skipped: list[tuple[int, str]],
    cuzk: CuzkLines,
    markers: list[tuple[int, int, bytes]],
    exact: EventBatch | None,
) -> EventBatch:
    """One batch of the rows a fast path parsed (``fast``: ``EVENT_COLUMNS``, in file
    order) and of the rows the exact path parsed (``exact``), merged in file order."""
    if exact is not None:
        order = np.argsort(np.concatenate([fast["seq"], exact.seq]), kind="stable")
        fast = {
            c: np.concatenate([fast[c], getattr(exact, c)]).astype(getattr(exact, c).dtype)[order]
            for c in EVENT_COLUMNS
        }
        kinds = sorted(kinds + exact.kinds)
        # By position alone: lines skipped at one place (oversized, then cut) keep their order.
        skipped = sorted(
            skipped + list(zip(exact.skipped_seq.tolist(), exact.skipped_reason, strict=True)),
            key=lambda s: s[0],
        )
    return EventBatch(
        **fast,
        kinds=kinds,
        skipped_seq=np.array([s for s, _ in skipped], dtype=np.int64),
        skipped_reason=[r for _, r in skipped],
        cuzk=cuzk,
        markers=markers,
    )


def merge_cuzk(a: CuzkLines, b: CuzkLines) -> CuzkLines:
    """Two sets of CUZK_TIMING lines as one, in file order."""
    order = np.argsort(np.concatenate([a.seq, b.seq]), kind="stable")
    return CuzkLines(
        np.concatenate([a.seq, b.seq])[order],
        np.concatenate([a.kind, b.kind]).astype(np.int8)[order],
        np.concatenate([a.a, b.a])[order],
        np.concatenate([a.b, b.b])[order],
    )


CUZK_FIELDS = dataclasses.fields(CuzkLines)


def merge_batches(batches: list[EventBatch]) -> EventBatch:
    """One batch holding ``batches`` in order, its copies folded (``fold_copies``).  The
    batches are emptied as their columns are joined: the peak holds one column twice, not
    all of them."""
    if len(batches) <= 1:
        return fold_copies(batches[0]) if batches else empty_batch()
    out: dict[str, object] = {}
    for f in dataclasses.fields(EventBatch):
        parts = [getattr(b, f.name) for b in batches]
        if isinstance(parts[0], CuzkLines):
            out[f.name] = CuzkLines(**{g.name: _join(parts, g.name) for g in CUZK_FIELDS})
        elif isinstance(parts[0], np.ndarray):
            out[f.name] = _join(batches, f.name)
        else:
            out[f.name] = [x for p in parts for x in p]
    return fold_copies(EventBatch(**out))


#: The columns that make two rows copies of each other (all but ``seq``).
VALUE_COLUMNS = EVENT_COLUMNS[1:]


def fold_copies(batch: EventBatch) -> EventBatch:
    """``batch`` without the rows that repeat the row before them exactly, with no marker
    and no CUZK_TIMING line between them; each kept row counts its copies (``copy_seq``,
    ``copy_n``).  A duplicated line costs a count, not a row (2 GB of one repeated line
    read as one row), and nothing it could change is lost: a copy can never start a
    session (``sessions.split_sessions`` counts the copies), pairing skips it as its row's
    duplicate, and the events around it stay the same."""
    seq, offset = batch.seq, batch.offset
    at = np.flatnonzero(offset[1:] == offset[:-1]) + 1  # rows that may repeat the one before
    for name in VALUE_COLUMNS[1:]:
        if not len(at):
            return batch
        col = getattr(batch, name)
        same = col[at] == col[at - 1]
        if col.dtype.kind == "f":
            same |= np.isnan(col[at]) & np.isnan(col[at - 1])
        at = at[same]
    if len(at):
        between = np.sort(
            np.concatenate([batch.cuzk.seq, np.array([m[0] for m in batch.markers], np.int64)])
        )
        at = at[np.searchsorted(between, seq[at]) == np.searchsorted(between, seq[at - 1])]
    if not len(at):
        return batch
    n = len(seq)
    counts = np.zeros(n, np.int64)
    counts[np.searchsorted(seq, batch.copy_seq)] = batch.copy_n
    keep = np.ones(n, bool)
    keep[at] = False
    counts[at] += 1  # a folded row counts itself and its own copies
    kept = np.cumsum(keep) - 1  # the kept row each row folds into
    folded = np.bincount(kept, weights=counts, minlength=int(kept[-1]) + 1).astype(np.int64)
    rows = np.flatnonzero(keep)
    has = folded > 0
    return dataclasses.replace(
        batch,
        **{name: getattr(batch, name)[rows] for name in EVENT_COLUMNS},
        copy_seq=seq[rows][has],
        copy_n=folded[has],
    )


def _join(holders: list, name: str) -> np.ndarray:
    """The arrays ``holder.name`` concatenated; each holder keeps an empty view of it."""
    joined = np.concatenate([getattr(h, name) for h in holders])
    for h in holders:
        setattr(h, name, joined[:0])
    return joined


def _kind(buf: bytes, at: np.ndarray) -> str:
    return buf[int(at[0]) : int(at[1])].decode("ascii", "replace")


CUZK_NEEDLES = (*CUZK_KEYS, b"\x1b")


def _cuzk(
    items: list[bytes],
    seq: np.ndarray,
    cz: np.ndarray,
    f: fp.Flat,
) -> CuzkLines:
    kind, a, b = fp.parse_cuzk(f, cz, CZ_SKIP)
    rej = cz[kind < 0]
    # A rejected line without one of our keys (or an escape that may hide one) is a
    # CUZK_TIMING line we do not use: the exact path would drop it too.
    rest: list[int] = []
    if len(rej):
        blob = b"\n".join([items[i] for i in rej.tolist()])
        if any(k in blob for k in CUZK_NEEDLES):
            rest = [i for i in rej.tolist() if any(k in items[i] for k in CUZK_NEEDLES)]
    exact = parse_cuzk([items[i][CZ_SKIP:] for i in rest], seq[rest].tolist())
    keep = kind >= 0
    return merge_cuzk(CuzkLines(seq[cz[keep]], kind[keep], a[keep], b[keep]), exact)
