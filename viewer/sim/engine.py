"""The pipeline played forward: the one engine of the simulator and of the replay.

Given every task's durations (a task = one GPU call: a partition, or a whole
monolithic job) and the pipeline's shape, ``play`` says when everything
happens.  The rules are those of domain.md "Replay", which follow upstream's
engine:

- ``pw`` synthesis slots take tasks in task order (job, then partition) as soon
  as the task's job has arrived; a finished synthesis is queued ``qdelay`` later.
- The queue holds at most ``queue_cap`` tasks (None: unbounded).  A finished
  task that finds it full keeps its synthesis slot until there is room, which a
  log shows as a SYNTH_END -> queue delay.  A slot is free again once its task
  is queued.
- A free GPU worker takes the lowest task of the queue (the oldest job's lowest
  partition).  Among free workers, one of the GPU with the fewest workers in a call
  goes first, then the one idle longest, then the lowest: free work spreads over
  the GPUs, as each GPU's own workers would take it (with GPU 0's first, a second
  GPU sat idle while GPU 0's mutex queued them).  All workers of all GPUs share the
  queue; worker ``w`` belongs to GPU ``w // gw``.
- The call starts ``dispatch`` after that (its GPU_PICKUP ``pickup`` after,
  never later than the start), runs ``prelock`` of CPU prep, then waits for its
  GPU's kernel mutex (first come, first served), runs the ``kernel``, holds the
  mutex ``hold`` longer and ends ``post`` after the kernel (``post`` includes
  ``hold``).  A job's last dispatched call also runs its job's ``assemble``.
  The first kernel on each GPU takes ``warmup`` longer.

Times are integer milliseconds.  ``viewer.sim.model.run`` feeds it durations
drawn at random; ``viewer.whatif.replay`` feeds it the durations a log measured.

``play_python`` below defines the engine; ``_engine.c`` (an optional C extension,
``compiled()`` says whether it is in use, ``CUZK_PURE_PYTHON=1`` turns it off) is its
twin, about 50x faster, held to it event for event by ``tests/sim/test_engine_twin.py``.
"""

from __future__ import annotations

import heapq
import os
from array import array
from collections import deque
from dataclasses import dataclass, fields

import numpy as np

try:
    from viewer.sim import _engine
except ImportError:  # no C compiler at install time: the Python engine runs
    _engine = None

SYNTH_END, QUEUED, LOCK, RELEASE, END, WAKE = range(6)


@dataclass(frozen=True)
class Shape:
    """The pipeline: synthesis slots, GPU workers per GPU, GPUs, the queue's bound."""

    pw: int
    gw: int
    gpus: int
    queue_cap: int | None = None  # None: unbounded
    warmup_ms: int = 0  # extra kernel time of the first call on each GPU


@dataclass(frozen=True)
class Tasks:
    """Every task's durations (ms, int32 or int64 arrays), tasks in dispatch-priority order."""

    job: np.ndarray  # per task: its job, jobs numbered in arrival order
    arrival: np.ndarray  # per job
    assemble: np.ndarray  # per job: extra post of its last dispatched call
    synth: np.ndarray
    qdelay: np.ndarray  # SYNTH_END -> queued, when the queue has room
    pickup: np.ndarray  # taken -> GPU_PICKUP
    dispatch: np.ndarray  # taken -> GPU_START
    prelock: np.ndarray  # GPU_START -> at the kernel mutex
    kernel: np.ndarray
    hold: np.ndarray  # kernel end -> mutex released
    post: np.ndarray  # kernel end -> GPU_END (assemble not included)


@dataclass(frozen=True)
class Played:
    """When everything happened, one row per task (ms: int64, or int32 where the compiled
    engine's times all lie within 2^30 ms)."""

    synth_start: np.ndarray
    synth_end: np.ndarray
    queued: np.ndarray
    pickup: np.ndarray
    start: np.ndarray
    acquire: np.ndarray
    kernel_end: np.ndarray
    release: np.ndarray
    end: np.ndarray
    worker: np.ndarray
    warm: np.ndarray  # warm-up added to the task's kernel


def compiled() -> bool:
    """True when the compiled engine plays (built, and not turned off)."""
    return _engine is not None and not os.environ.get("CUZK_PURE_PYTHON")


def play(shape: Shape, t: Tasks) -> Played:
    """Play ``t`` through a pipeline of ``shape`` (see the module docstring)."""
    if min(shape.pw, shape.gw, shape.gpus) < 1:
        raise ValueError("pw, gw and gpus must be at least 1")
    if shape.queue_cap is not None and shape.queue_cap < 1:
        raise ValueError("the queue must hold at least one task")
    return play_compiled(shape, t) if compiled() else play_python(shape, t)


TASK_ROWS = ("job", "synth", "qdelay", "pickup", "dispatch", "prelock", "kernel", "hold", "post")


def play_compiled(shape: Shape, t: Tasks) -> Played:
    """``play`` by the C twin.  Its inputs are read as they are held (int32 or int64, a
    column of one value included: no int64 copy of each), and its times come back int32
    where they all lie within 2^30 ms (``sim.model``'s narrow rule), int64 otherwise."""
    n = len(t.job)
    tasks = [_engine_input(getattr(t, k)) for k in TASK_ROWS]
    args = (tasks, _engine_input(t.arrival), _engine_input(t.assemble))
    cap = -1 if shape.queue_cap is None else shape.queue_cap
    rest = (shape.pw, shape.gw, shape.gpus, cap, int(shape.warmup_ms))
    for dtype in (np.int32, np.int64):
        # A column each, not one block of all (a block over the heap's big-block threshold
        # is mapped apart, and freed memory of the heap goes unused beside it).
        out = [np.full(n, -1, dtype=dtype) for _ in range(len(fields(Played)) - 1)]
        out.append(np.zeros(n, dtype=dtype))  # warm
        if _engine.play(*args, out, *rest):
            return Played(*out)
        del out  # a time past 2^30 ms: played again in int64 (which never stops short)
    raise AssertionError("an int64 play stopped short")


#: Times are held in int32 where they all lie within this of 0 (12.4 days): the sum or
#: difference of two still fits (``_engine.c``'s NARROW_LIMIT is the same rule).
NARROW_MS = 2**30


def narrowed(values: np.ndarray) -> np.ndarray:
    """Whole ms ``values`` as int32 where they all lie within ``NARROW_MS`` of 0, as int64
    otherwise (an empty column too)."""
    fits = len(values) and values.min() > -NARROW_MS and values.max() < NARROW_MS
    return values.astype(np.int32 if fits else np.int64, copy=False)


def _engine_input(values: np.ndarray) -> np.ndarray:
    """``values`` as the C engine reads them: int32 or int64 as they are, others as int64."""
    values = np.asarray(values)
    return values if values.dtype in (np.int32, np.int64) else values.astype(np.int64)


def ints(values: np.ndarray) -> array:
    """``values`` as C int64 (``array('q')``)."""
    out = array("q")
    out.frombytes(memoryview(np.ascontiguousarray(values, dtype=np.int64)).cast("B"))
    return out


class Workers:
    """The GPU workers free to take a call (module docstring): per GPU a heap of its free
    workers by (free since, worker), and how many of its workers are in a call."""

    def __init__(self, gw: int, gpus: int, since: float = 0) -> None:
        self.gw = gw
        self.idle = [[(since, g * gw + k) for k in range(gw)] for g in range(gpus)]
        self.busy = [0] * gpus
        self.free = gw * gpus

    def take(self) -> int:
        """The worker that takes the next call: of the GPU with the fewest workers in a
        call, the one free longest, then the lowest."""
        best, key = -1, None
        for g, heap in enumerate(self.idle):
            if heap and (key is None or (self.busy[g], heap[0]) < key):
                best, key = g, (self.busy[g], heap[0])
        self.busy[best] += 1
        self.free -= 1
        return heapq.heappop(self.idle[best])[1]

    def give_back(self, w: int, now: float) -> None:
        """Worker ``w`` is free from ``now``."""
        g = w // self.gw
        heapq.heappush(self.idle[g], (now, w))
        self.busy[g] -= 1
        self.free += 1


def play_python(shape: Shape, t: Tasks) -> Played:
    """``play`` in Python: the definition."""
    n = len(t.job)
    # C arrays, not lists: an int over 256 in a list is an object of its own (~36 bytes).
    job, arrival, synth, qdelay = (ints(c) for c in (t.job, t.arrival, t.synth, t.qdelay))
    pickup, dispatch, prelock = ints(t.pickup), ints(t.dispatch), ints(t.prelock)
    kernel, hold, post0, assemble = (ints(c) for c in (t.kernel, t.hold, t.post, t.assemble))
    left = np.bincount(t.job, minlength=len(arrival)).tolist()  # calls not yet dispatched
    gw, cap, warmup = shape.gw, shape.queue_cap, int(shape.warmup_ms)
    ss, se, qd, pk, st, aq, ke, rl, en = (array("q", [-1]) * n for _ in range(9))
    worker_of, warm = array("q", [-1]) * n, array("q", [0]) * n
    workers = Workers(gw, shape.gpus)
    mutex_busy = [False] * shape.gpus
    warmed = [False] * shape.gpus
    waiters: list[deque[int]] = [deque() for _ in range(shape.gpus)]
    queue: list[int] = []  # task indices: the lowest is the oldest job's lowest partition
    blocked: deque[int] = deque()  # synthesized, waiting for room in the queue
    heap: list[tuple[int, int, int, int]] = []
    seq = 0
    pool, nxt, wake = shape.pw, 0, -1

    def push(when: int, kind: int, arg: int) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (when, seq, kind, arg))

    def try_synth(now: int) -> None:
        nonlocal pool, nxt, wake
        while pool and nxt < n:
            i = nxt
            a = arrival[job[i]]
            if a > now:
                if wake != a:
                    wake = a
                    push(a, WAKE, -1)
                return
            nxt += 1
            pool -= 1
            ss[i] = now
            se[i] = now + synth[i]
            push(now + synth[i], SYNTH_END, i)

    def enqueue(i: int, now: int) -> None:
        nonlocal pool
        qd[i] = now
        heapq.heappush(queue, i)
        pool += 1

    def try_dispatch(now: int) -> None:
        while queue and workers.free:
            w = workers.take()
            i = heapq.heappop(queue)
            j = job[i]
            left[j] -= 1
            worker_of[i] = w
            pk[i] = now + min(pickup[i], dispatch[i])
            st[i] = now + dispatch[i]
            push(now + dispatch[i] + prelock[i], LOCK, i)
            if blocked:
                enqueue(blocked.popleft(), now)
            if left[j] == 0:
                post0[i] += assemble[j]
        try_synth(now)

    def acquire(i: int, now: int, g: int) -> None:
        if not warmed[g]:
            warmed[g] = True  # the first kernel on a GPU pays for context set-up
            warm[i] = warmup
        mutex_busy[g] = True
        aq[i] = now
        ke[i] = now + kernel[i] + warm[i]
        rl[i] = ke[i] + hold[i]
        en[i] = ke[i] + post0[i]
        push(rl[i], RELEASE, g)
        push(en[i], END, i)

    try_synth(0)
    while heap:
        now, _, kind, i = heapq.heappop(heap)
        if kind == SYNTH_END:
            push(now + qdelay[i], QUEUED, i)
        elif kind == QUEUED:
            if cap is None or len(queue) < cap:
                enqueue(i, now)
                try_dispatch(now)
            else:
                blocked.append(i)
        elif kind == LOCK:
            g = worker_of[i] // gw
            if mutex_busy[g]:
                waiters[g].append(i)
            else:
                acquire(i, now, g)
        elif kind == RELEASE:
            mutex_busy[i] = False
            if waiters[i]:
                acquire(waiters[i].popleft(), now, i)
        elif kind == END:
            workers.give_back(worker_of[i], now)
            try_dispatch(now)
        else:
            try_synth(now)
    cols = (ss, se, qd, pk, st, aq, ke, rl, en, worker_of, warm)
    return Played(*(np.asarray(c, dtype=np.int64) for c in cols))
