"""One partition's whole life, stage by stage, from ``stages``: what the details pane lists
and draws, and what the hover text says."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from viewer.analysis.stages import BLOCKED_MS, stages
from viewer.model import Session

#: Stage key -> its name, in the order of a partition's life.
STAGES = {
    "synthesis": "synthesis",
    "held": "held by a full queue",
    "queue": "queue wait",
    "dispatch": "dispatch",
    "prep": "CPU prep",
    "mutex": "mutex wait",
    "kernel": "CUDA kernels",
    "post": "post (b_g2 + epilogue)",
}
#: The kernels inside the CUDA region: name -> partitions column.
KERNELS = {"ntt_msm_h": "ntt_msm_h_ms", "batch_add": "batch_add_ms", "tail_msm": "tail_msm_ms"}
#: Other CUZK_TIMING figures of a call, as the daemon names them.
TIMING_FIGURES = (
    "prep_msm_ms",
    "barrier_wait_ms",
    "mutex_held_ms",
    "total_start_fn_ms",
    "b_g2_msm_ms",
    "num_circuits",
)


@dataclass(frozen=True)
class Stage:
    """One stage of a partition's life: [start, end) on the session's clock and its
    duration (``ms`` may be known where a time is not: a reported figure)."""

    key: str
    start: float
    end: float
    ms: float

    @property
    def name(self) -> str:
        return STAGES[self.key]


@dataclass(frozen=True)
class Life:
    """Partition ``row`` of a session: who it is, its stages, and the call's figures."""

    row: int
    job: int
    job_id: str
    partition: int  # -1: a monolithic job
    kind: str | None
    worker: int
    gpu: int
    stages: tuple[Stage, ...]
    kernels: dict[str, float]  # ntt_msm_h / batch_add / tail_msm ms (known ones)
    figures: dict[str, float]  # gpu_ms, synth_ms (as reported) and the other CUZK_TIMING ones
    gpu_open: bool
    synth_open: bool

    def stage(self, key: str) -> Stage | None:
        return next((s for s in self.stages if s.key == key), None)

    @property
    def start(self) -> float:
        return min((s.start for s in self.stages if math.isfinite(s.start)), default=math.nan)

    @property
    def end(self) -> float:
        return max((s.end for s in self.stages if math.isfinite(s.end)), default=math.nan)


def _f(value: object) -> float:
    return float(value) if value is not None else math.nan


def life(session: Session, row: int) -> Life:
    """The life of partition ``row`` (of ``session.partitions``), stage by stage: every
    duration is ``stages``' own, every time its interval on the session's clock."""
    p = session.partitions.row(row)
    st = stages(session).row(row)
    job = session.jobs.row(int(p["job"]))
    g0, g1 = _f(p["gpu_start"]), _f(p["gpu_end"])
    k0, k1 = _f(p["kernel_start"]), _f(st["kernel_end"])
    prep, mutex = _f(st["prep_ms"]), _f(st["mutex_wait_ms"])
    s0, s1 = _f(p["synth_start"]), _f(p["synth_end"])
    queued = _f(p["queued"])
    delay = _f(st["queue_delay_ms"])
    out = [Stage("synthesis", s0, s1, _f(st["synth_ms"]))]
    if delay > BLOCKED_MS:
        out.append(Stage("held", s1, queued, delay))
    out.append(Stage("queue", _f(st["ready"]), _f(st["wait_end"]), _f(st["queue_wait_ms"])))
    out.append(Stage("dispatch", _f(st["taken"]), g0, _f(st["dispatch_ms"])))
    prep_end = g0 + prep if math.isfinite(prep) else math.nan
    out.append(Stage("prep", g0, prep_end, prep))
    out.append(Stage("mutex", prep_end, k0 if math.isfinite(mutex) else math.nan, mutex))
    out.append(Stage("kernel", k0, k1, _f(st["kernel_ms"])))
    out.append(Stage("post", k1, g1, _f(st["post_ms"])))
    kernels = {name: _f(p[col]) for name, col in KERNELS.items() if np.isfinite(_f(p[col]))}
    figures = {
        "gpu_ms": _f(p["gpu_ms"]),
        "synth_ms": _f(p["synth_ms"]),
        "call_ms": _f(st["call_ms"]),
    }
    figures.update({name: _f(p[name]) for name in TIMING_FIGURES})
    return Life(
        row=row,
        job=int(p["job"]),
        job_id=str(job["job_id"]),
        partition=int(p["partition"]),
        kind=job["kind"],
        worker=int(p["worker"]),
        gpu=int(p["gpu"]),
        stages=tuple(out),
        kernels=kernels,
        figures={k: v for k, v in figures.items() if math.isfinite(v)},
        gpu_open=bool(p["gpu_open"]),
        synth_open=bool(p["synth_open"]),
    )
