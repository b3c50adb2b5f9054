"""The discrete-event model: deterministic, causal, and the kernel mutex holds."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.sim.model import Schedule, SimConfig, simulate
from viewer.sim.writer import WriteOptions, render

MIXED = (("porep-c2", 2.0), ("snap-update", 1.0), ("window-post", 1.0), ("winning-post", 1.0))


def assert_consistent(s: Schedule) -> None:
    """Every call complete, in causal order, and kernel regions serialized per GPU."""
    d = s.draws
    assert (s.end >= 0).all(), "every call finishes"
    assert (s.synth_start < s.synth_end).all()
    assert (s.synth_end <= s.queued).all()
    assert (s.queued < s.pickup).all()
    assert (s.pickup <= s.start).all()
    assert (s.start + s.prelock <= s.acquire).all()
    assert (s.wait >= 0).all()
    assert (s.acquire + s.kernel < s.release).all()
    assert (s.release < s.end).all()
    assert (d.synth == s.synth_end - s.synth_start).all()
    for g in range(s.config.gpus):
        on = np.flatnonzero(s.gpu == g)
        on = on[np.argsort(s.acquire[on])]
        assert (s.acquire[on][1:] >= s.release[on][:-1]).all(), "kernel regions overlap"
    for w in np.unique(s.worker):
        mine = np.flatnonzero(s.worker == w)
        mine = mine[np.argsort(s.start[mine])]
        assert (s.start[mine][1:] > s.end[mine][:-1]).all(), "a worker runs one call at a time"
    # A synthesis slot is held from SYNTH_START until its partition is queued.
    busy_pw = [((s.synth_start <= t) & (s.queued > t)).sum() for t in s.synth_start]
    assert max(busy_pw) <= s.config.pw
    if s.config.queue_cap is not None:
        taken = s.pickup - np.minimum(s.draws.pickup, s.draws.dispatch)
        waiting = [((s.queued <= t) & (taken > t)).sum() for t in s.queued]
        assert max(waiting) <= s.config.queue_cap


def test_same_seed_same_log_other_seed_other_log() -> None:
    cfg = SimConfig(sectors=3, kinds=MIXED, seed=3)
    a = render(simulate(cfg), WriteOptions(noise=0.3))
    assert a == render(simulate(cfg), WriteOptions(noise=0.3))
    assert a != render(simulate(SimConfig(sectors=3, kinds=MIXED, seed=4)), WriteOptions(noise=0.3))


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    pw=st.integers(1, 24),
    gw=st.integers(1, 3),
    gpus=st.integers(1, 3),
    sectors=st.integers(1, 6),
    mixed=st.booleans(),
    cap=st.one_of(st.none(), st.integers(1, 8)),
)
def test_schedule_is_consistent(
    seed: int, pw: int, gw: int, gpus: int, sectors: int, mixed: bool, cap: int | None
) -> None:
    cfg = SimConfig(
        sectors=sectors,
        pw=pw,
        gw=gw,
        gpus=gpus,
        seed=seed,
        kinds=MIXED if mixed else (("porep-c2", 1.0),),
        warmup_ms=1000.0,
        interval_ms=5000.0 * mixed,
        queue_cap=cap,
    )
    assert_consistent(simulate(cfg))


def test_two_workers_keep_the_gpu_busy_one_does_not() -> None:
    for gw, busy in ((2, True), (1, False)):
        s = simulate(SimConfig(sectors=3, gw=gw, pw=20, dispatch_ms=40.0))
        on = np.argsort(s.start)
        holes = s.start[on][1:] - np.maximum.accumulate(s.end[on])[:-1]
        assert (holes.max() <= 0) == busy


def test_jobs_complete_in_order() -> None:
    s = simulate(SimConfig(sectors=6, pw=20, seed=2))
    done = [s.end[s.draws.job == j].max() for j in range(6)]
    assert done == sorted(done)


def test_a_full_queue_holds_the_finished_partition_in_its_slot() -> None:
    """Backpressure (domain.md "Replay"): with a small queue and a slow GPU, finished
    partitions wait in their synthesis slots (a SYNTH_END -> queue delay), and the
    slots they hold start nothing new."""
    free = simulate(SimConfig(sectors=3, pw=20, gw=1, synth_ms=8000.0, seed=4))
    held = simulate(SimConfig(sectors=3, pw=20, gw=1, synth_ms=8000.0, seed=4, queue_cap=3))
    assert (free.queued - free.synth_end).max() <= 1
    assert (held.queued - held.synth_end).max() > 10_000
    assert held.synth_start.max() > free.synth_start.max()
    assert_consistent(held)


def test_a_free_worker_takes_the_oldest_jobs_lowest_partition() -> None:
    """Upstream's GPU queue is keyed on (job, partition), whatever order they were queued in:
    a task is never taken while a lower one (tasks are in job, partition order) waits."""
    s = simulate(SimConfig(sectors=4, pw=20, gw=1, seed=9, synth_ms=20000.0))
    taken = s.pickup - np.minimum(s.draws.pickup, s.draws.dispatch)
    out_of_order = (s.queued > s.synth_end + 1).sum()
    for k in range(len(taken)):
        waiting = np.flatnonzero((s.queued <= taken[k]) & (taken > taken[k]))
        assert (waiting > k).all(), f"task {k} taken while {waiting[waiting < k]} waited"
    # The run does queue partitions out of order, so the test can fail.
    assert out_of_order == 0 and (np.diff(s.queued[np.argsort(taken)]) < 0).any()


def test_a_schedule_holds_its_times_in_four_bytes_where_pairs_of_them_fit() -> None:
    """Times within 2^30 ms (12.4 days) are int32, 44 bytes a call where 88 were; a run
    played later than that keeps int64; both are the same schedule, shifted."""
    from dataclasses import replace as swap

    from viewer.sim.engine import Played

    cfg = SimConfig(sectors=6, pw=4, seed=3)
    near, far = simulate(cfg), simulate(swap(cfg, start_ms=2**30))
    names = [f.name for f in fields(Played)]
    assert {getattr(near, n).dtype for n in names} == {np.dtype(np.int32)}
    assert np.dtype(np.int64) in {getattr(far, n).dtype for n in names}
    shift = far.synth_start[0] - near.synth_start[0]
    assert shift == 2**30 - 40
    for n in ("synth_start", "start", "end"):
        assert np.array_equal(getattr(far, n), getattr(near, n).astype(np.int64) + shift)
