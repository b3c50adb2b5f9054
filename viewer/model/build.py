"""Build a ``Session`` from a flat per-call frame: the one constructor the reader,
the simulator's checks and the tests share."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from viewer.model.timeline import (
    BLOCK_COLUMNS,
    JOB_COLUMNS,
    KERNEL_SOURCE_GPU_MS,
    KERNEL_SOURCE_TIMING,
    PARTITION_COLUMNS,
    WORKER_COLUMNS,
    Session,
    conform,
)


def build_session(
    calls: pd.DataFrame | Iterable[Mapping],
    *,
    index: int = 0,
    kinds: Mapping[str, str | None] | None = None,
    workers: Mapping[int, int] | None = None,
    events: int | None = None,
    skipped: Mapping[str, int] | None = None,
    start_ms: float | None = None,
    end_ms: float | None = None,
    kernel_source: str | None = None,
    notes: Iterable[str] = (),
    kernel_blocks: int = 0,
    ambiguous_blocks: int = 0,
    unattributed: pd.DataFrame | None = None,
) -> Session:
    """A Session from one row per GPU call.

    ``calls`` carries a ``job_id`` column (str) plus any of ``PARTITION_COLUMNS``
    except ``job``; missing columns default to NaN / -1 / False.  ``gpu_open``
    defaults to "has a GPU_START but no GPU_END".  Jobs are numbered in order
    of first appearance; ``kinds`` maps job id -> proof kind; ``workers`` maps
    worker -> GPU (default: every worker seen, GPU from the calls' ``gpu``).
    ``kernel_blocks``, ``ambiguous_blocks``, ``unattributed``: how the CUZK_TIMING blocks
    were matched to calls (``unattributed``: the blocks no call took, ``BLOCK_COLUMNS``).
    """
    frame = calls if isinstance(calls, pd.DataFrame) else pd.DataFrame(list(calls))
    if "job_id" not in frame:
        frame = frame.assign(job_id=pd.Series([], dtype=object))
    codes, uniques = pd.factorize(frame["job_id"].astype(object), sort=False)
    frame = frame.assign(job=codes.astype("int32"))
    if "gpu_open" not in frame and len(frame):
        frame = frame.assign(
            gpu_open=frame.get("gpu_start", pd.Series(np.nan, index=frame.index)).notna()
            & frame.get("gpu_end", pd.Series(np.nan, index=frame.index)).isna()
        )
    if "synth_open" not in frame and len(frame):
        frame = frame.assign(
            synth_open=frame.get("synth_start", pd.Series(np.nan, index=frame.index)).notna()
            & frame.get("synth_end", pd.Series(np.nan, index=frame.index)).isna()
        )
    parts = conform(frame, PARTITION_COLUMNS)
    parts = parts.sort_values(
        ["gpu_start", "synth_start", "job", "partition"], kind="stable", na_position="last"
    ).reset_index(drop=True)

    job_ids = [str(u) for u in uniques]
    counts = np.bincount(parts["job"].to_numpy(), minlength=len(job_ids)).astype("int32")
    mono = np.zeros(len(job_ids), dtype=bool)
    if len(parts):
        is_mono = parts["partition"].to_numpy() < 0
        mono = np.bincount(parts["job"].to_numpy(), weights=is_mono, minlength=len(job_ids)) > 0
    kinds = kinds or {}
    jobs = conform(
        pd.DataFrame(
            {
                "job_id": pd.Series(job_ids, dtype=object),
                "kind": pd.Series([kinds.get(j) for j in job_ids], dtype=object),
                "partitions": counts,
                "monolithic": mono,
            }
        ),
        JOB_COLUMNS,
    )

    if workers is None:
        seen = parts[parts["worker"] >= 0][["worker", "gpu"]]
        workers = dict(seen.groupby("worker")["gpu"].max().items())
    wk = conform(
        pd.DataFrame(
            {
                "worker": np.array(sorted(workers), dtype="int32"),
                "gpu": np.array([workers[w] for w in sorted(workers)], dtype="int32"),
            }
        ),
        WORKER_COLUMNS,
    )

    times = parts[
        ["synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end"]
    ].to_numpy()
    finite = times[np.isfinite(times)]
    if kernel_source is None:
        has_kernel = parts["kernel_ms"].notna().any() if len(parts) else False
        kernel_source = KERNEL_SOURCE_TIMING if has_kernel else KERNEL_SOURCE_GPU_MS
    return Session(
        index=index,
        partitions=parts,
        jobs=jobs,
        workers=wk,
        events=int(events if events is not None else np.isfinite(times).sum()),
        skipped=dict(skipped or {}),
        start_ms=float(start_ms if start_ms is not None else (finite.min() if finite.size else 0)),
        end_ms=float(end_ms if end_ms is not None else (finite.max() if finite.size else 0)),
        kernel_source=kernel_source,
        notes=list(notes),
        kernel_blocks=int(kernel_blocks),
        ambiguous_blocks=int(ambiguous_blocks),
        unattributed=conform(
            unattributed if unattributed is not None else pd.DataFrame(), BLOCK_COLUMNS
        ),
    )
