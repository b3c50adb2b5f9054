"""Two runs compared: every diff figure on hand-built runs whose figures are known by
construction, the alignment modes, and a simulated gw=1 vs gw=2 pair of the same workload."""

from __future__ import annotations

from dataclasses import replace

import pytest

from viewer.analysis.compare import (
    FIGURE_KEYS,
    Alignment,
    alignment_offset,
    compare,
    figure_values,
    headline,
    main_session,
)
from viewer.analysis.summary import summarize
from viewer.io import open_log
from viewer.model import Session, Timeline, build_session
from viewer.sim.model import simulate
from viewer.sim.samples import PW20
from viewer.sim.writer import WriteOptions, write

JOBS, PARTS = 3, 2


def run(
    gaps: tuple[float, float],
    kernel: tuple[float, float, float],
    call_ms: float,
    synth: float,
    wait: float,
    shift: float = 0.0,
) -> Session:
    """One worker runs 3 jobs x 2 partitions back to back, with ``gaps`` between the jobs.

    Each call lasts ``call_ms`` and holds a kernel of ntt + batch + tail ms; its partition was
    synthesized for ``synth`` ms, ended 600 ms before its GPU_START, and waited ``wait`` ms in
    the queue (never starved: every gap is under 600 ms).
    """
    rows, t = [], shift
    for j in range(JOBS):
        t += gaps[j - 1] if j else 0.0
        for p in range(PARTS):
            ready = t - 600
            rows.append(
                dict(
                    job_id=f"job{j}",
                    partition=p,
                    synth_start=ready - synth,
                    synth_end=ready,
                    queued=ready,
                    pickup=ready + wait,
                    gpu_start=t,
                    gpu_end=t + call_ms,
                    worker=0,
                    gpu=0,
                    pre_lock_cpu_ms=50.0,
                    mutex_wait_ms=0.0,
                    kernel_start=t + 50,
                    kernel_ms=sum(kernel),
                    ntt_msm_h_ms=kernel[0],
                    batch_add_ms=kernel[1],
                    tail_msm_ms=kernel[2],
                )
            )
            t += call_ms
    return build_session(rows, start_ms=shift - 600 - synth)


A = dict(gaps=(100.0, 300.0), kernel=(500.0, 200.0, 100.0), call_ms=1000.0, synth=5000.0, wait=40.0)
B = dict(gaps=(20.0, 40.0), kernel=(450.0, 170.0, 80.0), call_ms=900.0, synth=4000.0, wait=10.0)


def expected(gaps, kernel, call_ms, synth, wait) -> dict[str, float]:
    busy = JOBS * PARTS * call_ms
    done = [PARTS * call_ms * (j + 1) + sum(gaps[:j]) for j in range(JOBS)]
    measured = (done[-1] - done[0]) / (JOBS - 1) / 1000
    theoretical = sum(kernel) * PARTS / 1000
    starts = [
        PARTS * call_ms * j + sum(gaps[:j]) + p * call_ms for j in range(JOBS) for p in range(PARTS)
    ]
    # Syntheses run [start - 600 - synth, start - 600): the most at once, by brute force.
    pw = max(sum(1 for b in starts if b - 600 - synth <= a - 600 - synth < b - 600) for a in starts)
    first = [starts[j * PARTS] - 600 - synth for j in range(JOBS)]
    return {
        "measured_s_per_proof": measured,
        "theoretical_s_per_proof": theoretical,
        "worker_floor_s": call_ms * PARTS / 1000,  # prep + kernel + post = the call, 1 worker
        "synthesis_floor_s": synth * PARTS / pw / 1000,
        "arrival_floor_s": (first[-1] - first[0]) / (JOBS - 1) / 1000,
        "pw_seen": pw,
        "ratio": theoretical / measured,
        "efficiency": busy / (busy + sum(gaps)),
        "idle_ms": sum(gaps),
        "cold_start_ms": 600 + synth,
        "cross_idle_ms": sum(gaps),
        "cross_gap_mean_ms": sum(gaps) / len(gaps),
        "cross_gap_max_ms": max(gaps),
        "kernel_mean_ms": sum(kernel),
        "ntt_msm_h_ms": kernel[0],
        "batch_add_ms": kernel[1],
        "tail_msm_ms": kernel[2],
        "synth_mean_ms": synth,
        "queue_wait_mean_ms": wait,
        "jobs_completed": JOBS,
    }


@pytest.fixture
def pair() -> tuple[Session, Session]:
    return run(**A), run(**B)


def test_every_figure_of_each_run_is_the_constructed_one(pair) -> None:
    for session, params in zip(pair, (A, B), strict=True):
        got = figure_values(summarize(session))
        want = expected(**params)
        assert set(got) == set(FIGURE_KEYS) == set(want)
        for key in FIGURE_KEYS:
            assert got[key] == pytest.approx(want[key]), key


def test_every_diff_is_b_minus_a_and_relative_to_a(pair) -> None:
    c = compare(*pair)
    ea, eb = expected(**A), expected(**B)
    assert [r.figure.key for r in c.rows] == list(FIGURE_KEYS)
    for r in c.rows:
        key = r.figure.key
        assert r.a == pytest.approx(ea[key]) and r.b == pytest.approx(eb[key]), key
        assert r.delta == pytest.approx(eb[key] - ea[key]), key
        assert r.relative == pytest.approx((eb[key] - ea[key]) / ea[key]), key
    # measured 2.2 -> 1.83 s/proof
    assert c.row("measured_s_per_proof").relative == pytest.approx(-0.37 / 2.2)


def test_better_and_worse_follow_each_figures_direction(pair) -> None:
    c = compare(*pair)
    judged = {r.figure.key: r.judgement for r in c.rows}
    # B is faster, has shorter gaps and kernels, but a lower kernel floor ratio.
    assert judged["measured_s_per_proof"] == "better"
    assert judged["theoretical_s_per_proof"] == "better"
    assert judged["idle_ms"] == judged["cross_gap_max_ms"] == "better"
    assert judged["efficiency"] == "better"
    assert judged["ratio"] == ("better" if c.row("ratio").delta > 0 else "worse")
    assert judged["jobs_completed"] == "same"
    swapped = compare(pair[1], pair[0])
    assert swapped.row("measured_s_per_proof").judgement == "worse"
    assert swapped.row("efficiency").judgement == "worse"


def test_undefined_figures_are_none_and_relative_to_zero_is_none() -> None:
    no_gaps = run(**{**A, "gaps": (0.0, 0.0)})
    c = compare(no_gaps, run(**A))
    r = c.row("idle_ms")
    assert (r.a, r.b, r.delta, r.relative) == (0.0, 400.0, 400.0, None)
    assert r.judgement == "worse"
    assert c.row("cross_gap_mean_ms").a == 0.0
    one_job = build_session(
        [dict(job_id="x", partition=0, gpu_start=0.0, gpu_end=10.0, worker=0, gpu=0)]
    )
    solo = compare(one_job, run(**A))
    m = solo.row("measured_s_per_proof")
    assert m.a is None and m.delta is None and m.relative is None and m.judgement == ""
    assert solo.row("ntt_msm_h_ms").a is None  # no CUZK_TIMING: no breakdown


def test_alignment_offsets_of_each_mode() -> None:
    s = run(**A, shift=10_000.0)
    assert alignment_offset(s, Alignment()) == 10_000.0
    assert alignment_offset(s, Alignment("session")) == 10_000.0 - 600 - 5000
    # completions: 12000, 14100, 16400
    assert alignment_offset(s, Alignment.parse("completion:1")) == 12_000.0
    assert alignment_offset(s, Alignment.parse("completion:3")) == 16_400.0
    with pytest.raises(ValueError, match="completed 3 job"):
        alignment_offset(s, Alignment.parse("completion:4"))


@pytest.mark.parametrize("text", ["nonsense", "session:2", "completion:0", "completion:x"])
def test_bad_alignments_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Alignment.parse(text)


def test_an_aligned_range_maps_to_each_runs_own_offsets() -> None:
    a, b = run(**A, shift=10_000.0), run(**A)
    c = compare(a, b, (0.0, 2000.0))
    assert (c.offset_a, c.offset_b) == (10_000.0, 0.0)
    assert c.a.rng == (10_000.0, 12_000.0) and c.b.rng == (0.0, 2000.0)
    # The same run shifted in time: every figure in the aligned window is identical.
    for r in c.rows:
        assert r.a == pytest.approx(r.b), r.figure.key
    by_completion = compare(a, b, (-500.0, 500.0), Alignment.parse("completion:2"))
    assert by_completion.a.rng == (13_600.0, 14_600.0)
    assert by_completion.b.rng == (3_600.0, 4_600.0)
    by_start = compare(a, b, (0.0, 2000.0), Alignment("session"))
    assert by_start.a.rng == (4400.0, 6400.0) and by_start.b.rng == (-5600.0, -3600.0)


def test_headline_says_faster_or_slower() -> None:
    a, b = run(**A), run(**B)
    assert headline(compare(a, b), "A", "B") == "A vs B: 2.2 -> 1.8 s/proof, 16.8 % faster"
    assert headline(compare(b, a), "B", "A").endswith("20.2 % slower")
    assert headline(compare(a, a), "A", "A").endswith("no change")


def test_main_session_is_the_biggest_unless_chosen() -> None:
    small = build_session(
        [dict(job_id="x", partition=0, gpu_start=0.0, gpu_end=10.0, worker=0, gpu=0)]
    )
    big = run(**A)
    big.index = 1
    t = Timeline(source="t.log", sessions=[small, big])
    assert main_session(t) is big
    assert main_session(t, 0) is small
    with pytest.raises(ValueError, match=r"no session 6 in t.log \(sessions are numbered 1-2\)"):
        main_session(t, 5)


@pytest.fixture(scope="module")
def gw_pair(tmp_path_factory) -> tuple[Session, Session]:
    """The pw=20 sample workload with fewer sectors, gw=1 then gw=2, read back from logs."""
    out = []
    for gw in (1, 2):
        path = tmp_path_factory.mktemp("sim") / f"gw{gw}.log"
        write(simulate(replace(PW20, gw=gw, sectors=5)), path, WriteOptions(seed=20))
        out.append(main_session(open_log(path)))
    return out[0], out[1]


def test_simulated_gw1_vs_gw2_differs_only_where_the_second_worker_acts(gw_pair) -> None:
    c = compare(*gw_pair)
    # Same draws: the kernels and the syntheses are the same partitions, the same lengths.
    for key in ("kernel_mean_ms", "ntt_msm_h_ms", "batch_add_ms", "tail_msm_ms"):
        assert c.row(key).delta == pytest.approx(0.0, abs=1e-9), key
        assert c.row(key).judgement == "same"
    assert c.row("theoretical_s_per_proof").delta == pytest.approx(0.0, abs=1e-9)
    assert c.row("jobs_completed").a == c.row("jobs_completed").b == 5
    # The second worker hides CPU prep: B proves faster, the GPU waits less in the queue.
    assert c.row("measured_s_per_proof").judgement == "better"
    assert c.row("ratio").judgement == "better"
    assert c.row("queue_wait_mean_ms").judgement == "better"
