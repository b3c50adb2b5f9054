"""The Timeline model (no Qt): sessions of sorted per-call tables."""

from viewer.model.build import Tables, build_session, session_tables
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
    "Tables",
    "Timeline",
    "build_session",
    "session_tables",
]
