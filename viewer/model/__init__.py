"""The Timeline model (no Qt): sessions of sorted per-call tables."""

from viewer.model.build import build_session
from viewer.model.timeline import (
    BLOCK_COLUMNS,
    JOB_COLUMNS,
    KERNEL_SOURCE_GPU_MS,
    KERNEL_SOURCE_TIMING,
    PARTITION_COLUMNS,
    WORKER_COLUMNS,
    Session,
    Timeline,
)

__all__ = [
    "BLOCK_COLUMNS",
    "JOB_COLUMNS",
    "KERNEL_SOURCE_GPU_MS",
    "KERNEL_SOURCE_TIMING",
    "PARTITION_COLUMNS",
    "WORKER_COLUMNS",
    "Session",
    "Timeline",
    "build_session",
]
