"""Sector transitions (job N -> N+1 on the GPU) and the cold start they reveal.

Jobs are ordered by their first GPU_START over the whole session.  With several
GPUs jobs run side by side on different GPUs; transitions stay session-wide
(consecutive jobs in start order, whatever GPU they ran on) and ``worker``
says which GPU worker (hence which GPU) moved on to the next job.
"""

from __future__ import annotations

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.groups import Groups
from viewer.analysis.intervals import Range, calls, check_range, clip
from viewer.analysis.stages import stages
from viewer.model import Session
from viewer.model.frame import Frame, constant, empty_like, run_of, take_rows
from viewer.model.keys import unique

TRANSITION_COLUMNS = [
    "from_job",
    "to_job",
    "from_id",
    "to_id",
    "time",
    "gap_ms",
    "overlap_ms",
    "starved",
    "cold_start",
    "worker",
    "worker_idle_ms",
]
COLD_COLUMNS = ["gpu", "start", "end", "label"]


def _empty() -> Frame:
    dtypes = {"from_job": "int32", "to_job": "int32", "from_id": object, "to_id": object}
    dtypes |= {"starved": bool, "cold_start": bool, "worker": "int32", "gpu": "int32"}
    return empty_like({k: dtypes.get(k, "float64") for k in [*TRANSITION_COLUMNS, "gpu"]})


@per_session
def _all_transitions(session: Session) -> Frame:
    """Every transition of the session, with ``cold_start`` decided on the whole run."""
    c = calls(session)
    if len(c) == 0:
        return _empty()
    # A worker's first call: it was free since the session started.
    first = stages(session)["worker_first"][c["row"]]
    free = np.where(first, session.start_ms, c["free"])
    job = c["job"]
    start, end = c["start"], c["end"]
    # First call of each job (calls are sorted by start, so the first row per job), in order.
    by_job = Groups(job, size=len(session.jobs))
    firsts = np.sort(by_job.first_rows())
    n = len(firsts) - 1
    if n < 1:
        return _empty()
    # A call a job, every job started: the first calls are every call, and the columns'
    # runs are views of the calls', not copies (12 MB a column at 1.5 M one-call jobs).
    from_job = take_rows(job, run_of(firsts[:-1]))
    nxt = run_of(firsts[1:])
    time = take_rows(start, nxt)
    if by_job.alone:  # a call a job: the latest end of job N is its one call's
        prev = firsts[:-1]
        latest = np.where(c["closed"][prev] & (end[prev] <= time), end[prev], np.nan)
    else:
        latest = _latest_end_before(job, end, c["closed"], from_job, time)
    gap = np.where(np.isfinite(latest), time - latest, 0.0)
    overlap = np.maximum(0.0, by_job.max(end)[from_job] - time)
    if len(overlap) > 1 and not overlap.any():  # sectors one after another: 0 held once
        overlap = constant(0.0, len(overlap), np.float64)
    starved = c["ready"][nxt] > free[nxt]
    # What the worker that moves on really waited: the gap above is the domain's figure,
    # the worker's idle only while sectors follow each other; where they interleave it
    # ran other sectors' calls in the gap (the label then says so).
    idle = np.maximum(time - free[nxt], 0.0)
    to_job = take_rows(job, nxt)
    cold = starved & _synthesized_while_filling(session, to_job)
    ids = session.jobs["job_id"]
    made = {
        "from_job": from_job.astype("int32", copy=False),
        "to_job": to_job.astype("int32", copy=False),
        "time": time,
        "gap_ms": gap,
        "overlap_ms": overlap,
        "starved": starved,
        "cold_start": cold,
        "worker": take_rows(c["worker"], nxt).astype("int32", copy=False),
        "worker_idle_ms": idle,
        "gpu": take_rows(c["gpu"], nxt).astype("int32", copy=False),
    }
    # The job ids only when read (the JSON, the tables; not the terminal's report): a
    # pointer a transition each, 24 MB for 1.5 M jobs.
    return Frame.lazy(
        {
            **{name: (lambda col=col: col) for name, col in list(made.items())[:2]},
            "from_id": lambda: ids[made["from_job"]],
            "to_id": lambda: ids[made["to_job"]],
            **{name: (lambda col=col: col) for name, col in list(made.items())[2:]},
        },
        n,
    )


def _latest_end_before(
    job: np.ndarray, end: np.ndarray, closed: np.ndarray, of: np.ndarray, at: np.ndarray
) -> np.ndarray:
    """For each (``of[i]``, ``at[i]``): the latest ``end`` of job ``of[i]``'s closed calls at or
    before ``at[i]`` (NaN when none).  One sorted search over (job, time rank) keys."""
    j, e = job[closed].astype(np.int64), end[closed]
    if not len(e):  # no call ended (a crash, a damaged log): no job ended before another
        return np.full(len(of), np.nan)
    times, rank = unique(np.concatenate([e, at]), return_inverse=True)
    rank = rank.reshape(-1)
    width = len(times) + 1
    keys = j * width + rank[: len(e)]
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    want = of.astype(np.int64) * width + rank[len(e) :]
    pos = np.searchsorted(keys, want, side="right") - 1
    found = (pos >= 0) & (j[order][np.maximum(pos, 0)] == of)
    return np.where(found, e[order][np.maximum(pos, 0)], np.nan)


def _synthesized_while_filling(session: Session, jobs: np.ndarray) -> np.ndarray:
    """True for the jobs whose first SYNTH_START came before the session's first GPU_END:
    synthesized while the pipeline was still filling, with no finished work to overlap."""
    p = session.partitions
    first_end = np.fmin.reduce(p["gpu_end"], initial=np.inf)
    first_synth = np.full(len(session.jobs), np.inf)
    np.fmin.at(first_synth, p["job"], p["synth_start"])
    return first_synth[jobs] < first_end


#: A gap this much longer than the worker's own idle is not idle: other sectors' calls ran.
INTERLEAVED_MS = 1.0


def interleaved(t: Frame) -> np.ndarray:
    """Transitions whose gap the worker spent on other sectors' calls (sectors interleave,
    as a replay with more workers than a sector's partitions gives): their gap is not idle."""
    gap = t["gap_ms"].astype(np.float64, copy=False)
    return is_interleaved(gap, t["worker_idle_ms"].astype(np.float64, copy=False))


def is_interleaved(gap_ms, worker_idle_ms):
    """``interleaved`` of given gaps and worker idles (arrays or numbers)."""
    return gap_ms > worker_idle_ms + INTERLEAVED_MS


#: The whole session's table ``transitions`` cuts (memoized per session: ``cache.drop``).
TABLE = _all_transitions


def transitions(session: Session, rng: Range = None) -> Frame:
    """Job N -> N+1 transitions whose next job's first GPU_START lies in ``rng``.

    ``gap_ms`` = first GPU_START of N+1 minus the latest GPU_END of N at or
    before it (0 if none of N had ended); ``overlap_ms`` = max(0, last GPU_END
    of N minus that start); ``starved`` when N+1's first call was queued after
    the worker that took it (``worker``) became free; ``cold_start`` for the
    starved ones whose next job began synthesis before the session's first GPU_END
    (domain.md: a later starved transition is real starvation).
    """
    rng = check_range(rng)
    t = _all_transitions(session)
    if rng is not None and len(t):
        t = t[(t["time"] >= rng[0]) & (t["time"] <= rng[1])]
    return t[TRANSITION_COLUMNS]


@per_session
def cold_start_regions(session: Session) -> Frame:
    """Cold start per GPU: session start -> its first GPU_START, plus the cold transitions' gaps.
    Shared by the GPU figures, the verdict and the lanes (read-only)."""
    c = calls(session)
    by_gpu = Groups(c["gpu"].astype(np.int64))
    head_gpu, first = by_gpu.keys, by_gpu.min(c["start"])  # each GPU's first start
    t = _all_transitions(session)
    cold = t["cold_start"]
    t_gpu = t["gpu"].astype(np.int64)[cold]
    t_start, t_end = _cold_gaps(t)
    labels = [
        f"cold start (job {a}->{b})"
        for a, b in zip(t["from_job"][cold].tolist(), t["to_job"][cold].tolist(), strict=True)
    ]
    g = np.concatenate([head_gpu, t_gpu])
    starts = np.concatenate([np.full(len(head_gpu), session.start_ms, dtype=np.float64), t_start])
    ends = np.concatenate([first, t_end])
    label = np.array(["cold start"] * len(head_gpu) + labels, dtype=object)
    order = np.lexsort((starts, g))  # by GPU, then start (stable for equal keys)
    return Frame(
        {
            "gpu": g[order].astype(np.int32),
            "start": starts[order],
            "end": ends[order],
            "label": label[order],
        }
    )


def cold_start_ms(session: Session, rng: Range = None) -> float:
    """The session's cold start in ``rng`` (domain.md): from its first event to its first
    GPU_START, plus the gap of every cold transition, each clipped to the range.  Not the
    sum of the GPUs' regions (``cold_start_regions``): each GPU waits from the session's
    start for its own first call, and on two GPUs that wait counted twice, a figure
    longer than the time to the second GPU's first call."""
    return sum(cold_start_parts(session, rng)[:2])


def cold_start_parts(session: Session, rng: Range = None) -> tuple[float, float, int]:
    """The two parts of ``cold_start_ms``, so that one name never reads as two figures:
    (the wait for the first GPU call, the gaps of the cold transitions, how many of those
    fall in ``rng``), each clipped to the range."""
    rng = check_range(rng)
    start = calls(session)["start"]
    if not len(start):
        return 0.0, 0.0, 0
    t_start, t_end = _cold_gaps(_all_transitions(session))
    ends = np.concatenate([[float(start.min())], t_end])
    begins = np.concatenate([[session.start_ms], t_start])
    a, b = clip(begins, ends, rng)
    held = np.maximum(b - a, 0.0)
    return float(held[0]), float(held[1:].sum()), int((held[1:] > 0).sum())


def _cold_gaps(t: Frame) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of the gap of every cold transition of ``t``."""
    cold = t["cold_start"]
    end = t["time"][cold]
    return end - t["gap_ms"][cold], end
