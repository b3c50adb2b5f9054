"""Plain-text descriptions of what lies under the mouse (shown with Qt.PlainText, never HTML)."""

from __future__ import annotations

import math

from viewer.analysis.counters import COUNTERS
from viewer.analysis.life import life
from viewer.analysis.units import SESSION_CLOCK, Clock, duration
from viewer.model import KERNEL_SOURCE_TIMING, Session
from viewer.model.frame import Frame


def describe_partition(session: Session, row: int, clock: Clock = SESSION_CLOCK) -> str:
    """Job id, partition, worker, GPU times, kernel breakdown and every stage of one call's
    life (``viewer.analysis.life``, as the details pane lists them); times on ``clock``."""
    lf = life(session, row)
    what = f"partition {lf.partition}" if lf.partition >= 0 else f"monolithic {lf.kind or 'job'}"
    worker = lf.worker if lf.worker >= 0 else "?"
    gpu = lf.gpu if lf.gpu >= 0 else "?"
    lines = [f"job {lf.job_id}", f"{what} · worker {worker} · GPU {gpu}"]
    call = lf.stage("prep")  # starts at GPU_START
    start = call.start if call is not None else math.nan
    if math.isfinite(start):
        if lf.gpu_open:
            lines.append(f"GPU {clock.stamp(start)} → open (no GPU_END)")
        else:
            end = lf.stage("post").end
            gpu_ms = duration(lf.figures.get("gpu_ms", math.nan))
            lines.append(f"GPU {clock.at(start)} → {clock.stamp(end)}  ({gpu_ms} gpu_ms)")
    kernel = lf.stage("kernel")
    if math.isfinite(kernel.ms):
        names = {"ntt_msm_h": "ntt", "batch_add": "batch", "tail_msm": "tail"}
        parts = [f"{names[k]} {duration(ms)}" for k, ms in lf.kernels.items()]
        detail = f"  ({' · '.join(parts)})" if parts else ""
        lines.append(f"kernel {duration(kernel.ms)}{detail}")
    elif session.kernel_source != KERNEL_SOURCE_TIMING and math.isfinite(start):
        lines.append("kernel: no CUZK_TIMING (gpu_ms is an upper bound)")
    synth = lf.stage("synthesis")
    if lf.synth_open:
        lines.append(f"synthesis from {clock.stamp(synth.start)}, never ended")
    lines += [
        f"{s.name} {duration(s.ms)}" for s in lf.stages if s.key != "kernel" and math.isfinite(s.ms)
    ]
    return "\n".join(lines)


def describe_gap(session: Session, gaps: Frame, index: int, clock: Clock = SESSION_CLOCK) -> str:
    """One idle gap of a GPU: length, cause and the jobs on its sides; times on ``clock``."""
    g = gaps.row(index)
    cause = "starved (waiting for synthesis)" if bool(g["starved"]) else "dispatch overhead"
    ids = session.jobs["job_id"]
    lines = [
        f"idle gap {duration(float(g['ms']))} on GPU {int(g['gpu'])}: {cause}",
        f"{clock.at(float(g['start']))} → {clock.stamp(float(g['end']))}",
    ]
    if bool(g["cross_sector"]):
        lines.append(f"cross-sector: job {ids[int(g['before_job'])]}")
        lines.append(f"           → job {ids[int(g['after_job'])]}")
    return "\n".join(lines)


def describe_counter(key: str, lo: int, hi: int, at: str) -> str:
    """A counter under the mouse: "queue depth 3 at 75.742 s" (or "3–7" over a pixel
    column where it changed)."""
    value = f"{lo}" if lo == hi else f"{lo}–{hi}"
    text = f"{COUNTERS[key]} {value} at {at}"
    if key == "memory":
        text += (
            "\nthe upper end of what the pipeline holds, from what each partition is doing, "
            "at a 32 GiB PoRep's sizes (`whatif --help`: the memory options)"
        )
    return text
