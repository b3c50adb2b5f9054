"""How a machine's stages slow down under load, learned from its logs (domain.md "Load").

A log shows every stage's interval and so, at each moment, how many CPU threads were
busy: syntheses running plus GPU workers in CPU prep or post-processing (the *load*).
``viewer.sim.contention`` models a stage as work done at the rate ``1 / f(load)``; here
``f`` is fitted so that each kind of stage does the same work whatever ran beside it:
for every partition, its work is ``integral of dt / f(load(t))`` over its interval, and
the fit picks the slopes (and the point past which the machine time-shares) that make
the works of one stage and proof kind most alike (least absolute deviations of their
logarithms; a slope is kept where it pays for itself twice over, BIC).  The first wave
of each stage runs cold and is left out.  Logs of one machine at several settings show how
durations grow with load; one log shows what its own waves show (the first syntheses
with the GPU idle against later ones, GPU calls in the drain against loaded ones), and
the fit says when a slope is not shown at all.

Beyond the loads the logs cover a prediction is a band (``LoadFit.alternatives``): the
bandwidth term flat past the most seen (durations grow no further), the machine
saturated there (nothing past it adds throughput), below them already time-shared, a
slope the logs do not show taken as ``UNSHOWN_SLOPE``, and each log left out of the fit.
The kernel's work may differ between logs on purpose (faster kernels are a knob): each
log keeps its own kernel level; a calibration log no load explains keeps its own level
of the stage it differs in, and is named.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

import numpy as np

from viewer.analysis.floors import arrivals, max_overlap
from viewer.analysis.intervals import held_at_changes
from viewer.analysis.jobs import throughput
from viewer.analysis.stages import stages
from viewer.analysis.units import counted
from viewer.model import KERNEL_SOURCE_TIMING, Session
from viewer.sim.contention import CLASSES, NONE, Contention

#: Stages whose level can differ from run to run of one machine (the kernel is a knob).
LEVELED = ("synth", "prep", "post")
#: Stage classes in words.
CLASS_WORDS = {"synth": "synthesis", "cpu": "GPU-worker CPU prep and post", "kernel": "kernel"}
#: Stages whose durations the model explains, with their class in ``Contention``.
STAGE_CLASS = {"synth": "synth", "prep": "cpu", "post": "cpu", "kernel": "kernel"}
#: Stages shorter than this say little (whole-ms offsets): left out of the fit.
MIN_MS = 20.0
#: At most this many stages of one kind of one log enter the fit (evenly spaced).
MAX_FIT = 2000
#: A log whose stage level lies this far (fraction) from the others' at the same load is
#: another machine, or a stage changed on purpose: it keeps its own level, with a warning.
#: The CPU work of GPU workers is short and shares their process: it varies more.
OTHER_MACHINE = {"synth": 0.25, "cpu": 0.40}
#: A class's slope is shown only over loads that span at least this many threads and
#: this ratio (highest / lowest of its stages' mean loads).
MIN_SPAN, MIN_RATIO = 2.0, 1.25
#: ... and only where it narrows the scatter of stage work by this fraction at least.
KEEP_GAIN = 0.03
#: A slope the logs do not show is taken, at the other end, as this (per busy thread): the
#: real H200 runs show 5-6 %, upstream's sweep about 2.5 % (domain.md "Load").
UNSHOWN_SLOPE = 0.05
#: Shares of woken GPU-worker calls that share a CPU past the cores (``Contention.waker``)
#: tried, and the fewest such calls (their load past the cores most of their time) that
#: show it.
WAKERS = np.linspace(0.0, 1.0, 21)
MIN_PAST = 12
#: Rounds of fitting that share and the slope in turn (it settles in two or three).
WAKER_ROUNDS = 4
#: Slopes tried: a coarse grid, then a fine one around the best of it.
COARSE = np.r_[np.linspace(0.0, 0.1, 11), np.linspace(0.12, 0.5, 20), np.linspace(0.6, 2, 8)]
FINE_STEP = 0.002


@dataclass(frozen=True, eq=False)
class Profile:
    """A session's load: ``busy[k]`` threads from ``t[k]`` to ``t[k + 1]`` (ms)."""

    t: np.ndarray
    busy: np.ndarray

    def integral(self, start: np.ndarray, end: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """Per interval, the integral of ``weight[busy(t)]`` dt (``weight`` by busy count)."""
        if len(self.t) < 2:
            return np.asarray(end, float) - np.asarray(start, float)
        return self._between(start, end, self.cumulative(weight))

    def cumulative(self, weight: np.ndarray) -> np.ndarray:
        """The integral of ``weight[busy(t)]`` dt from ``t[0]`` to each ``t[k]``, made in
        one array (the what-if's peak on 1.5 M played calls was here: ``r_`` of a
        ``cumsum`` of a product of ``diff``, five arrays of the profile's length)."""
        cum = np.empty(len(self.t))
        cum[:1] = 0.0
        np.subtract(self.t[1:], self.t[:-1], out=cum[1:])
        cum[1:] *= weight[np.minimum(self.busy[:-1], len(weight) - 1)]
        np.cumsum(cum[1:], out=cum[1:])
        return cum

    def mean_busy(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Per interval (each longer than 0), the mean number of busy threads over it."""
        if len(self.t) < 2:  # (``integral`` is then the interval's length, any weight)
            return self.integral(start, end, np.ones(1)) / (end - start)
        return self._between(start, end, self._busy_cum) / (end - start)

    @functools.cached_property
    def _busy_cum(self) -> np.ndarray:
        """``cumulative`` of the busy count itself, made once for every ``mean_busy``."""
        levels = np.arange(int(self.busy.max()) + 2 if len(self.busy) else 2, dtype=np.float64)
        return self.cumulative(levels)

    def level_times(self, start: np.ndarray, end: np.ndarray, levels: int) -> np.ndarray:
        """(len(start), levels): per interval, the time spent with each busy count
        0 .. levels - 1: ``integral`` with weight ``arange(levels) == v`` for each v, to the
        bit (``level_tables`` of one set of intervals)."""
        return self.level_tables([(start, end)], levels)[0]

    def level_tables(
        self, spans: list[tuple[np.ndarray, np.ndarray]], levels: int
    ) -> list[np.ndarray]:
        """``level_times`` of each (start, end) of ``spans``, from the profile's instants the
        intervals lie between alone, a busy count at a time for all of them (each level's
        ``cumulative`` over the whole profile took 0.14 s of a report's 1.4 s; every level's
        kept at once, 96 MB of a what-if's played run of 1.5 M calls)."""
        spans = [(np.asarray(a, np.float64), np.asarray(b, np.float64)) for a, b in spans]
        out = [np.empty((len(a), levels)) for a, _ in spans]
        if len(self.t) < 2:
            for table, (a, b) in zip(out, spans, strict=True):
                table[:] = (b - a)[:, None]
            return out
        last = len(self.t) - 1
        knots = []
        for a, b in spans:
            j = np.clip(np.searchsorted(self.t, np.concatenate([a, b]), "right") - 1, 0, last - 1)
            # The instants bracketing each end: np.interp reads those alone, so it gives the
            # same numbers on them as on the whole profile.
            k = np.unique(np.concatenate([[0, last], j, j + 1]))
            knots.append((k, self.t[k]))
        dt = np.empty(last)
        np.subtract(self.t[1:], self.t[:-1], out=dt)
        busy = np.minimum(self.busy[:-1], levels - 1)  # as ``cumulative``'s weight reads
        for v in range(levels):
            # The profile's spans at v and the running sums of their lengths: the cumulative
            # at a knot k is the sum of those before k, the same additions in the same order
            # as ``cumulative``'s (its others add 0).
            at = np.flatnonzero(busy == v).astype(np.int32 if last < 2**31 else np.int64)
            running = np.empty(len(at) + 1)
            running[0] = 0.0
            np.cumsum(dt[at], out=running[1:])
            for table, (a, b), (k, t) in zip(out, spans, knots, strict=True):
                cum = running[np.searchsorted(at, k, "left")]
                table[:, v] = np.interp(b, t, cum) - np.interp(a, t, cum)
            del at, running
        return out

    def _between(self, start: np.ndarray, end: np.ndarray, cum: np.ndarray) -> np.ndarray:
        """Per interval, ``cum`` (a ``cumulative``) at its end less at its start."""
        return np.interp(end, self.t, cum) - np.interp(start, self.t, cum)


@dataclass(frozen=True)
class RunSettings:
    """What a whole log ran at, as far as it shows: its synthesis slots (stated, else the
    most synthesizing at once), GPU workers per GPU, GPUs, mean kernel time per call (ms,
    None without one: no CUZK_TIMING or none above 0), partitions per proof and the proof
    kinds, the spacing of the jobs' arrivals (ms, 0 where all were queued at once), and
    its measured s/proof (None where it cannot be measured)."""

    slots: int
    gw: int | None
    gpus: int
    kernel_ms: float | None
    per_proof: float
    kinds: tuple[str, ...]
    arrival_ms: float
    s_per_proof: float | None

    def same(self, other: RunSettings) -> bool:
        """The same settings and workload: everything equal but the kernel time, known in
        both and within REPEAT_KERNEL, and the arrivals' spacing, within REPEAT_ARRIVAL."""
        mine = (self.slots, self.gw, self.gpus, self.per_proof, self.kinds)
        if mine != (other.slots, other.gw, other.gpus, other.per_proof, other.kinds):
            return False
        a, b = self.kernel_ms, other.kernel_ms
        if a is None or b is None or abs(a - b) > REPEAT_KERNEL * max(a, b):
            return False
        x, y = self.arrival_ms, other.arrival_ms
        return abs(x - y) <= REPEAT_ARRIVAL * max(x, y) + 1.0

    def words(self) -> str:
        kernel = "" if self.kernel_ms is None else f", kernel {self.kernel_ms:.0f} ms a call"
        workers = "" if self.gw is None else f", {counted(self.gw, 'GPU worker')} a GPU"
        gpus = "" if self.gpus == 1 else f" on {self.gpus} GPUs"
        return f"{counted(self.slots, 'synthesis slot')}{workers}{gpus}{kernel}"


#: Kernel times per call within this fraction, and arrival spacings within this fraction
#: (and 1 ms), are the same setting (a run's own spread).
REPEAT_KERNEL = 0.03
REPEAT_ARRIVAL = 0.1


@dataclass(frozen=True, eq=False)
class Sample:
    """One session's stages as the fit reads them."""

    name: str
    cpus: int | None  # the machine's CPU threads, where the log states them
    #: Per stage: (T, duration, group): T[i, b] = ms stage i spent with b threads busy.
    stages: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
    most: int  # the most threads busy at once
    damage: tuple[str, ...] = ()  # what the reader says was lost of the log (cut, damaged)
    gw: int | None = None  # GPU workers per GPU seen in the log (None: no GPU call)
    run: RunSettings | None = None  # a whole log's settings (None: a stretch of one)

    def mean_load(self, stage: str) -> np.ndarray:
        t, d, _ = self.stages[stage]
        return t @ np.arange(t.shape[1]) / np.maximum(d, 1e-9)


def intervals(
    session: Session, rows: np.ndarray | None = None
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(start, end) of every partition's synthesis, prep, kernel and post (ms, NaN where
    the log does not show it; without CUZK_TIMING only synthesis is known); ``rows``: of
    these partitions only (indices), in that order."""
    p = session.partitions
    st = stages(session)

    def col(values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        return values if rows is None else values[rows]

    ss = col(p["synth_start"])
    out = {"synth": (ss, ss + col(st["synth_ms"]))}
    if session.kernel_source == KERNEL_SOURCE_TIMING:
        gs = col(p["gpu_start"])
        ks = col(p["kernel_start"])
        ke = col(st["kernel_end"])
        out["prep"] = (gs, gs + col(st["prep_ms"]))
        out["kernel"] = (ks, ke)
        out["post"] = (ke, col(p["gpu_end"]))
    return out


def profile(spans: dict[str, tuple[np.ndarray, np.ndarray]]) -> Profile:
    """The busy CPU threads over time: syntheses running, and GPU workers in a call but not
    waiting for the mutex (CPU prep, the kernel region, whose host thread waits for the
    GPU by spinning as CUDA does by default, and post-processing).

    ``spans``: (start, end) per stage, float (NaN: not shown) or whole ms.  The count at an
    instant is the one after every change there: the intervals started by then less those
    ended, counted in the sorted starts and the sorted ends (no sort order of all the
    changes held: on a played run of 1.5 M calls that was 96 MB beside the times)."""
    starts, ends = [], []
    for a, b in spans.values():
        ok = b > a
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            ok &= np.isfinite(a) & np.isfinite(b)
        starts.append(a[ok])
        ends.append(b[ok])
        del ok
    a, b = np.concatenate(starts or [np.zeros(0)]), np.concatenate(ends or [np.zeros(0)])
    del starts, ends
    if not len(a):
        return Profile(np.zeros(2), np.zeros(2, np.int64))
    a.sort()
    b.sort()
    t, busy = held_at_changes(a, b)
    return Profile(t.astype(np.float64, copy=False), busy)


def sample(
    session: Session, name: str, cpus: int | None = None, rows: np.ndarray | None = None
) -> Sample:
    """What ``fit`` needs of one session (``rows``: of these partitions only, indices: a
    stretch of a long session; its load is counted from them alone)."""
    spans = intervals(session, rows)
    prof = profile(spans)
    most = int(prof.busy.max()) if len(prof.busy) else 0
    job = np.asarray(session.partitions["job"])
    job = job if rows is None else job[rows]
    # The kinds of these calls' jobs only (a dense log has a job a call: not a string per
    # job of the whole session).
    kind = np.asarray(session.jobs["kind"], dtype=object)[job].astype(str).astype(object)
    picked = {}
    for stage, (a, b) in spans.items():
        d = b - a
        # The first wave of a stage runs cold (first allocations, caches, page faults): it
        # says how the run started, not how the stage slows with load.
        warm = a >= np.nanmin(b) if np.isfinite(b).any() else np.zeros(len(a), bool)
        ok = np.flatnonzero(np.isfinite(d) & (d >= MIN_MS) & warm)
        if len(ok) > MAX_FIT:
            ok = ok[np.linspace(0, len(ok) - 1, MAX_FIT).astype(np.int64)]
        picked[stage] = (a[ok], b[ok], d[ok], kind[ok])
    tables = prof.level_tables([(a, b) for a, b, _, _ in picked.values()], most + 2)
    out = {
        stage: (table, d, k)
        for (stage, (_, _, d, k)), table in zip(picked.items(), tables, strict=True)
    }
    lost = tuple(n for n in session.notes if "cut short" in n or "is lost" in n)
    gw = _workers_per_gpu(session)
    run = None if rows is not None else _settings(session, spans, gw)
    return Sample(name, cpus, out, most, lost, gw, run)


def _settings(session: Session, spans: dict, gw: int | None) -> RunSettings:
    """``RunSettings`` of a whole session from its stages' ``spans``."""
    a, b = spans["synth"]
    ok = np.isfinite(a) & np.isfinite(b) & (b > a)
    slots = session.facts.pw or max_overlap(a[ok], b[ok])
    kernel = None
    if "kernel" in spans:
        d = spans["kernel"][1] - spans["kernel"][0]
        d = d[np.isfinite(d)]
        mean = float(d.mean()) if len(d) else 0.0
        kernel = mean if mean > 0 else None
    tp = throughput(session)
    kinds = np.unique(np.asarray(session.jobs["kind"], dtype=object).astype(str))
    arrival = np.asarray(arrivals(session)["arrival"], dtype=np.float64)
    arrival = arrival[np.isfinite(arrival)]
    spacing = float(arrival.max() - arrival.min()) / (len(arrival) - 1) if len(arrival) > 1 else 0.0
    return RunSettings(
        int(slots), gw, int(tp.gpus), kernel, float(tp.partitions_per_proof),
        tuple(kinds.tolist()), spacing, tp.measured_s_per_proof,
    )  # fmt: skip


def _workers_per_gpu(session: Session) -> int | None:
    """The most GPU workers seen on one GPU of ``session`` (None: no GPU call)."""
    p = session.partitions
    gpu, worker = np.asarray(p["gpu"]), np.asarray(p["worker"])
    seen = (gpu >= 0) & (worker >= 0)
    if not seen.any():
        return None
    # Each (gpu, worker) once, as one int64 (a unique of the rows of a two-column array sorts
    # them as records: 0.09 s of a report on 10^6 events).
    pairs = np.unique((gpu[seen].astype(np.int64) << 32) | worker[seen].astype(np.int64))
    return int(np.unique(pairs >> 32, return_counts=True)[1].max())


@dataclass(frozen=True)
class Alternative:
    """A model at one end of what the logs allow, and why."""

    label: str
    contention: Contention
    #: Where it can differ from the point model: "above" / "below" (only past the loads the
    #: logs cover, on that side), "load" (wherever the scenario's load differs from theirs),
    #: "run" (whatever the knobs: another run of the machine).
    when: str = "load"
    #: Per stage, the factor on every task's work (another run's level of that stage).
    scale: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, eq=False)
class LoadFit:
    """A machine's load model and how far it can be trusted."""

    contention: Contention  # the point model
    logs: tuple[str, ...]
    #: Per class: the lowest and highest mean load of its stages in the logs (threads).
    seen: dict[str, tuple[float, float]]
    shown: dict[str, bool]  # per class: whether the logs show its slope
    cores_shown: bool  # whether the logs show (or state) where the machine time-shares
    most: int  # the most threads busy at once in any log
    #: Per class: the fit's scatter (mean absolute deviation of log work: about a fraction)
    #: with fixed durations and with this model.
    scatter: dict[str, tuple[float, float]]
    #: Per log: the level of each stage against the others' (fraction), where it differs.
    offsets: dict[str, dict[str, float]] = field(default_factory=dict)
    alternatives: tuple[Alternative, ...] = ()
    notes: tuple[str, ...] = ()
    #: A calibration log that ran the first log's own settings: (its name, its s/proof
    #: against the first's, less 1): how far runs of one setting differ on the machine.
    repeat: tuple[str, float] | None = None
    #: The GPU workers per GPU the logs ran (how another count shares the CPU: unseen).
    gws: tuple[int, ...] = ()

    @property
    def active(self) -> bool:
        return self.contention.active

    def describe(self) -> str:
        """The fitted curve in words, with what it rests on."""
        logs = f"{len(self.logs)} log" + ("s" if len(self.logs) != 1 else "")
        return f"{self.contention.describe()} (from {logs}, 1-{self.most} busy threads seen)"

    def beyond(self, cls: str, loads: np.ndarray) -> str:
        """'above' / 'below' where ``loads`` (mean loads of a played run's stages of class
        ``cls``) leave the range the logs cover, else ''."""
        if cls not in self.seen or not len(loads):
            return ""
        lo, hi = self.seen[cls]
        top, bottom = np.percentile(loads, 90), np.percentile(loads, 10)
        if top > hi * 1.1 + 0.5:
            return "above"
        if bottom < lo * 0.9 - 0.5 and not self.shown[cls]:
            return "below"
        return ""


def fit(samples: list[Sample]) -> LoadFit:
    """The load model that makes each stage's work most alike over ``samples``."""
    if not samples:
        raise ValueError("no log to learn the load from")
    most = max(s.most for s in samples)
    classes = [c for c in CLASSES if any(_has(s, c) for s in samples)]
    own = {s.name: {"kernel"} for s in samples}  # (stage) levels a log keeps to itself
    # Each log against a model of the others alone: what their load cannot explain of it
    # (another machine, daemon version or setting) keeps its own level in the fit.
    offsets = _offsets(samples)
    for name, stages_off in offsets.items():
        own[name] |= {st for st, _ in stages_off}
    best = _search(samples, classes, own, most)
    loo = {}
    if len(samples) >= 3:  # the band's ends: each log left out in turn
        loo = {s.name: fit_point([x for x in samples if x is not s]) for s in samples}
    contention, shown, cores_shown, scatter = best
    seen = {}
    for c in classes:
        loads = np.concatenate([s.mean_load(st) for s in samples for st in _stages_of(s, c)])
        seen[c] = (float(np.percentile(loads, 2)), float(np.percentile(loads, 98)))
    names = tuple(s.name for s in samples)
    fitted = LoadFit(
        contention=contention,
        logs=names,
        gws=tuple(sorted({s.gw for s in samples if s.gw is not None})),
        seen=seen,
        shown=shown,
        cores_shown=cores_shown,
        most=most,
        scatter=scatter,
        offsets={
            k: {_stage_name(st, kind): v for (st, kind), v in o.items()}
            for k, o in offsets.items()
            if o
        },
    )
    fitted = replace(fitted, repeat=_repeat(samples, fitted.offsets))
    alternatives = _alternatives(fitted, samples, loo)
    damaged = tuple(f"{s.name}: {n}" for s in samples[1:] for n in s.damage)
    return replace(fitted, alternatives=alternatives, notes=damaged + _notes(fitted, samples))


def _stage_name(stage: str, kind: str) -> str:
    """``synth``, or ``synth (window-post)`` for a stage of another proof kind than PoRep."""
    return stage if kind in ("None", "porep-c2") else f"{stage} ({kind})"


def _has(s: Sample, cls: str) -> bool:
    return any(len(s.stages[st][1]) for st in _stages_of(s, cls))


def _stages_of(s: Sample, cls: str) -> list[str]:
    return [st for st in s.stages if STAGE_CLASS[st] == cls]


def _levels(contention: Contention, cls: str, most: int) -> np.ndarray:
    return 1.0 / np.asarray(contention.factor(cls, np.arange(most + 2)), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class _Design:
    """Every stage of one class over all samples: time at each load, and its group (stage,
    kind, and the log where the log keeps its own level)."""

    table: np.ndarray  # (stages, loads)
    group: np.ndarray  # int codes, ascending: a group's rows lie together

    def __post_init__(self) -> None:
        if len(self.group) > 1 and not (self.group[1:] >= self.group[:-1]).all():
            # Each group's rows together, in their order (a stable sort), as ``_design``
            # makes them: a group is then a slice, where a mask and a copy of its rows was
            # the fit's every sum.  (A matrix library may round a row's product by its
            # place: the fits of every log here came out the same as in the rows' own order.)
            order = np.argsort(self.group, kind="stable")
            object.__setattr__(self, "table", self.table[order])
            object.__setattr__(self, "group", self.group[order])

    @property
    def n(self) -> int:
        return len(self.group)

    @functools.cached_property
    def _groups(self) -> list[slice]:
        """Each group's rows, in group order: the rows of a group lie together
        (``_design`` sorts them so)."""
        bounds = np.searchsorted(self.group, np.arange(int(self.group.max(initial=-1)) + 2))
        return [slice(a, b) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]

    def sse(self, weights: np.ndarray) -> np.ndarray:
        """Within-group sum of absolute deviations of log work from the group's median,
        per column of ``weights`` (loads x k): robust to the long tail of slow stages."""
        if not self.n:
            return np.zeros(weights.shape[1])
        w = np.log(np.maximum(self.table @ weights, 1e-9))
        out = np.zeros(w.shape[1])
        for rows in map(w.__getitem__, self._groups):
            if len(rows):
                out += np.abs(rows - _column_medians(rows)).sum(axis=0)
        return out


def _column_medians(rows: np.ndarray) -> np.ndarray:
    """``np.median(rows, axis=0)`` of a finite (n, k) array, to the bit: one partition of
    the rows' transpose at the middle, the lower middle of an even count the largest below
    it (``np.median`` partitions along the strided axis at both middles: 6x slower, half
    the load fit's time)."""
    if not np.isfinite(rows).all():
        return np.median(rows, axis=0)
    t = rows.T.copy()
    h = t.shape[1] // 2
    t.partition(h, axis=1)
    if t.shape[1] % 2:
        return t[:, h].copy()
    return (t[:, :h].max(axis=1) + t[:, h]) / 2


def _design(samples: list[Sample], cls: str, own: dict[str, set[str]], width: int) -> _Design:
    tables, tags = [], []
    for s in samples:
        for st in _stages_of(s, cls):
            t, d, kind = s.stages[st]
            if not len(d):
                continue
            pad = np.zeros((len(d), width))
            pad[:, : t.shape[1]] = t
            tables.append(pad)
            tag = s.name if st in own[s.name] else ""
            tags.append(np.array([f"{st}|{k}|{tag}" for k in kind], dtype=object))
    if not tables:
        return _Design(np.zeros((0, width)), np.zeros(0, np.int64))
    _, group = np.unique(np.concatenate(tags), return_inverse=True)
    return _Design(np.concatenate(tables), group.astype(np.int64))  # (sorted by group)


def _best_slope(
    d: _Design, model: Contention, cls: str, loads: np.ndarray
) -> tuple[float, float, float]:
    """(slope, its sse, sse at slope 0) for class ``cls`` of ``model``: the best of a coarse
    grid, then of a fine one around it."""

    def sse(slopes: np.ndarray) -> np.ndarray:
        return d.sse(1.0 / model.factors(cls, loads, slopes=slopes))

    coarse = sse(COARSE)
    k = int(np.argmin(coarse))
    lo = COARSE[max(k - 1, 0)]
    hi = COARSE[min(k + 1, len(COARSE) - 1)]
    fine = np.arange(lo, hi + FINE_STEP / 2, FINE_STEP)
    got = sse(fine)
    j = int(np.argmin(got))
    if got[j] <= coarse[k]:
        return float(round(fine[j], 4)), float(got[j]), float(coarse[0])
    return float(COARSE[k]), float(coarse[k]), float(coarse[0])


def _search(
    samples: list[Sample], classes: list[str], own: dict[str, set[str]], most: int
) -> tuple[Contention, dict[str, bool], bool, dict[str, tuple[float, float]]]:
    """The slopes and the time-sharing point with the best BIC."""
    width = most + 2
    designs = {c: _design(samples, c, own, width) for c in classes}
    total = sum(d.n for d in designs.values())
    candidates: list[float | None] = [None, *_cores_tried(designs, most)]
    stated = {s.cpus for s in samples if s.cpus is not None}
    if len(stated) == 1:  # the machine's CPU threads, as the logs state them
        candidates = [float(stated.pop())]
    loads = np.arange(width)
    spread = {c: _spread(samples, c) for c in classes}  # the same whatever the cores
    best = None
    kernel_slope = None  # the kernel never time-shares: its slope is the same for any cores
    for cores in candidates:
        score, slopes, shown, scatter, waker = 0.0, {}, {}, {}, 0.0
        for c in classes:
            d = designs[c]
            n = max(d.n, 1)
            model = Contention(cores=cores if c != "kernel" else None)
            if c != "kernel":
                a, sse, sse0 = _best_slope(d, model, c, loads)
            else:
                kernel_slope = kernel_slope or _best_slope(d, model, c, loads)
                a, sse, sse0 = kernel_slope
            if c == "cpu" and cores is not None:
                # The GPU workers' share past the cores and their slope, in turn: an even
                # share where calls shared a CPU leaves the slope to take up their excess.
                for _ in range(WAKER_ROUNDS):
                    w = _best_waker(d, replace(model, cpu=a), loads)
                    if w == waker:
                        break
                    waker = w
                    model = replace(model, waker=w)
                    a, sse, sse0 = _best_slope(d, model, c, loads)
            var, var0 = max(sse / n, 1e-12), max(sse0 / n, 1e-12)
            # A slope is kept where the logs' loads spread and it pays for itself twice over
            # (BIC, doubled: stages of one log are not independent draws), and narrows the
            # scatter by KEEP_GAIN at least.
            gain = np.log(var0 / var)
            keep = spread[c] and n * gain > 2 * np.log(max(n, 2)) and gain > np.log1p(KEEP_GAIN)
            slopes[c] = a if keep else 0.0
            shown[c] = spread[c]
            v = var if keep else var0
            scatter[c] = (float(var0), float(v))
            score += n * np.log(v) + (np.log(max(n, 2)) if keep else 0.0)
        if cores is not None:
            score += np.log(max(total, 2))
        if best is None or score < best[0] - 1e-9:
            fitted = Contention(**slopes, cores=cores, waker=waker)
            best = (score, fitted, dict(shown), cores, dict(scatter))
    _, contention, shown, cores, scatter = best
    return contention, shown, cores is not None, scatter


def _cores_tried(designs: dict[str, _Design], most: int) -> list[float]:
    """The points past which the machine may time-share that the search tries: 2 to the
    most threads busy, but below the highest load any time-shared stage spent time at.  A
    point at or past it weighs every such stage as no time-sharing does, to the bit, and
    pays for itself nowhere: it cannot win (a test tries them all)."""
    if most < 3:
        return []
    seen = [d.table.any(axis=0) for c, d in designs.items() if c != "kernel"]
    top = max((int(np.flatnonzero(s).max(initial=0)) for s in seen), default=0)
    return [float(c) for c in range(2, min(most + 1, top))]


def _best_waker(d: _Design, model: Contention, loads: np.ndarray) -> float:
    """How often a GPU worker's CPU work past the cores shares a CPU with the threads on it
    (``Contention.waker``), where the logs show enough of it; else 0 (even sharing).

    Past the cores such a call runs alone on a CPU, or beside 1, 2, 3 syntheses: a
    mixture whose slow calls are no tail of noise but what the GPU waits for.  The
    slopes are fitted by least absolute deviations, which read the median call and leave
    a minority of shared calls out (on the real H200 runs, 55 % of the calls at pw 16
    shared a CPU: the median barely moves with the share); this is fitted by least
    squares on the same logarithmic scale, which counts every call."""
    if model.cores is None:
        return 0.0
    edge = int(model.cores) + 1
    past = d.table[:, edge:].sum(axis=1) > 0.5 * d.table.sum(axis=1)
    if int(past.sum()) < MIN_PAST:
        return 0.0
    weights = 1.0 / model.factors("cpu", loads, wakers=WAKERS)
    work = np.log(np.maximum(d.table @ weights, 1e-9))
    sse = np.zeros(len(WAKERS))
    for rows in map(work.__getitem__, d._groups):
        if len(rows):
            sse += ((rows - rows.mean(axis=0)) ** 2).sum(axis=0)
    k = int(np.argmin(sse))
    # Kept where it pays for itself twice over (BIC, doubled, as a slope): it moves only
    # the calls past the cores, a few of the many the scatter is summed over.
    n = max(d.n, 2)
    keep = sse[k] > 0 and n * np.log(sse[k] / max(sse[0], 1e-12)) + 2 * np.log(n) < 0
    return float(WAKERS[k]) if keep else 0.0


def _spread(samples: list[Sample], cls: str) -> bool:
    """Whether the loads of ``cls``'s stages spread enough to show its slope."""
    loads = np.concatenate(
        [s.mean_load(st) for s in samples for st in _stages_of(s, cls)] or [np.zeros(0)]
    )
    if len(loads) < 8:
        return False
    lo, hi = np.percentile(loads, 5), np.percentile(loads, 95)
    return bool(hi - lo >= MIN_SPAN and hi >= MIN_RATIO * max(lo, 1.0))


def _offsets(samples: list[Sample]) -> dict[str, dict[tuple[str, str], float]]:
    """Per log, the (stage, proof kind) whose level lies over OTHER_MACHINE from the other
    logs' under the model fitted on those others.  The first log (the one predicted from)
    defines the machine; the calibration log furthest off is set apart first, and the rest
    are measured again without it, so that one odd log does not make the others look odd."""
    out: dict[str, dict[tuple[str, str], float]] = {s.name: {} for s in samples}
    kept = list(samples)
    while len(kept) >= 2:
        worst, worst_off = None, {}
        for s in kept[1:]:
            rest = [x for x in kept if x is not s]
            model = fit_point(rest)
            off = {}
            for cls in ("synth", "cpu"):
                for st in _stages_of(s, cls):
                    mine = _levels_by_kind([s], st, cls, model)
                    theirs = _levels_by_kind(rest, st, cls, model)
                    for kind, v in mine.items():
                        if kind in theirs and abs(v / theirs[kind] - 1) > OTHER_MACHINE[cls]:
                            off[(st, kind)] = v / theirs[kind] - 1
            size = max((abs(v) for v in off.values()), default=0.0)
            if off and (worst is None or size > max(abs(v) for v in worst_off.values())):
                worst, worst_off = s, off
        if worst is None:
            break
        out[worst.name] = worst_off
        kept.remove(worst)
    return out


def _levels_by_kind(
    samples: list[Sample], stage: str, cls: str, model: Contention, stat=np.median
) -> dict[str, float]:
    """The median (``stat``) work of ``stage`` per proof kind over ``samples`` under
    ``model``."""
    works, kinds = [], []
    for s in samples:
        if stage not in s.stages or not len(s.stages[stage][1]):
            continue
        t, _, kind = s.stages[stage]
        works.append(t @ _levels(model, cls, t.shape[1] - 2))
        kinds.append(kind)
    if not works:
        return {}
    w, k = np.concatenate(works), np.concatenate(kinds)
    return {str(x): float(stat(w[k == x])) for x in np.unique(k)}


def _alternatives(
    f: LoadFit, samples: list[Sample], loo: dict[str, Contention]
) -> tuple[Alternative, ...]:
    """The models at the ends of what the logs allow (see the module docstring), each with
    where it can differ from the point model."""
    c = f.contention
    out = [
        Alternative(
            "durations grow no further past the loads seen", replace(c, cap=f.most), "above"
        )
    ]
    if c.cores is None or c.cores > f.most:
        saturated = replace(c, cores=f.most)
        out.append(Alternative("nothing past the loads seen adds throughput", saturated, "above"))
    lowest = min((lo for lo, _ in f.seen.values()), default=1.0)
    if (c.cores is None or c.cores > lowest) and lowest > 1.5:
        # The log may have run past the machine's cores already: fewer at once, faster.
        shared = replace(c, cores=max(1.0, float(np.floor(lowest))))
        out.append(Alternative("the loads seen were already time-shared", shared, "below"))
    unshown = [k for k, v in f.shown.items() if not v and k != "kernel"]
    if unshown:
        steep = replace(c, **{k: UNSHOWN_SLOPE for k in unshown})
        words = ", ".join(CLASS_WORDS[k] for k in unshown)
        out.append(
            Alternative(f"{words} slowing {UNSHOWN_SLOPE:.0%} per busy thread", steep, "load")
        )
    if c.cores is not None and "cpu" in f.seen and c.waker < 1:
        # Past the cores, a GPU worker that wakes shares one CPU with the threads on it
        # (``Contention.waker``); how often, the logs rarely show: the other end.
        woken = replace(c, waker=1.0)
        out.append(
            Alternative(
                "past the cores, the GPU workers' CPU work sharing a CPU with the syntheses on it",
                woken,
                "load",
            )
        )
    for name, rest in loo.items():
        out.append(Alternative(f"fitted without {name}", rest, "load"))
    out += _other_runs(f, samples)
    return tuple(out)


#: Runs of one machine whose stage levels differ by less than this (fraction, the most of
#: any stage) are taken as alike: no end of the band is made of them.
RUNS_ALIKE = 0.02


def _other_runs(f: LoadFit, samples: list[Sample]) -> list[Alternative]:
    """Another run of the machine: the first log's tasks at the stage levels (synthesis,
    CPU prep, post-processing; the kernel is a knob) that the calibration log lowest and
    the one highest against it show at the same load.  Runs of one machine differ by more
    than their load: on the real H200 runs, GPU-worker prep beside 8 syntheses took 160 ms
    in base1 and 116 ms in gw1, recorded three minutes later; a prediction of another run
    stands behind that spread (logs of another machine, ``offsets``, are left out).

    A run's level is read twice: its typical stage (the median work, as the fit reads
    them) and its mean, slow tail included, which is what sets a pipeline's pace.  On a
    fourth H200 host two runs at the same settings, the first and the last of one session,
    took 2.648 and 2.394 s/proof: their median synthesis differed by 2 %, their mean by
    9 %.  The band's ends are the runs lowest and highest by either reading, and by each
    stage's own (the stage that binds moves the run)."""
    first, others = samples[0], [s for s in samples[1:] if s.name not in f.offsets]
    if not others:
        return []
    out = []
    for stat, how in ((np.median, "stage levels"), (np.mean, "mean stage levels")):
        ratios = _run_ratios(f.contention, first, others, stat)
        if not ratios:
            continue
        level = {n: float(np.mean(np.log(list(r.values())))) for n, r in ratios.items()}
        picked = {min(level, key=level.get), max(level, key=level.get)}
        for st in LEVELED:
            at = {n: r[st] for n, r in ratios.items() if st in r}
            if at:
                picked |= {min(at, key=at.get), max(at, key=at.get)}
        for name in sorted(picked, key=level.get):
            said = ", ".join(f"{st} {100 * (v - 1):+.0f} %" for st, v in ratios[name].items())
            out.append(
                Alternative(
                    f"another run of the machine, at {name}'s {how} ({said})",
                    f.contention,
                    "run",
                    tuple(ratios[name].items()),
                )
            )
    return out


def _run_ratios(
    model: Contention, first: Sample, others: list[Sample], stat
) -> dict[str, dict[str, float]]:
    """Per other log whose levels differ from the first's by over RUNS_ALIKE: each leveled
    stage's work (``stat`` of it) against the first log's, at the same load."""
    mine = {st: _levels_by_kind([first], st, STAGE_CLASS[st], model, stat) for st in LEVELED}
    ratios = {}
    for s in others:
        r = {}
        for st, own in mine.items():
            theirs = _levels_by_kind([s], st, STAGE_CLASS[st], model, stat)
            shared = [k for k in own if k in theirs and own[k] > 0]
            if shared:
                r[st] = float(np.median([theirs[k] / own[k] for k in shared]))
        if r and max(abs(v - 1.0) for v in r.values()) > RUNS_ALIKE:
            ratios[s.name] = r
    return ratios


def fit_point(samples: list[Sample]) -> Contention:
    """The point model alone (leave-one-out refits)."""
    own = {s.name: {"kernel"} for s in samples}
    classes = [c for c in CLASSES if any(_has(s, c) for s in samples)]
    return _search(samples, classes, own, max(s.most for s in samples))[0]


#: A fit that leaves stage work this scattered (mean absolute deviation of its logarithm,
#: about a fraction) explains the logs poorly: said, with the scatter before and after.  The
#: GPU workers' CPU work is short (tens of ms) and jittery: 16 % on the real H200 runs.
POOR_FIT = {"synth": 0.15, "cpu": 0.25}


def _notes(f: LoadFit, samples: list[Sample]) -> tuple[str, ...]:
    out = []
    for cls in ("synth", "cpu", "kernel"):
        if getattr(f.contention, cls) >= COARSE[-1] * 0.99:
            out.append(
                f"the fit wants {CLASS_WORDS[cls]} to slow more than {COARSE[-1]:.0%} per added "
                "busy thread, more than any machine does: the logs differ by more than their "
                "load (other machines, daemon versions or settings); trust the band, not the figure"
            )
    for cls, (before, after) in f.scatter.items():
        if cls != "kernel" and after > POOR_FIT[cls] and len(f.logs) > 1:
            out.append(
                f"the load model leaves {100 * after:.0f} % scatter in {CLASS_WORDS[cls]} work "
                f"({100 * before:.0f} % with fixed durations): the logs differ by more than "
                "their load explains (other machines or settings, or noise); trust the band, "
                "not the figure"
            )
    out += _repeat_note(f, samples)
    for name, off in f.offsets.items():
        said = ", ".join(f"{st} {100 * v:+.0f} %" for st, v in off.items())
        out.append(
            f"{name}: {said} against the other logs at the same load: another machine or "
            "daemon version, or a stage changed on purpose; it keeps its own level"
        )
    return tuple(out)


def _repeat(samples: list[Sample], offsets: dict) -> tuple[str, float] | None:
    """The calibration log that ran the first log's own settings furthest from it: (name,
    its s/proof against the first's, less 1).  It measures how far runs of one setting
    differ on the machine: no prediction from these logs is finer.  On a fourth H200 host
    two such runs, the first and the last of one session, took 2.648 and 2.394 s/proof."""
    first = samples[0].run
    if first is None or first.s_per_proof is None:
        return None
    apart = [
        (s.run.s_per_proof / first.s_per_proof - 1, s.name, s.run.s_per_proof)
        for s in samples[1:]
        if s.run is not None
        and s.run.s_per_proof is not None
        and s.name not in offsets
        and s.run.same(first)
    ]
    if not apart:
        return None
    off, name, _ = max(apart, key=lambda x: abs(x[0]))
    return name, off


def _repeat_note(f: LoadFit, samples: list[Sample]) -> list[str]:
    """The note of ``f.repeat``, where there is one."""
    first = samples[0].run
    if f.repeat is None or first is None or first.s_per_proof is None:
        return []
    name, off = f.repeat
    return [
        f"{name} ran this log's settings ({first.words()}) at "
        f"{first.s_per_proof * (1 + off):.3f} s/proof, this log at {first.s_per_proof:.3f} "
        f"({100 * off:+.1f} %): runs of one setting on this machine differ by that much, and "
        "a prediction from these logs is no finer: its band holds it"
    ]


def fixed() -> LoadFit:
    """No load model: every stage takes its measured time whatever runs beside it (the
    replay of domain.md, exact against simulators without contention)."""
    return LoadFit(
        contention=NONE,
        logs=(),
        seen={},
        shown={},
        cores_shown=False,
        most=0,
        scatter={},
        notes=("fixed durations: no stage slows down or speeds up with the load",),
    )


def synthesis_peak(c: Contention, gpu_threads: int) -> int | None:
    """The most synthesis slots that still add synthesis throughput under ``c``: past the
    point where the machine time-shares (``cores``), less the GPU workers' threads, every
    added slot takes CPU from the others, the GPU workers' prep and post among them.  None
    where ``c`` does not time-share (each slot adds, if less and less)."""
    if c.cores is None:
        return None
    return max(1, int(c.cores) - gpu_threads)
