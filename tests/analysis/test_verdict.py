from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.builders import call, pipeline, session
from viewer.analysis import summarize, transitions, verdict


def test_gpu_bound_pipeline_reads_like_the_reference() -> None:
    v = verdict(pipeline([35_000 + 10 * j for j in range(5)]))
    assert v.kind == "gpu-bound"
    assert v.sentence.startswith(
        "GPU-bound: measured 37.5 s/proof equals the 37.5 s of serial kernel time (ratio 1.00)"
    )
    assert "more synthesis concurrency cannot" in v.sentence
    assert "GPU efficiency 100.0 % (merged intervals)" in v.evidence
    assert "cross-sector GPU idle 0 ms in 0 gaps" in v.evidence


def test_every_transition_starved_by_jobs_60_s_apart_is_arrival_bound() -> None:
    """Each job began synthesis 60 s after the one before, with no slot freed just before:
    it arrived then (domain.md's arrival inference).  Every transition starved, but the
    arrival floor (60 s) binds: the run was not saturated, and nothing in the pipeline
    would help; it is not a pipeline that never warmed up (synthesis-bound)."""
    s = pipeline([35_000 + 60_000 * j for j in range(5)])
    sm = summarize(s)
    assert sm.transitions["starved"].all() and not sm.transitions["cold_start"].any()
    assert sm.floors.bound == "arrival" and sm.floors.arrival_s == pytest.approx(60)
    assert sm.verdict.kind == "arrival-bound"
    assert "never warmed up" not in sm.verdict.sentence
    assert sm.gpus[0].cold_start_ms == 35_000  # only the wait for the first synthesis


def test_cold_start_then_warm_is_gpu_bound() -> None:
    # Job 1 began synthesis (75 000 - 35 000) before the first GPU_END (~40 800): cold.
    sm = summarize(pipeline([35_000, 75_000, 75_010, 75_020, 75_030]))
    assert sm.transitions["cold_start"].tolist() == [True, False, False, False]
    assert sm.verdict.kind == "gpu-bound"
    assert any("incl. starved sector 0->1" in e for e in sm.verdict.evidence)


def test_one_worker_with_phase9_kernels_is_worker_bound() -> None:
    # Phase 9-like: short kernels, long CPU prep and epilogue, one worker per GPU: the
    # GPU worker floor (1.9 + 1.824 + 0.5 s per call x 10) binds, not the kernels.
    s = pipeline([35_000 + 10 * j for j in range(5)], workers=1, kernel=1824, prep=1900, post=500)
    sm = summarize(s)
    assert sm.floors.bound == "worker" and sm.floors.worker_s == pytest.approx(42.24)
    v = sm.verdict
    assert v.kind == "worker-bound"
    assert v.sentence.startswith("GPU-worker-bound: the GPU worker floor, 42.2 s/proof")
    assert "CUDA kernels fill only 43 %" in v.sentence
    assert "Next is the kernel floor, 18.2 s/proof (56.8 % behind)" in v.sentence


def test_cpu_work_inside_calls_without_prep_figures() -> None:
    # The calls' CPU share is unknown (no pre_lock_cpu_ms): no worker floor to name, and
    # the GPU is never idle, so the time goes inside the calls.
    ready = [35_000 + 10 * j for j in range(5)]
    s = pipeline(ready, workers=1, kernel=1824, prep=1900, post=500, prep_figures=False)
    v = verdict(s)
    assert v.kind == "cpu-prep"
    assert "CUDA kernels fill only 43 %" in v.sentence


def test_dispatch_gaps() -> None:
    # Work is queued long before, yet the worker leaves 1 s holes between calls.
    rows = [
        call(
            f"j{i}",
            0,
            i * 2000,
            i * 2000 + 1000,
            0,
            queued=0,
            kernel_ms=1000,
            kernel_start=i * 2000,
        )
        for i in range(4)
    ]
    v = verdict(session(*rows))
    assert v.kind == "dispatch"
    assert "idle 3.0 s" in v.sentence


def test_starved_gaps_with_a_warm_transition_is_synthesis_bound() -> None:
    # Two of four transitions starved (not most: the pipeline does warm up), and all the
    # idle time is spent waiting for synthesis.
    rows = [call("j0", 0, 0, 1000, 0, queued=0, kernel_ms=1000, kernel_start=0)]
    rows += [
        call(f"j{i}", 0, i * 2000, i * 2000 + 1000, 0, queued=i * 2000 - 10, kernel_ms=1000)
        for i in (1, 2)
    ]
    rows += [
        call("j3", 0, 5000, 6000, 0, queued=0, kernel_ms=1000),
        call("j4", 0, 6000, 7000, 0, queued=0, kernel_ms=1000),
    ]
    sm = summarize(session(*rows))
    assert sm.transitions["starved"].tolist() == [True, True, False, False]
    assert sm.verdict.kind == "synthesis-bound"
    assert "waiting for synthesized partitions" in sm.verdict.sentence


def test_most_transitions_starved_never_warms_up() -> None:
    rows = [call("j0", 0, 0, 1000, 0, queued=0, kernel_ms=1000, kernel_start=0)]
    rows += [
        call(f"j{i}", 0, i * 2000, i * 2000 + 1000, 0, queued=i * 2000 - 10, kernel_ms=1000)
        for i in (1, 2, 3)
    ]
    rows.append(call("j4", 0, 7000, 8000, 0, queued=0, kernel_ms=1000))
    v = verdict(session(*rows))
    assert v.kind == "synthesis-bound"
    assert "never warmed up" in v.sentence
    assert "3 of 4 transitions starved: the pipeline never warmed up" in v.evidence


def test_gpu_ms_source_says_it_cannot_rule_out_cpu_work() -> None:
    v = verdict(pipeline([35_000 + 10 * j for j in range(5)], timing=False))
    assert v.kind == "gpu-bound"
    assert "without CUZK_TIMING lines" in v.sentence
    assert any("upper bound" in e for e in v.evidence)


def test_insufficient_data() -> None:
    assert verdict(session()).kind == "insufficient-data"
    v = verdict(pipeline([35_000]))
    assert v.kind == "insufficient-data" and "two are needed" in v.sentence


def test_jobs_done_in_the_same_millisecond_have_no_measured_s_per_proof() -> None:
    """(last - first) / (jobs - 1) is 0 there: no interval between finished proofs was seen
    (offsets are whole ms), so the figure is unknown, not 0.0 s/proof, and the verdict says
    why in words that fit (it said "2 jobs completed, two are needed")."""
    from viewer.analysis.jobs import seconds_per_proof, throughput

    s = session(call("a", 0, 0, 100, 0), call("b", 0, 10, 100, 2))
    assert throughput(s).jobs_completed == 2 and throughput(s).measured_s_per_proof is None
    v = verdict(s)
    assert v.kind == "insufficient-data"
    assert "the 2 jobs completed in the same millisecond" in v.sentence
    assert seconds_per_proof(np.array([5.0, 5.0, np.nan])) is None
    assert seconds_per_proof(np.array([5.0, 1005.0, 2005.0])) == 1.0


def test_summary_bundles_session_facts() -> None:
    s = session(call("a", 0, 0, 100, 0), call("a", 1, 50, None, 1), skipped={"junk": 3})
    sm = summarize(s, (0, 80))
    assert (sm.index, sm.open_intervals, sm.skipped_lines) == (0, 1, 3)
    assert sm.rng == (0, 80)


def test_a_run_whose_every_transition_is_a_cold_start_never_warmed_up() -> None:
    """domain.md: when most transitions are starved the pipeline never warms up.  Over the
    whole run the cold ones count: here the three jobs arrived together (synthesis began
    at 0), and each sector waited for its slower synthesis.  In a range, only the starved
    transitions outside the cold start count (the run may warm up after it)."""
    rows = [
        call(f"j{i}", 0, ready + 10, ready + 5010, 0, queued=ready, synth_start=0,
             synth_end=ready, kernel_ms=4000, kernel_start=ready + 500)
        for i, ready in enumerate([10_000, 30_000, 50_000])
    ]  # fmt: skip
    s = session(*rows, start_ms=0, end_ms=60_000)
    t = transitions(s)
    assert t["starved"].tolist() == [True, True] and t["cold_start"].tolist() == [True, True]
    v = summarize(s).verdict
    assert v.kind == "synthesis-bound" and "never warmed up" in v.sentence
    assert "2 of 2 transitions starved: the pipeline never warmed up" in v.evidence
    in_range = summarize(s, (s.start_ms, s.end_ms)).verdict
    assert not any("never warmed up" in e for e in in_range.evidence)


def test_sectors_that_waited_for_their_jobs_to_arrive_are_arrival_bound() -> None:
    """Jobs 45 s apart, each sector waiting for its own: the arrival floor (45 s) binds and
    measured is 45 s/proof; nothing in the pipeline would help, so starved transitions do
    not make it "never warmed up" (synthesis-bound)."""
    s = pipeline([0, 45_000, 90_000], synth=100_000)
    v = summarize(s).verdict
    assert v.kind == "arrival-bound"
    assert not any("never warmed up" in e for e in v.evidence)
