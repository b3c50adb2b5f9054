"""Random durations for the cuzk proving pipeline, played forward by ``viewer.sim.engine``.

A pool of ``pw`` partition workers synthesizes partitions on the CPU; each
finished partition is pushed to one GPU work queue (oldest job's lowest partition
first); ``gw`` GPU workers per GPU take it, do CPU prep, wait for their GPU's
kernel mutex, run the CUDA region, release it and finish with b_g2_msm and an
epilogue.  All durations are drawn up front (``draw``) so that a caller can pin
any of them before ``run``: that is how the reference sample hits exact
published figures, and how two runs from one seed differ by one knob only.
Times are integer milliseconds since the engine started.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from viewer.sim.budget import (
    BASELINE_GIB,
    DEFAULT_MAX_PARALLEL,
    MAX_BUDGET_GIB,
    check_budget,
    gate,
    synth_workers,
)
from viewer.sim.contention import NONE, Contention
from viewer.sim.engine import Played, Shape, Tasks, narrowed, play
from viewer.sim.loaded import Extra, play_loaded

#: Proof kinds; porep-c2 is partitioned, the others are one GPU call per job.
KINDS = ("porep-c2", "snap-update", "window-post", "winning-post")

#: Per kind: (synthesis, prep, kernel, b_g2) as multiples of the porep-c2 partition means,
#: and num_circuits of the GPU call.
KIND_SCALE: dict[str, tuple[float, float, float, float, int]] = {
    "porep-c2": (1.0, 1.0, 1.0, 1.0, 1),
    "snap-update": (1.45, 1.5, 1.7, 1.6, 16),
    "window-post": (0.7, 1.1, 1.2, 1.2, 1),
    "winning-post": (0.04, 0.08, 0.07, 0.1, 1),
}

#: Split of the CUDA region of one call (ntt_msm_h : batch_add : tail_msm).
KERNEL_SPLIT = (3117 / 3882, 640 / 3882, 125 / 3882)


@dataclass(frozen=True)
class SimConfig:
    """What to simulate; durations are porep-c2 partition means in ms, jitter a relative sd."""

    sectors: int = 5  # jobs
    partitions: int = 10  # GPU calls per porep-c2 job
    pw: int = 10  # partition (synthesis) workers
    gw: int = 2  # GPU workers per GPU
    gpus: int = 1
    kinds: tuple[tuple[str, float], ...] = (("porep-c2", 1.0),)  # (kind, weight)
    seed: int = 1
    jitter: float = 0.04  # synthesis gets 1.5x, proof assembly 3x this
    synth_ms: float = 37000.0
    prep_ms: float = 1695.0
    kernel_ms: float = 3746.0  # gpu_total_ms
    b_g2_ms: float = 380.0
    epilogue_ms: float = 20.0
    assemble_ms: float = 900.0  # extra epilogue of a job's last call (proof assembly)
    warmup_ms: float = 0.0  # extra kernel time of the first call on each GPU
    dispatch_ms: float = 4.0  # median, worker free or partition queued -> GPU_START
    queue_cap: int | None = None  # synthesized partitions that may wait for a GPU; None: no bound
    interval_ms: float = 0.0  # between job arrivals
    start_ms: int = 40  # first arrival after the engine starts
    #: How stages slow down beside one another (durations drawn are then each stage's work
    #: alone on the machine); NONE: fixed durations.
    contention: Contention = NONE
    #: Jobs in flight at once (a closed loop, as cuzk-bench's -j): each job after the first
    #: ``concurrency`` arrives when one completes; None: jobs arrive as drawn.
    concurrency: int | None = None
    #: A budget-gated daemon's memory budget (``viewer.sim.budget``): a partition starts its
    #: synthesis only when the budget has room for its reservation, beside ``baseline_gib``
    #: of SRS and PCE; None: no budget (``pw`` alone bounds synthesis).  ``budget_gated``
    #: sizes ``pw`` from it as the daemon does.
    budget_gib: float | None = None
    baseline_gib: float = BASELINE_GIB

    def __post_init__(self) -> None:
        for name in ("sectors", "partitions", "pw", "gw", "gpus"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not 0 <= self.jitter <= 0.3:
            raise ValueError("jitter must be between 0 and 0.3")
        for kind, weight in self.kinds:
            if kind not in KIND_SCALE or weight < 0:
                raise ValueError(f"bad proof kind {kind!r}={weight} (kinds: {', '.join(KINDS)})")
        if sum(w for _, w in self.kinds) <= 0:
            raise ValueError("the kind weights add up to zero")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.budget_gib is not None:
            check_budget(self.budget_gib, "budget_gib")
        b = self.baseline_gib
        if not (isinstance(b, int | float) and 0 <= b <= MAX_BUDGET_GIB):  # False for NaN
            raise ValueError(f"baseline_gib must be from 0 to {MAX_BUDGET_GIB:g}, not {b!r}")


def budget_gated(
    cfg: SimConfig, budget_gib: float, max_parallel: int = DEFAULT_MAX_PARALLEL
) -> SimConfig:
    """``cfg`` as a budget-gated daemon of ``budget_gib`` runs it: its synthesis workers
    sized from the budget (``viewer.sim.budget.synth_workers``), the budget played."""
    return replace(cfg, budget_gib=budget_gib, pw=synth_workers(budget_gib, max_parallel))


@dataclass
class Draws:
    """Every drawn duration, one row per GPU call (task); edit before ``run`` to pin times."""

    job_ids: Sequence[str]  # a list, or an array of text (``model.keys.TEXT``)
    job_kind: list[str]
    arrival: np.ndarray  # per job: earliest synthesis start
    assemble: np.ndarray  # per job: extra epilogue of its last dispatched call
    job: np.ndarray  # per task
    part: np.ndarray  # -1 for monolithic
    synth: np.ndarray
    qdelay: np.ndarray  # SYNTH_END -> GPU_QUEUE
    pickup: np.ndarray  # free/queued -> GPU_PICKUP
    dispatch: np.ndarray  # free/queued -> GPU_START
    prep: np.ndarray
    prelock_extra: np.ndarray  # pre_lock_cpu_ms - prep_msm_ms
    ntt: np.ndarray
    barrier: np.ndarray
    batch: np.ndarray
    tail: np.ndarray
    b_g2: np.ndarray
    epilogue: np.ndarray
    circuits: np.ndarray
    hold: np.ndarray  # the mutex is released this long after the kernel ends

    @property
    def kernel(self) -> np.ndarray:
        """gpu_total_ms of every task."""
        return self.ntt + self.barrier + self.batch + self.tail


@dataclass(frozen=True)
class Schedule(Played):
    """When everything happened (-1 = never), one row per task, plus the draws that made it
    (ms, int32 where a column lies within 2^30 ms: ``_narrow``)."""

    config: SimConfig
    draws: Draws

    @property
    def ntt(self) -> np.ndarray:
        """ntt_msm_h_ms of every task as run (the first kernel on a GPU carries the warm-up)."""
        return self.draws.ntt + self.warm

    @property
    def kernel(self) -> np.ndarray:
        """gpu_total_ms of every task as run."""
        return self.ntt + self.draws.barrier + self.draws.batch + self.draws.tail

    @property
    def gpu(self) -> np.ndarray:
        return np.where(self.worker >= 0, self.worker // self.config.gw, -1)

    @property
    def prelock(self) -> np.ndarray:
        return self.draws.prep + self.draws.prelock_extra

    @property
    def wait(self) -> np.ndarray:
        return self.acquire - self.start - self.prelock


def _normal(rng: np.random.Generator, mean: np.ndarray | float, rel: float, n: int) -> np.ndarray:
    """Positive integer durations around ``mean`` with relative sd ``rel``."""
    x = rng.normal(1.0, rel, n).clip(1 - 3 * rel, 1 + 3 * rel) * mean
    return np.maximum(np.rint(x), 0).astype(np.int64)


def draw(cfg: SimConfig) -> Draws:
    """Draw every duration of a run from ``cfg.seed``."""
    rng = np.random.default_rng(cfg.seed)
    names = [k for k, _ in cfg.kinds]
    weights = np.array([w for _, w in cfg.kinds], float)
    kinds = [names[i] for i in rng.choice(len(names), cfg.sectors, p=weights / weights.sum())]
    ids = [str(uuid.UUID(bytes=rng.bytes(16), version=4)) for _ in range(cfg.sectors)]
    per_job = [cfg.partitions if k == "porep-c2" else 1 for k in kinds]
    job = np.repeat(np.arange(cfg.sectors), per_job)
    part = np.concatenate(
        [np.arange(n) if k == "porep-c2" else [-1] for k, n in zip(kinds, per_job, strict=True)]
    ).astype(np.int64)
    n = len(job)
    scale = np.array([KIND_SCALE[kinds[j]] for j in job], float).reshape(n, 5)
    j = cfg.jitter
    kernel = _normal(rng, cfg.kernel_ms * scale[:, 2], j, n)
    ntt = np.rint(kernel * KERNEL_SPLIT[0]).astype(np.int64)
    batch = np.rint(kernel * KERNEL_SPLIT[1]).astype(np.int64)
    pickup = rng.integers(1, 3, n)
    d = Draws(
        job_ids=ids,
        job_kind=kinds,
        arrival=np.rint(np.arange(cfg.sectors) * cfg.interval_ms).astype(np.int64) + cfg.start_ms,
        assemble=_normal(rng, cfg.assemble_ms, 3 * j, cfg.sectors),
        job=job,
        part=part,
        synth=_normal(rng, cfg.synth_ms * scale[:, 0], 1.5 * j, n),
        qdelay=rng.integers(0, 2, n),
        pickup=pickup,
        # Dispatch overhead is skewed: mostly quick, now and then a slow allocation.
        dispatch=pickup
        + np.rint(cfg.dispatch_ms * rng.lognormal(0.0, 0.6, n).clip(0.25, 4.0)).astype(np.int64),
        prep=_normal(rng, cfg.prep_ms * scale[:, 1], j, n),
        prelock_extra=rng.integers(2, 9, n),
        ntt=ntt,
        barrier=np.zeros(n, np.int64),
        batch=batch,
        tail=kernel - ntt - batch,
        b_g2=_normal(rng, cfg.b_g2_ms * scale[:, 3], j, n),
        epilogue=_normal(rng, cfg.epilogue_ms, 0.3, n),
        circuits=scale[:, 4].astype(np.int64),
        hold=np.ones(n, np.int64),
    )
    return d


def set_kernel(d: Draws, task: int, total: int) -> None:
    """Pin the gpu_total_ms of one task, keeping the split of its parts."""
    ntt = round(total * KERNEL_SPLIT[0])
    batch = round(total * KERNEL_SPLIT[1])
    d.ntt[task], d.batch[task], d.barrier[task] = ntt, batch, 0
    d.tail[task] = total - ntt - batch


def shape_of(cfg: SimConfig) -> Shape:
    """The pipeline ``cfg`` describes, as the engine takes it."""
    return Shape(cfg.pw, cfg.gw, cfg.gpus, cfg.queue_cap, int(cfg.warmup_ms))


def run(cfg: SimConfig, d: Draws, *, durations: bool = True) -> Schedule:
    """Play the pipeline forward in time (``viewer.sim.engine``) and return the schedule.

    Under contention (in a closed loop, under a memory budget: ``viewer.sim.loaded``) ``d``
    holds each stage's work and the schedule's draws are the durations as played
    (``played_draws``); ``durations`` False: ``d`` with the arrivals as played, for a
    caller that reads only when each call ended (a copy of every duration the less)."""
    tasks = Tasks(
        job=d.job,
        arrival=d.arrival,
        assemble=d.assemble,
        synth=d.synth,
        qdelay=d.qdelay,
        pickup=d.pickup,
        dispatch=d.dispatch,
        prelock=d.prep + d.prelock_extra,
        kernel=d.kernel,
        hold=d.hold,
        post=d.hold + d.b_g2 + d.epilogue,
    )
    if not cfg.contention.active and cfg.concurrency is None and cfg.budget_gib is None:
        return Schedule(**_narrow(play(shape_of(cfg), tasks)), config=cfg, draws=d)
    budget = None
    if cfg.budget_gib is not None:
        budget = gate(cfg.budget_gib, cfg.baseline_gib, [d.job_kind[j] for j in d.job.tolist()])
    played, extra = play_loaded(shape_of(cfg), tasks, cfg.contention, cfg.concurrency, budget)
    del tasks
    if not durations:
        return Schedule(**_narrow(played), config=cfg, draws=replace(d, arrival=extra.arrival))
    draws = played_draws(d, played, extra)
    return Schedule(**_narrow(played), config=cfg, draws=draws)


def _narrow(played: Played) -> dict[str, np.ndarray]:
    """The played times, each int32 where its values lie within 2^30 ms of 0 (12.4 days):
    44 bytes a call where 88 were (the what-if keeps two schedules; 1.5 M calls: 132 MB
    less).  The sum or difference of two such times still fits an int32, and numpy sums a
    column in int64; a longer schedule stays int64."""
    return {name: narrowed(col) for name, col in vars(played).items()}


def scaled(d: Draws, **factor: np.ndarray | float) -> Draws:
    """``d`` with stages stretched by ``factor`` (per task, or one for all): ``synth``,
    ``prep`` (CPU work before the mutex), ``kernel``, ``post`` (kernel end -> GPU_END, the
    mutex hold kept).  Each stage's parts keep their shares, in whole ms that add up to the
    stage's stretched total."""
    out = {}
    if "synth" in factor:
        out["synth"] = _ms(d.synth * factor["synth"])
    if "prep" in factor:
        prelock = _ms((d.prep + d.prelock_extra) * factor["prep"])
        prep = np.minimum(_ms(d.prep * factor["prep"]), prelock)
        out.update(prep=prep, prelock_extra=prelock - prep)
    if "kernel" in factor:
        k = factor["kernel"]
        kernel = _ms(d.kernel * k)
        # Each part rounded within what the parts before it left: none negative, the tail
        # takes the rest.
        barrier = np.minimum(_ms(d.barrier * k), kernel)
        batch = np.minimum(_ms(d.batch * k), kernel - barrier)
        ntt = np.minimum(_ms(d.ntt * k), kernel - barrier - batch)
        out.update(ntt=ntt, barrier=barrier, batch=batch, tail=kernel - ntt - barrier - batch)
    if "post" in factor:
        post = _ms((d.hold + d.b_g2 + d.epilogue) * factor["post"])
        hold = np.minimum(d.hold, post)
        b_g2 = np.minimum(_ms(d.b_g2 * factor["post"]), post - hold)
        out.update(hold=hold, b_g2=b_g2, epilogue=post - hold - b_g2)
    return replace(d, **out)


def played_draws(d: Draws, p: Played, extra: Extra) -> Draws:
    """``d`` (work) as the loaded engine played it: each stage stretched by its slowdown
    (``scaled``), in whole ms that add up to the played times."""
    done = p.end >= 0
    prelock = d.prep + d.prelock_extra
    prelock_played = np.where(done | (extra.lock >= 0), extra.lock - p.start, prelock)
    kernel_played = np.where(p.kernel_end >= 0, p.kernel_end - p.acquire - p.warm, d.kernel)
    post = d.hold + d.b_g2 + d.epilogue
    post_played = np.where(done, p.end - p.kernel_end, post)
    # The engine added its job's proof assembly to a job's last call: stretched with the
    # post, it is in the played post but in no part of the draws.
    last = np.zeros(len(d.job), bool)
    if done.any():
        order = np.lexsort((p.start, d.job))
        ends = np.r_[d.job[order][1:] != d.job[order][:-1], True]
        last[order[ends]] = True
    assemble = np.where(last, d.assemble[d.job], 0)
    post_played = post_played - _ms(assemble * post_played / np.maximum(post + assemble, 1))
    played = scaled(
        d,
        synth=_ratio(np.where(p.synth_end >= 0, p.synth_end - p.synth_start, d.synth), d.synth),
        prep=_ratio(prelock_played, prelock),
        kernel=_ratio(kernel_played, d.kernel),
        post=_ratio(post_played, post),
    )
    return replace(played, arrival=extra.arrival)


def _ratio(played: np.ndarray, work: np.ndarray) -> np.ndarray:
    return np.where(work > 0, played / np.maximum(work, 1), 1.0)


def _ms(values: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(values, dtype=np.float64)).astype(np.int64)


def simulate(cfg: SimConfig) -> Schedule:
    """Draw and run in one go."""
    return run(cfg, draw(cfg))
