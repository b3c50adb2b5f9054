"""The loaded engine: stages as work done at a rate that falls with the load, and a closed
loop of jobs (``viewer.sim.loaded``, ``viewer.sim.contention``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from viewer.sim.contention import NONE, Contention, parse
from viewer.sim.engine import Shape, Tasks, play_python
from viewer.sim.loaded import play_loaded
from viewer.sim.model import SimConfig, draw, run


def _tasks(n_jobs: int, per_job: int, rng: np.random.Generator, scale: int = 1000) -> Tasks:
    n = n_jobs * per_job

    def col(lo: int, hi: int, k: int = 1) -> np.ndarray:
        return rng.integers(lo, hi + 1, n).astype(np.int64) * k

    return Tasks(
        job=np.repeat(np.arange(n_jobs), per_job).astype(np.int64),
        arrival=np.sort(rng.integers(0, 61, n_jobs)).astype(np.int64) * scale,
        assemble=rng.integers(0, 41, n_jobs).astype(np.int64) * scale,
        synth=col(1, 80, scale),
        qdelay=col(0, 2),
        pickup=col(0, 3),
        dispatch=col(0, 5),
        prelock=col(0, 40, scale),
        kernel=col(1, 60, scale),
        hold=col(0, 2),
        post=col(2, 30, scale),
    )


def test_without_contention_it_plays_the_fixed_engine() -> None:
    """Durations of whole seconds leave few ties in one millisecond: the schedules are the
    same event for event on nearly every pipeline, and the same s/proof on all."""
    rng = np.random.default_rng(5)
    same = 0
    for k in range(300):
        tasks = _tasks(int(rng.integers(1, 7)), int(rng.integers(1, 6)), rng)
        shape = Shape(
            pw=int(rng.integers(1, 7)),
            gw=int(rng.integers(1, 4)),
            gpus=int(rng.integers(1, 4)),
            queue_cap=(None, 1, 2, 4)[k % 4],
            warmup_ms=(0, 7)[k % 2],
        )
        fixed = play_python(shape, tasks)
        loaded, extra = play_loaded(shape, tasks, NONE)
        same += all(np.array_equal(getattr(fixed, f), getattr(loaded, f)) for f in vars(fixed))
        reached = loaded.acquire >= 0
        assert (extra.lock[reached] <= loaded.acquire[reached]).all()  # prep, then the mutex
        assert fixed.end.max() == pytest.approx(loaded.end.max(), rel=0.02)
    assert same >= 295


def _one_stage(pw: int, contention: Contention) -> float:
    """Mean synthesis of ``pw`` partitions synthesized side by side (no GPU work overlaps:
    one job, kernels long after)."""
    cfg = SimConfig(sectors=1, partitions=pw, pw=pw, gw=1, jitter=0.0, contention=contention)
    s = run(cfg, draw(cfg))
    return float((s.synth_end - s.synth_start).mean())


def test_syntheses_side_by_side_slow_down_as_the_model_says() -> None:
    """n syntheses of work W at once each take W f(n): f = 1 + a (n - 1) below ``cores``,
    times n / cores past it."""
    m = Contention(synth=0.05, cores=8)
    alone = _one_stage(1, m)
    assert _one_stage(4, m) == pytest.approx(alone * (1 + 0.05 * 3), rel=0.002)
    assert _one_stage(16, m) == pytest.approx(alone * (1 + 0.05 * 7) * 2, rel=0.002)
    assert _one_stage(16, NONE) == pytest.approx(alone, rel=0.002)


def test_played_draws_are_the_durations_as_played() -> None:
    """Under load the schedule's draws are what the writer writes: they add up to the
    played times (a log of it reads back the durations the engine played)."""
    cfg = SimConfig(sectors=4, pw=10, contention=Contention(synth=0.05, cpu=0.1, cores=6))
    s = run(cfg, draw(cfg))
    d = s.draws
    assert np.array_equal(d.synth, s.synth_end - s.synth_start)
    assert np.array_equal(d.kernel, s.kernel_end - s.acquire - s.warm)
    assert np.array_equal(s.prelock, s.acquire - s.start - s.wait)
    post = s.end - s.kernel_end
    assert (d.hold + d.b_g2 + d.epilogue <= post + 1).all()
    assert (d.synth > draw(cfg).synth).all()  # every synthesis ran beside others


def test_a_closed_loop_keeps_at_most_j_jobs_in_flight() -> None:
    """cuzk-bench -c 9 -j 3: three jobs at the start, each later one as one completes."""
    cfg = SimConfig(sectors=9, pw=10, concurrency=3, interval_ms=5000.0)
    s = run(cfg, draw(cfg))
    arrival = s.draws.arrival
    done = np.full(9, -1)
    np.maximum.at(done, s.draws.job, s.end)
    assert (arrival[:3] == arrival[0]).all()
    assert np.array_equal(np.sort(arrival[3:]), np.sort(done)[:6])
    for t in np.unique(arrival):
        in_flight = ((arrival <= t) & (done > t)).sum()
        assert in_flight <= 3


def test_contention_specs_are_checked() -> None:
    assert parse("synth=0.05, cpu=0.02,cores=16") == Contention(synth=0.05, cpu=0.02, cores=16)
    assert parse("cpu=0.02,cores=16,waker=1") == Contention(cpu=0.02, cores=16, waker=1.0)
    for bad in ("synth=nan", "synth=-1", "cores=0", "cores=inf", "foo=1", "synth", "cpu=x",
                "synth=0.1,synth=0.2", "waker=2", "waker=-0.5"):  # fmt: skip
        with pytest.raises(ValueError, match="contention"):
            parse(bad)
    with pytest.raises(ValueError, match="concurrency"):
        replace(SimConfig(), concurrency=0)


def test_stretched_stages_keep_whole_nonnegative_parts() -> None:
    """``scaled`` rounds each part within what the parts before it left: a kernel of parts
    0 + 1 + 1 ms stretched 1.5x is 3 ms of parts none negative (it once gave ntt -1)."""
    from viewer.sim.model import scaled

    rng = np.random.default_rng(2)
    d = draw(SimConfig(sectors=3, partitions=40))
    for name in ("ntt", "barrier", "batch", "tail", "prep", "prelock_extra", "b_g2", "epilogue"):
        setattr(d, name, rng.integers(0, 4, len(d.job)).astype(np.int64))
    for k in (0.3, 0.5, 1.5, 2.5, rng.uniform(0.01, 3, len(d.job))):
        s = scaled(d, kernel=k, prep=k, post=k, synth=k)
        for name in (
            "ntt",
            "barrier",
            "batch",
            "tail",
            "prep",
            "prelock_extra",
            "b_g2",
            "epilogue",
        ):
            assert (getattr(s, name) >= 0).all(), (name, k)
        assert np.array_equal(s.kernel, np.rint(d.kernel * k).astype(np.int64))


def test_past_the_cores_a_woken_gpu_worker_shares_one_cpu() -> None:
    """``waker``: past the cores a GPU worker's CPU work (class cpu) gets the share of one
    CPU among the threads on it, 1 / (1 + (L - 1) / cores), not cores / L; below the cores,
    and for synthesis and the kernel, nothing changes."""
    even = Contention(cpu=0.0, cores=16.0)
    woken = replace(even, waker=1.0)
    half = replace(even, waker=0.5)
    assert woken.factor("cpu", 34) == pytest.approx(1 + 33 / 16)  # 3.06, evenly 2.125
    assert even.factor("cpu", 34) == pytest.approx(34 / 16)
    assert half.factor("cpu", 34) == pytest.approx((34 / 16 + 1 + 33 / 16) / 2)
    assert woken.factor("cpu", 16) == even.factor("cpu", 16) == 1.0
    assert woken.factor("synth", 34) == even.factor("synth", 34)
    assert "sharing a CPU" in woken.describe() and "(50 % of calls)" in half.describe()


def test_the_loaded_engine_reads_columns_as_they_are_held() -> None:
    """Inputs are read in place (no float64 copy of each): int32 columns, a column of one
    value (stride 0), a job column given as floats, all play as the int64 columns do; the
    times come back int32 where they fit."""
    rng = np.random.default_rng(11)
    load = Contention(synth=0.05, cpu=0.02, cores=4.0)
    for k in range(40):
        tasks = _tasks(int(rng.integers(1, 7)), int(rng.integers(1, 6)), rng)
        shape = Shape(pw=int(rng.integers(1, 5)), gw=2, gpus=int(rng.integers(1, 3)))
        held = replace(
            tasks,
            job=tasks.job.astype(np.float64),
            synth=tasks.synth.astype(np.int32),
            hold=np.broadcast_to(np.int32(1), tasks.hold.shape),
            post=tasks.post[::-1].copy()[::-1],
        )
        want, want_extra = play_loaded(shape, replace(tasks, hold=np.ones_like(tasks.hold)), load)
        got, got_extra = play_loaded(shape, held, load, concurrency=None if k % 2 else 2)
        if k % 2:
            for f in vars(want):
                assert np.array_equal(getattr(want, f), getattr(got, f)), f
                assert getattr(got, f).dtype == np.int32, f
            assert np.array_equal(want_extra.lock, got_extra.lock)
        else:  # a closed loop of 2 jobs in flight: every call still ends
            assert (got.end >= 0).all()


def test_a_warm_up_past_2_to_the_30_ms_is_held_in_int64() -> None:
    """The warm-up column keeps the narrow rule of its own (its times' dtype is not its)."""
    rng = np.random.default_rng(3)
    tasks = _tasks(2, 2, rng)
    for warmup, dtype in ((7, np.int32), (2**31 + 5, np.int64)):
        played, _ = play_loaded(Shape(2, 1, 1, warmup_ms=warmup), tasks, NONE, concurrency=2)
        assert played.warm.dtype == dtype and played.warm.max() == warmup
