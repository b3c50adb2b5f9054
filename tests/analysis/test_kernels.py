from __future__ import annotations

import math

import pytest

from tests.analysis.builders import call, session
from viewer.analysis import kernel_stats


def timed(job: str, part: int, start: float, end: float, worker: int, k0: float, kms: float):
    return call(
        job,
        part,
        start,
        end,
        worker,
        kernel_start=k0,
        kernel_ms=kms,
        ntt_msm_h_ms=kms * 0.6,
        batch_add_ms=kms * 0.3,
        tail_msm_ms=kms * 0.1,
        synth_start=start - 1000,
        synth_end=start - 100,
    )


def test_totals_mean_and_breakdown() -> None:
    s = session(timed("a", 0, 0, 3000, 0, 1000, 1500), timed("a", 1, 500, 4000, 1, 2500, 1000))
    k = kernel_stats(s)
    assert k.source == "cuzk_timing" and not k.upper_bound
    assert k.total_ms == 2500 and k.mean_ms == 1250 and k.partitions == 2
    assert k.breakdown_ms == pytest.approx({"ntt_msm_h": 1500, "batch_add": 750, "tail_msm": 250})
    assert k.per_worker == {0: 1500, 1: 1000}
    assert k.per_gpu == {0: 2500}
    assert k.gpu_call_ms == 6500
    assert k.synth_ms == 1800


def test_kernel_cut_by_range_contributes_its_inside_part() -> None:
    a = 10_000.0
    s = session(timed("a", 0, a - 800, a + 1200, 0, a - 500, 1500))
    k = kernel_stats(s, (a, a + 5000))
    assert k.total_ms == 1000
    assert k.mean_ms == 1500  # per-partition figure: the whole kernel
    assert k.partitions == 1
    assert k.breakdown_ms["ntt_msm_h"] == pytest.approx(600)
    assert k.gpu_call_ms == 1200
    assert kernel_stats(s, (0, 100)).partitions == 0


def test_gpu_ms_fallback_uses_closed_calls() -> None:
    s = session(call("a", 0, 0, 400, 0, gpu_ms=400), call("a", 1, 100, None, 1), end_ms=900)
    k = kernel_stats(s)
    assert k.source == "gpu_ms" and k.upper_bound
    assert k.total_ms == 400 and k.partitions == 1
    assert all(math.isnan(v) for v in k.breakdown_ms.values())
    assert kernel_stats(s, (300, 350)).total_ms == 50


def test_without_cuzk_timing_a_call_counts_its_gpu_ms() -> None:
    """domain.md: otherwise ``gpu_ms``; the offsets can say more (the daemon writes its lines
    after timing the call).  A GPU_END without gpu_ms counts GPU_END - GPU_START."""
    s = session(
        call("a", 0, 0, 1000, 0, gpu_ms=900),
        call("a", 1, 100, 1100, 1, gpu_ms=900),
        call("b", 0, 1100, 1600, 0),
        end_ms=2000,
    )
    k = kernel_stats(s)
    assert k.source == "gpu_ms" and k.partitions == 3
    assert k.total_ms == 900 + 900 + 500 and k.mean_ms == pytest.approx(2300 / 3)
    assert kernel_stats(s, (0, 450)).total_ms == 450 + 350  # from each GPU_START


def test_a_gpu_ms_that_does_not_fit_its_call_is_not_taken() -> None:
    """A damaged figure (999999999 ms in a 1000 ms call, or a negative one) would make the
    whole session's kernel figures: the call's own duration counts instead."""
    s = session(
        call("a", 0, 0, 1000, 0, gpu_ms=999_999_999),
        call("a", 1, 1000, 2000, 1, gpu_ms=-5),
        call("b", 0, 2000, 3000, 0, gpu_ms=1004),  # a few ms over: the daemon's own timer
        end_ms=4000,
    )
    k = kernel_stats(s)
    assert k.total_ms == 1000 + 1000 + 1004


def test_kernel_without_start_is_placed_at_gpu_start() -> None:
    s = session(call("a", 0, 100, 900, 0, kernel_ms=500))
    assert kernel_stats(s, (0, 300)).total_ms == 200


def test_empty() -> None:
    k = kernel_stats(session())
    assert k.partitions == 0 and k.total_ms == 0 and math.isnan(k.mean_ms)


def domain_md_call(part: int, worker: int) -> dict:
    """domain.md's example call: its parts add to 3882 ms of a 3746 ms gpu_total_ms."""
    return call(
        "a", part, 0, 9000, worker, kernel_start=1000 + 5000 * part, kernel_ms=3746,
        ntt_msm_h_ms=3117, batch_add_ms=640, tail_msm_ms=125,
    )  # fmt: skip


def test_parts_adding_to_more_than_the_kernel_time_get_a_word() -> None:
    """The daemon times each part on its own: they may add to more than gpu_total_ms.  The
    breakdown says so, with the share, rather than show 104 % without a word."""
    from viewer.analysis.kernels import parts_note

    k = kernel_stats(session(domain_md_call(0, 0), domain_md_call(1, 1)))
    assert k.parts_share == pytest.approx(3882 / 3746)
    note = parts_note(k)
    assert note.startswith("The parts add to 104 % of the kernel time (gpu_total_ms)")
    consistent = kernel_stats(session(timed("a", 0, 0, 3000, 0, 1000, 1500)))
    assert consistent.parts_share == pytest.approx(1.0) and parts_note(consistent) == ""
    untimed = kernel_stats(session(call("a", 0, 0, 3000, 0)))  # gpu_ms: no parts at all
    assert untimed.parts_share is None and parts_note(untimed) == ""
