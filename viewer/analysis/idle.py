"""The GPU idle time of a range split the ways the panels quote it: starved or dispatch, and
inside or outside the cold start, so the verdict's figure (idle outside the cold start)
and the evidence's (every idle gap) can be shown adding up."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewer.analysis.verdict import warm_idle
from viewer.model.frame import Frame


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


def _sum(gaps: Frame, starved: bool | None = None) -> float:
    ms = gaps["ms"]
    if starved is not None:
        ms = ms[gaps["starved"] == starved]
    return float(np.nansum(ms))


def idle_split(gaps: Frame, cold: Frame) -> IdleSplit:
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
