"""The engine's rules with stages that slow down under load, and a closed loop of jobs.

``viewer.sim.engine.play_python`` plays fixed durations.  Here a task's synthesis, CPU
prep, post-processing (and kernel, where the model says so) are amounts of work done at
the rate ``1 / f(L)`` of ``viewer.sim.contention`` while they run, ``L`` the busy CPU
threads at each moment: syntheses, and GPU workers in a call but not waiting for the
mutex (processor sharing).  One virtual clock per stage class advances at that class's
rate, and a running stage ends when its class's clock has advanced by its work.
Everything else (slots, the queue and its bound, workers, the mutex, dispatch, warm-up,
proof assembly) follows the fixed engine's rules.  With no contention it gives the fixed
engine's schedule (``tests/sim/test_loaded.py``; events in one millisecond may be taken
in another order).

``gate`` plays a budget-gated daemon's memory budget (``viewer.sim.budget``): SRS and PCE
hold ``baseline_gib`` from the start; the next task (in slot order) starts its synthesis
only when a slot is free and the budget has room for its full reservation; its a/b/c part
is released when its kernel mutex is, the rest at its GPU_END.  A task that finds no other
task holding budget starts whatever its size (upstream would wait for ever).

``concurrency`` plays a closed loop, as cuzk-bench's ``-j`` does: the first
``concurrency`` jobs arrive at the first arrival, and each later job when one completes
(its last call ends).  Times are float ms inside, whole ms out.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import deque
from dataclasses import dataclass

import numpy as np

from viewer.sim.budget import Gate
from viewer.sim.contention import Contention
from viewer.sim.engine import Played, Shape, Tasks, Workers, narrowed

QUEUED, PREP, RELEASE, KERNEL_END, WAKE, FREE = range(6)
SYNTH, CPU_PREP, CPU_POST, KERNEL = range(4)
#: Stage classes, and the class of each kind of running stage (prep and post share one).
CLASS_NAMES = ("synth", "cpu", "kernel")
CLASS_OF = (0, 1, 1, 2)


@dataclass(frozen=True)
class Extra:
    """What the loaded engine knows beyond ``Played``: when each call's prep ended (it
    reached the mutex) and when each job arrived (its own in a closed loop)."""

    lock: np.ndarray  # per task, ms
    arrival: np.ndarray  # per job, ms


def play_loaded(
    shape: Shape,
    t: Tasks,
    load: Contention,
    concurrency: int | None = None,
    gate: Gate | None = None,
) -> tuple[Played, Extra]:
    """``(Played, Extra)`` of ``t`` through ``shape`` under ``load`` (module docstring)."""
    n = len(t.job)
    jobs = len(t.arrival)
    # Every input is read where it is held (a memoryview: no copy, a column of one value
    # included), one value at a time as a Python number (an object per value, as
    # ``tolist`` makes, was ~20 a task at 10^6 events, left scattered over the
    # interpreter's small-object arenas after the play).
    job, arrival = _view(t.job, np.int64), _view(t.arrival)
    if concurrency is not None:  # (the loop's arrivals are its own, set as it plays)
        first = float(np.min(t.arrival)) if jobs else 0.0
        arrival = array("d", [first if j < concurrency else math.inf for j in range(jobs)])
    released = min(concurrency, jobs) if concurrency is not None else jobs
    synth, qdelay = _view(t.synth), _view(t.qdelay)
    pickup, dispatch, prelock = _view(t.pickup), _view(t.dispatch), _view(t.prelock)
    kernel, hold, post0 = _view(t.kernel), _view(t.hold), _view(t.post)
    assemble = _view(t.assemble)
    assembled: dict[int, float] = {}  # a job's last dispatched call: its proof assembly
    left = np.bincount(np.asarray(job), minlength=jobs).tolist()  # calls not yet dispatched
    unfinished = list(left)  # calls not yet ended
    gw, cap, warmup = shape.gw, shape.queue_cap, float(shape.warmup_ms)
    nan = math.nan
    ss, se, qd, pk, st, lk, aq, ke, rl, en = (array("d", [nan]) * n for _ in range(10))
    worker_of = array("i", [-1]) * n
    warm: dict[int, int] = {}  # the task each GPU's warm-up went to (one a GPU)
    workers = Workers(gw, shape.gpus, 0.0)
    mutex_busy = [False] * shape.gpus
    warmed = [False] * shape.gpus
    waiters: list[deque[int]] = [deque() for _ in range(shape.gpus)]
    queue: list[int] = []
    blocked: deque[int] = deque()
    heap: list[tuple[float, int, int, int]] = []
    kernel_loaded = load.kernel > 0
    # Per class: virtual clock, heap of (finish on that clock, seq, stage, task), running.
    clock = [0.0, 0.0, 0.0]
    running: list[list[tuple[float, int, int, int]]] = [[], [], []]
    busy = [0]  # busy CPU threads: syntheses + GPU workers in prep, kernel or post
    seq = [0]
    pool, nxt, wake = [shape.pw], [0], [-1.0]
    # The budget: GiB in use (SRS and PCE from the start), tasks holding some, each task's.
    used = [gate.baseline_gib if gate else 0.0]
    holders = [0]
    full = gate.full_gib.tolist() if gate else []
    abc = gate.abc_gib.tolist() if gate else []
    held = array("d", [0.0]) * (n if gate else 0)
    acquired: dict[int, int] = {}  # a call in its kernel: when it took the mutex (seq)

    def push(when: float, kind: int, arg: int) -> None:
        seq[0] += 1
        heapq.heappush(heap, (when, seq[0], kind, arg))

    def begin(stage: int, i: int, work: float, key: int = 0) -> None:
        c = CLASS_OF[stage]
        if not key:
            seq[0] += 1
            key = seq[0]
        heapq.heappush(running[c], (clock[c] + work, key, stage, i))
        busy[0] += 1

    def try_synth(now: float) -> None:
        while pool[0] and nxt[0] < n:
            i = nxt[0]
            a = arrival[job[i]]
            if a > now:
                if a != math.inf and wake[0] != a:
                    wake[0] = a
                    push(a, WAKE, -1)
                return
            if gate:
                if holders[0] and used[0] + full[i] > gate.total_gib + 1e-9:
                    return  # a release (a kernel's, a GPU_END) tries again
                used[0] += full[i]
                held[i] = full[i]
                holders[0] += 1
            nxt[0] += 1
            pool[0] -= 1
            ss[i] = now
            begin(SYNTH, i, synth[i])

    def enqueue(i: int, now: float) -> None:
        qd[i] = now
        heapq.heappush(queue, i)
        pool[0] += 1

    def try_dispatch(now: float) -> None:
        while queue and workers.free:
            w = workers.take()  # of the least busy GPU, free longest, then the lowest
            i = heapq.heappop(queue)
            j = job[i]
            left[j] -= 1
            worker_of[i] = w
            pk[i] = now + min(pickup[i], dispatch[i])
            st[i] = now + dispatch[i]
            push(now + dispatch[i], PREP, i)
            if blocked:
                enqueue(blocked.popleft(), now)
            if left[j] == 0:
                assembled[i] = assemble[j]
        try_synth(now)

    def acquire(i: int, now: float, g: int) -> None:
        if not warmed[g]:
            warmed[g] = True
            warm[i] = int(warmup)
        mutex_busy[g] = True
        aq[i] = now
        seq[0] += 1
        acquired[i] = seq[0]
        if kernel_loaded:
            begin(KERNEL, i, kernel[i] + warm.get(i, 0))
        else:
            busy[0] += 1
            push(now + kernel[i] + warm.get(i, 0), KERNEL_END, i)

    def kernel_done(i: int, now: float) -> None:
        ke[i] = now
        rl[i] = now + hold[i]
        push(rl[i], RELEASE, worker_of[i] // gw)
        if gate:
            push(rl[i], FREE, i)  # gpu_prove_start returns: its a/b/c are freed
        begin(CPU_POST, i, post0[i] + assembled.pop(i, 0), acquired.pop(i))

    def ended(i: int, now: float) -> None:
        nonlocal released
        en[i] = now
        workers.give_back(worker_of[i], now)
        if gate:
            used[0] -= held[i]
            held[i] = 0.0
            holders[0] -= 1
        j = job[i]
        unfinished[j] -= 1
        if unfinished[j] == 0 and released < jobs and concurrency is not None:
            arrival[released] = now  # the closed loop submits the next job
            released += 1
        try_dispatch(now)

    # The load is a whole number of threads: each class's rate at every load, once.
    most = shape.pw + gw * shape.gpus + 1
    table = [(1.0 / load.factor(c, np.arange(most + 1))).tolist() for c in CLASS_NAMES]
    classes = range(3)
    rates = [1.0, 1.0, 1.0]
    rated = -1  # the load the rates are for

    now = 0.0
    try_synth(0.0)
    while True:
        b = busy[0] if busy[0] < most else most
        if b != rated:
            rated = b
            rates = [table[0][b], table[1][b], table[2][b]]
        when = heap[0][0] if heap else math.inf
        which = -1
        for c in classes:
            r = running[c]
            if r:
                t_c = now + (r[0][0] - clock[c]) / rates[c]
                if t_c < when:
                    when, which = t_c, c
        if when == math.inf:
            break
        dt = when - now
        clock[0] += dt * rates[0]
        clock[1] += dt * rates[1]
        clock[2] += dt * rates[2]
        now = when
        if which < 0:
            _, _, kind, i = heapq.heappop(heap)
            if kind == QUEUED:
                if cap is None or len(queue) < cap:
                    enqueue(i, now)
                    try_dispatch(now)
                else:
                    blocked.append(i)
            elif kind == PREP:
                begin(CPU_PREP, i, prelock[i])
            elif kind == RELEASE:
                mutex_busy[i] = False
                if waiters[i]:
                    acquire(waiters[i].popleft(), now, i)
            elif kind == KERNEL_END:
                busy[0] -= 1
                kernel_done(i, now)
            elif kind == FREE:
                part = min(abc[i], held[i])
                used[0] -= part
                held[i] -= part
                try_synth(now)
            else:
                try_synth(now)
        else:
            _, _, stage, i = heapq.heappop(running[which])
            busy[0] -= 1
            if stage == SYNTH:
                se[i] = now
                push(now + qdelay[i], QUEUED, i)
            elif stage == CPU_PREP:
                lk[i] = now
                g = worker_of[i] // gw
                if mutex_busy[g]:
                    waiters[g].append(i)
                else:
                    acquire(i, now, g)
            elif stage == KERNEL:
                kernel_done(i, now)
            else:
                ended(i, now)

    # Each played column is converted as it is made and emptied in place (the engine's
    # functions hold them).  1.5 M calls: ~290 MB at the peak of the play, where inputs,
    # played doubles and int64 outputs were ~455.
    del left[:], unfinished[:], held[:]
    times = []
    for col in (ss, se, qd, pk, st, aq, ke, rl, en):
        times.append(_ms(col))
        del col[:]
    warmed_calls = np.zeros(n, dtype=np.int64)
    warmed_calls[list(warm)] = list(warm.values())
    warmed_calls = narrowed(warmed_calls)  # (the narrow rule of its own, not its times')
    worker = np.frombuffer(worker_of, dtype=np.int32).copy() if n else np.zeros(0, np.int32)
    played = Played(*times, worker=worker, warm=warmed_calls)
    return played, Extra(lock=_ms(lk), arrival=_ms(arrival))


def _ms(values: array | memoryview) -> np.ndarray:
    """Ms (NaN: never happened) as whole ms (-1: never happened): int32 where they lie
    within 2^30 ms (``sim.model``'s narrow rule), int64 otherwise."""
    a = np.asarray(values, dtype=np.float64)
    return narrowed(np.where(np.isfinite(a), np.rint(a), -1))


def _view(values: np.ndarray, other: type = np.float64) -> memoryview:
    """``values`` read in place, a value at a time: int32, int64 (or float64, where
    ``other`` is float64) as held; other types as ``other``."""
    values = np.asarray(values)
    kept = (np.int32, np.int64) if other is np.int64 else (np.int32, np.int64, np.float64)
    if values.dtype not in kept:
        values = values.astype(other)
    return memoryview(values)
