"""Small hand-built sessions whose figures are known by construction."""

from __future__ import annotations

from viewer.model import Session, build_session


def call(job: str, part: int, start: float, end: float | None, worker: int, **kw) -> dict:
    """One GPU call row; ``gpu`` defaults to ``worker // 2`` (two workers per GPU)."""
    row = dict(job_id=job, partition=part, gpu_start=start, worker=worker, gpu=worker // 2)
    if end is not None:
        row["gpu_end"] = end
    row.update(kw)
    return row


def session(*rows: dict, **kw) -> Session:
    return build_session(list(rows), **kw)
