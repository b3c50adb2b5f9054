"""Small hand-built sessions whose figures are known by construction."""

from __future__ import annotations

from viewer.model import Session, build_session

#: The published Phase 8 reference (pw=10, 5 sectors, gw=2) as the report's Markdown rows.
REFERENCE_MARKDOWN_ROWS = (
    "| mean CUDA kernel time per partition | 3746 ms |",
    "| serial CUDA time per sector (10 partitions) | 37.5 s |",
    "| measured throughput | 37.4 s/proof |",
    "| GPU efficiency (merged intervals) | 100.0 % |",
    "| cross-sector GPU idle gaps | 0 ms |",
    "| sector 0->1 | 4490 ms (cold start) | 761 ms |",
    "| sector 1->2 | 21 ms | 4048 ms |",
    "| sector 2->3 | 244 ms | 4834 ms |",
    "| sector 3->4 | 45 ms | 3916 ms |",
)


def call(job: str, part: int, start: float, end: float | None, worker: int, **kw) -> dict:
    """One GPU call row; ``gpu`` defaults to ``worker // 2`` (two workers per GPU)."""
    row = dict(job_id=job, partition=part, gpu_start=start, worker=worker, gpu=worker // 2)
    if end is not None:
        row["gpu_end"] = end
    row.update(kw)
    return row


def session(*rows: dict, **kw) -> Session:
    return build_session(list(rows), **kw)


def pipeline(
    ready: list[float],
    *,
    parts: int = 10,
    workers: int = 2,
    kernel: float = 3746,
    prep: float = 1700,
    post: float = 400,
    synth: float = 35_000,
    timing: bool = True,
    prep_figures: bool = True,
    start_ms: float = 0.0,
) -> Session:
    """A one-GPU pipeline: job j's partitions are queued at ``ready[j]``; each call preps on
    the CPU, waits for the per-GPU kernel mutex, runs its kernel, then its epilogue.
    ``timing``: CUZK_TIMING figures; ``prep_figures``: among them, the prep and mutex wait."""
    rows = []
    worker_free = [start_ms] * workers
    mutex_free = start_ms
    for j, r in enumerate(ready):
        for p in range(parts):
            w = min(range(workers), key=lambda i: worker_free[i])
            start = max(worker_free[w], r)
            k0 = max(start + prep, mutex_free)
            mutex_free = k0 + kernel
            end = mutex_free + post
            worker_free[w] = end
            row = call(f"job{j}", p, start, end, w, queued=r, synth_start=r - synth, synth_end=r)
            if timing and prep_figures:
                row.update(pre_lock_cpu_ms=prep, mutex_wait_ms=k0 - start - prep)
            if timing:
                row.update(
                    kernel_start=k0,
                    kernel_ms=kernel,
                    ntt_msm_h_ms=kernel * 0.8,
                    batch_add_ms=kernel * 0.17,
                    tail_msm_ms=kernel * 0.03,
                )
            rows.append(row)
    return build_session(rows, start_ms=start_ms)
