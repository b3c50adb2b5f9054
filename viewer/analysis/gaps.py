"""Idle gaps: holes in each GPU's busy union, and whether synthesis or dispatch caused them."""

from __future__ import annotations

import numpy as np

from viewer.analysis.intervals import Range, busy_blocks, calls, check_range, clip
from viewer.model import Session
from viewer.model.frame import Frame


def idle_gaps(session: Session, rng: Range = None) -> Frame:
    """Holes in each GPU's busy union between its first GPU_START and last GPU_END.

    ``before_job`` / ``after_job`` are job indexes (rows of ``session.jobs``) of
    the calls that close the busy block before the gap and open the one after;
    ``cross_sector`` when they differ.  ``starved`` when the call after the gap
    was queued (else synthesized) after the GPU became free, i.e. it waited for
    synthesis; otherwise the gap is dispatch overhead.  Gaps are found on the
    whole session, then clipped to ``rng``.
    """
    rng = check_range(rng)
    c = calls(session)
    blocks = busy_blocks(session)
    group = blocks["group"]
    i = np.flatnonzero(group[1:] == group[:-1])
    start = blocks["end"][i]
    end = blocks["start"][i + 1]
    before = c["job"][blocks["last"][i]]
    after_row = blocks["first"][i + 1]
    after = c["job"][after_row]
    starved = c["ready"][after_row] > start
    start, end = clip(start, end, rng)
    keep = end > start
    return Frame(
        {
            "gpu": group[i][keep].astype("int32"),
            "start": start[keep],
            "end": end[keep],
            "ms": (end - start)[keep],
            "cross_sector": (before != after)[keep],
            "starved": starved[keep],
            "before_job": before[keep].astype("int32"),
            "after_job": after[keep].astype("int32"),
        }
    )
