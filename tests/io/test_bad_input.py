"""Inputs that must not make the reader lie, hang or crash (issue 13): each is read by both
scanners with the same result, and what cannot be read is counted or refused by name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viewer.io import fastscan, open_log

DATA = Path(__file__).with_name("data")
SCANNERS = ["compiled", "python"]


@pytest.fixture(params=SCANNERS)
def scanner(request, monkeypatch) -> str:
    """Run the test with either scanner (the compiled one only where it is built)."""
    if request.param == "python":
        monkeypatch.setenv("CUZK_PURE_PYTHON", "1")
    elif not fastscan.compiled():
        pytest.skip("compiled scanner not built")
    return request.param


def test_numbers_over_int32_are_bad_numbers(scanner):
    """worker=4294967296 wrapped to worker 0, partition=4294967298 to partition 2: such
    lines are skipped as bad numbers, as is a 17-digit offset; 2^31 - 1 still fits."""
    (s,) = open_log(DATA / "numbers_over_int32.log").sessions
    assert s.skipped == {"bad_number": 6} and s.events == 10
    calls = s.partitions.assign(job_id=s.job_ids()).set_index(["job_id", "partition"])
    assert sorted(calls.index) == [("job-a", 0), ("job-b", 1), ("job-c", 2**31 - 1)]
    assert calls.loc[("job-a", 0), "worker"] == 0
    assert (
        np.isnan(calls.loc[("job-b", 1), "gpu_start"]) and calls.loc[("job-b", 1), "worker"] == -1
    )
    assert calls.loc[("job-c", 2**31 - 1), "worker"] == 2**31 - 1
    assert set(s.workers["worker"]) == {0, 2**31 - 1}


def test_gpu_end_before_its_start_is_dropped():
    """A GPU_END whose offset is below its call's GPU_START would make the call's time
    negative: it is dropped and counted, and the call stays open (as after a crash)."""
    (s,) = open_log(DATA / "gpu_end_before_start.log").sessions
    assert s.skipped == {"gpu_end_before_start": 1} and s.events == 11
    row = s.partitions.set_index("partition").loc[1]
    assert row.gpu_open and np.isnan(row.gpu_end) and np.isnan(row.gpu_ms)
    ended = s.partitions.dropna(subset=["gpu_end"])
    assert (ended["gpu_end"] >= ended["gpu_start"]).all() and len(ended) == 1
    assert s.end_ms == 605  # the dropped line's offset is no event of the session


# ------------------------------------------------------------------ not regular files
