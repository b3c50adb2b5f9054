"""Plain-text descriptions of what lies under the mouse (shown with Qt.PlainText, never HTML)."""

from __future__ import annotations

import math

import pandas as pd

from viewer.analysis.counters import COUNTERS
from viewer.analysis.stages import BLOCKED_MS, stages
from viewer.analysis.units import duration, position
from viewer.model import KERNEL_SOURCE_TIMING, Session


def describe_partition(session: Session, row: int) -> str:
    """Job id, partition, worker, GPU times, kernel breakdown and every stage of one call's
    life (``viewer.analysis.stages``)."""
    p = session.partitions.iloc[row]
    job = session.jobs.iloc[int(p["job"])]
    part = int(p["partition"])
    what = f"partition {part}" if part >= 0 else f"monolithic {job['kind'] or 'job'}"
    worker = int(p["worker"])
    gpu = int(p["gpu"])
    lines = [
        f"job {job['job_id']}",
        f"{what} · worker {worker if worker >= 0 else '?'} · GPU {gpu if gpu >= 0 else '?'}",
    ]
    start, end = float(p["gpu_start"]), float(p["gpu_end"])
    if math.isfinite(start):
        if bool(p["gpu_open"]):
            lines.append(f"GPU {position(start)} → open (no GPU_END)")
        else:
            call = duration(float(p["gpu_ms"]))
            lines.append(f"GPU {position(start)} → {position(end)}  ({call} gpu_ms)")
    kernel = float(p["kernel_ms"])
    if math.isfinite(kernel):
        parts = [
            f"{name} {duration(float(p[col]))}"
            for name, col in (
                ("ntt", "ntt_msm_h_ms"),
                ("batch", "batch_add_ms"),
                ("tail", "tail_msm_ms"),
            )
            if math.isfinite(float(p[col]))
        ]
        detail = f"  ({' · '.join(parts)})" if parts else ""
        lines.append(f"kernel {duration(kernel)}{detail}")
    elif session.kernel_source != KERNEL_SOURCE_TIMING and math.isfinite(start):
        lines.append("kernel: no CUZK_TIMING (gpu_ms is an upper bound)")
    st = stages(session).iloc[row]
    if bool(p["synth_open"]):
        lines.append(f"synthesis from {position(float(p['synth_start']))}, never ended")
    life = [
        (label, float(st[col]))
        for label, col in (
            ("synthesis", "synth_ms"),
            ("held by a full queue", "queue_delay_ms"),
            ("queue wait", "queue_wait_ms"),
            ("dispatch", "dispatch_ms"),
            ("CPU prep", "prep_ms"),
            ("mutex wait", "mutex_wait_ms"),
            ("post (b_g2 + epilogue)", "post_ms"),
        )
        if math.isfinite(float(st[col])) and (col != "queue_delay_ms" or st[col] > BLOCKED_MS)
    ]
    lines += [f"{label} {duration(value)}" for label, value in life]
    return "\n".join(lines)


def describe_gap(session: Session, gaps: pd.DataFrame, index: int) -> str:
    """One idle gap of a GPU: length, cause and the jobs on its sides."""
    g = gaps.loc[index]
    cause = "starved (waiting for synthesis)" if bool(g["starved"]) else "dispatch overhead"
    ids = session.jobs["job_id"]
    lines = [
        f"idle gap {duration(float(g['ms']))} on GPU {int(g['gpu'])}: {cause}",
        f"{position(float(g['start']))} → {position(float(g['end']))}",
    ]
    if bool(g["cross_sector"]):
        lines.append(f"cross-sector: job {ids.iloc[int(g['before_job'])]}")
        lines.append(f"           → job {ids.iloc[int(g['after_job'])]}")
    return "\n".join(lines)


def describe_counter(key: str, lo: int, hi: int, at: str) -> str:
    """A counter under the mouse: "queue depth 3 at 75.742 s" (or "3–7" over a pixel
    column where it changed)."""
    value = f"{lo}" if lo == hi else f"{lo}–{hi}"
    return f"{COUNTERS[key]} {value} at {at}"
