"""What the swimlanes show, prepared once per session (numpy only, no Qt).

Lanes are grouped per GPU (one lane per GPU worker plus the derived busy lane)
and one synthesis group whose rows are packed greedily.  Each lane holds a few
named layers of sorted ``Intervals``, views into one ``Stack`` per layer and group
(with its merged copies per zoom level); the y layout (in pixels, top down) is
recomputed when a group is collapsed.
"""

from __future__ import annotations

import bisect
import operator
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from viewer.analysis import cold_start_regions, idle_gaps, transitions
from viewer.analysis.cache import drop, made
from viewer.analysis.counters import COUNTERS, Envelope, counters
from viewer.analysis.intervals import busy_union, chosen
from viewer.analysis.stages import synthesis_rows
from viewer.lanes.lod import Intervals, Level, Stack
from viewer.model import Session
from viewer.model.frame import Frame, is_constant, take_rows
from viewer.model.keys import unique

MARKER_STRIP = 34.0  # room for two rows of transition labels above the lanes
GROUP_HEADER = 18.0
LANE_HEIGHT = {"worker": 26.0, "busy": 18.0, "synth": 9.0, "counter": 28.0}
LANE_SPACING = {"worker": 4.0, "busy": 6.0, "synth": 1.0, "counter": 5.0}
#: Narrowest plot width (pixels) the merged copies are built for ahead of time.
MIN_VIEW_PX = 400.0

#: Gap kinds, ordered by severity (the worst one wins when gaps merge).
GAP_DISPATCH, GAP_STARVED, GAP_DISPATCH_CROSS, GAP_STARVED_CROSS = 0, 1, 2, 3
#: Layers whose merged runs take the worst (largest) key rather than MIXED.
WORST_KEY_LAYERS = frozenset({"gap", "cross"})


@dataclass(slots=True, weakref_slot=True)
class Lane:
    name: str
    kind: str  # "worker" | "busy" | "synth" | "counter"
    layers: dict[str, Intervals] | StackViews
    gpu: int = -1
    top: float = 0.0
    height: float = 0.0
    counter: str = ""  # the counter a "counter" lane draws (a key of COUNTERS)


class StackViews(Mapping[str, Intervals]):
    """The layers of one lane of a group built as stacks (``Stack.of_lanes``): each a
    view into its stack made when asked for, so 10^5 synthesis rows hold no arrays."""

    __slots__ = ("lane", "stacks")

    def __init__(self, stacks: dict[str, Stack], lane: int) -> None:
        self.stacks, self.lane = stacks, lane

    def __getitem__(self, name: str) -> Intervals:
        return self.stacks[name].lane_view(self.lane)

    def __iter__(self) -> Iterator[str]:
        return iter(self.stacks)

    def __len__(self) -> int:
        return len(self.stacks)


class Rows(Sequence[Lane]):
    """Lanes of one kind, a row each of the group's ``stacks``, made when asked for: 2 *
    10^5 synthesis rows at once held a Lane, its views and its top each (38 MB).

    The rows lie one under the other from ``top``, ``pitch`` pixels apart (``place``, by
    the layout).  A lane made stays the same object while anything holds it, and moves
    with the rows."""

    def __init__(self, stacks: dict[str, Stack], count: int, kind: str, name: str) -> None:
        self.stacks, self.kind, self.name, self._count = stacks, kind, name, count
        self.top, self.height, self.pitch = 0.0, LANE_HEIGHT[kind], 0.0
        self._made: weakref.WeakValueDictionary[int, Lane] = weakref.WeakValueDictionary()

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._count))]
        i = operator.index(i)
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError(f"row {i} of {self._count}")
        lane = self._made.get(i)
        if lane is None:
            name = self.name if i == 0 else ""
            top = self.top + i * self.pitch
            lane = Lane(name, self.kind, StackViews(self.stacks, i), top=top, height=self.height)
            self._made[i] = lane
        return lane

    def __iter__(self) -> Iterator[Lane]:
        return (self[i] for i in range(self._count))

    def place(self, top: float, height: float, pitch: float) -> None:
        """Put the rows at ``top``, each ``height`` tall, ``pitch`` apart."""
        self.top, self.height, self.pitch = top, height, pitch
        for i, lane in list(self._made.items()):
            lane.top, lane.height = top + i * pitch, height

    @property
    def bottom(self) -> float:
        """The bottom of the last row."""
        return self.top + (self._count - 1) * self.pitch + self.height

    def bands(self) -> tuple[np.ndarray, np.ndarray]:
        """(top, height) of every row."""
        return self.top + np.arange(self._count) * self.pitch, np.full(self._count, self.height)

    def index_at(self, y: float) -> int | None:
        """The row shown at ``y``, if any."""
        if self.height <= 0 or y < self.top:
            return None
        i = int((y - self.top) // self.pitch)
        return i if i < self._count and y <= self.top + i * self.pitch + self.height else None


def bands(lanes: Sequence[Lane]) -> tuple[np.ndarray, np.ndarray]:
    """(top, height) of each of ``lanes``, arrays (no pass over rows: ``Rows.bands``)."""
    if isinstance(lanes, Rows):
        return lanes.bands()
    n = len(lanes)
    top = np.fromiter((lane.top for lane in lanes), np.float64, n)
    return top, np.fromiter((lane.height for lane in lanes), np.float64, n)


@dataclass
class LayerStack:
    """One layer of the lanes of a group that have it, end to end."""

    lanes: Sequence[Lane]
    data: Stack


@dataclass
class LaneGroup:
    name: str
    lanes: Sequence[Lane]  # a list, or the ``Rows`` of a group of stacked rows
    collapsed: bool = False
    top: float = 0.0
    bottom: float = 0.0
    _stacks: dict[str, LayerStack] | None = field(default=None, repr=False)

    @property
    def is_counters(self) -> bool:
        if isinstance(self.lanes, Rows):
            return False
        return bool(self.lanes) and all(lane.kind == "counter" for lane in self.lanes)

    def stacks(self) -> dict[str, LayerStack]:
        """Every layer of the lanes stacked (built once; lane layers become views into it)."""
        if self._stacks is None:
            stacks = {}
            # Layers of the very same intervals are one stack (the parts are kept with it,
            # so that no other object takes one of their ids meanwhile).
            made: dict[tuple, tuple[list[Intervals], Stack]] = {}
            for name in dict.fromkeys(name for lane in self.lanes for name in lane.layers):
                lanes = [lane for lane in self.lanes if name in lane.layers]
                parts = [lane.layers[name] for lane in lanes]
                key = (*map(id, parts), name in WORST_KEY_LAYERS)
                if key not in made:
                    made[key] = (parts, Stack(parts, name in WORST_KEY_LAYERS))
                    made[key][1].share([m[1] for k, m in made.items() if k != key])
                data = made[key][1]
                for lane, view in zip(lanes, data.lane_views(), strict=True):
                    lane.layers[name] = view
                stacks[name] = LayerStack(lanes, data)
            self._stacks = stacks
        return self._stacks


@dataclass
class SessionLanes:
    """Everything the view draws for one session."""

    session: Session
    groups: list[LaneGroup]
    gaps: Frame
    transitions: Frame
    cold: Frame
    x_min: float = 0.0
    x_max: float = 1.0
    height: float = field(default=0.0)
    counters: dict[str, Envelope] = field(default_factory=dict)
    kernel_parts: KernelParts | None = None

    def layout(self) -> float:
        """Assign y positions top down; returns the total height in pixels."""
        y = MARKER_STRIP
        for group in self.groups:
            group.top = y
            y += GROUP_HEADER
            if isinstance(group.lanes, Rows):
                rows = group.lanes
                if group.collapsed:
                    rows.place(group.top, 0.0, 0.0)
                else:
                    height = LANE_HEIGHT[rows.kind]
                    rows.place(y, height, height + LANE_SPACING[rows.kind])
                    y += len(rows) * rows.pitch
                group.bottom = y
                y += 4.0
                continue
            for lane in group.lanes:
                if group.collapsed:
                    lane.height = 0.0
                    lane.top = group.top
                    continue
                lane.top = y
                lane.height = LANE_HEIGHT[lane.kind]
                y += lane.height + LANE_SPACING[lane.kind]
            group.bottom = y
            y += 4.0
        self.height = y
        return y

    def lanes(self) -> list[Lane]:
        """Every shown lane, top down (each row of ``Rows`` made: what the view draws
        never asks for this, ``lane_at``, ``lane_named`` and ``layers`` do not pass over rows)."""
        return [lane for g in self.groups if not g.collapsed for lane in g.lanes]

    def lane_at(self, y: float) -> Lane | None:
        """The lane shown at ``y``: its group, then a binary search over the group's lanes'
        tops (top down), or the row of ``Rows`` at ``y``."""
        for group in self.groups:
            if group.collapsed or not group.top <= y <= group.bottom:
                continue
            lanes = group.lanes
            if isinstance(lanes, Rows):
                i = lanes.index_at(y)
                return None if i is None else lanes[i]
            i = bisect.bisect_right(lanes, y, key=lambda lane: lane.top) - 1
            for lane in lanes[max(i - 1, 0) : i + 1]:
                if lane.top <= y <= lane.top + lane.height:
                    return lane
        return None

    def lane_named(self, name: str) -> Lane | None:
        """The first shown lane called ``name`` (of rows, only the first has a name)."""
        for group in self.groups:
            if group.collapsed:
                continue
            lanes = group.lanes[:1] if isinstance(group.lanes, Rows) else group.lanes
            for lane in lanes:
                if lane.name == name and lane.height > 0:
                    return lane
        return None

    def layers(self) -> Iterator[tuple[str, Level]]:
        """(name, intervals) of every layer of every shown group, each stack whole."""
        for group in self.groups:
            if not group.collapsed:
                for name, stack in group.stacks().items():
                    yield name, stack.data.level(0)

    def lane_holding(self, row: int, layers: tuple[str, ...]) -> Lane | None:
        """The first lane (top down) with partition ``row`` in one of its ``layers``: a
        search of each group's stacks, never a pass per lane (10^5 synthesis rows)."""
        for group in self.groups:
            stacks = group.stacks()
            found = []  # (position in the group, lane)
            for name in layers:
                stack = stacks.get(name)
                hit = np.flatnonzero(stack.data.row == row) if stack is not None else []
                if len(hit):
                    bounds = stack.data.level(0).bounds
                    lane = stack.lanes[int(np.searchsorted(bounds, hit[0], "right")) - 1]
                    found.append((_position(group.lanes, lane), lane))
            if found:  # in several lanes: the first in the group's order
                return min(found, key=lambda pair: pair[0])[1]
        return None

    def group_at(self, y: float) -> LaneGroup | None:
        for group in self.groups:
            if group.top <= y < group.top + GROUP_HEADER:
                return group
        return None


def _position(lanes: Sequence[Lane], lane: Lane) -> int:
    """Where ``lane`` lies in ``lanes``, its group."""
    if isinstance(lanes, Rows) and isinstance(lane.layers, StackViews):
        return lane.layers.lane
    return next(i for i, other in enumerate(lanes) if other is lane)


#: The parts of a CUDA region, in the order the kernels run.
KERNEL_PARTS = ("ntt_msm_h", "batch_add", "tail_msm")


class KernelParts:
    """Where ntt_msm_h, batch_add and tail_msm ran inside each call's CUDA region.

    They run in turn from the region's start (a barrier wait before batch_add); the log
    gives durations only, so when they add up to more than the region (their figures
    overlap a little) they are scaled to fit inside it.
    """

    def __init__(self, session: Session) -> None:
        p = session.partitions
        self._k0 = p["kernel_start"].astype(np.float64, copy=False)
        self._kms = p["kernel_ms"].astype(np.float64, copy=False)
        self._parts = [
            p[c].astype(np.float64, copy=False)
            for c in ("ntt_msm_h_ms", "barrier_wait_ms", "batch_add_ms", "tail_msm_ms")
        ]

    def spans(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, end), each (len(rows), 3) in KERNEL_PARTS order; NaN where unknown."""
        d = np.stack([np.nan_to_num(part[rows]) for part in self._parts], axis=1)
        total, kms = d.sum(axis=1), self._kms[rows]
        scale = np.where(total > kms, kms / np.where(total > 0, total, 1.0), 1.0)
        ends = self._k0[rows, None] + np.cumsum(d * scale[:, None], axis=1)
        start = np.stack([self._k0[rows], ends[:, 1], ends[:, 2]], axis=1)
        end = ends[:, [0, 2, 3]]
        ntt, _, batch, tail = self._parts
        known = np.stack([np.isfinite(part[rows]) for part in (ntt, batch, tail)], axis=1)
        return np.where(known, start, np.nan), np.where(known, end, np.nan)


def _col(frame: Frame, name: str) -> np.ndarray:
    """A column as float64: the frame's own where it is one (read-only: nothing here writes
    to it; a copy of each took 12 MB at 1.5 M one-call jobs)."""
    return frame[name].astype(np.float64, copy=False)


def _worker_lane(session: Session, rows: np.ndarray, gpu: int, worker: int) -> Lane:
    p = session.partitions
    job = p["job"][rows]
    start, end = _col(p, "gpu_start")[rows], _col(p, "gpu_end")[rows]
    is_open = p["gpu_open"][rows].astype(bool)
    closed = ~is_open & np.isfinite(end)
    # A column of one value stays one (a log without CUZK_TIMING: no kernel region at all).
    k0 = take_rows(_col(p, "kernel_start"), rows)
    k1 = k0 if _none_known(k0) else k0 + take_rows(_col(p, "kernel_ms"), rows)
    pickup = _col(p, "pickup")[rows]
    open_end = np.full(int(is_open.sum()), max(session.end_ms, np.nanmax(start, initial=0)))
    layers = {
        "bar": Intervals.make(*(chosen(a, closed) for a in (start, end, job, rows))),
        "open": Intervals.make(start[is_open], open_end, job[is_open], rows[is_open]),
        "kernel": Intervals.make(k0, k1, job, rows),
        "pickup": Intervals.make(pickup, start, job, rows),
    }
    label = f"worker {worker}" if worker >= 0 else "worker ?"
    return Lane(f"{_gpu_name(gpu)} · {label}", "worker", layers, gpu=gpu)


def _none_known(col: np.ndarray) -> bool:
    """Whether ``col`` is a column of one unknown value (NaN held once)."""
    return is_constant(col) and bool(np.isnan(col[0]))


def _gpu_name(gpu: int) -> str:
    return f"GPU {gpu}" if gpu >= 0 else "GPU ?"


def _busy_lane(session: Session, gpu: int, gaps: Frame) -> Lane:
    union = busy_union(session, gpu)
    rows = np.flatnonzero(gaps["gpu"] == gpu)
    g = gaps.take(rows)
    kind = g["starved"].astype(np.int32) + 2 * g["cross_sector"].astype(np.int32)
    start, end = _col(g, "start"), _col(g, "end")
    cross = kind >= GAP_DISPATCH_CROSS
    gap = Intervals.make(start, end, kind, rows)
    layers = {
        "busy": Intervals.make(union[:, 0], union[:, 1], np.zeros(len(union), np.int32)),
        "gap": gap,
        # Cross-sector gaps again, seen through the worker lanes above: where every gap is
        # (a job a call), the gap layer itself, stacked once (24 MB on 1.5 M jobs).
        "cross": gap
        if cross.all()
        else Intervals.make(start[cross], end[cross], kind[cross], rows[cross]),
    }
    return Lane(f"{_gpu_name(gpu)} · busy", "busy", layers, gpu=gpu)


def _synth_group(session: Session) -> LaneGroup | None:
    """The synthesis rows, a lane each, their layers stacked at once: 2 * 10^5 partitions
    synthesizing together are as many rows (a pass over every partition per row took 64 s)."""
    sr = synthesis_rows(session)
    if not sr.depth:
        return None
    job = session.partitions["job"][sr.rows]

    def stack(mask: np.ndarray, start: np.ndarray, end: np.ndarray) -> Stack:
        if mask.all():  # every row: the columns themselves, no copies
            return Stack.of_lanes(start, end, job, sr.rows, sr.row_of, sr.depth)
        rows, lane = sr.rows[mask], sr.row_of[mask]
        return Stack.of_lanes(start[mask], end[mask], job[mask], rows, lane, sr.depth)

    stacks = {
        "synth": stack(~sr.open, sr.start, sr.end),
        "open": stack(sr.open, sr.start, sr.end),
        "queue": stack(sr.has_wait, sr.wait_from, sr.wait_to),
    }
    stacks["synth"].share([])  # a job a partition: its keys are its rows
    stacks["queue"].share([stacks["synth"]])  # every synthesis waited: the same rows
    lanes = Rows(stacks, sr.depth, "synth", "synthesis")
    layers = {name: LayerStack(lanes, data) for name, data in stacks.items()}
    return LaneGroup("synthesis", lanes, _stacks=layers)


def _counter_top(session: Session, key: str, peak: int) -> str:
    """ "up to 253", and for the memory of a budget-gated daemon its budget, the limit it
    keeps to: "peak 253, budget 200"."""
    budget = getattr(session.facts, "total_budget_gib", None) if key == "memory" else None
    return f"peak {peak}, budget {budget}" if budget else f"up to {peak}"


def _extent(session: Session) -> tuple[float, float]:
    """The session's span, widened to every event time (a column at a time: a copy of the
    five took 60 MB on 1.5 M one-call jobs)."""
    lo, hi = session.start_ms, session.end_ms
    for name in ("synth_start", "queued", "pickup", "gpu_start", "gpu_end"):
        col = session.partitions[name].astype(np.float64, copy=False)
        if not len(col):
            continue
        a, b = float(np.fmin.reduce(col)), float(np.fmax.reduce(col))  # NaN skipped
        if not (np.isfinite(a) and np.isfinite(b)):  # an infinity, or nothing but NaN
            finite = col[np.isfinite(col)]
            if not len(finite):
                continue
            a, b = float(finite.min()), float(finite.max())
        lo, hi = min(lo, a), max(hi, b)
    return float(lo), float(hi)


def build_lanes(session: Session) -> SessionLanes:
    """The lanes of ``session``: per GPU its workers and busy lane, then the synthesis rows."""
    p = session.partitions
    had = made(session)
    # The counters first: the memory curve's events take 5x the curve while they are
    # summed (24 MB on 10^5 one-call jobs), before the lanes hold anything.
    steps = counters(session)
    gaps = idle_gaps(session)
    started = np.flatnonzero(~np.isnan(p["gpu_start"]))
    worker = p["worker"][started]
    gpu = p["gpu"][started].copy()
    table = session.gpus
    by_worker = {w: g for g, ws in table.items() for w in ws}
    unknown = gpu < 0
    gpu[unknown] = [by_worker.get(int(w), -1) for w in worker[unknown]]
    pairs = unique((gpu.astype(np.int64) << 32) | (worker.astype(np.int64) & 0xFFFFFFFF))
    low = (pairs & 0xFFFFFFFF).astype(np.uint32).astype(np.int32)  # the worker, sign kept
    for g, w in zip((pairs >> 32).tolist(), low.tolist(), strict=True):
        if w not in table.get(g, []):
            table.setdefault(g, []).append(w)
    groups = []
    for g in sorted(table):
        lanes = [
            _worker_lane(session, started[(gpu == g) & (worker == w)], g, w)
            for w in sorted(table[g])
        ]
        lanes.append(_busy_lane(session, g, gaps))
        groups.append(LaneGroup(_gpu_name(g), lanes))
        groups[-1].stacks()  # now: the lanes' own copies go before the next GPU's are made
    # The counters right under the GPU lanes, whose waits they explain.
    counter_lanes = [
        Lane(
            f"{COUNTERS[key]}\n{_counter_top(session, key, steps[key].peak)}",
            "counter",
            {},
            counter=key,
        )
        for key in COUNTERS
    ]
    groups.append(LaneGroup("counters", counter_lanes))
    synth = _synth_group(session)
    if synth is not None:
        groups.append(synth)
    x_min, x_max = _extent(session)
    trans = transitions(session).sort_by("time")
    out = SessionLanes(
        session=session,
        groups=groups,
        gaps=gaps,
        transitions=trans,
        cold=cold_start_regions(session),
        x_min=x_min,
        x_max=max(x_max, x_min + 1.0),
        counters={key: Envelope(value) for key, value in steps.items()},
        kernel_parts=KernelParts(session),
    )
    out.layout()
    # The zoomed-out copies too, while off the GUI thread: the widest view is 3 spans.
    max_px = 3 * (out.x_max - out.x_min) / MIN_VIEW_PX
    for group in groups:
        for stack in group.stacks().values():
            stack.data.build_levels(max_px)
    for envelope in out.counters.values():
        envelope.build_levels(max_px)
    # The synthesis stacks hold what the view needs of the rows' packing: the packing itself
    # goes (22 MB on 1.5 M one-call jobs), unless something else had made it.
    drop(session, synthesis_rows, unless=had)
    return out
