"""Per-GPU busy / idle / efficiency in a range."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewer.analysis.groups import Groups
from viewer.analysis.intervals import Range, busy_blocks, calls, check_range, clip
from viewer.analysis.transitions import cold_start_regions
from viewer.model import Session


@dataclass(frozen=True)
class GpuStats:
    """One GPU in a range: span = first GPU_START -> last GPU_END, clipped to the range.

    ``busy_ms`` is the clipped union of its workers' calls, ``idle_ms`` = span -
    busy, ``efficiency`` = busy / span (NaN when the span is empty) and
    ``cold_start_ms`` the part of its cold-start regions inside the range.
    """

    gpu: int
    workers: tuple[int, ...]
    first_start_ms: float
    last_end_ms: float
    busy_ms: float
    idle_ms: float
    efficiency: float
    cold_start_ms: float


def overall_efficiency(gpus: list[GpuStats]) -> float:
    """Busy time over span, all GPUs together (NaN when no GPU ran a call)."""
    busy = sum(g.busy_ms for g in gpus)
    span = sum(g.busy_ms + g.idle_ms for g in gpus)
    return busy / span if span > 0 else float("nan")


def busy_by_gpu(session: Session, rng: Range = None) -> dict[int, float]:
    """Per GPU that ran a call, its busy ms (the union of its calls) within ``rng``, without
    the rest of ``gpu_stats`` (its cold starts need the transitions table)."""
    return _busy_spans(session, check_range(rng))[0]


def session_efficiency(session: Session) -> float:
    """``overall_efficiency(gpu_stats(session))``, from the busy blocks alone: the
    transitions table its cold starts need is not made (a what-if's played runs)."""
    busy, first, last = _busy_spans(session, None)
    return overall_efficiency(
        [_gpu(g, (), float(first[g]), float(last[g]), float(busy[g]), 0.0) for g in sorted(first)]
    )


def _busy_spans(
    session: Session, rng: Range
) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
    """Per GPU that ran a call: its busy ms within ``rng``, its first start, its last end."""
    blocks = busy_blocks(session)
    by_gpu = Groups(blocks["group"])
    bs, be = clip(blocks["start"], blocks["end"], rng)
    busy = by_gpu.as_dict(by_gpu.sum(be - bs))
    first = by_gpu.as_dict(by_gpu.min(blocks["start"]))
    last = by_gpu.as_dict(by_gpu.max(blocks["end"]))
    return busy, first, last


def _gpu(
    gpu: int, workers: tuple[int, ...], lo: float, hi: float, b: float, cold: float
) -> GpuStats:
    """One GPU's figures from its span (``lo``..``hi``, NaN: no call) and busy ms ``b``."""
    span = hi - lo if np.isfinite(lo) else 0.0
    return GpuStats(
        gpu=gpu,
        workers=workers,
        first_start_ms=lo,
        last_end_ms=hi,
        busy_ms=b,
        idle_ms=max(0.0, span - b),
        efficiency=b / span if span > 0 else float("nan"),
        cold_start_ms=cold,
    )


def gpu_stats(session: Session, rng: Range = None) -> list[GpuStats]:
    """Busy, idle, efficiency and cold start of every GPU of the session, ascending."""
    rng = check_range(rng)
    c = calls(session)
    busy, first, last = _busy_spans(session, rng)
    cold = cold_start_regions(session)
    cs, ce = clip(cold["start"], cold["end"], rng)
    by_cold = Groups(cold["gpu"])
    cold_ms = by_cold.as_dict(by_cold.sum(ce - cs))
    worker, gpu_of = c["worker"], c["gpu"]
    known = worker >= 0
    seen = Groups(gpu_of[known])
    seen_workers = {
        int(g): np.unique(w).tolist()
        for g, w in zip(seen.keys, seen.split(worker[known]), strict=True)
    }
    workers = session.gpus
    out = []
    for gpu in sorted(set(workers) | set(first)):
        lo, hi = float(first.get(gpu, np.nan)), float(last.get(gpu, np.nan))
        if rng is not None and np.isfinite(lo):
            lo, hi = max(lo, rng[0]), min(hi, rng[1])
            if hi < lo:
                lo = hi = np.nan
        workers_seen = tuple(sorted({*workers.get(gpu, ()), *seen_workers.get(gpu, ())}))
        b, in_cold = float(busy.get(gpu, 0.0)), float(cold_ms.get(gpu, 0.0))
        out.append(_gpu(gpu, workers_seen, lo, hi, b, in_cold))
    return out
