"""Parse found records into an ``EventBatch``: the strict numpy parser first, the exact
parser for the rest, merged back in file order (the pure-Python scanner's parser, and the
compiled scanner's for the records it hands back)."""

from __future__ import annotations

import numpy as np

from viewer.io import strict
from viewer.io.batch import CuzkLines, EventBatch, merge_cuzk, merge_exact
from viewer.io.exact import parse_cuzk, parse_exact, trust
from viewer.io.grammar import CUZK_KEYS, CZ_TEXT, SYNTH_START, TL
from viewer.io.records import SEQ_SHIFT, JobIds, RawBatch, job_codes

TL_SKIP = len(TL)
CZ_SKIP = len(CZ_TEXT)


def parse_records(raw: RawBatch, jobs: JobIds, seq: np.ndarray | None = None) -> EventBatch:
    """Columns of the TIMELINE events and CUZK_TIMING lines of ``raw``, in file order.

    ``seq``: the lines' record positions when they are not consecutive from ``raw.base``
    (the lines the compiled scanner hands back)."""
    items = raw.items
    n = len(items)
    if seq is None:
        seq = (raw.base + np.arange(n, dtype=np.int64)) << SEQ_SHIFT
    f = strict.flatten(items)
    is_tl = f.u[f.start + 3] == TL[3]  # "TIMELINE," vs "TIMING:"
    tl, cz = np.flatnonzero(is_tl), np.flatnonzero(~is_tl)
    batch = _events(items, seq, tl, f, jobs)
    batch.cuzk = _cuzk(items, seq, cz, f)
    batch.markers = raw.markers
    return batch


def _events(
    items: list[bytes],
    seq: np.ndarray,
    tl: np.ndarray,
    f: strict.Flat,
    jobs: JobIds,
) -> EventBatch:
    fe = strict.parse_events(f, tl, TL_SKIP)
    acc = np.flatnonzero(fe.ok)
    rest = tl[~fe.ok].tolist()
    exact = parse_exact([items[i][TL_SKIP:] for i in rest], seq[rest].tolist(), jobs)
    lut = np.array([*job_codes(fe.job_ids, jobs), -1], dtype=np.int32)
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


def _kind(buf: bytes, at: np.ndarray) -> str:
    return buf[int(at[0]) : int(at[1])].decode("ascii", "replace")


CUZK_NEEDLES = (*CUZK_KEYS, b"\x1b")


def _cuzk(
    items: list[bytes],
    seq: np.ndarray,
    cz: np.ndarray,
    f: strict.Flat,
) -> CuzkLines:
    kind, a, b = strict.parse_cuzk(f, cz, CZ_SKIP)
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
