"""Analysis of a Session (no Qt): pure functions returning small dataclasses and ``Frame`` tables.

See ``viewer.analysis.intervals`` for the range rules every function follows and
``viewer.analysis.verdict`` for how the verdict reasons.
"""

from viewer.analysis.gaps import idle_gaps
from viewer.analysis.gpus import GpuStats, gpu_stats
from viewer.analysis.intervals import busy_union
from viewer.analysis.jobs import Throughput, job_table, throughput
from viewer.analysis.kernels import KernelStats, kernel_stats
from viewer.analysis.summary import SessionSummary, summarize, verdict
from viewer.analysis.transitions import cold_start_regions, transitions
from viewer.analysis.verdict import Verdict

__all__ = [
    "GpuStats",
    "KernelStats",
    "SessionSummary",
    "Throughput",
    "Verdict",
    "busy_union",
    "cold_start_regions",
    "gpu_stats",
    "idle_gaps",
    "job_table",
    "kernel_stats",
    "summarize",
    "throughput",
    "transitions",
    "verdict",
]
