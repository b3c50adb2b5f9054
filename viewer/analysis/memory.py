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
from viewer.model.frame import where

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


#: A curve's events are summed a slice of time at a time, so that their sort and sums hold
#: one slice's (a curve of 1.5 M calls has 9 M events, ~40 bytes each while summed).
SLICES = 16
#: Fewer events than this are summed in one slice.
SLICE_EVENTS = 1 << 16


class _Pieces:
    """A sum of pieces ``a + b t`` over [t0, t1), gathered as events at their edges."""

    def __init__(self) -> None:
        #: Per piece kind (in the order added): whether it is a ramp, t0, t1, and its
        #: height (a flat's GiB) or slope (a ramp's GiB per ms).
        self.parts: list[tuple[bool, np.ndarray, np.ndarray, np.ndarray]] = []

    def flat(self, t0: np.ndarray, t1: np.ndarray, gib: np.ndarray) -> None:
        ok = np.isfinite(t0) & np.isfinite(t1) & (t1 > t0) & (gib != 0)
        self.parts.append((False, *_kept(ok, t0, t1, gib)))

    def ramp(self, t0: np.ndarray, t1: np.ndarray, gib: np.ndarray) -> None:
        """From 0 at t0 to ``gib`` at t1 (and nothing after t1)."""
        ok = np.isfinite(t0) & np.isfinite(t1) & (t1 > t0) & (gib != 0)
        t0, t1, gib = _kept(ok, t0, t1, gib)
        self.parts.append((True, t0, t1, gib / (t1 - t0)))

    def steps(self, baseline: float) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(times, the most the sum reaches over each step from there), baseline added, a
        slice of time at a time in time order (the pieces are used up): each slice's events
        sorted (ties in the order they were added) and summed on from the slice before, as
        one sort and one running sum of them all would."""
        parts, self.parts = self.parts, []
        slope = any(ramp for ramp, *_ in parts)
        sums: tuple[float, float] | None = None  # a and b after the slices before
        held = None  # (t, a, b) of the last step before: its end is at the next time
        for lo, hi in _edges([t for _, t0, t1, _ in parts for t in (t0, t1)]):
            t, a, b = _events(parts, lo, hi, slope)
            if not len(t):
                continue
            a = _running(a, None if sums is None else sums[0])
            b = _running(b, None if sums is None else sums[1]) if slope else None
            sums = (a[-1], b[-1] if slope else 0.0)
            last = np.r_[t[1:] != t[:-1], True]  # (a slice's last time is its own)
            t, a = t[last], a[last]
            if not slope:  # each step holds its value
                yield _finish(t, a, baseline)
                continue
            b = b[last]
            if held is not None:
                t, a, b = np.r_[held[0], t], np.r_[held[1], a], np.r_[held[2], b]
            held = (t[-1:], a[-1:], b[-1:])
            start = a[:-1] + b[:-1] * t[:-1]  # just after each time
            end = a[:-1] + b[:-1] * t[1:]  # just before the next
            yield _finish(t[:-1], np.maximum(start, end), baseline)
        if held is not None:  # the very last step: it ends where it starts
            t, a, b = held
            start = a + b * t
            yield _finish(t, np.maximum(start, a + b * t), baseline)


def _kept(ok: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """``columns`` at ``ok`` (the columns themselves where all are kept)."""
    return columns if ok.all() else tuple(c[ok] for c in columns)


def _edges(times: list[np.ndarray]) -> list[tuple[float, float]]:
    """[lo, hi) slices of time holding about as many of ``times``' values each."""
    total = sum(len(t) for t in times)
    if total < SLICE_EVENTS:
        return [(-math.inf, math.inf)]
    step = max(1, total // 4096)
    sample = np.concatenate([t[::step] for t in times])
    cuts = np.unique(np.quantile(sample, np.linspace(0.0, 1.0, SLICES + 1)[1:-1])).tolist()
    edges = [-math.inf, *cuts, math.inf]
    return list(zip(edges[:-1], edges[1:], strict=True))


def _events(
    parts: list[tuple[bool, np.ndarray, np.ndarray, np.ndarray]], lo: float, hi: float, slope: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The events in [lo, hi) in time order (ties in the order of ``parts``, each piece's
    starts before its ends): times, and the increments of a (the value) and b (the slope).
    A flat adds its height at t0 and takes it off at t1; a ramp -m t0 + m t at t0, back
    at t1."""
    ts, da, db = [], [], []
    for ramp, t0, t1, v in parts:
        for at_start, t in ((True, t0), (False, t1)):
            m = (t >= lo) & (t < hi)
            if m.all():
                m = slice(None)
            elif not m.any():
                continue
            ts.append(t[m])
            if ramp:
                da.append(-v[m] * t0[m] if at_start else v[m] * t0[m])
                db.append(v[m] if at_start else -v[m])
            else:
                da.append(v[m] if at_start else -v[m])
                if slope:
                    db.append(np.zeros(len(ts[-1])))
    if not ts:
        return np.zeros(0), np.zeros(0), None
    t = np.concatenate(ts)
    del ts
    order = np.argsort(t, kind="stable")
    t = t[order]
    a = np.concatenate(da)[order]
    del da
    b = np.concatenate(db)[order] if slope else None
    return t, a, b


def _running(x: np.ndarray, before: float | None) -> np.ndarray:
    """The running sum of ``x``, on from ``before`` (the sum of the slices before)."""
    if before is None:
        return np.cumsum(x)
    return np.cumsum(np.r_[before, x])[1:]


def _finish(t: np.ndarray, value: np.ndarray, baseline: float) -> tuple[np.ndarray, np.ndarray]:
    value[np.abs(value) < 1e-9] = 0.0
    return t, np.maximum(value, 0.0) + baseline


def memory(session: Session, model: MemoryModel = DEFAULT) -> Memory:
    """What ``session`` holds over time under ``model`` (module docstring)."""
    (t_lo, v_lo), (t_hi, v_hi) = (_joined(c) for c in _curves(session, model))
    t = np.union1d(t_lo, t_hi)
    base = model.baseline_gib
    return Memory(t, _at(t_lo, v_lo, t, base), _at(t_hi, v_hi, t, base), model)


def memory_peak(session: Session, model: MemoryModel = DEFAULT) -> tuple[float, float]:
    """``memory(session, model).peak``: one curve at a time, a slice of it at a time, and no
    curve kept."""
    return tuple(_most(c, model.baseline_gib) for c in _curves(session, model))


def memory_upper(session: Session, model: MemoryModel = DEFAULT) -> tuple[np.ndarray, np.ndarray]:
    """(times, GiB) of ``memory(session, model)``'s upper curve alone, at its own times: the
    same step function as ``hi`` over ``time`` (which adds the lower curve's times, where
    it holds its value), with no lower curve made (the memory counter's: both curves and
    their union took ~400 MB at 1.5 M one-call jobs)."""
    return _joined(next(_curves(session, model, ends=(1,))))


def _joined(slices: Iterator[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    got = list(slices)
    if not got:
        return np.zeros(0), np.zeros(0)
    return np.concatenate([t for t, _ in got]), np.concatenate([v for _, v in got])


def _most(slices: Iterator[tuple[np.ndarray, np.ndarray]], before: float) -> float:
    """The most of a curve's values (``before`` for a curve without one)."""
    most = [float(v.max()) for _, v in slices if len(v)]
    return max(most) if most else before


def _curves(
    session: Session, model: MemoryModel, ends: tuple[int, ...] = (0, 1)
) -> Iterator[Iterator[tuple[np.ndarray, np.ndarray]]]:
    """The lower and the upper curve (``ends``: 0, 1 or both), each a slice of time at a
    time (``_Pieces.steps``), one made at a time."""
    p = session.partitions
    st = stages(session)
    end = float(session.end_ms)

    def col(name: str) -> np.ndarray:
        return p[name].astype(np.float64, copy=False)

    # The columns themselves where no row needs another value (no copy of each).
    s0, s1 = col("synth_start"), col("synth_end")
    g0, g1 = col("gpu_start"), col("gpu_end")
    started = np.isfinite(g0)
    g1 = where(started & ~np.isfinite(g1), max(end, np.nanmax(g0, initial=end)), g1)
    ready = where(np.isfinite(s1), s1, lambda: where(np.isfinite(st["ready"]), st["ready"], g0))
    ke = st["kernel_end"]
    known = np.isfinite(ke)
    scale = _kind_scale(session)
    running_synth = where(np.isfinite(s0) & ~np.isfinite(s1), end, s1)

    # One curve at a time, its pieces freed once summed: both at once took 63 MB of events
    # on 105 000 one-call jobs, five times the curves they make.
    def curve(
        end_: int, synthesis: Callable[[_Pieces], None]
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        pieces = _Pieces()
        synthesis(pieces)
        free = where(known, ke, (g0, g1)[end_])
        # Synthesized and never taken: held to the session's end.
        held = where(started, free, lambda: np.where(np.isfinite(ready), end, np.nan))
        pieces.flat(ready, held, model.partition_gib[end_] * scale)
        del held
        pieces.flat(free, g1, model.after_gib[end_] * scale)
        return pieces.steps(model.baseline_gib)

    if 0 in ends:
        yield curve(0, lambda lo: lo.ramp(s0, running_synth, model.partition_gib[0] * scale))
    if 1 in ends:
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
