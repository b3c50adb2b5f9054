"""The Phase 8 sample equals the published table, in memory and in the written file."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from tests.sim.logparse import parse
from viewer.sim.metrics import calls_of, figures
from viewer.sim.reference import GAPS_MS, OVERLAPS_MS, check, solve
from viewer.sim.samples import phase8
from viewer.sim.writer import render

SAMPLE = Path(__file__).parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


@pytest.fixture(scope="module")
def text() -> str:
    return render(*phase8())


def test_schedule_has_the_published_figures() -> None:
    f = check(solve())
    assert f.kernel_mean_ms == 3746
    assert round(f.measured_ms / 1000, 1) == 37.4
    assert f.efficiency == {0: 1.0}
    assert f.cross_sector_idle_ms == 0
    assert [t.gap_ms for t in f.transitions] == list(GAPS_MS)
    assert [t.overlap_ms for t in f.transitions] == list(OVERLAPS_MS)
    assert [t.starved for t in f.transitions] == [True, False, False, False]


def test_committed_sample_is_what_the_generator_writes(text: str) -> None:
    assert SAMPLE.read_text() == text


def test_reparsed_file_has_the_published_figures(text: str) -> None:
    p = parse(text)
    assert sum(p.gpu_totals) / len(p.gpu_totals) == 3746
    assert len(p.gpu_totals) == 50
    start, end, queued = {}, {}, {}
    for t, ev, job, kv, _ in p.events:
        key = (job, kv.get("partition"))
        if ev == "GPU_START":
            start[key] = (t, kv["worker"])
        elif ev == "GPU_END":
            end[key] = t
            assert kv["gpu_ms"] == t - start[key][0]
        elif ev == "GPU_QUEUE":
            queued[key] = t
    jobs = sorted(
        {k[0] for k in start}, key=lambda j: min(v[0] for k, v in start.items() if k[0] == j)
    )
    done = [max(t for k, t in end.items() if k[0] == j) for j in jobs]
    assert round((done[-1] - done[0]) / 4 / 1000, 1) == 37.4
    # Union of busy intervals: no hole between the first start and the last end.
    spans = sorted((start[k][0], end[k]) for k in start)
    reach = spans[0][1]
    for s, e in spans[1:]:
        assert s <= reach
        reach = max(reach, e)
    gaps, overlaps, starved = [], [], []
    by_job = defaultdict(list)
    for k in start:
        by_job[k[0]].append(k)
    for a, b in zip(jobs, jobs[1:], strict=False):
        first = min(by_job[b], key=lambda k: start[k][0])
        t, worker = start[first]
        gaps.append(t - max(end[k] for k in by_job[a] if end[k] <= t))
        overlaps.append(max(end[k] for k in by_job[a]) - t)
        free = max(end[k] for k in start if start[k][1] == worker and end[k] <= t)
        starved.append(queued[first] > free)
    assert gaps == list(GAPS_MS)
    assert overlaps == list(OVERLAPS_MS)
    assert starved == [True, False, False, False]


def test_metrics_agree_with_the_file(text: str) -> None:
    f = figures(calls_of(solve()))
    assert f.idle_ms == {0: 0}
