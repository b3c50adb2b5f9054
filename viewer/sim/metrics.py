"""The published figures, computed from plain per-call arrays.

Used by the reference solver (to hit the published table exactly) and by the
tests; the definitions are those of the analysis (docs/CONTRACTS.md, "Analysis").  This is not
the viewer's analysis (``viewer.analysis``): it knows nothing of ranges,
sessions or missing data, and exists so the simulator can check itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewer.sim.model import Schedule


@dataclass(frozen=True)
class Calls:
    """One row per finished GPU call."""

    job: np.ndarray
    worker: np.ndarray
    gpu: np.ndarray
    queued: np.ndarray
    start: np.ndarray
    end: np.ndarray
    kernel: np.ndarray


@dataclass(frozen=True)
class Transition:
    from_job: int
    to_job: int
    gap_ms: int
    overlap_ms: int
    starved: bool


@dataclass(frozen=True)
class Figures:
    kernel_mean_ms: float
    measured_ms: float  # per proof
    efficiency: dict[int, float]  # per GPU, 0..1
    idle_ms: dict[int, int]  # per GPU, holes in the busy union
    cross_sector_idle_ms: int
    transitions: list[Transition]


def calls_of(s: Schedule) -> Calls:
    """The finished calls of a schedule."""
    ok = s.end >= 0
    return Calls(
        job=s.draws.job[ok],
        worker=s.worker[ok],
        gpu=s.gpu[ok],
        queued=s.queued[ok],
        start=s.start[ok],
        end=s.end[ok],
        kernel=s.kernel[ok],
    )


def holes(c: Calls, gpu: int) -> list[tuple[int, int, int, int]]:
    """(start, end, job before, job after) of every hole in the busy union of one GPU."""
    sel = np.flatnonzero(c.gpu == gpu)
    sel = sel[np.lexsort((c.end[sel], c.start[sel]))]
    out = []
    reach, reach_job = None, -1
    for i in sel:
        if reach is not None and c.start[i] > reach:
            out.append((int(reach), int(c.start[i]), reach_job, int(c.job[i])))
        if reach is None or c.end[i] > reach:
            reach, reach_job = int(c.end[i]), int(c.job[i])
    return out


def transitions(c: Calls) -> list[Transition]:
    """Sector transitions, jobs ordered by first GPU_START."""
    jobs = sorted(set(c.job.tolist()), key=lambda j: c.start[c.job == j].min())
    out = []
    for a, b in zip(jobs, jobs[1:], strict=False):
        nb = np.flatnonzero(c.job == b)
        first = nb[np.argmin(c.start[nb])]
        t = c.start[first]
        ends_a = c.end[c.job == a]
        before = ends_a[ends_a <= t]
        gap = int(t - before.max()) if len(before) else 0
        overlap = max(0, int(ends_a.max() - t))
        # The worker's idle time before ``first`` is starved when it was queued after
        # the worker had become free.
        w = c.worker[first]
        prev = c.end[(c.worker == w) & (c.end <= t)]
        free = prev.max() if len(prev) else -1
        out.append(Transition(int(a), int(b), gap, overlap, bool(c.queued[first] > free)))
    return out


def figures(c: Calls) -> Figures:
    """Everything the published table shows."""
    eff, idle, cross = {}, {}, 0
    for g in sorted(set(c.gpu.tolist())):
        h = holes(c, g)
        span = c.end[c.gpu == g].max() - c.start[c.gpu == g].min()
        idle[g] = sum(e - s for s, e, _, _ in h)
        eff[g] = 1 - idle[g] / span
        cross += sum(e - s for s, e, a, b in h if a != b)
    done = np.array([c.end[c.job == j].max() for j in sorted(set(c.job.tolist()))])
    done.sort()
    measured = (done[-1] - done[0]) / (len(done) - 1) if len(done) > 1 else float("nan")
    return Figures(
        kernel_mean_ms=float(c.kernel.mean()),
        measured_ms=float(measured),
        efficiency=eff,
        idle_ms=idle,
        cross_sector_idle_ms=int(cross),
        transitions=transitions(c),
    )
