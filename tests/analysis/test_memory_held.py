"""The memory a run holds: each partition's state times what that state holds, plus the
process's baseline (``viewer.analysis.memory``)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.analysis.builders import call, session
from viewer.analysis.memory import DEFAULT, MemoryModel, memory

FLAT = MemoryModel(
    baseline_gib=10.0, partition_gib=(2.0, 3.0), synth_peak_gib=5.0, after_gib=(1.0, 1.5)
)


def _one(**kw) -> dict:
    """One partition: synthesis 0-1000, queued to a worker, GPU call 1500-3000 whose kernel
    region ends at 2500 (prep 200 from GPU_START, kernel 800)."""
    row = call(
        "a",
        0,
        1500.0,
        3000.0,
        0,
        synth_start=0.0,
        synth_end=1000.0,
        queued=1000.0,
        kernel_start=1700.0,
        kernel_ms=800.0,
        pre_lock_cpu_ms=200.0,
        mutex_wait_ms=0.0,
    )
    row.update(kw)
    return row


def _value(m, t: float, end: str) -> float:  # noqa: ANN001
    i = int(np.searchsorted(m.time, t, side="right")) - 1
    return float(getattr(m, end)[i]) if i >= 0 else m.model.baseline_gib


def test_one_partition_holds_by_state() -> None:
    m = memory(session(_one()), FLAT)
    # Upper end: the synthesis peak from its start, the synthesized size to the kernel's
    # end, the after size to GPU_END.
    assert _value(m, 500, "hi") == 15.0
    assert _value(m, 2000, "hi") == 13.0
    assert _value(m, 2700, "hi") == 11.5
    assert _value(m, 3500, "hi") == 10.0
    # Lower end: growing evenly to the smaller size; each step keeps the most it reaches.
    assert _value(m, 0, "lo") == pytest.approx(12.0)  # 0 -> 1000 ramps to 2 GiB
    assert _value(m, 2000, "lo") == 12.0
    assert _value(m, 2700, "lo") == 11.0
    assert m.peak == (pytest.approx(12.0), 15.0)


def test_partitions_side_by_side_add_up() -> None:
    rows = [_one(), _one(job_id="b", worker=1)]
    lo, hi = memory(session(*rows), FLAT).peak
    assert hi == 10.0 + 2 * 5.0
    assert lo == pytest.approx(10.0 + 2 * 2.0)


def test_a_queued_partition_never_taken_holds_to_the_end() -> None:
    waiting = dict(job_id="b", partition=0, synth_start=0.0, synth_end=1000.0, queued=1000.0)
    s = session(_one(), waiting)
    m = memory(s, FLAT)
    assert _value(m, 2800, "hi") == 10.0 + 1.5 + 3.0  # a's after, b's synthesized


def test_without_cuzk_timing_the_kernel_end_is_bracketed() -> None:
    row = call("a", 0, 1500.0, 3000.0, 0, synth_start=0.0, synth_end=1000.0, queued=1000.0)
    m = memory(session(row), FLAT)
    assert _value(m, 2000, "lo") == 11.0  # freed at GPU_START at the lower end
    assert _value(m, 2900, "hi") == 13.0  # held to GPU_END at the upper


def test_proof_kinds_scale_by_upstreams_estimates() -> None:
    rows = [_one(job_id="w", partition=-1)]
    s = session(*rows, kinds={"w": "winning-post"})
    hi = memory(s, FLAT).peak[1]
    assert hi == pytest.approx(10.0 + 5.0 * 0.5 / 14)


def test_an_empty_session_holds_its_baseline() -> None:
    s = session(call("a", 0, 0.0, None, 0))
    lo, hi = memory(s, DEFAULT).peak
    assert lo == hi == DEFAULT.baseline_gib


@pytest.mark.parametrize(
    "kw",
    [
        {"baseline_gib": math.nan},
        {"baseline_gib": 1e300},
        {"synth_peak_gib": -1.0},
        {"partition_gib": (16.0, 13.0)},
        {"after_gib": (1.0, math.inf)},
        {"baseline_gib": True},
    ],
)
def test_a_bad_figure_is_refused_by_name(kw) -> None:  # noqa: ANN001
    name = next(iter(kw)).replace("_", "-")
    with pytest.raises(ValueError, match=f"--{name}"):
        MemoryModel(**kw)


def test_a_hundred_thousand_partitions_are_summed_without_pairs() -> None:
    n = 100_000
    t = np.arange(n, dtype=np.float64) * 10.0
    rows = {
        "job_id": [f"j{i // 10}" for i in range(n)],
        "partition": np.arange(n) % 10,
        "worker": np.zeros(n, np.int64),
        "gpu": np.zeros(n, np.int64),
        "synth_start": t,
        "synth_end": t + 100.0,
        "queued": t + 100.0,
        "gpu_start": t + 100.0,
        "gpu_end": t + 105.0,
    }
    import pandas as pd

    m = memory(session(*pd.DataFrame(rows).to_dict("records")), FLAT)
    # Ten syntheses overlap at any time (100 ms each, one started every 10 ms).
    assert m.peak[1] == pytest.approx(10.0 + 10 * 5.0 + 3.0, abs=3.1)


def test_the_memory_counter_track_is_the_upper_end_in_whole_gib() -> None:
    from viewer.analysis.counters import counters

    s = session(_one(), _one(job_id="b", worker=1))
    steps = counters(s)["memory"]
    assert steps.peak == round(memory(s).peak[1])
    assert steps.at(500) == round(DEFAULT.baseline_gib + 2 * DEFAULT.synth_peak_gib)


def test_a_budget_gated_logs_memory_track_names_its_budget() -> None:
    from pathlib import Path

    from viewer.io import open_log
    from viewer.lanes.data import build_lanes

    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    labels = {}
    for name in ("budget_gated.log", "phase8_pw20.log"):
        lanes = build_lanes(open_log(samples / name).sessions[0])
        labels[name] = next(lane.name for lane in lanes.lanes() if lane.counter == "memory")
    assert labels["budget_gated.log"].endswith(", budget 200")
    assert labels["budget_gated.log"].split("\n")[1].startswith("peak ")
    assert labels["phase8_pw20.log"].split("\n")[1].startswith("up to ")


SAMPLE_LOGS = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.mark.parametrize(
    "name", ["phase8_pw10_5sectors.log", "monolithic_mixed.log", "two_gpus.log"]
)
def test_a_curve_summed_a_slice_of_time_at_a_time_is_the_one_sum(name: str, monkeypatch) -> None:
    """A big log's curves are summed a slice of time at a time (issue 27 item 9): the same
    steps and values to the bit as one sort and one running sum, ties and all (every event
    its own slice's, or all of them in one)."""
    from viewer.analysis import memory as mem
    from viewer.io import open_log

    s = open_log(SAMPLE_LOGS / name).sessions[0]
    for model in (DEFAULT, FLAT):
        monkeypatch.setattr(mem, "SLICE_EVENTS", 1 << 30)
        whole = memory(s, model)
        for slices in (2, 7, 1000):
            monkeypatch.setattr(mem, "SLICE_EVENTS", 1)
            monkeypatch.setattr(mem, "SLICES", slices)
            sliced = memory(s, model)
            assert np.array_equal(sliced.time, whole.time)
            assert np.array_equal(sliced.lo, whole.lo) and np.array_equal(sliced.hi, whole.hi)
            assert mem.memory_peak(s, model) == whole.peak
