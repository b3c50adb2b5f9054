"""The columns a scan produces (``EventBatch``, ``CuzkLines``) and how batches are merged:
the fast and exact rows of one batch in file order, batches in file order, exact copies
of a record folded into a count."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from viewer.io.records import SEQ_SHIFT
from viewer.io.sessions import NEXT_WINDOW, PREV_WINDOW

EVENT_COLUMNS = (
    "seq", "offset", "event", "job", "partition", "worker", "synth_ms", "gpu_ms", "mono",
)  # fmt: skip


@dataclass
class CuzkLines:
    """The CUZK_TIMING records that matter, as columns (file order)."""

    seq: np.ndarray  # int64 record position
    kind: np.ndarray  # int8: the record's position in grammar.CUZK_FORMS, or CUZK_MALFORMED
    a: np.ndarray  # float64: the value of the first key
    b: np.ndarray  # float64: the value of the second key (NaN when the form has none)


def no_cuzk() -> CuzkLines:
    return CuzkLines(np.empty(0, np.int64), np.empty(0, np.int8), np.empty(0), np.empty(0))


@dataclass
class EventBatch:
    """Parsed TIMELINE events (one row per well-formed record) plus what was skipped."""

    seq: np.ndarray  # int64 position in the file's record order
    offset: np.ndarray  # int64 ms
    event: np.ndarray  # int8, see grammar.EVENTS
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
    # Rows followed by exact copies of themselves (``fold_copies``): seq, copies.
    copy_seq: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    copy_n: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))


def empty_batch() -> EventBatch:
    i64, i32 = np.empty(0, np.int64), np.empty(0, np.int32)
    return EventBatch(
        i64, i64, np.empty(0, np.int8), i32, i32, i32, np.empty(0), np.empty(0),
        np.empty(0, bool), [], i64, [], no_cuzk(), [],
    )  # fmt: skip


def skipped_batch(base: int, reason: str) -> EventBatch:
    """A batch of one line skipped whole (``reason``), placed before record ``base``."""
    batch = empty_batch()
    batch.skipped_seq = np.array([(base << SEQ_SHIFT) - 1], np.int64)
    batch.skipped_reason = [reason]
    return batch


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
#: Of a run of near copies (rows equal but for a later offset), the rows kept whole: the
#: first ``NEAR_HEAD`` and the last ``NEAR_TAIL``.  Only a run's first PREV_WINDOW rows can
#: start a session (later ones lie at or above the PREV_WINDOW rows before them); their
#: windows reach NEXT_WINDOW - 1 rows further.  The rows after the run see its last
#: PREV_WINDOW.  Folding the middle therefore changes no session and no window a restart
#: is judged by (``sessions.split_sessions``).
NEAR_HEAD = PREV_WINDOW + NEXT_WINDOW - 1
NEAR_TAIL = PREV_WINDOW


def fold_copies(batch: EventBatch) -> EventBatch:
    """``batch`` without the rows that repeat the row before them exactly, with no marker
    and no CUZK_TIMING line between them; each kept row counts its copies (``copy_seq``,
    ``copy_n``).  A duplicated line costs a count, not a row (2 GB of one repeated line
    read as one row), and nothing it could change is lost: a copy can never start a
    session (``sessions.split_sessions`` counts the copies), pairing skips it as its row's
    duplicate, and the events around it stay the same.

    The middle of each long run of near copies is folded too, rows that repeat the one
    before them but for a later or equal offset (one call's GPU_START written every
    millisecond): pairing skips each as a duplicate just the same, and the rows kept at
    the run's ends (``NEAR_HEAD``, ``NEAR_TAIL``) hold every window the session split
    reads.  A 200 MB log of one repeated event held 0.5x its size in rows until pairing."""
    batch = _fold(batch, _repeats_of_previous(batch, exact=True))
    return _fold(batch, _middles(_repeats_of_previous(batch, exact=False)))


def _repeats_of_previous(batch: EventBatch, exact: bool) -> np.ndarray:
    """Rows that repeat the row before them (``exact``: with the same offset, else with an
    equal or later one), no marker or CUZK_TIMING line between."""
    offset = batch.offset
    if exact:
        at = np.flatnonzero(offset[1:] == offset[:-1]) + 1
        rest = VALUE_COLUMNS[1:]
    else:  # the event column first: consecutive rows of one event type are few
        at = np.flatnonzero(batch.event[1:] == batch.event[:-1]) + 1
        at = at[offset[at] >= offset[at - 1]]
        rest = VALUE_COLUMNS[2:]
    for name in rest:
        if not len(at):
            return at
        col = getattr(batch, name)
        same = col[at] == col[at - 1]
        if col.dtype.kind == "f":
            same |= np.isnan(col[at]) & np.isnan(col[at - 1])
        at = at[same]
    if len(at):
        between = np.sort(
            np.concatenate([batch.cuzk.seq, np.array([m[0] for m in batch.markers], np.int64)])
        )
        seq = batch.seq
        at = at[np.searchsorted(between, seq[at]) == np.searchsorted(between, seq[at - 1])]
    return at


def _middles(at: np.ndarray) -> np.ndarray:
    """Of rows ``at`` (sorted) that each repeat the row before them, those in the middle of
    their run: past its first NEAR_HEAD rows and before its last NEAR_TAIL."""
    if len(at) <= NEAR_HEAD + NEAR_TAIL - 1:
        return at[:0]
    starts = np.r_[True, at[1:] != at[:-1] + 1]  # a run of rows begins one row before
    first = at[np.flatnonzero(starts)]
    last = at[np.append(np.flatnonzero(starts)[1:], len(at)) - 1]
    run = np.cumsum(starts) - 1
    lo, hi = first[run] - 1 + NEAR_HEAD, last[run] - NEAR_TAIL
    return at[(at >= lo) & (at <= hi)]


def _fold(batch: EventBatch, at: np.ndarray) -> EventBatch:
    """``batch`` with the rows ``at`` folded into the kept row before each, as counts."""
    if not len(at):
        return batch
    seq = batch.seq
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


def slices(batch: EventBatch, rows: int) -> Iterator[EventBatch]:
    """``batch`` in new batches of ``rows`` events each (views of its columns, in file
    order: emptying one leaves ``batch`` as it is), every line with the events around it:
    the lines before an event go with it, those after the last with the last."""
    n = len(batch.seq)
    if n <= rows:
        yield dataclasses.replace(batch, cuzk=dataclasses.replace(batch.cuzk))
        return
    starts = list(range(0, n, rows))
    cuts = [int(batch.seq[a]) for a in starts[1:]]  # where each slice after the first begins
    bounds = [None, *cuts, None]

    def within(seq: np.ndarray, k: int) -> slice:
        lo = 0 if bounds[k] is None else int(np.searchsorted(seq, bounds[k]))
        hi = len(seq) if bounds[k + 1] is None else int(np.searchsorted(seq, bounds[k + 1]))
        return slice(lo, hi)

    marker_seq = np.array([m[0] for m in batch.markers], np.int64)
    kind_seq = np.array([k[0] for k in batch.kinds], np.int64)
    for k, a in enumerate(starts):
        ev = slice(a, min(a + rows, n))
        cz, sk, cp = (
            within(batch.cuzk.seq, k),
            within(batch.skipped_seq, k),
            within(batch.copy_seq, k),
        )
        mk, kd = within(marker_seq, k), within(kind_seq, k)
        yield EventBatch(
            **{name: getattr(batch, name)[ev] for name in EVENT_COLUMNS},
            kinds=batch.kinds[kd],
            skipped_seq=batch.skipped_seq[sk],
            skipped_reason=batch.skipped_reason[sk],
            cuzk=CuzkLines(*(getattr(batch.cuzk, f.name)[cz] for f in CUZK_FIELDS)),
            markers=batch.markers[mk],
            copy_seq=batch.copy_seq[cp],
            copy_n=batch.copy_n[cp],
        )
