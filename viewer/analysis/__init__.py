"""Analysis of a Session (no Qt): pure functions returning small dataclasses / DataFrames.

See ``viewer.analysis.intervals`` for the range rules every function follows.
"""

from viewer.analysis.gaps import idle_gaps
from viewer.analysis.intervals import busy_union
from viewer.analysis.kernels import KernelStats, kernel_stats
from viewer.analysis.transitions import cold_start_regions, transitions

__all__ = [
    "KernelStats",
    "busy_union",
    "cold_start_regions",
    "idle_gaps",
    "kernel_stats",
    "transitions",
]
