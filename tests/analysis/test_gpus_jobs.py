from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.analysis.builders import call, pipeline, session
from viewer.analysis import gpu_stats, job_table, throughput
from viewer.analysis.gpus import busy_by_gpu, overall_efficiency, session_efficiency
from viewer.analysis.jobs import proof_size
from viewer.analysis.kernels import kernel_stats
from viewer.io import open_log

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def test_gpu_stats_busy_idle_efficiency() -> None:
    s = session(
        call("a", 0, 100, 200, 0),
        call("a", 1, 150, 300, 1),
        call("b", 0, 400, 500, 0),
        start_ms=0,
    )
    (g,) = gpu_stats(s)
    assert g.gpu == 0 and g.workers == (0, 1)
    assert (g.first_start_ms, g.last_end_ms) == (100, 500)
    assert (g.busy_ms, g.idle_ms) == (300, 100)
    assert g.efficiency == pytest.approx(0.75)
    assert g.cold_start_ms == 100


def test_gpu_stats_in_range_clips_span_busy_and_cold_start() -> None:
    s = session(call("a", 0, 100, 200, 0), call("b", 0, 400, 500, 0), start_ms=0)
    (g,) = gpu_stats(s, (50, 450))
    assert (g.first_start_ms, g.last_end_ms) == (100, 450)
    assert (g.busy_ms, g.idle_ms) == (150, 200)
    assert g.cold_start_ms == 50
    (inside_gap,) = gpu_stats(s, (250, 350))
    assert inside_gap.busy_ms == 0 and inside_gap.efficiency == 0
    (before,) = gpu_stats(s, (0, 50))
    assert math.isnan(before.efficiency) and before.cold_start_ms == 50


def test_gpu_stats_two_gpus_and_a_gpu_without_calls() -> None:
    s = session(call("a", 0, 0, 100, 0), call("a", 1, 0, 50, 2), workers={0: 0, 2: 1, 4: 2})
    stats = gpu_stats(s)
    assert [g.gpu for g in stats] == [0, 1, 2]
    assert [g.busy_ms for g in stats] == [100, 50, 0]
    assert stats[2].workers == (4,) and math.isnan(stats[2].efficiency)


def test_open_interval_counts_as_busy_to_session_end() -> None:
    s = session(call("a", 0, 0, 100, 0), call("a", 1, 200, None, 0), end_ms=1000)
    (g,) = gpu_stats(s)
    assert (g.last_end_ms, g.busy_ms, g.idle_ms) == (1000, 900, 100)


def test_job_table() -> None:
    s = session(
        call("a", 0, 100, 200, 0, synth_start=0, synth_end=40, queued=50, pickup=90),
        call("a", 1, 150, 300, 1, synth_start=10, synth_end=60, queued=60, pickup=150),
        call("b", 0, 400, None, 0, synth_start=300, synth_end=350, queued=350),
        kinds={"b": "snap-update"},
    )
    t = job_table(s)
    assert t["job_id"].tolist() == ["a", "b"]
    assert t["kind"].tolist() == ["partitioned", "snap-update"]
    assert t["first_gpu_start"].tolist() == [100, 400]
    assert t["completed"].tolist()[0] == 300 and math.isnan(t["completed"][1])
    assert t["synth_span_ms"].tolist() == [60, 50]
    assert t["queue_wait_ms"].tolist() == [65, 50]
    assert job_table(s, (310, 320))["job_id"].tolist() == ["b"]
    assert job_table(s, (0, 5))["job_id"].tolist() == ["a"]


def test_throughput_gpu_bound_pipeline() -> None:
    # Synthesis always ahead of the GPU: proofs come out one serial kernel time apart.
    s = pipeline([35_000 + 10 * j for j in range(5)])
    tp = throughput(s)
    assert tp.theoretical_s_per_proof == pytest.approx(37.46)
    assert tp.measured_s_per_proof == pytest.approx(37.46)
    assert tp.ratio == pytest.approx(1.0)
    assert (tp.jobs_completed, tp.partitions_per_proof, tp.gpus) == (5, 10, 1)


def test_throughput_uses_jobs_completed_in_range() -> None:
    s = session(
        call("a", 0, 0, 1000, 0, kernel_ms=500),
        call("b", 0, 1000, 3000, 0, kernel_ms=500),
        call("c", 0, 3000, 6000, 0, kernel_ms=500),
    )
    assert throughput(s).measured_s_per_proof == pytest.approx(2.5)
    inner = throughput(s, (2000, 6000))
    assert inner.jobs_completed == 2 and inner.measured_s_per_proof == pytest.approx(3.0)
    one = throughput(s, (0, 2000))
    assert one.jobs_completed == 1 and one.measured_s_per_proof is None and one.ratio is None


def test_throughput_two_gpus_halves_the_floor() -> None:
    s = session(
        call("a", 0, 0, 1000, 0, kernel_ms=1000),
        call("b", 0, 0, 1000, 2, kernel_ms=1000),
        call("c", 0, 1000, 2000, 0, kernel_ms=1000),
    )
    tp = throughput(s)
    assert tp.gpus == 2 and tp.theoretical_s_per_proof == pytest.approx(0.5)


def test_partitions_per_proof_weighs_each_kinds_size() -> None:
    """Three PoRep proofs of 10 partitions beside eleven PoSt / snap proofs of one call:
    (3 x 10 + 11 x 1) / 14 partitions per proof, not the most common size (1), which made
    the kernel floor a third of the kernel time a proof takes on average.  Within a kind
    the most common size stands (a job that lost a line does not move it)."""
    kinds = np.array(["partitioned"] * 3 + ["window-post"] * 6 + ["snap-update"] * 5, object)
    assert proof_size(np.array([10] * 3 + [1] * 11), kinds) == round(41 / 14, 2)
    assert proof_size(np.array([10] * 9 + [9]), np.array(["partitioned"] * 10, object)) == 10
    assert proof_size(np.array([1, 1]), np.array([None, "winning-post"], object)) == 1
    assert proof_size(np.array([], int), np.array([], object)) == 0
    one_in_many = proof_size(np.array([10] + [1] * 2000), np.array(["a"] + ["b"] * 2000, object))
    assert one_in_many == 1 and isinstance(one_in_many, int)  # 1.0045 shows as 1


def test_a_mixed_run_has_a_kernel_floor_of_its_average_proof() -> None:
    (s,) = open_log(SAMPLES / "monolithic_mixed.log").sessions
    tp = throughput(s)
    k = kernel_stats(s)
    assert tp.partitions_per_proof == round(len(s.partitions) / len(s.jobs), 2) == 2.93
    assert tp.theoretical_s_per_proof == pytest.approx(k.mean_ms * 2.93 / 1000)


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.log")))
def test_session_efficiency_is_the_overall_efficiency_of_gpu_stats(name: str) -> None:
    """The what-if's efficiency from the busy blocks alone equals gpu_stats' to the bit,
    on every sample session (GPUs without calls, several GPUs, damaged logs)."""
    for s in open_log(SAMPLES / name).sessions:
        want = overall_efficiency(gpu_stats(s))
        got = session_efficiency(s)
        assert got == want or (math.isnan(got) and math.isnan(want))


def test_session_efficiency_skips_a_gpu_without_calls_as_gpu_stats_does() -> None:
    s = session(call("a", 0, 0, 100, 0), call("a", 1, 300, 350, 2), workers={0: 0, 2: 1, 4: 2})
    assert session_efficiency(s) == overall_efficiency(gpu_stats(s)) == 150 / 150
    assert busy_by_gpu(s) == {0: 100.0, 1: 50.0}
    assert busy_by_gpu(s, (0, 40)) == {0: 40.0, 1: 0.0}
