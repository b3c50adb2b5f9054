"""Idle gaps: holes in each GPU's busy union, and whether synthesis or dispatch caused them."""

from __future__ import annotations

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.intervals import Range, busy_blocks, calls, check_range, clip
from viewer.model import Session
from viewer.model.frame import Frame, run_of, take_rows


def idle_gaps(session: Session, rng: Range = None) -> Frame:
    """Holes in each GPU's busy union between its first GPU_START and last GPU_END.

    ``before_job`` / ``after_job`` are job indexes (rows of ``session.jobs``) of
    the calls that close the busy block before the gap and open the one after;
    ``cross_sector`` when they differ.  ``starved`` when the call after the gap
    was queued (else synthesized) after the GPU became free, i.e. it waited for
    synthesis; otherwise the gap is dispatch overhead.  Gaps are found on the
    whole session (one table, shared: the lanes and the summary read the same one),
    then clipped to ``rng``.
    """
    rng = check_range(rng)
    whole = _all_gaps(session)
    if rng is None:
        return whole
    start, end = clip(whole["start"], whole["end"], rng)
    keep = np.flatnonzero(end > start)
    out = whole.take(keep)
    return out.assign(start=start[keep], end=end[keep], ms=(end - start)[keep])


@per_session
def _all_gaps(session: Session) -> Frame:
    """The whole session's gaps (memoized per session, read-only)."""
    c = calls(session)
    blocks = busy_blocks(session)
    group = blocks["group"]
    i = np.flatnonzero(group[1:] == group[:-1])
    i = i[blocks["start"][i + 1] > blocks["end"][i]]  # a hole, not blocks that touch
    # Where every block of one GPU is followed by a hole (calls one after another), the
    # gaps' ends are views of the blocks' (24 MB at 1.5 M one-call jobs), not copies.
    here, nxt = run_of(i), run_of(i + 1)
    start = take_rows(blocks["end"], here)
    end = take_rows(blocks["start"], nxt)
    before = c["job"][blocks["last"][here]]
    after_row = blocks["first"][nxt]
    after = c["job"][after_row]
    return Frame(
        {
            "gpu": group[i].astype("int32"),
            "start": start,
            "end": end,
            "ms": end - start,
            "cross_sector": before != after,
            "starved": c["ready"][after_row] > start,
            "before_job": before.astype("int32"),
            "after_job": after.astype("int32"),
        }
    )


#: The whole session's table ``idle_gaps`` clips (memoized per session: ``cache.drop``).
TABLE = _all_gaps
