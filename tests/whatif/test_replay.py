"""The replay gives back the measured run, and predicts what one changed knob does.

Predictions are checked against the project's own simulator: two runs from one seed,
every duration drawn up front, so that the knob is the only difference between them
(domain.md "Replay").  The prediction starts from the log of run A only.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from viewer.analysis import throughput
from viewer.io import open_log
from viewer.model import Session
from viewer.sim.model import SimConfig, simulate
from viewer.sim.writer import WriteOptions, write
from viewer.whatif import Knobs, plan, what_if
from viewer.whatif.replay import predicted_session, replay

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
PHASE8 = SAMPLES / "phase8_pw10_5sectors.log"


def sessions_with_throughput() -> list[tuple[str, int]]:
    out = []
    for path in sorted(SAMPLES.glob("*.log")):
        for s in open_log(path).sessions:
            if throughput(s).measured_s_per_proof is not None:
                out.append((path.name, s.index))
    return out


@pytest.mark.parametrize(("name", "index"), sessions_with_throughput())
def test_replay_unchanged_gives_back_the_measured_s_per_proof(name: str, index: int) -> None:
    session = open_log(SAMPLES / name).sessions[index]
    w = what_if(session)
    assert w.baseline.s_per_proof == pytest.approx(w.measured.s_per_proof, rel=0.03)
    assert w.scenario is w.baseline


def test_the_replay_of_a_simulated_run_is_that_run() -> None:
    """One engine: replaying a simulator log with its measured durations plays every call
    within a few ms of when the simulator did (only a worker's first dispatch latency is
    unknown to the replay: it takes the session's median)."""
    cfg = SimConfig(sectors=6, pw=12, gw=2, seed=3, warmup_ms=0.0)
    session = _read(simulate(cfg))
    pl = plan(session)
    again = predicted_session(pl, replay(pl))
    key = ["job_id", "partition"]
    a = _calls(session).sort_values(key).reset_index(drop=True)
    b = _calls(again).sort_values(key).reset_index(drop=True)
    for col in ("synth_start", "queued", "gpu_start", "kernel_start", "gpu_end"):
        off = np.abs(a[col].to_numpy() - b[col].to_numpy())
        assert off.max() <= 10, col
    assert a["worker"].tolist() == b["worker"].tolist()


def _calls(session: Session):
    p = session.partitions
    return p.assign(job_id=session.job_ids()).to_pandas()


def _read(schedule, tmp: Path | None = None, **options) -> Session:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "run.log"
        write(schedule, path, WriteOptions(**options))
        return open_log(path).sessions[0]


def _measured(cfg: SimConfig) -> float:
    """The simulated run's s/proof as the viewer measures it from its log."""
    tp = throughput(_read(simulate(cfg)))
    assert tp.measured_s_per_proof is not None
    return tp.measured_s_per_proof


def _means(cfg: SimConfig) -> dict[str, float]:
    """The stage means of a simulated run, as a what-if sets them (--X-ms)."""
    s = simulate(cfg)
    post = s.end - s.acquire - s.kernel
    return {
        "kernel_ms": float(s.kernel.mean()),
        "prep_ms": float(s.prelock.mean()),
        "post_ms": float(post.mean()),
    }


BASE = SimConfig(sectors=12, pw=10, gw=2, seed=11, warmup_ms=0.0)
GPU_BOUND = replace(BASE, pw=20)  # kernel floor 37.5 s, synthesis 18.5 s
SYNTH_BOUND = replace(BASE, synth_ms=45_000.0)  # synthesis floor 45 s, kernel 37.5 s
PAIRS = {
    "gw 1 -> 2": (replace(BASE, gw=1), Knobs(gw=2), BASE),
    "kernel x0.5": (GPU_BOUND, Knobs(kernel_scale=0.5), replace(GPU_BOUND, kernel_ms=1873.0)),
    "pw 10 -> 20": (SYNTH_BOUND, Knobs(pw=20), replace(SYNTH_BOUND, pw=20)),
    "1 -> 2 GPUs": (replace(BASE, pw=24), Knobs(gpus=2), replace(BASE, pw=24, gpus=2)),
    "synthesis x0.5 at pw 6": (
        replace(BASE, pw=6),
        Knobs(synth_scale=0.5),
        replace(BASE, pw=6, synth_ms=BASE.synth_ms / 2),
    ),
}


@pytest.mark.parametrize("name", PAIRS)
def test_one_knob_predicts_the_simulated_run_within_5_percent(name: str) -> None:
    a, knobs, b = PAIRS[name]
    w = what_if(_read(simulate(a)), knobs)
    truth = _measured(b)
    assert w.scenario.s_per_proof == pytest.approx(truth, rel=0.05), (name, truth)
    # The knob matters in each pair: a prediction of "no change" would fail.
    assert abs(truth / _measured(a) - 1) > 0.05


def test_phase9_timings_at_one_worker_per_gpu() -> None:
    """Phase 8 -> Phase 9 in the simulator: kernels 3746 -> 1824 ms, prep 1695 -> 1909 ms,
    b_g2 380 -> 484 ms, one GPU worker; the what-if sets the three stage means of run B."""
    a = replace(BASE, gw=1)
    b = replace(a, kernel_ms=1824.0, prep_ms=1909.0, b_g2_ms=484.0)
    w = what_if(_read(simulate(a)), Knobs(**_means(b)))
    assert w.scenario.s_per_proof == pytest.approx(_measured(b), rel=0.05)
    assert w.scenario.floors.bound == "worker"


def test_an_arrival_bound_run_gains_nothing_from_faster_kernels() -> None:
    a = replace(BASE, interval_ms=60_000.0, sectors=8)
    w = what_if(_read(simulate(a)), Knobs(kernel_scale=0.5))
    truth = _measured(replace(a, kernel_ms=a.kernel_ms / 2))
    assert w.scenario.s_per_proof == pytest.approx(truth, rel=0.05)
    assert w.scenario.s_per_proof == pytest.approx(60.0, rel=0.02)
    assert w.measured.floors.bound == "arrival" == w.scenario.floors.bound


def test_phase8_sample_with_phase9_timings_as_published() -> None:
    """Published: 38.0 s/proof at gw=2 (a 5-sector run weighs its cold start, so 34.5-40),
    42.9 s/proof at gw=1; the floors say why: synthesis binds at gw=2, the worker at gw=1."""
    session = open_log(PHASE8).sessions[0]
    phase9 = dict(kernel_ms=1824.0, prep_ms=1909.0, post_ms=504.0)
    two = what_if(session, Knobs(**phase9))
    assert 34.5 <= two.scenario.s_per_proof <= 40.0
    assert two.scenario.floors.bound == "synthesis"
    one = what_if(session, Knobs(gw=1, **phase9))
    assert one.scenario.s_per_proof == pytest.approx(42.9, rel=0.05)
    assert one.scenario.floors.bound == "worker"
    assert one.scenario.floors.worker_s == pytest.approx((1909 + 1824 + 504) * 10 / 1000, rel=0.01)


def test_knobs_set_the_mean_and_keep_the_spread() -> None:
    pl = plan(open_log(PHASE8).sessions[0])
    from viewer.whatif.replay import with_knobs

    _, d = with_knobs(pl, Knobs(kernel_ms=1824.0, prep_scale=2.0, post_ms=504.0, synth_scale=0.5))
    assert d.kernel.mean() == pytest.approx(1824, abs=1)
    ratio = d.kernel / pl.draws.kernel
    assert ratio.std() < 0.001  # every partition scaled by the same factor
    prelock = d.prep + d.prelock_extra
    assert prelock.mean() == pytest.approx(2 * (pl.draws.prep + pl.draws.prelock_extra).mean(), 1)
    assert (d.hold + d.b_g2 + d.epilogue).mean() == pytest.approx(504, abs=1)
    assert (d.ntt + d.barrier + d.batch + d.tail == d.kernel).all()
    assert (d.synth * 2 - pl.draws.synth <= 1).all()


def test_without_cuzk_timing_the_replay_is_an_upper_bound() -> None:
    a = replace(BASE, gw=1, sectors=6)
    session = _read(simulate(a), cuzk_timing=False)
    w = what_if(session)
    assert any("upper bound" in n for n in w.notes)
    assert w.baseline.s_per_proof >= w.measured.s_per_proof * 0.97
    assert w.measured.floors.upper_bound  # the log's kernel floor is read off its calls
    # The replay's kernels are what it played: its floors are a report's on its log.
    assert not w.baseline.floors.upper_bound


def test_without_cuzk_timing_two_workers_replay_their_run() -> None:
    """issue 27 item 6: without CUZK_TIMING every call was replayed as kernel under the
    mutex, so two workers' overlapping calls ran one after the other: the Phase 8 sample
    replayed at 73.6 s/proof against 37.4 measured.  A call's kernel is now the share of
    it its GPU's busy time leaves room for."""
    text = (SAMPLES / "phase8_pw10_5sectors.log").read_text()
    lines = [line for line in text.splitlines(keepends=True) if "CUZK_TIMING" not in line]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "no_timing.log"
        path.write_text("".join(lines))
        session = open_log(path).sessions[0]
    w = what_if(session, Knobs(gw=1))
    assert w.baseline.s_per_proof == pytest.approx(w.measured.s_per_proof, rel=0.05)
    assert any("overlapped" in n for n in w.notes)
    assert w.scenario.s_per_proof > w.baseline.s_per_proof  # one worker: slower


def test_a_full_queue_is_replayed_with_its_bound() -> None:
    """Backpressure: the log shows SYNTH_END -> queue delays; the replay bounds the queue at
    the most partitions seen queued at once and gives the run back."""
    a = SimConfig(sectors=6, pw=20, gw=1, synth_ms=20_000.0, seed=4, queue_cap=3, warmup_ms=0.0)
    session = _read(simulate(a))
    pl = plan(session)
    assert pl.cfg.queue_cap == 3 and pl.blocked > 0
    assert any("backpressure" in n for n in pl.notes)
    w = what_if(session)
    assert w.baseline.s_per_proof == pytest.approx(w.measured.s_per_proof, rel=0.03)


def test_monolithic_jobs_and_several_gpus_replay() -> None:
    for name in ("monolithic_mixed.log", "two_gpus.log"):
        session = open_log(SAMPLES / name).sessions[0]
        w = what_if(session, Knobs(kernel_scale=0.5))
        assert w.scenario.s_per_proof is not None
        assert w.scenario.s_per_proof <= w.baseline.s_per_proof


def test_a_crashed_session_says_why_it_has_no_s_per_proof() -> None:
    crashed = open_log(SAMPLES / "damaged.log").sessions[0]
    w = what_if(crashed, Knobs(gw=1))
    assert w.measured.s_per_proof is None and w.scenario.s_per_proof is None
    assert "1 job completed in the log, two are needed to measure s/proof" in w.notes


def test_an_empty_session_cannot_be_replayed() -> None:
    from viewer.model import build_session

    with pytest.raises(ValueError, match="nothing|no synthesis"):
        plan(build_session([]))


def test_what_the_reader_assumed_is_said_with_the_replay() -> None:
    """Without "GPU worker started" lines every worker is taken to be on GPU 0: a 2-GPU run
    replays on one GPU, and the notes say why (`--workers-per-gpu` fixes it)."""
    a = SimConfig(sectors=6, pw=16, gw=1, gpus=2, seed=2)
    w = what_if(_read(simulate(a), tracing=False))
    assert any(n.startswith("the log: ") and "--workers-per-gpu" in n for n in w.notes)


def test_what_ifs_of_one_plan_share_its_unchanged_replay() -> None:
    session = open_log(PHASE8).sessions[0]
    pl = plan(session)
    a, b = what_if(session, Knobs(gw=1), pl=pl), what_if(session, Knobs(gw=3), pl=pl)
    assert a.baseline is b.baseline and a.measured is b.measured
    assert a.scenario.s_per_proof != b.scenario.s_per_proof
    assert what_if(session).baseline is not a.baseline  # a new plan replays again


def test_no_planned_duration_is_negative() -> None:
    for path in sorted(SAMPLES.glob("*.log")):
        for session in open_log(path).sessions:
            d = plan(session).draws
            for name in ("synth", "qdelay", "pickup", "dispatch", "prep", "prelock_extra", "ntt",
                         "barrier", "batch", "tail", "b_g2", "epilogue", "hold"):  # fmt: skip
                assert (getattr(d, name) >= 0).all(), (path.name, name)
            assert (d.pickup <= d.dispatch).all()


#: Jobs arrive every 40 s but synthesis (50 s a partition, 10 slots) is slower: each job
#: waits for a slot, so the log hides when it arrived.
SPACED = SimConfig(
    sectors=12, pw=10, gw=1, gpus=3, seed=907, synth_ms=50_000.0, kernel_ms=1873.0,
    interval_ms=40_000.0, warmup_ms=0.0,
)  # fmt: skip


def test_hidden_arrivals_give_the_prediction_its_other_end() -> None:
    """A job that waited for a synthesis slot arrived with the job before it at the
    earliest (domain.md's rule, the prediction) and at its first SYNTH_START at the latest.
    With 30 slots, this run as simulated gives 40 s/proof (its arrivals bind); the
    prediction says 15.6, as if the jobs had been a backlog.  The what-if also replays the
    other end and says so: the truth lies between the two."""
    w = what_if(_read(simulate(SPACED)), Knobs(pw=30))
    truth = _measured(replace(SPACED, pw=30))
    assert truth == pytest.approx(40.0, rel=0.02)
    assert w.scenario.s_per_proof < 0.5 * truth  # the backlog end, as domain.md defines it
    assert w.late is not None and w.hidden_arrivals == 11
    low, high = sorted((w.scenario.s_per_proof, w.late.s_per_proof))
    assert low < truth < high
    assert w.notes[0].startswith("the log hides when 11 of the 12 jobs arrived")
    assert w.notes[0].endswith(f"only as it started, {w.late.s_per_proof:.1f} s/proof")
    unchanged = what_if(_read(simulate(SPACED)))
    assert unchanged.late is None and not any("hides" in n for n in unchanged.notes)


def test_without_hidden_arrivals_there_is_no_other_end() -> None:
    """Jobs that never waited for a slot show when they arrived: one prediction."""
    roomy = replace(SPACED, pw=30, synth_ms=20_000.0)
    w = what_if(_read(simulate(roomy)), Knobs(kernel_scale=0.5))
    assert w.hidden_arrivals == 0 and w.late is None
    assert not any("hides" in n for n in w.notes)


def test_jobs_that_started_in_one_millisecond_keep_the_engine_s_order() -> None:
    """A winning-post, three window-posts and two porep jobs all start synthesis at the
    engine's first millisecond; 20 slots, so the second porep job starts only 6 of its 10
    partitions.  The replay ordered such ties by job code (the order the log's threads
    happened to write them): the second porep job took all its slots before the posts,
    which then waited 33 s, and the unchanged replay gave 7.9 s/proof for a measured 14.0.
    A job whose partitions all started comes before one whose last started later."""
    mixed = SimConfig(
        sectors=8, pw=20, gw=2, gpus=1, seed=873, synth_ms=37_000.0, kernel_ms=1873.0,
        warmup_ms=2000.0, dispatch_ms=40.0, queue_cap=12,
        kinds=(("porep-c2", 0.5), ("window-post", 0.3), ("winning-post", 0.2)),
    )  # fmt: skip
    session = _read(simulate(mixed))
    w = what_if(session)
    assert w.measured.s_per_proof == pytest.approx(13.96, abs=0.01)
    assert w.baseline.s_per_proof == pytest.approx(w.measured.s_per_proof, rel=0.01)


def test_tied_jobs_are_ordered_as_the_gpu_queue_served_them() -> None:
    """Jobs whose synthesis all started in one millisecond: the log's line order says
    nothing of which is older, the GPU queue does (a free worker takes a call of the oldest
    job among those queued).  A snap update and window posts beside porep jobs: replayed by
    job code, the porep calls went first and the unchanged replay was 12 % fast (10.6 s/proof
    for a measured 12.1); taking the order from the queue, it is exact."""
    snaps = SimConfig(
        sectors=8, pw=30, gw=2, gpus=1, seed=482, synth_ms=20_000.0, kernel_ms=1873.0,
        dispatch_ms=40.0, kinds=(("porep-c2", 0.6), ("snap-update", 0.4)),
    )  # fmt: skip
    w = what_if(_read(simulate(snaps)))
    assert w.baseline.s_per_proof == pytest.approx(w.measured.s_per_proof, rel=0.005)


def test_tied_jobs_keep_the_simulator_s_order_when_its_lines_are_in_order(tmp_path) -> None:
    """60 winning-posts tied in one millisecond, written without line disorder: the queue's
    evidence must not invent an order.  Taking a call's GPU_PICKUP as the moment it left the
    queue did: it is written a ms or two later, and a call queued in between looked as if it
    had waited (6 of 60 jobs out of order, found by a review)."""
    from viewer.sim.writer import write_stream

    cfg = SimConfig(kinds=(("winning-post", 1.0),), sectors=60, pw=12, seed=1, jitter=0.0,
                    synth_ms=3000.0, kernel_ms=400.0)  # fmt: skip
    s = simulate(cfg)
    path = tmp_path / "run.log"
    with open(path, "wb") as out:
        write_stream(s, out, WriteOptions(disorder_ms=0))
    assert list(plan(open_log(path).sessions[0]).draws.job_ids) == list(s.draws.job_ids)


def test_the_queue_order_of_tied_jobs_from_their_calls() -> None:
    """``_by_queue`` on hand-made calls: job 9's call was taken while job 2's and job 5's
    waited, and job 5's while job 2's waited: 9, 5, 2 (whatever order they come in), both
    ways.  A call ready within a millisecond of another's take, or never seen waiting, is no
    evidence: the order stays, and the other way round is the reverse."""
    from viewer.model.frame import Frame
    from viewer.whatif.replay import _by_queue

    nan = np.nan
    p = Frame(
        {
            "job": np.array([2, 5, 9, 7]),
            "pickup": np.array([301.0, 201.0, 151.0, nan]),
            "gpu_start": np.array([302.0, 202.0, 152.0, nan]),
        }
    )

    def order(ready: list[float], members: list[int]) -> tuple[list[int], list[int]]:
        st = Frame({"ready": np.array(ready), "taken": np.array([300.0, 200.0, 150.0, nan])})
        got, other = _by_queue(p, st, np.array(members))
        return got.tolist(), other.tolist()

    for members in ([5, 9, 2], [2, 5, 9], [9, 2, 5]):
        assert order([100.0, 100.0, 100.0, nan], members) == ([9, 5, 2], [9, 5, 2])
    apart = [180.0, 120.0, 100.0, nan]  # 9 taken while 5 waited, then 5 while 2 did
    assert order(apart, [5, 2, 9]) == ([9, 5, 2], [9, 5, 2])
    alone = [299.5, 199.5, 149.0, nan]  # each ready just before its own take
    assert order(alone, [5, 2, 9]) == ([5, 2, 9], [9, 2, 5])
    close = [200.0, 150.0, 100.0, nan]  # ready in the ms of the other's take
    assert order(close, [5, 2, 9]) == ([5, 2, 9], [9, 2, 5])
    part = [299.5, 100.0, 149.0, nan]  # only: 9 was served while 5 waited
    assert order(part, [5, 2, 9]) == ([2, 9, 5], [9, 2, 5])  # 9 stays ahead of 5


def test_tied_jobs_the_log_does_not_order_give_another_end() -> None:
    """Two porep jobs and five posts all start synthesis in one millisecond, with slots for
    all: the queue shows only that one porep job came before the other.  With 14 slots the
    order decides who gets one: the log's order predicts 11.5 s/proof, the run simulated with
    14 slots gives 20.8, and the other way round (posts first) 21.0, said in a note."""
    posts = SimConfig(
        sectors=8, pw=30, gw=2, gpus=1, seed=661, synth_ms=50_000.0, kernel_ms=1873.0,
        warmup_ms=2000.0, queue_cap=4,
        kinds=(("porep-c2", 0.5), ("window-post", 0.3), ("winning-post", 0.2)),
    )  # fmt: skip
    w = what_if(_read(simulate(posts)), Knobs(pw=14))
    truth = _measured(replace(posts, pw=14))
    assert w.swapped is not None and w.tied_jobs >= 2
    low, high = w.span
    assert low * 0.99 <= truth <= high * 1.01
    assert w.notes[0].endswith(f"the other way round, {w.swapped.s_per_proof:.1f} s/proof")
