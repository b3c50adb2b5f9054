"""The GPU idle time of a range split the ways the panels quote it: starved or dispatch, and
inside or outside the cold start, so the verdict's figure (idle outside the cold start)
and the evidence's (every idle gap) can be shown adding up."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from viewer.analysis.verdict import warm_idle


@dataclass(frozen=True)
class IdleSplit:
    """Idle gaps of a range, in ms: ``total = starved + dispatch = cold + warm_starved +
    warm_dispatch``.  ``warm_*`` lie outside the cold-start regions: what the verdict
    weighs; ``cold`` is their part inside them."""

    gaps: int
    total_ms: float
    starved_ms: float
    dispatch_ms: float
    cold_ms: float
    warm_starved_ms: float
    warm_dispatch_ms: float


def _sum(gaps: pd.DataFrame, starved: bool | None = None) -> float:
    if not len(gaps):
        return 0.0
    if starved is None:
        return float(gaps["ms"].sum())
    return float(gaps.loc[gaps["starved"].astype(bool) == starved, "ms"].sum())


def idle_split(gaps: pd.DataFrame, cold: pd.DataFrame) -> IdleSplit:
    """``gaps`` (``idle_gaps`` of a range) split by cause and by the ``cold`` regions
    (``cold_start_regions``), as the verdict splits them."""
    warm = warm_idle(gaps, cold)
    total = _sum(gaps)
    warm_starved, warm_dispatch = _sum(warm, True), _sum(warm, False)
    return IdleSplit(
        gaps=len(gaps),
        total_ms=total,
        starved_ms=_sum(gaps, True),
        dispatch_ms=_sum(gaps, False),
        cold_ms=total - warm_starved - warm_dispatch,
        warm_starved_ms=warm_starved,
        warm_dispatch_ms=warm_dispatch,
    )
