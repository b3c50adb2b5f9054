"""CUDA kernel time: the true GPU work, as opposed to the GPU calls that wrap it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from viewer.analysis.cache import per_session
from viewer.analysis.groups import Groups
from viewer.analysis.intervals import Range, calls, check_range, chosen, known_or, overlap_ms
from viewer.analysis.units import percent
from viewer.model import KERNEL_SOURCE_TIMING, Session
from viewer.model.frame import Frame

BREAKDOWN = {"ntt_msm_h": "ntt_msm_h_ms", "batch_add": "batch_add_ms", "tail_msm": "tail_msm_ms"}


@dataclass(frozen=True)
class KernelStats:
    """Kernel time in a range.

    ``source`` is ``cuzk_timing`` (gpu_total_ms, exact) or ``gpu_ms`` (the GPU
    call, an upper bound).  ``total_ms`` clips each kernel interval to the
    range; ``mean_ms`` is the mean whole-kernel time of the ``partitions``
    whose kernel touches the range (a per-partition figure, not total / n);
    the breakdown is scaled by each kernel's clipped fraction.  ``total_ms`` and the
    breakdown include the ``unattributed_ms`` of CUZK_TIMING blocks no call took (placed
    where their lines stand in the file): the total is exact, whichever call ran them.
    """

    source: str
    total_ms: float
    mean_ms: float
    partitions: int
    breakdown_ms: dict[str, float] = field(default_factory=dict)
    per_worker: dict[int, float] = field(default_factory=dict)
    per_gpu: dict[int, float] = field(default_factory=dict)
    gpu_call_ms: float = 0.0
    synth_ms: float = 0.0
    unattributed_ms: float = 0.0

    @property
    def upper_bound(self) -> bool:
        """True when kernel time is read off the GPU calls (no CUZK_TIMING lines)."""
        return self.source != KERNEL_SOURCE_TIMING

    @property
    def parts_share(self) -> float | None:
        """What the breakdown's parts add to, as a share of ``total_ms`` (None: no parts,
        or no kernel time)."""
        parts = [v for v in self.breakdown_ms.values() if np.isfinite(v)]
        if self.upper_bound or not parts or not self.total_ms > 0:
            return None
        return float(sum(parts)) / self.total_ms


#: Parts adding to more than this share of the kernel time get a word (rounding aside).
PARTS_OVER = 1.005


def parts_note(k: KernelStats) -> str:
    """The sentence a breakdown whose parts add to more than the kernel time needs ("" when
    they do not).  The daemon times each part on its own: domain.md's own example adds to
    3882 of a 3746 ms gpu_total_ms (104 %)."""
    share = k.parts_share
    if share is None or share <= PARTS_OVER:
        return ""
    return (
        f"The parts add to {percent(share, 0)} of the kernel time (gpu_total_ms): the daemon "
        "times each part on its own, so they need not add up to it. The kernel time, and "
        "every figure built on it, is gpu_total_ms."
    )


def _touching(starts: np.ndarray, ends: np.ndarray, inside: np.ndarray, rng: Range) -> np.ndarray:
    """Intervals that overlap ``rng`` (a zero-length one counts when it lies in it)."""
    if rng is None:
        return np.ones(len(starts), dtype=bool)
    return (inside > 0) | ((ends <= starts) & (starts >= rng[0]) & (starts <= rng[1]))


#: How far a call's gpu_ms may exceed its GPU_END - GPU_START (the offsets are whole ms,
#: written a little apart from the daemon's own timer): 5 ms, or 1 % of the call.
GPU_MS_SLACK = 5.0


@per_session
def kernel_intervals(session: Session) -> Frame:
    """One row per call with a kernel time: ``job, worker, gpu, kstart, kend, kms`` + breakdown.

    With CUZK_TIMING the kernel starts at ``kernel_start`` (the call's GPU_START
    when attribution gave no start); otherwise each closed call's ``gpu_ms`` from its
    GPU_START (domain.md: the upper bound), or GPU_END - GPU_START where GPU_END gave none or
    a figure that does not fit the call.
    """
    c = calls(session)
    if session.kernel_source == KERNEL_SOURCE_TIMING:
        c = c[np.isfinite(c["kernel_ms"])]
        start = known_or(c["kernel_start"], lambda: c["start"])
        ms = c["kernel_ms"]
    else:
        c = c[c["closed"]]
        start = c["start"]
        span = c["end"] - start
        reported = c["gpu_ms"]
        # gpu_ms as the daemon timed the call, unless it does not fit the call (a damaged
        # figure: 999999999 ms in a 1000 ms call would make the whole report's figure).
        fits = (reported >= 0) & (reported <= span + np.maximum(GPU_MS_SLACK, 0.01 * span))
        ms = reported if fits.all() else np.where(fits, reported, span)
    return c.assign(kstart=start, kend=start + ms, kms=ms)


def kernel_stats(session: Session, rng: Range = None) -> KernelStats:
    """Kernel totals, mean and breakdown in ``rng``, plus GPU-call and synthesis time there."""
    rng = check_range(rng)
    k = kernel_intervals(session)
    ks, ke, kms = k["kstart"], k["kend"], k["kms"]
    inside = overlap_ms(ks, ke, rng)
    touching = _touching(ks, ke, inside, rng)
    timing = session.kernel_source == KERNEL_SOURCE_TIMING
    # The share of each call's kernel inside the range: for the breakdown, which only
    # CUZK_TIMING gives (three arrays of the calls' length made for nothing without it).
    frac = (
        np.where(kms > 0, inside / np.where(kms > 0, kms, 1.0), touching.astype(float))
        if timing
        else None
    )
    u = session.unattributed if timing else session.unattributed[:0]
    us, ums = u["kernel_start"], u["kernel_ms"]
    u_inside = overlap_ms(us, us + np.nan_to_num(ums), rng)
    u_frac = np.where(ums > 0, u_inside / np.where(ums > 0, ums, 1.0), 0.0)
    breakdown = {}
    for name, col in BREAKDOWN.items():
        part, u_part = k[col], u[col]
        known = timing and bool(np.isfinite(part).any() or np.isfinite(u_part).any())
        both = np.nansum(part * frac) + np.nansum(u_part * u_frac) if known else np.nan
        breakdown[name] = float(both)
    by_worker, by_gpu = Groups(k["worker"]), Groups(k["gpu"])

    c = calls(session)
    closed = c["closed"]
    call_ms = overlap_ms(chosen(c["start"], closed), chosen(c["end"], closed), rng)

    # Where every row is known and chosen (a played run's), no column is copied.
    p = session.partitions
    s_end = p["synth_end"]
    s_start = known_or(p["synth_start"], lambda: s_end - p["synth_ms"])
    ok = np.isfinite(s_start) & np.isfinite(s_end)
    synth = overlap_ms(chosen(s_start, ok), chosen(s_end, ok), rng)

    n = int(touching.sum())
    return KernelStats(
        source=session.kernel_source,
        total_ms=float(inside.sum() + u_inside.sum()),
        mean_ms=float(chosen(kms, touching).mean()) if n else float("nan"),
        partitions=n,
        breakdown_ms=breakdown,
        per_worker=by_worker.as_dict(by_worker.sum(inside)),
        per_gpu=by_gpu.as_dict(by_gpu.sum(inside)),
        gpu_call_ms=float(call_ms.sum()),
        synth_ms=float(synth.sum()),
        unattributed_ms=float(u_inside.sum()),
    )
