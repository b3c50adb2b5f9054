"""The memory a run holds over time, from what each partition is doing (no Qt).

A partition's memory follows its life (cuzk-project.md, "Memory Per-Partition Analysis"
and "Low-Memory Configuration Sweep"; upstream memory.rs frees the a/b/c vectors inside
``prove_start``):

- synthesizing (SYNTH_START -> SYNTH_END): growing to what it holds synthesized;
- synthesized (queued, waiting for a GPU worker, in CPU prep, at the mutex, in the kernel
  region): ``partition_gib`` (a/b/c, aux, density);
- after the kernel region (b_g2_msm, epilogue; to GPU_END): ``after_gib`` (aux, density);

plus ``baseline_gib`` for the process (SRS, PCE, runtime).  What a log cannot show is
how fast a synthesis grows its memory, and upstream gives two sizes of a partition, so
the answer is a range: the lower end lets a synthesis grow evenly from nothing and takes
the smaller sizes, the upper end has it hold ``synth_peak_gib`` (the transient peak
upstream measured, 16-20 GiB) from its start and takes the larger.
Without CUZK_TIMING the kernel's end is unknown: the lower end frees at GPU_START, the
upper at GPU_END.  The defaults are a 32 GiB PoRep partition's; other proof kinds scale
by upstream's per-kind estimates (``KIND_SCALE``).  The figures are memory the pipeline
holds, not what a particular allocator keeps: peak RSS can sit above the upper end when
freed memory is not returned at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields

import numpy as np

from viewer.analysis.stages import stages
from viewer.model import Session

#: Upstream's per-partition estimates relative to a PoRep 32G partition (memory.rs:
#: SNAP_PARTITION_FULL_BYTES 9 GiB, WPOST 14, WINNING 0.5, against POREP 14 GiB).
KIND_SCALE = {"porep-c2": 1.0, "snap-update": 9 / 14, "window-post": 1.0, "winning-post": 0.5 / 14}
MAX_GIB = 1 << 20  # a figure past a pebibyte is a typo


@dataclass(frozen=True)
class MemoryModel:
    """GiB held by the process and by one partition in each state (a 32 GiB PoRep's).

    A partition's two figures are (lower, upper): upstream's two estimates of one thing,
    memory.rs's 13.6 GiB ("~13.6, rounded up" to 14) and 1 GiB after the a/b/c free,
    cuzk-project.md's 16 GiB (12 a/b/c + 4 aux) and 4 GiB."""

    baseline_gib: float = 69.0  # SRS 44 + PCE 25.7 (the low-memory sweep's idle RSS)
    partition_gib: tuple[float, float] = (13.6, 16.0)  # synthesized, until its kernels end
    synth_peak_gib: float = 20.0  # the most a running synthesis holds (16-20 measured)
    after_gib: tuple[float, float] = (1.0, 4.0)  # after the kernel region: aux, density

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            for x in v if isinstance(v, tuple) else (v,):
                ok = isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                if not ok or not 0 <= x <= MAX_GIB:
                    raise ValueError(
                        f"--{f.name.replace('_', '-')} must be a finite number from 0 to "
                        f"{MAX_GIB} GiB, not {x!r}"
                    )
            if isinstance(v, tuple) and (len(v) != 2 or v[0] > v[1]):
                raise ValueError(f"--{f.name.replace('_', '-')}: give LOW,HIGH with LOW <= HIGH")

    def describe(self) -> str:
        def gib(v: tuple[float, float]) -> str:
            return f"{v[0]:g}" if v[0] == v[1] else f"{v[0]:g}-{v[1]:g}"

        return (
            f"baseline {self.baseline_gib:g} GiB; a partition up to {self.synth_peak_gib:g} "
            f"GiB while it synthesizes, {gib(self.partition_gib)} synthesized, "
            f"{gib(self.after_gib)} after its kernels"
        )


DEFAULT = MemoryModel()


@dataclass(frozen=True)
class Memory:
    """GiB held over time: ``lo`` and ``hi`` hold from ``time[i]`` (ms) to ``time[i + 1]``
    as step values (each the most over its step; the curves are piecewise linear)."""

    time: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    model: MemoryModel

    @property
    def peak(self) -> tuple[float, float]:
        """(lower, upper) end of the most held at once, GiB (the baseline without calls)."""
        b = self.model.baseline_gib
        lo = float(self.lo.max()) if len(self.lo) else b
        hi = float(self.hi.max()) if len(self.hi) else b
        return lo, hi


class _Pieces:
    """A sum of pieces ``a + b t`` over [t0, t1), gathered as events at their edges."""

    def __init__(self) -> None:
        #: Per piece kind (in the order added): t0, t1, and its height (a flat's GiB) or
        #: slope (a ramp's GiB per ms).
        self.parts: list[tuple[bool, np.ndarray, np.ndarray, np.ndarray]] = []

    def flat(self, t0: np.ndarray, t1: np.ndarray, gib: np.ndarray) -> None:
        ok = np.isfinite(t0) & np.isfinite(t1) & (t1 > t0) & (gib != 0)
        self.parts.append((False, t0[ok], t1[ok], gib[ok]))

    def ramp(self, t0: np.ndarray, t1: np.ndarray, gib: np.ndarray) -> None:
        """From 0 at t0 to ``gib`` at t1 (and nothing after t1)."""
        ok = np.isfinite(t0) & np.isfinite(t1) & (t1 > t0) & (gib != 0)
        t0, t1 = t0[ok], t1[ok]
        self.parts.append((True, t0, t1, gib[ok] / (t1 - t0)))

    def steps(self, baseline: float) -> tuple[np.ndarray, np.ndarray]:
        """(times, the most the sum reaches over each step from there), baseline added; the
        pieces are used up.  Each piece's events go straight to their place in time order,
        one piece at a time (its events, then the sort's copies, took ~290 bytes a call)."""
        parts, self.parts = self.parts, []
        t = np.concatenate([x for _, t0, t1, _ in parts for x in (t0, t1)] or [np.zeros(0)])
        if not len(t):
            return np.zeros(0), np.zeros(0)
        order = np.argsort(t, kind="stable")
        t = t[order]
        place = np.empty(len(order), dtype=np.int32 if len(order) < 2**31 else np.int64)
        place[order] = np.arange(len(order), dtype=place.dtype)
        del order
        # Per piece, its events' increments of a (the value) and b (the slope): a flat adds
        # its height at t0 and takes it off at t1; a ramp -m t0 + m t at t0, back at t1.
        a = np.empty(len(t))
        b = np.zeros(len(t)) if any(ramp for ramp, *_ in parts) else None
        at = 0
        while parts:
            ramp, t0, _, v = parts.pop(0)
            k = len(t0)
            start, end = place[at : at + k], place[at + k : at + 2 * k]
            if ramp:
                a[start] = -v * t0
                a[end] = v * t0
                b[start] = v
                b[end] = -v
            else:
                a[start] = v
                a[end] = -v
            at += 2 * k
            del ramp, t0, v, start, end
        del place
        np.cumsum(a, out=a)
        last = np.r_[t[1:] != t[:-1], True]
        t, a = t[last], a[last]
        if b is None:  # no slope: each step holds its value
            value = a
        else:
            np.cumsum(b, out=b)
            b = b[last]
            start = a + b * t  # just after each time
            end = np.r_[a[:-1] + b[:-1] * t[1:], a[-1:] + b[-1:] * t[-1:]]  # before the next
            value = np.maximum(start, end)
            del start, end
        value[np.abs(value) < 1e-9] = 0.0
        return t, np.maximum(value, 0.0) + baseline


def memory(session: Session, model: MemoryModel = DEFAULT) -> Memory:
    """What ``session`` holds over time under ``model`` (module docstring)."""
    (t_lo, v_lo), (t_hi, v_hi) = _curves(session, model)
    t = np.union1d(t_lo, t_hi)
    base = model.baseline_gib
    return Memory(t, _at(t_lo, v_lo, t, base), _at(t_hi, v_hi, t, base), model)


def memory_peak(session: Session, model: MemoryModel = DEFAULT) -> tuple[float, float]:
    """``memory(session, model).peak``, one curve at a time and no curve kept."""
    return tuple(
        float(v.max()) if len(v) else model.baseline_gib for _, v in _curves(session, model)
    )


def _curves(session: Session, model: MemoryModel) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The lower and the upper curve (times, values), one made at a time."""
    p = session.partitions
    st = stages(session)
    end = float(session.end_ms)

    def col(name: str) -> np.ndarray:
        return p[name].astype(np.float64, copy=False)

    s0, s1 = col("synth_start"), col("synth_end")
    g0, g1 = col("gpu_start"), col("gpu_end")
    g1 = np.where(np.isfinite(g0) & ~np.isfinite(g1), max(end, np.nanmax(g0, initial=end)), g1)
    ready = np.where(np.isfinite(s1), s1, np.where(np.isfinite(st["ready"]), st["ready"], g0))
    # Synthesized and never taken: held to the session's end.
    ready_end = np.where(np.isfinite(ready) & ~np.isfinite(g0), end, np.nan)
    ke = st["kernel_end"]
    known = np.isfinite(ke)
    free_lo = np.where(known, ke, g0)
    free_hi = np.where(known, ke, g1)
    scale = _kind_scale(session)
    running_synth = np.where(np.isfinite(s0) & ~np.isfinite(s1), end, s1)

    # One curve at a time, its pieces freed once summed: both at once took 63 MB of events
    # on 105 000 one-call jobs, five times the curves they make.
    def curve(end_: int, synthesis: Callable[[_Pieces], None]) -> tuple[np.ndarray, np.ndarray]:
        pieces = _Pieces()
        synthesis(pieces)
        free = (free_lo, free_hi)[end_]
        pieces.flat(
            ready, np.where(np.isfinite(g0), free, ready_end), model.partition_gib[end_] * scale
        )
        pieces.flat(free, g1, model.after_gib[end_] * scale)
        return pieces.steps(model.baseline_gib)

    yield curve(0, lambda lo: lo.ramp(s0, running_synth, model.partition_gib[0] * scale))
    yield curve(1, lambda hi: hi.flat(s0, running_synth, model.synth_peak_gib * scale))


def _at(t: np.ndarray, v: np.ndarray, at: np.ndarray, before: float) -> np.ndarray:
    i = np.searchsorted(t, at, side="right") - 1
    return np.where(i >= 0, v[np.maximum(i, 0)] if len(v) else before, before)


def _kind_scale(session: Session) -> np.ndarray:
    """Per partition row, its proof kind's memory against a PoRep partition's (1.0 where
    the log does not say)."""
    p = session.partitions
    kinds = session.jobs["kind"] if "kind" in session.jobs.columns else None
    if kinds is None or not len(p):
        return np.ones(len(p))
    per_job = np.array([KIND_SCALE.get(k, 1.0) if k else 1.0 for k in kinds], dtype=np.float64)
    job = p["job"].astype(np.int64, copy=False)
    ok = (job >= 0) & (job < len(per_job))
    return np.where(ok, per_job[np.where(ok, job, 0)], 1.0)
