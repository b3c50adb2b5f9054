"""The four floors (domain.md): each formula on sessions whose floors are known by construction."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.analysis.builders import call, pipeline, session
from viewer.analysis.floors import arrivals, floors, slots_seen
from viewer.io import open_log

PHASE8 = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


def test_each_floor_is_its_formula() -> None:
    # 4 jobs x 10 partitions, all synthesized at once (40 syntheses seen), two workers.
    s = pipeline([35_000 + 10 * j for j in range(4)], kernel=3000, prep=1500, post=500)
    f = floors(s)
    assert f.kernel_s == pytest.approx(3000 * 10 / 1 / 1000)
    assert f.worker_s == pytest.approx((1500 + 3000 + 500) * 10 / 2 / 1000)
    assert f.pw == 40 and f.synthesis_s == pytest.approx(35_000 * 10 / 40 / 1000)
    assert f.arrival_s == pytest.approx(10 / 1000)
    assert (f.bound, f.runner_up) == ("kernel", "worker")
    assert f.margin_s == pytest.approx(5.0) and f.margin == pytest.approx(5 / 30)
    assert f.means_ms["prep"] == 1500 and f.means_ms["post"] == pytest.approx(500)


def test_without_cuzk_timing_the_worker_floor_uses_whole_calls() -> None:
    s = pipeline([35_000 + 10 * j for j in range(3)], workers=1, timing=False)
    f = floors(s)
    assert f.upper_bound
    call_ms = s.partitions["gpu_end"] - s.partitions["gpu_start"]
    assert f.worker_s == pytest.approx(call_ms.mean() * 10 / 1000)


def test_a_job_waiting_for_a_slot_arrived_no_later_than_the_job_before() -> None:
    s = session(
        call("a", 0, 20_000, 21_000, 0, synth_start=0, synth_end=10_000, queued=10_000),
        # b starts synthesis 20 ms after a's SYNTH_END freed the slot: it was waiting.
        call("b", 0, 40_000, 41_000, 0, synth_start=10_020, synth_end=30_000, queued=30_000),
        # c starts on its own, long after any other event.
        call("c", 0, 60_000, 61_000, 0, synth_start=45_000, synth_end=55_000, queued=55_000),
        # d starts 40 ms after c's GPU_START: waiting again, so no later than c.
        call("d", 0, 80_000, 81_000, 0, synth_start=60_040, synth_end=70_000, queued=70_000),
    )
    a = arrivals(s)
    assert a["first_synth"].tolist() == [0, 10_020, 45_000, 60_040]
    assert a["arrival"].tolist() == [0, 0, 45_000, 45_000]
    assert a["inferred"].tolist() == [False, True, False, True]
    f = floors(s)
    assert (f.jobs, f.inferred_arrivals) == (4, 2)
    assert f.arrival_s == pytest.approx(45.0 / 3)


def test_a_jobs_own_events_free_no_slot_for_it() -> None:
    s = session(
        call("a", 0, 100, 200, 0, synth_start=0, synth_end=50, queued=50),
        call("a", 1, 300, 400, 0, synth_start=60, synth_end=90, queued=90),
        call("b", 0, 900, 950, 0, synth_start=5_000, synth_end=5_100, queued=5_100),
    )
    assert arrivals(s)["inferred"].tolist() == [False, False]


def test_slots_seen_ignores_log_jitter_but_counts_slots_held_by_a_full_queue() -> None:
    rows = []
    for slot in range(3):  # 3 slots, each synthesizing 4 partitions back to back
        t = 0
        for k in range(4):
            end = t + 1000
            # The next SYNTH_START on a slot comes 1 ms before this one's queue event.
            rows.append(
                call(f"j{k}", slot, None, None, 0, synth_start=t, synth_end=end, queued=end + 1)
            )
            t = end
    assert slots_seen(session(*rows)) == 3
    # A finished partition held 5 s by a full queue keeps its slot: a 4th slot starts.
    held = [
        call("x", 0, None, None, 0, synth_start=0, synth_end=1000, queued=6000),
        call("x", 1, None, None, 0, synth_start=2000, synth_end=3000, queued=3000),
    ]
    assert slots_seen(session(*held)) == 2
    assert slots_seen(session(*held[:1], call("x", 1, None, None, 0, synth_start=2000))) == 2


def test_range_floors_take_what_touches_the_range() -> None:
    s = pipeline([35_000 + 10 * j for j in range(4)], kernel=3000, prep=1500, post=500)
    whole, part = floors(s), floors(s, (60_000, 80_000))
    assert part.kernel_s == pytest.approx(whole.kernel_s)
    assert part.pw == 0 and math.isnan(part.synthesis_s)  # no synthesis in that window
    assert part.worker_s == pytest.approx(whole.worker_s)
    assert floors(s, (0, 100)).jobs == 4 and floors(s, (5_000, 9_000)).jobs == 0


def test_phase8_sample_is_gpu_bound_with_synthesis_close_behind() -> None:
    f = floors(open_log(PHASE8).sessions[0])
    assert f.kernel_s == pytest.approx(37.46)
    assert f.synthesis_s == pytest.approx(36.5, abs=0.05) and f.pw == 10
    assert f.worker_s == pytest.approx((1697 + 3746 + 486) * 10 / 2 / 1000, rel=0.01)
    assert (f.bound, f.runner_up) == ("kernel", "synthesis")
    assert f.margin == pytest.approx(0.026, abs=0.002)
