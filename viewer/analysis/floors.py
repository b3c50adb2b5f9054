"""The pipeline as four floors: which change would help (domain.md, "The pipeline as four floors").

In steady state a run's s/proof cannot be lower than any of

- kernel:    mean kernel x P / G                  (faster kernels or more GPUs help)
- worker:    mean (prep + kernel + post) x P / W  (more GPU workers per GPU help)
- synthesis: mean synth x P / pw                  (more or faster synthesis helps)
- arrival:   (last arrival - first) / (jobs - 1)  (the run was not saturated)

with P partitions per proof, G GPUs, W = gw x G GPU workers and pw the most
syntheses seen at once.  The highest floor binds; the runner-up's margin is
the most that relieving the binding floor can gain.  In a range, a duration
counts when its interval touches the range (the kernel floor is the range's
theoretical s/proof), and the arrivals are those inside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.intervals import Range, check_range, chosen, clip
from viewer.analysis.jobs import Throughput, throughput
from viewer.analysis.kernels import KernelStats, kernel_stats
from viewer.analysis.stages import stages
from viewer.model import Session
from viewer.model.frame import Frame
from viewer.model.keys import unique

FLOORS = ("kernel", "worker", "synthesis", "arrival")
#: A job whose first SYNTH_START follows another job's event this closely was waiting for
#: the slot that event freed: it arrived no later than the job before it.
ARRIVAL_SLACK_MS = 50.0
#: What relieving each floor takes (the verdict's words).
REMEDY = {
    "kernel": "faster kernels or more GPUs",
    "worker": "more GPU workers per GPU (or less CPU prep and post-processing per call)",
    "synthesis": "more synthesis concurrency or faster synthesis",
    "arrival": "more work, submitted faster: nothing in the pipeline helps",
}
LABEL = {"kernel": "kernel", "worker": "GPU worker", "synthesis": "synthesis", "arrival": "arrival"}


@dataclass(frozen=True)
class Floors:
    """The four floors of a session or range, in s/proof (NaN when the log cannot tell)."""

    kernel_s: float
    worker_s: float
    synthesis_s: float
    arrival_s: float
    partitions_per_proof: int | float  # ``jobs.proof_size``
    gpus: int
    workers: int  # GPU workers, all GPUs (gw x G)
    pw: int  # the most syntheses seen running at once (synthesis slots held)
    jobs: int  # jobs with a known arrival
    inferred_arrivals: int  # of those, arrivals taken from the job before (slot waits)
    means_ms: dict[str, float] = field(default_factory=dict)  # synth, prep, kernel, post
    upper_bound: bool = False  # kernel (and worker) read off GPU calls: no CUZK_TIMING

    def values(self) -> dict[str, float]:
        """Floor name -> s/proof, in ``FLOORS`` order."""
        values = (self.kernel_s, self.worker_s, self.synthesis_s, self.arrival_s)
        return dict(zip(FLOORS, values, strict=True))

    def ranked(self) -> list[tuple[str, float]]:
        """The known floors, highest first (ties keep ``FLOORS`` order)."""
        known = [(k, v) for k, v in self.values().items() if math.isfinite(v)]
        return sorted(known, key=lambda kv: -kv[1])

    @property
    def bound(self) -> str | None:
        """The binding floor: the highest."""
        r = self.ranked()
        return r[0][0] if r else None

    @property
    def runner_up(self) -> str | None:
        r = self.ranked()
        return r[1][0] if len(r) > 1 else None

    @property
    def margin_s(self) -> float:
        """Binding minus runner-up floor: the most that relieving the binding floor gains."""
        r = self.ranked()
        return r[0][1] - r[1][1] if len(r) > 1 else float("nan")

    @property
    def margin(self) -> float:
        """``margin_s`` as a fraction of the binding floor."""
        r = self.ranked()
        return self.margin_s / r[0][1] if len(r) > 1 and r[0][1] > 0 else float("nan")


def has_gpu_call(session: Session) -> bool:
    """Whether ``session`` holds a GPU call (a GPU_START): without one it has no floors
    (nothing ran on a GPU, and figures of 0 would be made up)."""
    return bool(np.isfinite(np.asarray(session.partitions["gpu_start"], dtype=float)).any())


def no_floors(session: Session, name: str = "") -> str | None:
    """``no GPU call in session N of NAME: no floors`` for a session without a GPU call (the
    note every report form gives in place of its floors); None for one with a call.
    ``name``: the log as shown to people (``display_path``), or empty."""
    if has_gpu_call(session):
        return None
    of = f" of {name}" if name else ""
    return f"no GPU call in session {session.number}{of}: no floors"


#: The events of other jobs that can free the synthesis slot a job waits for.
ARRIVAL_EVENTS = ("synth_end", "queued", "pickup", "gpu_start", "gpu_end")


@per_session
def arrivals(session: Session) -> Frame:
    """Per job (rows = jobs): ``first_synth`` (its first SYNTH_START), ``arrival`` and
    ``inferred`` (True when the arrival was taken from the job before).

    The log has no submit event.  A job arrived at its first SYNTH_START unless a
    TIMELINE event of another job (SYNTH_END, queue, GPU_PICKUP, GPU_START, GPU_END)
    came within ``ARRIVAL_SLACK_MS`` before it: that event freed the slot the job was
    waiting for, so it arrived no later than the job before it (in first SYNTH_START
    order), whose arrival it takes.  Jobs never seen synthesizing have NaN.

    A budget-gated daemon (``Session.facts``) waits for budget, not for a slot, and frees
    most of a partition's when its kernel region ends (``viewer.sim.budget``), which only
    CUZK_TIMING shows: there the kernel ends count too.
    """
    p = session.partitions
    n = len(session.jobs)
    job = p["job"]
    first = np.full(n, np.inf)
    np.fmin.at(first, job, p["synth_start"].astype(np.float64, copy=False))
    first[np.isinf(first)] = np.nan
    cols = [p[c].astype(np.float64, copy=False) for c in ARRIVAL_EVENTS]
    if session.facts.budget_gated:
        cols.append(p["kernel_start"].astype(np.float64) + p["kernel_ms"])
    # The events in each job's window, and its own there (which free no slot for it): a
    # pass a column (a table of every event with its job, sorted, was ~200 bytes a call at
    # the peak of a report).
    # Every job seen (a slice, no index of them all) and in order: ``at`` is ``first``.
    seen = slice(None) if np.isfinite(first).all() else np.flatnonzero(np.isfinite(first))
    at = first[seen]
    if not (at[1:] >= at[:-1]).all():  # (jobs are numbered as they appear: mostly sorted)
        seen = np.arange(n)[seen][np.argsort(at, kind="stable")]
        at = first[seen]
    one_call = len(job) == n and (job == np.arange(n)).all()  # a call a job, in order
    mine = first if one_call else first[job]
    # Counts in int32 (events of a log), each pass's arrays let go before the next's: the
    # peak of a report's figures on 1.5 M one-call jobs was here (~80 MB a pass).
    # The comparisons and searches go a block at a time: whole, their temporaries (the
    # window shifted, the two searches' int64 indices) were 36 MB a pass at 1.5 M jobs,
    # on top of the window's lanes.
    own_all = np.zeros(n, np.int32)
    events = np.zeros(len(at), np.int32)
    for col in cols:
        near = np.empty(len(col), bool)
        for b in _blocks(len(col)):
            np.greater_equal(col[b], mine[b] - ARRIVAL_SLACK_MS, out=near[b])
            near[b] &= col[b] <= mine[b]
        if one_call:  # each call its own job: the count is the mask
            np.add(own_all, near, out=own_all, casting="unsafe")
        else:
            np.add(own_all, np.bincount(job[near], minlength=n), out=own_all, casting="unsafe")
        del near
        times = col[np.isfinite(col)]
        times.sort(kind="stable")  # timsort: the columns are nearly sorted
        for b in _blocks(len(at)):
            got = np.searchsorted(times, at[b], side="right")
            got -= np.searchsorted(times, at[b] - ARRIVAL_SLACK_MS, side="left")
            np.add(events[b], got, out=events[b], casting="unsafe")
        del times
    del mine
    waited = events > own_all[seen]
    waited[:1] = False  # the first job waited for nothing earlier
    # Each job takes the arrival of the last job at or before it that did not wait (the
    # running max of the indices of those that did not, made in one array).
    if waited.any():
        anchor = np.arange(len(at), dtype=np.int32 if len(at) < 2**31 else np.int64)
        anchor[waited] = 0
        np.maximum.accumulate(anchor, out=anchor)
        arrival = np.full(n, np.nan)
        if isinstance(seen, slice):  # every job: ``at`` is ``first``
            np.take(first, anchor, out=arrival, mode="clip")  # (valid: unbuffered)
        else:
            arrival[seen] = first[seen][anchor]
        del anchor
    else:  # every job arrived at its first SYNTH_START (NaN where it has none)
        arrival = first
    inferred = np.zeros(n, dtype=bool)
    inferred[seen] = waited
    return Frame({"first_synth": first, "arrival": arrival, "inferred": inferred})


#: Rows a block of ``arrivals``'s comparisons and searches.
_BLOCK = 1 << 18


def _blocks(n: int) -> list[slice]:
    return [slice(a, min(a + _BLOCK, n)) for a in range(0, n, _BLOCK)]


def slots_seen(session: Session, rng: Range = None) -> int:
    """The most synthesis slots held at once, in ``rng``: SYNTH_START until SYNTH_END, or
    until the queue event when a full queue held the finished partition in its slot."""
    start = session.partitions["synth_start"].astype(np.float64, copy=False)
    end = stages(session)["slot_end"]
    ended = np.isfinite(end)
    if not ended.all():
        end = np.where(ended, end, session.end_ms)  # still synthesizing
    ok = np.isfinite(start)
    if not ok.all():
        start, end = start[ok], end[ok]
    a, b = clip(start, end, check_range(rng))
    keep = b > a
    return max_overlap(a, b) if keep.all() else max_overlap(a[keep], b[keep])


def max_overlap(starts: np.ndarray, ends: np.ndarray) -> int:
    """The most half-open intervals [start, end) covering one instant: at the k-th start
    in time order, k starts less the ends at or before it (an end at one instant comes
    before a start there).  Two sorted copies, not a table of both with its order and
    running sum (~100 bytes an interval at the peak of a report)."""
    if not len(starts):
        return 0
    n = len(starts)
    ended = np.searchsorted(np.sort(ends), np.sort(starts), side="right")
    ended -= np.arange(1, n + 1)  # in place: the most of k - ended is minus the least of this
    return int(-ended.min())


def floors(
    session: Session,
    rng: Range = None,
    kernel: KernelStats | None = None,
    tp: Throughput | None = None,
    pw: int | None = None,
) -> Floors:
    """The four floors of ``session`` in ``rng`` (``kernel`` / ``tp``: the same range's
    ``kernel_stats`` / ``throughput`` when already computed; ``pw``: the synthesis slots
    when known, as in a replay, instead of the most seen at once)."""
    rng = check_range(rng)
    kernel = kernel_stats(session, rng) if kernel is None else kernel
    tp = throughput(session, rng, kernel) if tp is None else tp
    p = session.partitions
    s = stages(session)
    per_proof, gpus = tp.partitions_per_proof, tp.gpus

    start, end = p["gpu_start"], p["gpu_end"]
    calls = np.isfinite(start) & np.isfinite(end) & _touching(start, end, rng)
    workers = _distinct(chosen(p["worker"], calls & (p["worker"] >= 0)))
    timing = not kernel.upper_bound
    per_call = s["prep_ms"] + s["kernel_ms"] + s["post_ms"] if timing else s["call_ms"]
    per_call = chosen(per_call, calls & np.isfinite(per_call))
    worker_s = _per_proof(per_call, per_proof, workers)

    s0, s1 = p["synth_start"], p["synth_end"]
    synth = s["synth_ms"]
    synth = chosen(
        synth, np.isfinite(s0) & np.isfinite(s1) & _touching(s0, s1, rng) & np.isfinite(synth)
    )
    pw = slots_seen(session, rng) if pw is None else pw
    synthesis_s = _per_proof(synth, per_proof, pw)

    arr = arrivals(session)
    a = arr["arrival"]
    inside = np.isfinite(a)
    if rng is not None:
        first = arr["first_synth"]
        inside &= (first >= rng[0]) & (first <= rng[1])
    known = int(inside.sum())  # the first and last arrival, no sorted copy of them all
    first_a = np.min(a, where=inside, initial=np.inf)
    last_a = np.max(a, where=inside, initial=-np.inf)
    arrival_s = float((last_a - first_a) / (known - 1) / 1000.0) if known > 1 else math.nan
    kernel_s = tp.theoretical_s_per_proof
    means = {
        "synth": _mean(synth),
        "prep": _mean(chosen(s["prep_ms"], calls)) if timing else math.nan,
        "kernel": float(kernel.mean_ms),
        "post": _mean(chosen(s["post_ms"], calls)) if timing else math.nan,
        "call": _mean(chosen(s["call_ms"], calls)),
    }
    return Floors(
        kernel_s=float(kernel_s),
        worker_s=worker_s,
        synthesis_s=synthesis_s,
        arrival_s=arrival_s,
        partitions_per_proof=per_proof,
        gpus=int(gpus),
        workers=workers,
        pw=pw,
        jobs=known,
        inferred_arrivals=int(arr["inferred"][inside].sum()),
        means_ms=means,
        upper_bound=not timing,
    )


def _touching(start: np.ndarray, end: np.ndarray, rng: Range) -> np.ndarray:
    if rng is None:
        return np.ones(len(start), dtype=bool)
    return (end >= rng[0]) & (start <= rng[1])


def _mean(values: np.ndarray) -> float:
    v = chosen(values, np.isfinite(values))
    return float(v.mean()) if len(v) else math.nan


def _distinct(values: np.ndarray) -> int:
    """How many distinct ``values`` (integers): by a count where they are small ids."""
    if not len(values):
        return 0
    if values.min() >= 0 and values.max() < 1 << 16:
        return int(np.count_nonzero(np.bincount(values)))
    return len(unique(values))


def _per_proof(per_partition_ms: np.ndarray, per_proof: float, parallel: int) -> float:
    """mean x P / parallel, in s (NaN when nothing is known)."""
    if not len(per_partition_ms) or parallel < 1 or per_proof < 1:
        return math.nan
    return float(per_partition_ms.mean() * per_proof / parallel / 1000.0)
