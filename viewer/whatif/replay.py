"""Replay a session: its measured arrivals and per-partition durations played forward
by the simulator's engine (domain.md "Replay"), unchanged or with knobs.

``plan`` turns a session into the simulator's inputs (``SimConfig`` for the
pipeline's shape, ``Draws`` for every task's durations, taken from
``viewer.analysis.stages``); ``with_knobs`` changes them; ``viewer.sim.model.run``
plays them; ``predicted_session`` reads the played schedule back as a Session so
that every figure of the prediction comes from ``viewer.analysis``, and
``viewer.sim.writer`` can write it as a daemon log.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

from viewer.analysis.cache import drop, made
from viewer.analysis.floors import arrivals, max_overlap, slots_seen
from viewer.analysis.intervals import busy_blocks, calls
from viewer.analysis.jobs import completions
from viewer.analysis.stages import BLOCKED_MS, stages
from viewer.model import KERNEL_SOURCE_TIMING, Session
from viewer.model.build import lazy_session
from viewer.model.facts import NOTHING, Facts
from viewer.model.frame import Frame, constant, is_constant, take_rows
from viewer.model.keys import take_ids
from viewer.model.timeline import EVENT_TIMES
from viewer.sim.budget import (
    BASELINE_GIB,
    DEFAULT_MAX_PARALLEL,
    GIB,
    max_parallel_of,
    partitions_in_budget,
    synth_workers,
)
from viewer.sim.contention import Contention
from viewer.sim.model import Draws, Schedule, SimConfig, run, scaled
from viewer.whatif.cold import cold_factors
from viewer.whatif.knobs import Knobs
from viewer.whatif.load import STAGE_CLASS, intervals, profile

PARTS = ("ntt_msm_h_ms", "barrier_wait_ms", "batch_add_ms", "tail_msm_ms")


@dataclass(frozen=True, eq=False)
class Plan:
    """A session's pipeline as the engine takes it: the shape and every task's durations.

    Tasks are the session's partitions, jobs in order of first SYNTH_START and
    partitions ascending; ``rows`` gives each task's row in ``session.partitions``.
    """

    session: Session
    cfg: SimConfig
    draws: Draws
    rows: np.ndarray
    counted: np.ndarray  # per job (plan order): completed in the log, counts for s/proof
    upper_bound: bool  # no CUZK_TIMING: the whole GPU call is taken as kernel time
    blocked: int  # partitions the log shows held by a full queue
    notes: tuple[str, ...] = field(default=())
    #: Per job (plan order), its arrival at the latest the log allows, where the arrival is
    #: inferred (the job waited for a synthesis slot: it arrived with the job before it at
    #: the earliest, at its first SYNTH_START at the latest); None when none is inferred.
    latest: np.ndarray | None = None
    hidden: int = 0  # jobs whose arrival is inferred
    queue_seen: int = 0  # the most partitions the log shows queued at once
    #: The other order the log allows (plan positions, ``draws`` in that order is the
    #: other end): tied jobs (synthesis started in one millisecond) that the queue never
    #: showed one ahead of another are taken the other way round; None when it shows all.
    other_order: np.ndarray | None = None
    #: A budget-gated daemon's ``max_parallel_synthesis`` (``viewer.sim.budget``): with
    #: another budget it sizes the synthesis workers as the daemon would.
    max_parallel: int = DEFAULT_MAX_PARALLEL
    #: Per task, the log's SYNTH_START and its synthesis as measured (ms, NaN where the log
    #: shows none): the first wave ``viewer.whatif.cold`` reads.
    synth_start: np.ndarray | None = None
    synth_ms: np.ndarray | None = None


def plan(session: Session, baseline_gib: float = BASELINE_GIB) -> Plan:
    """The measured pipeline of ``session``; ValueError when it has nothing to replay.

    A budget-gated session (its ``facts`` state a budget) is replayed as its daemon ran:
    the synthesis workers it logged, its budget played with ``baseline_gib`` of SRS and
    PCE held from the start (``viewer.sim.budget``).

    The whole-session tables the plan makes go once it has read them (those the caller
    had, a window's, stay): 1.5 M one-call jobs, ~200 MB beside the plan at its end."""
    had = made(session)
    p = session.partitions
    st = stages(session)
    arr = arrivals(session)
    started = np.isfinite(p["synth_start"]) | np.isfinite(p["gpu_start"])
    if not started.any():
        raise ValueError("the session has no synthesis or GPU call to replay")
    job = p["job"]
    first_seen = _first_event(p, len(session.jobs))
    order_key = np.where(np.isfinite(arr["first_synth"]), arr["first_synth"], first_seen)
    # Ties (first SYNTH_STARTs in one millisecond): the job whose partitions all started
    # first goes first.  Slots are taken in job-then-partition order, so a job can start
    # only once every partition of the jobs before it has: one whose last partition started
    # later came after (a porep job's 10 partitions beside window-posts that all got a slot).
    last = np.full(len(session.jobs), -np.inf)
    np.fmax.at(last, job, p["synth_start"].astype(np.float64, copy=False))
    last = np.where(np.isfinite(last), last, order_key)
    jobs = np.flatnonzero(np.bincount(job[started], minlength=len(session.jobs)) > 0)
    jobs = jobs[np.lexsort((jobs, last[jobs], order_key[jobs]))]
    jobs, other = _served_order(p, st, jobs, order_key[jobs], last[jobs])
    rank = np.full(len(session.jobs), -1)
    rank[jobs] = np.arange(len(jobs))
    other_order = rank[other] if (other != jobs).any() else None
    rows = np.flatnonzero(started)
    rows = rows[np.lexsort((p["partition"][rows], rank[job[rows]]))]
    # What the reader had to assume (e.g. every worker on GPU 0 without "GPU worker started"
    # lines) shapes the replay as much as the log: say it with the replay.
    notes: list[str] = [f"the log: {n}" for n in session.notes]

    timing = session.kernel_source == KERNEL_SOURCE_TIMING
    # What needs the calls' tables first, and those let go (1.5 M calls: ~150 MB at once).
    shares = None
    if not timing:
        shares = _gpu_shares(session, p["gpu"][rows], _filled(st["call_ms"][rows], "", []))
    slots = max(1, slots_seen(session))
    drop(session, calls, busy_blocks, unless=had)
    tasks, synth_median, blocked, queue_seen = _task_draws(session, st, rows, notes, shares)
    synth_ms = st["synth_ms"][rows]
    del st
    drop(session, stages, unless=had)
    first = arr["arrival"]
    arrival = np.where(np.isfinite(first), first, first_seen - synth_median)
    arrival = np.maximum(arrival[jobs], 0.0)
    del first
    hidden = arr["inferred"][jobs]
    latest = None
    if hidden.any():
        latest = _ms(np.where(hidden, np.fmax(arr["first_synth"][jobs], arrival), arrival))
    counted = np.isfinite(completions(session))[jobs]
    del arr
    drop(session, arrivals, stages, unless=had)  # (the completions made stages again)
    kinds = session.jobs["kind"].astype(object, copy=False)[jobs]
    mono = session.jobs["monolithic"].astype(bool, copy=False)[jobs]
    d = Draws(
        # The log's ids as they are held (numpy's text: a list of them as str took 85
        # bytes an id beside the log's own, 127 MB on 1.5 M jobs), in the order played.
        job_ids=take_ids(session.jobs["job_id"], jobs),
        job_kind=[
            str(k) if k is not None else ("monolithic" if m else "porep-c2")
            for k, m in zip(kinds, mono, strict=True)
        ],
        arrival=_compact(_ms(arrival)),
        assemble=constant(0, len(jobs), np.int32),
        job=_compact(rank[job[rows]]),
        **tasks,
    )
    del tasks
    gpus = session.gpus
    gw = max((len(ws) for ws in gpus.values()), default=1)
    queue_cap = queue_seen if blocked else None
    if queue_cap is not None:
        notes.append(
            f"{blocked} partitions waited over {BLOCKED_MS:.0f} ms between "
            f"SYNTH_END and the queue (backpressure): the queue is bounded at the "
            f"{queue_cap} partitions seen queued at once"
        )
    cfg = SimConfig(
        sectors=len(jobs),
        partitions=max(1, int(np.bincount(d.job).max())),
        pw=slots,
        gw=gw,
        gpus=max(1, len(gpus)),
        queue_cap=queue_cap,
        jitter=0.0,
    )
    f = session.facts
    max_parallel = DEFAULT_MAX_PARALLEL
    if f.budget_gated and f.total_budget_gib is not None:
        budget = float(f.total_budget_gib)
        max_parallel = max_parallel_of(f.max_partitions_in_budget, f.synth_worker_count)
        workers = f.synth_worker_count or synth_workers(budget, max_parallel)
        cfg = replace(cfg, pw=workers, budget_gib=budget, baseline_gib=baseline_gib)
    elif f.budget_gated:
        notes.append(
            "the log is a budget-gated daemon's but states no believable budget: replayed "
            "with the synthesis slots it shows, without the budget"
        )
    rows = rows.astype(np.int32) if len(p) < 2**31 else rows  # (held by every replay)
    return Plan(
        session, cfg, d, rows, counted, not timing, blocked, tuple(notes),
        latest, int(hidden.sum()), queue_seen, other_order, max_parallel,
        p["synth_start"][rows], synth_ms,
    )  # fmt: skip


def _task_draws(
    session: Session,
    st: Frame,
    rows: np.ndarray,
    notes: list[str],
    shares: dict[int, float] | None,
) -> tuple[dict[str, np.ndarray], float, int, int]:
    """Per task (the partitions at ``rows``, in order), the durations the engine plays in
    whole ms: ``Draws``' per-task columns but ``job``; the median synthesis (ms), how many
    partitions a full queue held, and the most seen queued at once.  ``shares``: per GPU,
    the share of a call taken as kernel time, where the log has no CUZK_TIMING (None where
    it has: ``_gpu_shares``).  Each measured column is let go once its whole ms are made,
    and those are held as they are made in the fewest bytes that keep them (``_compact``:
    a log without CUZK_TIMING has no hold, b_g2 or kernel parts, one value each): the plan
    of 1.5 M one-call jobs held ~40 columns of 12 MB at once."""
    p = session.partitions

    def col(name: str) -> np.ndarray:
        return take_rows(p[name], rows)

    out: dict[str, np.ndarray] = {"part": _compact(p["partition"][rows].astype(np.int64))}
    synth = _filled(st["synth_ms"][rows], "synthesis", notes)
    synth_median = float(np.nanmedian(synth))
    out["synth"] = _compact(_ms(synth))
    del synth
    delay = st["queue_delay_ms"][rows]
    blocked = np.isfinite(delay) & (delay > BLOCKED_MS)
    out["qdelay"] = _compact(_ms(_filled(np.where(blocked, np.nan, delay), "", notes, default=0.0)))
    del delay
    dispatch = _filled(st["dispatch_ms"][rows], "", notes, default=0.0)
    out["pickup"] = _compact(_ms(np.minimum(_filled(st["pickup_ms"][rows], "", notes), dispatch)))
    queue_seen = _queue_cap(st, rows, p["gpu_start"][rows] - dispatch)
    out["dispatch"] = _compact(_ms(dispatch))
    del dispatch
    if shares is None:  # CUZK_TIMING: each stage as timed
        prelock = _filled(st["prep_ms"][rows], "CPU prep", notes)
        kernel = _filled(st["kernel_ms"][rows], "kernel", notes)
        post = _filled(st["post_ms"][rows], "post-processing", notes)
        held = col("mutex_held_ms") - st["kernel_ms"][rows]
        hold = np.clip(np.nan_to_num(held, nan=0.0), 0.0, post)
        del held
    else:
        call = _filled(st["call_ms"][rows], "GPU call", notes)
        gpu = p["gpu"][rows]
        share = np.ones(len(call))
        for g, of_call in shares.items():
            share[gpu == g] = of_call
        del gpu
        overlapped = float(np.average(1.0 - share, weights=call)) if call.sum() > 0 else 0.0
        notes.append(
            "no CUZK_TIMING lines: the kernel region of each GPU call is not in the log; "
            "each call is replayed as the kernel time its GPU's busy time leaves room for "
            f"(the calls of a GPU overlapped: {overlapped * 100:.0f} % of each is taken as CPU "
            "work before the mutex), an upper bound on kernel time"
        )
        kernel = call * share
        prelock = call - kernel
        del call, share
        post = hold = constant(0.0, len(rows), np.float64)
    prep_msm = col("prep_msm_ms")
    prep_msm = np.where(np.isfinite(prep_msm), np.minimum(prep_msm, prelock), prelock)
    out["prep"] = _compact(_ms(prep_msm))
    out["prelock_extra"] = _compact(_ms(prelock) - out["prep"])
    del prep_msm, prelock
    parts = (_compact(x) for x in _kernel_parts(p, rows, kernel))
    out["ntt"], out["barrier"], out["batch"], out["tail"] = parts
    del kernel
    # post = hold + b_g2 + epilogue, in whole ms, none negative.
    post_ms = _ms(post)
    hold_ms = np.minimum(_ms(hold), post_ms)
    del post, hold
    b_g2_ms = np.clip(_ms(np.nan_to_num(col("b_g2_msm_ms"), nan=0.0)), 0, None)
    b_g2_ms = np.minimum(b_g2_ms, post_ms - hold_ms)
    out["b_g2"] = _compact(b_g2_ms)
    out["epilogue"] = _compact(post_ms - hold_ms - b_g2_ms)
    out["circuits"] = _compact(_ms(np.nan_to_num(col("num_circuits"), nan=1.0)))
    out["hold"] = _compact(hold_ms)
    return out, synth_median, int(blocked.sum()), queue_seen


def _one_value(values: np.ndarray) -> np.ndarray:
    """``values``, held once (``frame.constant``) where they are all one value."""
    if len(values) > 1 and not is_constant(values) and (values == values[0]).all():
        return constant(values[0], len(values), values.dtype)
    return values


#: A plan's whole ms are held as int32 where they all lie within this of 0 (3.1 days): the
#: engine adds up to four columns of one task (a kernel's parts), which then still fit.
NARROW_MS = 2**28


def _compact(values: np.ndarray) -> np.ndarray:
    """Whole ms ``values`` in the fewest bytes that keep them: one value held once, int32
    where they lie within ``NARROW_MS`` of 0, as they are otherwise."""
    values = _one_value(values)
    if values.dtype != np.int64 or not len(values):
        return values
    if is_constant(values):
        fits = -NARROW_MS < values[0] < NARROW_MS
        return constant(values[0], len(values), np.int32) if fits else values
    if values.min() > -NARROW_MS and values.max() < NARROW_MS:
        return values.astype(np.int32)
    return values


def held(d: Draws) -> Draws:
    """``d`` as a plan holds it for every replay (``_compact``): a plan of 1.5 M one-call
    jobs held 11 columns of 12 MB in int64, of whole ms under a second."""
    return replace(
        d,
        **{
            f.name: _compact(getattr(d, f.name))
            for f in fields(d)
            if f.name not in ("job_ids", "job_kind")
        },
    )


#: Tied jobs with more GPU calls than this, or more jobs, keep their order (the evidence is
#: a table of calls by calls, the ordering a pass per job).
MAX_TIED_CALLS = 2000
MAX_TIED_JOBS = 64
#: A call counts as waiting when another was taken only if it was ready more than this
#: before: offsets are whole ms, and a worker's first call is known only by its GPU_PICKUP,
#: written a ms or two after the take (on 45 simulated logs of 60 tied jobs each: 0 jobs out
#: of order written in order, 113 of 776 with 2 ms of line disorder; 59 and 99 without it).
TAKE_SLACK_MS = 1.0


def _served_order(
    p: Frame, st: Frame, jobs: np.ndarray, first: np.ndarray, last: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``jobs`` (in order) with each run of ties (the same first and last SYNTH_START) in
    the order the GPU queue served them.  A free worker takes a call of the oldest job among
    those queued, so a job whose call was taken while another's waited in the queue is the
    older.  What the queue does not show keeps its order; the second order returned takes
    all of that the other way round (the other end, ``Plan.other_order``)."""
    tied = (np.diff(first) == 0) & (np.diff(last) == 0)
    if not tied.any():
        return jobs, jobs
    by_job = np.argsort(p["job"], kind="stable")  # each job's calls, found by bisection
    sorted_jobs = p["job"][by_job]
    order, other = jobs.copy(), jobs.copy()
    edges = np.flatnonzero(~tied) + 1
    for a, b in zip(np.r_[0, edges].tolist(), np.r_[edges, len(jobs)].tolist(), strict=True):
        if b - a < 2:
            continue
        group = jobs[a:b]
        if b - a > MAX_TIED_JOBS:
            other[a:b] = group[::-1]
            continue
        lo = np.searchsorted(sorted_jobs, group, side="left")
        hi = np.searchsorted(sorted_jobs, group, side="right")
        rows = np.concatenate([by_job[x:y] for x, y in zip(lo, hi, strict=True)])
        order[a:b], other[a:b] = _by_queue(p, st, group, rows)
    return order, other


def _by_queue(
    p: Frame, st: Frame, members: np.ndarray, rows: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``members`` oldest first, as the GPU queue's takes show them (see ``_served_order``;
    ``st``: the session's ``stages``); ``rows``: their calls (all of them when None).  Twice:
    where the queue shows nothing, in their order, then the other way round."""
    if rows is None:
        rows = np.flatnonzero(np.isin(p["job"], members))
    ready = st["ready"][rows]
    # When the worker took it: the later of ready and the worker's previous GPU_END; a
    # worker's first call only by its GPU_PICKUP (or GPU_START), a little after.
    taken = st["taken"][rows]
    taken = np.where(np.isfinite(taken), taken, p["pickup"][rows])
    taken = np.where(np.isfinite(taken), taken, p["gpu_start"][rows])
    ok = np.isfinite(ready) & np.isfinite(taken)
    rows, ready, taken = rows[ok], ready[ok], taken[ok]
    older = np.zeros((len(members), len(members)), np.float32)
    if 0 < len(rows) <= MAX_TIED_CALLS:
        by_code = np.argsort(members)  # positions in ``members``, by job code
        who = by_code[np.searchsorted(members[by_code], p["job"][rows])]  # each call's member
        # [a, b]: call b waited in the queue (ready well before, taken after) when a was
        # taken; summed by member: [x, y], how often x was served while y waited.
        waiting = (ready[None, :] < taken[:, None] - TAKE_SLACK_MS) & (
            taken[None, :] > taken[:, None]
        )
        member = np.zeros((len(rows), len(members)), np.float32)
        member[np.arange(len(rows)), who] = 1.0
        older = member.T @ waiting.astype(np.float32) @ member
        np.fill_diagonal(older, 0.0)  # a job's own calls say nothing of its order
    return members[_oldest_first(older, False)], members[_oldest_first(older, True)]


def _oldest_first(older: np.ndarray, other_way: bool) -> list[int]:
    """Positions, the member fewest of those left were served ahead of first; ties between
    them in position order, or (``other_way``) the other way round."""
    left = list(range(len(older)))
    if other_way:
        left.reverse()
    out = []
    while left:
        against = older[np.ix_(left, left)].sum(axis=0)
        out.append(left.pop(int(np.argmin(against))))
    return out


def with_other_order(pl: Plan) -> Plan:
    """``pl`` with its jobs in ``Plan.other_order`` (the tied jobs arrived together: arrivals
    stay theirs)."""
    perm = pl.other_order
    if perm is None:
        return pl
    d = pl.draws
    rank = np.empty_like(perm)
    rank[perm] = np.arange(len(perm))  # each job's new place
    tasks = np.lexsort((d.part, rank[d.job]))
    per_task = {
        f.name: getattr(d, f.name)[tasks]
        for f in fields(d)
        if f.name not in ("job_ids", "job_kind", "arrival", "assemble", "job")
    }
    draws = replace(
        d,
        job_ids=take_ids(d.job_ids, perm),
        job_kind=[d.job_kind[i] for i in perm],
        arrival=d.arrival[perm],
        assemble=d.assemble[perm],
        job=rank[d.job][tasks],
        **per_task,
    )
    latest = None if pl.latest is None else pl.latest[perm]
    return replace(
        pl,
        draws=draws,
        rows=pl.rows[tasks],
        synth_start=None if pl.synth_start is None else pl.synth_start[tasks],
        synth_ms=None if pl.synth_ms is None else pl.synth_ms[tasks],
        counted=pl.counted[perm],
        latest=latest,
        other_order=None,
    )


def with_knobs(pl: Plan, knobs: Knobs) -> tuple[SimConfig, Draws]:
    """The plan's shape and durations with ``knobs`` applied (the plan is not changed)."""
    cfg = pl.cfg
    if knobs.budget_gib is not None:  # sized as the daemon does; --pw, when set, wins
        workers = synth_workers(knobs.budget_gib, pl.max_parallel)
        cfg = replace(cfg, budget_gib=knobs.budget_gib, pw=workers)
    shape = {k: getattr(knobs, k) for k in ("gw", "pw", "gpus", "queue_cap")}
    cfg = replace(cfg, **{k: v for k, v in shape.items() if v is not None})
    d = pl.draws
    if knobs.jobs is not None or knobs.concurrency is not None:
        jobs = knobs.jobs if knobs.jobs is not None else len(d.arrival)
        d = cycled(d, jobs)
        flight = knobs.concurrency if knobs.concurrency is not None else jobs
        cfg = replace(cfg, sectors=jobs, concurrency=min(flight, jobs))
    if d is not pl.draws or cfg.pw != pl.cfg.pw:  # each slot's first synthesis runs cold
        k = cold_factors(pl.synth_start, pl.synth_ms, pl.cfg.pw, pl.draws, d, cfg.pw)
        d = d if k is None else scaled(d, synth=k)
    f = {name: _factor(knobs, name, measured) for name, measured in _means(d).items()}
    return cfg, scaled(d, **{name: k for name, k in f.items() if k != 1.0})


def with_load(pl: Plan, contention: Contention) -> Plan:
    """``pl`` with every stage's measured duration turned into the work it did under the
    log's load (``viewer.whatif.load``), played under ``contention``: replayed unchanged,
    each stage runs under the same load again and takes its measured time."""
    return with_work(pl, contention, load_factors(pl, contention))


def load_factors(pl: Plan, contention: Contention) -> dict[str, np.ndarray] | None:
    """Per stage, each task's work under ``contention`` against its measured duration
    (``with_load``); None where ``contention`` changes nothing.  Stages the log does not
    show (without CUZK_TIMING, all but synthesis: a call is all kernel, its CPU work
    unknown) play as measured."""
    if not contention.active:
        return None
    spans = intervals(pl.session)
    prof = profile(spans)
    most = int(prof.busy.max()) + 2 if len(prof.busy) else 2
    k = {}
    for stage, (a, b) in spans.items():
        cls = STAGE_CLASS[stage]
        a, b = a[pl.rows], b[pl.rows]
        weight = 1.0 / np.asarray(contention.factor(cls, np.arange(most + 1)), dtype=np.float64)
        ok = np.isfinite(a) & np.isfinite(b) & (b > a)
        work = prof.integral(np.where(ok, a, 0.0), np.where(ok, b, 0.0), weight)
        k[stage] = np.where(ok, work / np.where(ok, b - a, 1.0), 1.0)
    return k


def with_work(pl: Plan, contention: Contention, k: dict[str, np.ndarray] | None) -> Plan:
    """``pl`` with its stages scaled by ``k`` (``load_factors``), played under
    ``contention``; ``pl`` itself for None."""
    if k is None:
        return pl
    draws = held(scaled(pl.draws, **k))
    return replace(pl, cfg=replace(pl.cfg, contention=contention), draws=draws)


def cycled(d: Draws, jobs: int) -> Draws:
    """``d`` with ``jobs`` jobs: job k does the work of the log's job k modulo its jobs (a
    closed loop of another length than the log's run); arrivals are the loop's own."""
    n = len(d.arrival)
    if jobs == n:
        return d
    src = np.arange(jobs) % n
    by_job = np.argsort(d.job, kind="stable")
    starts = np.searchsorted(d.job[by_job], np.arange(n + 1))
    tasks = np.concatenate([by_job[starts[j] : starts[j + 1]] for j in src.tolist()])
    counts = np.diff(starts)[src]
    ids = [d.job_ids[j] if k < n else f"{d.job_ids[j]}-{k // n}" for k, j in enumerate(src)]
    per_task = {
        f.name: getattr(d, f.name)[tasks]
        for f in fields(d)
        if f.name not in ("job_ids", "job_kind", "arrival", "assemble", "job")
    }
    return replace(
        d,
        job_ids=ids,
        job_kind=[d.job_kind[j] for j in src],
        arrival=np.full(jobs, d.arrival.min() if n else 0, dtype=np.int64),
        assemble=d.assemble[src],
        job=np.repeat(np.arange(jobs), counts).astype(np.int64),
        **per_task,
    )


def replay(
    pl: Plan, knobs: Knobs | None = None, *, latest: bool = False, ends: bool = False
) -> Schedule:
    """Play the plan forward, unchanged or with ``knobs``; ``latest``: every inferred
    arrival at its latest (``Plan.latest``) instead of its earliest (domain.md's rule);
    ``ends``: only when calls ended is read (``sim.model.run``'s ``durations``)."""
    cfg, d = with_knobs(pl, knobs or Knobs())
    if latest and pl.latest is not None:
        d = replace(d, arrival=pl.latest)
    return run(cfg, d, durations=not ends)


def queue_depth(s: Schedule) -> int:
    """The most partitions a played run held queued at once (queued until a worker took
    them)."""
    ok = (s.queued >= 0) & (s.pickup > s.queued)
    return max_overlap(s.queued[ok].astype(np.float64), s.pickup[ok].astype(np.float64))


def waited_for_slots(s: Schedule) -> bool:
    """Whether a played run had a partition wait for a synthesis slot after its job came."""
    arrived = s.draws.arrival[s.draws.job]
    return bool(((s.synth_start >= 0) & (s.synth_start > arrived)).any())


def predicted_session(pl: Plan, s: Schedule) -> Session:
    """A played schedule as a Session, in the replayed session's epoch."""
    return played_session(pl.session.index, s)


def played_session(index: int, s: Schedule) -> Session:
    """A played schedule as the Session of position ``index`` in its log (all it takes
    from the plan: a played run kept for later holds no plan).  Its columns are made from
    the schedule when read (``build.lazy_session``): the tables ``build_session`` gives."""
    d = s.draws
    kinds = np.array([None if k == "porep-c2" else k for k in d.job_kind], dtype=object)
    cfg = s.config
    workers = {w: w // cfg.gw for w in range(cfg.gw * cfg.gpus)}
    # The kernels it played are known, even where the log's were not (``upper_bound``):
    # its floors are those a report on its --out log gives (issue 27 item 6).
    played = lazy_session(
        functools.partial(played_column, s),
        d.job,
        d.job_ids,
        kinds,
        workers,
        index=index,
        kernel_source=KERNEL_SOURCE_TIMING,
    )
    played.facts = played_facts(cfg)
    return played


def played_intervals(s: Schedule) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``load.intervals`` of ``played_session(s)`` without its Session: the same spans of
    synthesis, prep, the kernel region and post (a played log has CUZK_TIMING), in the
    schedule's whole ms, a row a task in task order (the Session's rows are sorted
    otherwise).  1.5 M calls: 8 columns of int32 where the Session's were float64, beside
    the float64 columns its tables made to get them."""
    kernel_end = s.acquire.astype(np.int64) + s.kernel  # (a warm-up near 2^30 ms: no wrap)
    return {
        "synth": (s.synth_start, s.synth_end),
        "prep": (s.start, s.start + s.prelock),
        "kernel": (s.acquire, kernel_end),
        "post": (kernel_end, s.end),
    }


def played_column(s: Schedule, name: str) -> np.ndarray:
    """Column ``name`` of ``PARTITION_COLUMNS`` of the log of ``s`` (a row a task, in task
    order): what a reader gives for the lines ``viewer.sim.writer`` writes."""
    d = s.draws
    if name in PLAYED_DRAWS:
        return getattr(d, PLAYED_DRAWS[name])
    if name in PLAYED_TIMES:
        return getattr(s, PLAYED_TIMES[name])
    if name in ("gpu_open", "synth_open"):
        return constant(False, len(d.job), bool)
    return PLAYED_MADE[name](s)


#: The played log's columns that are a draw as it is, and a played time as it is.
PLAYED_DRAWS = {
    "partition": "part",
    "synth_ms": "synth",
    "barrier_wait_ms": "barrier",
    "batch_add_ms": "batch",
    "tail_msm_ms": "tail",
    "prep_msm_ms": "prep",
    "b_g2_msm_ms": "b_g2",
    "num_circuits": "circuits",
}
PLAYED_TIMES = {
    "synth_start": "synth_start",
    "synth_end": "synth_end",
    "queued": "queued",
    "pickup": "pickup",
    "gpu_start": "start",
    "gpu_end": "end",
    "worker": "worker",
    "kernel_start": "acquire",
}
#: The others, made from the schedule.
PLAYED_MADE = {
    "gpu_ms": lambda s: s.end - s.start,
    "gpu": lambda s: s.gpu,
    "kernel_ms": lambda s: s.kernel.astype(np.float64),
    "ntt_msm_h_ms": lambda s: s.ntt,
    "pre_lock_cpu_ms": lambda s: s.prelock,
    "mutex_wait_ms": lambda s: s.wait,
    "mutex_held_ms": lambda s: s.release - s.acquire,
    "total_start_fn_ms": lambda s: s.release - s.start,
}


def played_facts(cfg: SimConfig) -> Facts:
    """What a played run's log head states: a budget-gated daemon's budget and workers as
    it would log them; nothing otherwise."""
    if cfg.budget_gib is None:
        return NOTHING
    return Facts(
        total_budget_gib=int(cfg.budget_gib * GIB) // GIB or None,
        max_partitions_in_budget=partitions_in_budget(cfg.budget_gib),
        synth_worker_count=cfg.pw,
        budget_gated=True,
    )


def _first_event(p: Frame, jobs: int) -> np.ndarray:
    """Each job's earliest TIMELINE event (NaN for none)."""
    earliest = np.fmin.reduce(p[list(EVENT_TIMES)].to_numpy(np.float64), axis=1, initial=np.inf)
    out = np.full(jobs, np.inf)
    np.minimum.at(out, p["job"], earliest)
    return np.where(np.isinf(out), np.nan, out)


def _filled(values: np.ndarray, what: str, notes: list[str], default: float = 0.0) -> np.ndarray:
    """Negative values clipped to 0; unknown ones (NaN) are the known ones' median, noted
    when ``what`` names them and they are many."""
    v = np.asarray(values, dtype=np.float64)
    known = np.isfinite(v)
    fill = float(np.median(np.maximum(v[known], 0.0))) if known.any() else default
    missing = int((~known).sum())
    if what and missing and missing * 20 > len(v):
        notes.append(f"{missing} of {len(v)} partitions have no {what} time: the median is used")
    return np.maximum(np.where(known, v, fill), 0.0)


def _ms(values: np.ndarray) -> np.ndarray:
    return np.rint(np.asarray(values, dtype=np.float64)).astype(np.int64)


def _kernel_parts(
    p: Frame, rows: np.ndarray, kernel: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """ntt, barrier, batch, tail of every task summing to its kernel (all in ntt when the
    log has no breakdown)."""
    total = _ms(kernel)
    if all(is_constant(p[c]) and np.isnan(p[c][0]) for c in PARTS):  # no breakdown: all ntt
        zero = constant(0, len(total), np.int64)
        return total, zero, zero, zero
    parts = np.nan_to_num(p[list(PARTS)].to_numpy(np.float64)[rows], nan=0.0)
    whole = parts.sum(axis=1)
    share = np.where(whole[:, None] > 0, parts / np.where(whole > 0, whole, 1.0)[:, None], 0.0)
    share[whole <= 0, 0] = 1.0
    ntt, barrier, batch = (_ms(share[:, k] * total) for k in range(3))
    over = np.maximum(ntt + barrier + batch - total, 0)
    ntt = ntt - over
    return ntt, barrier, batch, total - ntt - barrier - batch


def _gpu_shares(session: Session, gpu: np.ndarray, call: np.ndarray) -> dict[int, float]:
    """Per GPU of the calls (``gpu``, ``call``: per call), the share of a call that can be
    kernel time without a log's CUZK_TIMING: a GPU's kernel regions never overlap (its
    mutex), so together they fit in its busy time (the union of its calls): that union
    over the sum of the GPU's calls (1 where they never overlapped)."""
    from viewer.analysis.gpus import busy_by_gpu

    busy = busy_by_gpu(session)
    out = {}
    for g in np.unique(gpu).tolist():
        total = float(call[gpu == g].sum())
        out[g] = min(1.0, busy[g] / total) if total > 0 and g in busy else 1.0
    return out


def _queue_cap(st: Frame, rows: np.ndarray, took: np.ndarray) -> int:
    """The most partitions seen queued at once: from the queue event until a worker took
    it (``taken``; for a worker's first call, ``took``: GPU_START minus its dispatch)."""
    ready = st["ready"][rows]
    taken = st["taken"][rows]
    taken = np.where(np.isfinite(taken), taken, took)
    ok = np.isfinite(ready) & np.isfinite(taken) & (taken > ready)
    return max(1, max_overlap(ready[ok], taken[ok]))


def _means(d: Draws) -> dict[str, float]:
    """The mean of each stage a knob can change, as played."""
    return {
        "kernel": float(d.kernel.mean()),
        "prep": float((d.prep + d.prelock_extra).mean()),
        "post": float((d.hold + d.b_g2 + d.epilogue).mean()),
        "synth": float(d.synth.mean()),
    }


def stage_means(pl: Plan) -> dict[str, float]:
    """The measured mean (ms) of each stage a knob can change: kernel, prep, post, synth
    (the defaults of the window's knobs); NaN for prep and post where the log has no
    CUZK_TIMING (the replay infers a call's CPU share; the log does not measure it)."""
    means = _means(pl.draws)
    if pl.upper_bound:
        means.update(prep=math.nan, post=math.nan)
    return means


def _factor(knobs: Knobs, stage: str, measured: float) -> float:
    mean, scale = knobs.stage(stage)
    if scale is not None:
        return float(scale)
    if mean is None:
        return 1.0
    if not measured > 0 or not math.isfinite(measured):
        raise ValueError(f"the log has no {stage} time to scale to {mean:g} ms")
    return float(mean) / measured
