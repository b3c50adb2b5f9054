"""Two runs side by side: every headline figure of A and B with its absolute and relative change.

Runs are put on one time axis by an *alignment point* per session (its first
GPU_START, its first event, or its n-th job completion); aligned time is ms
after that point, so an aligned range maps to ``(a + offset, b + offset)`` in
each run's own TIMELINE offsets.  The figures are read off ``summarize`` (one
definition of each); this module only pairs them and says which way is better.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from viewer.analysis.intervals import Range, check_range
from viewer.analysis.jobs import job_table
from viewer.analysis.summary import SessionSummary, summarize
from viewer.analysis.units import counted, per_proof, percent
from viewer.model import Session, Timeline

ALIGN_MODES = ("first-gpu", "session", "completion")
#: Below this relative change a figure counts as unchanged (neither better nor worse).
SAME_RELATIVE = 0.005


@dataclass(frozen=True)
class Alignment:
    """Where aligned time 0 lies in a run: ``first-gpu``, ``session`` or ``completion`` (n-th)."""

    mode: str = "first-gpu"
    n: int = 1

    def __post_init__(self) -> None:
        if self.mode not in ALIGN_MODES:
            raise ValueError(f"unknown alignment {self.mode!r} (one of {', '.join(ALIGN_MODES)})")
        if self.n < 1:
            raise ValueError("the completion to align on counts from 1")

    @classmethod
    def parse(cls, text: str) -> Alignment:
        """``first-gpu``, ``session`` or ``completion:N``."""
        mode, _, n = text.strip().partition(":")
        if mode == "completion":
            try:
                return cls(mode, int(n or 1))
            except ValueError:
                raise ValueError(f"expected completion:N with N >= 1, got {text!r}") from None
        if n:
            raise ValueError(f"only completion takes a number, got {text!r}")
        return cls(mode)

    def __str__(self) -> str:
        return f"completion:{self.n}" if self.mode == "completion" else self.mode

    def describe(self) -> str:
        """Human words for the alignment point."""
        if self.mode == "session":
            return "session start"
        if self.mode == "completion":
            return f"completion of job #{self.n}"
        return "first GPU_START"


def alignment_offset(session: Session, alignment: Alignment) -> float:
    """The session offset (ms) of the alignment point (ValueError when the run lacks it)."""
    if alignment.mode == "session":
        return float(session.start_ms)
    if alignment.mode == "first-gpu":
        starts = session.partitions["gpu_start"]
        starts = starts[np.isfinite(starts)]
        if not len(starts):
            raise ValueError(f"session {session.number} has no GPU_START to align on")
        return float(starts.min())
    done = np.sort(job_table(session)["completed"].astype(float, copy=False))
    done = done[np.isfinite(done)]
    if len(done) < alignment.n:
        raise ValueError(
            f"session {session.number} completed {counted(len(done), 'job')}, "
            f"cannot align on completion #{alignment.n}"
        )
    return float(done[alignment.n - 1])


def shift(rng: Range, offset: float) -> Range:
    """An aligned range in a run's own offsets (or back, with ``-offset``)."""
    rng = check_range(rng)
    return None if rng is None else (rng[0] + offset, rng[1] + offset)


def main_session(timeline: Timeline, index: int | None = None) -> Session:
    """The session at position ``index`` of ``timeline.sessions``, or the one with the most GPU
    calls (the run that matters: a short crashed run rarely is); a missing one is a ValueError
    naming the session numbers people read (counted from 1)."""
    return timeline.numbered(None if index is None else index + 1)


# ---- figures ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """A compared figure; ``unit`` is ``s/proof``, ``ms``, ``fraction``, ``ratio`` or ``count``."""

    key: str
    label: str
    unit: str
    lower_is_better: bool


FIGURES: tuple[Figure, ...] = (
    Figure("measured_s_per_proof", "measured s/proof", "s/proof", True),
    Figure("theoretical_s_per_proof", "theoretical s/proof (kernel floor)", "s/proof", True),
    Figure("worker_floor_s", "GPU worker floor (s/proof)", "s/proof", True),
    Figure("synthesis_floor_s", "synthesis floor (s/proof)", "s/proof", True),
    Figure("arrival_floor_s", "arrival floor (s/proof)", "s/proof", True),
    Figure("pw_seen", "syntheses at once (most seen)", "count", False),
    Figure("ratio", "theoretical / measured", "ratio", False),
    Figure("efficiency", "GPU efficiency (merged intervals)", "fraction", False),
    Figure("idle_ms", "GPU idle (ms)", "ms", True),
    Figure("cold_start_ms", "cold start (ms)", "ms", True),
    Figure("cross_idle_ms", "cross-sector idle (ms)", "ms", True),
    Figure("cross_gap_mean_ms", "cross-sector gap mean (ms)", "ms", True),
    Figure("cross_gap_max_ms", "cross-sector gap max (ms)", "ms", True),
    Figure("kernel_mean_ms", "kernel mean per partition (ms)", "ms", True),
    Figure("ntt_msm_h_ms", "ntt_msm_h per partition (ms)", "ms", True),
    Figure("batch_add_ms", "batch_add per partition (ms)", "ms", True),
    Figure("tail_msm_ms", "tail_msm per partition (ms)", "ms", True),
    Figure("synth_mean_ms", "synthesis mean per partition (ms)", "ms", True),
    Figure("queue_wait_mean_ms", "queue wait mean (ms)", "ms", True),
    Figure("jobs_completed", "jobs completed", "count", False),
)
FIGURE_KEYS = tuple(f.key for f in FIGURES)


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def figure_values(sm: SessionSummary) -> dict[str, float | None]:
    """Every figure of ``FIGURES`` for one summary (None where the run does not define it).

    A run that used its GPU but had no cross-sector gap has a gap mean / max of 0 ms.
    """
    k, tp = sm.kernel, sm.throughput
    busy = sum(g.busy_ms for g in sm.gpus)
    span = busy + sum(g.idle_ms for g in sm.gpus)
    gaps = sm.gaps
    cross = gaps["ms"][gaps["cross_sector"]]
    used = span > 0
    parts = {}
    for name, v in k.breakdown_ms.items():
        share = v / k.total_ms * k.mean_ms if k.total_ms else math.nan
        parts[f"{name}_ms"] = _finite(share)
    f = sm.floors
    waits = sm.jobs["queue_wait_ms"].astype(float, copy=False)
    waits = waits[np.isfinite(waits)]
    return {
        "measured_s_per_proof": _finite(tp.measured_s_per_proof),
        "theoretical_s_per_proof": _finite(tp.theoretical_s_per_proof),
        "worker_floor_s": _finite(f.worker_s),
        "synthesis_floor_s": _finite(f.synthesis_s),
        "arrival_floor_s": _finite(f.arrival_s),
        "pw_seen": float(f.pw),
        "ratio": _finite(tp.ratio),
        "efficiency": busy / span if used else None,
        "idle_ms": span - busy if used else None,
        "cold_start_ms": float(sm.cold_start_ms),
        "cross_idle_ms": float(cross.sum()) if used else None,
        "cross_gap_mean_ms": float(cross.mean()) if len(cross) else (0.0 if used else None),
        "cross_gap_max_ms": float(cross.max()) if len(cross) else (0.0 if used else None),
        "kernel_mean_ms": _finite(k.mean_ms),
        "ntt_msm_h_ms": parts.get("ntt_msm_h_ms"),
        "batch_add_ms": parts.get("batch_add_ms"),
        "tail_msm_ms": parts.get("tail_msm_ms"),
        "synth_mean_ms": _finite(f.means_ms["synth"]),
        "queue_wait_mean_ms": float(waits.mean()) if len(waits) else None,
        "jobs_completed": float(tp.jobs_completed),
    }


@dataclass(frozen=True)
class FigureDiff:
    """A figure of A and B: ``delta`` = b - a, ``relative`` = delta / a (None where undefined)."""

    figure: Figure
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def relative(self) -> float | None:
        d = self.delta
        return None if d is None or self.a == 0 else d / self.a

    @property
    def judgement(self) -> str:
        """``better`` / ``worse`` for B against A, ``same`` within noise, ``""`` when unknown."""
        d = self.delta
        if d is None:
            return ""
        rel = self.relative
        if d == 0 or (rel is not None and abs(rel) < SAME_RELATIVE):
            return "same"
        return "better" if (d < 0) == self.figure.lower_is_better else "worse"


def diff(a: SessionSummary, b: SessionSummary) -> list[FigureDiff]:
    """Every figure of ``FIGURES``, A against B, in table order."""
    va, vb = figure_values(a), figure_values(b)
    return [FigureDiff(f, va[f.key], vb[f.key]) for f in FIGURES]


@dataclass(frozen=True, eq=False)
class Comparison:
    """A and B summarized over the same aligned range (None = each whole run) and their diff."""

    alignment: Alignment
    offset_a: float
    offset_b: float
    rng: Range  # aligned ms, or None for the whole runs
    a: SessionSummary
    b: SessionSummary
    rows: tuple[FigureDiff, ...]

    def row(self, key: str) -> FigureDiff:
        return self.rows[FIGURE_KEYS.index(key)]


def compare(
    a: Session,
    b: Session,
    rng: Range = None,
    alignment: Alignment | None = None,
    whole: tuple[SessionSummary, SessionSummary] | None = None,
) -> Comparison:
    """Compare runs ``a`` and ``b`` over the aligned range ``rng`` (None = each whole run).

    ``whole`` passes whole-run summaries already computed (only used when ``rng`` is None).
    """
    alignment = alignment or Alignment()
    rng = check_range(rng)
    off_a, off_b = alignment_offset(a, alignment), alignment_offset(b, alignment)
    if rng is None and whole is not None:
        sa, sb = whole
    else:
        sa, sb = summarize(a, shift(rng, off_a)), summarize(b, shift(rng, off_b))
    return Comparison(alignment, off_a, off_b, rng, sa, sb, tuple(diff(sa, sb)))


def headline(whole: Comparison, label_a: str, label_b: str) -> str:
    """``"A vs B: 50.7 -> 44.0 s/proof, 13.2 % faster"`` from the measured s/proof."""
    for key, what in (("measured_s_per_proof", ""), ("theoretical_s_per_proof", " (theoretical)")):
        r = whole.row(key)
        if r.a is not None and r.b is not None:
            change = r.relative
            if change is None or round(abs(change) * 100, 1) == 0:
                how = "no change"
            else:
                how = f"{percent(abs(change))} {'faster' if change < 0 else 'slower'}"
            return (
                f"{label_a} vs {label_b}: {per_proof(r.a)} -> {per_proof(r.b)} s/proof{what}, {how}"
            )
    return f"{label_a} vs {label_b}: s/proof not measurable (fewer than two completed jobs)"
