"""Per-job table and throughput: how often a proof comes out, against the kernel floor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.groups import Groups
from viewer.analysis.intervals import Range, check_range
from viewer.analysis.kernels import KernelStats, kernel_stats
from viewer.analysis.stages import stages
from viewer.analysis.units import counted
from viewer.model import Session
from viewer.model.frame import Frame
from viewer.model.keys import factorize
from viewer.model.timeline import EVENT_TIMES

JOB_TABLE_COLUMNS = [
    "job",
    "job_id",
    "kind",
    "partitions",
    "first_gpu_start",
    "completed",
    "synth_start",
    "synth_end",
    "synth_span_ms",
    "queue_wait_ms",
]


@dataclass(frozen=True)
class Throughput:
    """Seconds per proof: the kernel floor (theoretical) against what the run achieved."""

    theoretical_s_per_proof: float
    measured_s_per_proof: float | None
    ratio: float | None
    jobs_completed: int
    partitions_per_proof: int | float  # ``proof_size``
    gpus: int


@per_session
def _all_jobs(session: Session) -> Frame:
    """Every job with its figures plus ``active_start`` / ``active_end`` for range filtering."""
    p = session.partitions
    jobs = session.jobs
    end = p["gpu_end"]
    # A job is completed when every one of its calls has a GPU_END: completion = the last one.
    g = Groups(p["job"], size=len(jobs))
    end_ms = session.end_ms  # (not the session: the memo must not keep it alive)

    def active(last: bool) -> np.ndarray:  # only for a range: a table of 6 times a call
        times = p[list(EVENT_TIMES)].to_numpy(np.float64)
        if not last:
            return g.min(np.fmin.reduce(times, axis=1, initial=np.inf))
        open_end = np.where(p["gpu_open"] | p["synth_open"], end_ms, -np.inf)
        return g.max(np.fmax(np.fmax.reduce(times, axis=1, initial=-np.inf), open_end))

    synth_start, synth_end = g.min(p["synth_start"]), g.max(p["synth_end"])
    unfinished = g.any(~np.isfinite(end))
    completed = np.where(unfinished, np.nan, g.max(end)) if unfinished.any() else g.max(end)
    kind = jobs["kind"]
    partitioned = np.equal(kind, None) & ~jobs["monolithic"]
    if partitioned.any():  # (a copy only then: 8 bytes a job)
        kind = kind.copy()
        kind[partitioned] = "partitioned"
    made = {
        "job": np.arange(len(jobs), dtype="int32"),
        "kind": kind,
        "partitions": jobs["partitions"],
        "first_gpu_start": g.min(p["gpu_start"]),
        "completed": completed,
        "synth_start": synth_start,
        "synth_end": synth_end,
        "synth_span_ms": synth_end - synth_start,
        "queue_wait_ms": g.mean(stages(session)["queue_wait_ms"]),
    }
    makers = {name: (lambda col=col: col) for name, col in made.items()}
    return Frame.lazy(
        {
            "job": makers.pop("job"),
            # The ids when read: a played run's are made then (52 bytes a job as text).
            "job_id": lambda: jobs["job_id"],
            **makers,
            "active_start": lambda: active(False),
            "active_end": lambda: active(True),
        },
        len(jobs),
    )


def job_table(session: Session, rng: Range = None) -> Frame:
    """One row per job active in ``rng``: first GPU_START, completion (NaN while a call is
    unfinished), synthesis span and mean queue wait (``stages``' ``queue_wait_ms``)."""
    rng = check_range(rng)
    t = _all_jobs(session)
    if rng is not None:
        t = t[(t["active_end"] >= rng[0]) & (t["active_start"] <= rng[1])]
    return t[JOB_TABLE_COLUMNS]


def completions(session: Session) -> np.ndarray:
    """Per job (rows of ``session.jobs``): its completion, the last GPU_END of its calls;
    NaN while one of them is unfinished."""
    return _all_jobs(session)["completed"]


def seconds_per_proof(done: np.ndarray) -> float | None:
    """Measured s/proof from completion times (ms): the steady-state spacing of finished
    proofs, (last - first) / (jobs - 1); None for fewer than two, and None when they all
    finished in the same millisecond: no interval was seen, and 0.0 s/proof would be a
    figure the log does not hold (the offsets' resolution is 1 ms)."""
    done = done[np.isfinite(done)]
    if len(done) < 2:
        return None
    span = float(done.max() - done.min())
    if span <= 0:
        return None
    return span / (len(done) - 1) / 1000.0


def no_spacing_reason(jobs: int, where: str = "") -> str:
    """Why a run of ``jobs`` completed jobs (``where``: " in the log") has no measured
    s/proof."""
    if jobs < 2:
        return f"{counted(jobs, 'job')} completed{where}, two are needed to measure s/proof"
    return (
        f"the {jobs} jobs{where} completed in the same millisecond: no interval between "
        "finished proofs to measure s/proof"
    )


def proof_size(sizes: np.ndarray, kinds: np.ndarray) -> int | float:
    """Partitions per proof of jobs of ``sizes`` calls and ``kinds``: each kind's most
    common size (robust to a job that lost a line), weighted by its jobs; a whole number
    where every job is of one size, else rounded to 0.01.  Curio's daemon proves PoRep
    (10 partitions) beside PoSt and snap proofs (one call each): the most common size of
    all jobs was 1 in such a run, and "mean kernel x 1" was a third of the kernel time a
    proof takes on average (domain.md: the floor if the GPU never idles)."""
    if not len(sizes):
        return 0
    # Vectorized: a list per kind of every job's size held 1.5 M Python ints (~60 MB).
    codes, _ = factorize(kinds)
    sizes = np.asarray(sizes, dtype=np.int64)
    low = int(sizes.min())
    width = int(sizes.max()) - low + 1
    pairs, counts = np.unique(codes * width + (sizes - low), return_counts=True)
    kind, size = pairs // width, pairs % width + low
    # Each kind's most common size, the larger on a tie: its last after sorting by count.
    order = np.lexsort((size, counts, kind))
    last = np.flatnonzero(np.r_[kind[order][1:] != kind[order][:-1], True])
    total = int((np.bincount(codes) * size[order][last]).sum())
    mean = round(total / len(sizes), 2)
    return int(mean) if mean == int(mean) else mean


def throughput(
    session: Session, rng: Range = None, kernel: KernelStats | None = None
) -> Throughput:
    """Theoretical vs measured seconds per proof in ``rng``.

    theoretical = mean kernel per partition x partitions per proof (``proof_size``)
    / GPUs that ran calls; measured = spacing of the
    completions of the jobs completed inside the range.  ``kernel``: the session's
    ``kernel_stats`` in ``rng`` when already computed.
    """
    rng = check_range(rng)
    t = _all_jobs(session)
    done = t["completed"]
    inside = np.isfinite(done)
    if rng is not None:
        inside &= (done >= rng[0]) & (done <= rng[1])
    n = int(inside.sum())
    started = np.isfinite(t["first_gpu_start"])
    chosen = inside if n else started
    per_proof = proof_size(t["partitions"][chosen], t["kind"][chosen])
    k = kernel_stats(session, rng) if kernel is None else kernel
    gpus = sum(1 for ms in k.per_gpu.values() if ms > 0) or len(session.gpus)
    theoretical = k.mean_ms * per_proof / gpus / 1000.0 if gpus and k.partitions else float("nan")
    measured = seconds_per_proof(done[inside])
    ratio = theoretical / measured if measured and np.isfinite(theoretical) else None
    return Throughput(
        theoretical_s_per_proof=float(theoretical),
        measured_s_per_proof=measured,
        ratio=ratio,
        jobs_completed=n,
        partitions_per_proof=per_proof,
        gpus=int(gpus),
    )
