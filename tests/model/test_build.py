from __future__ import annotations

import numpy as np

from viewer.model import KERNEL_SOURCE_GPU_MS, KERNEL_SOURCE_TIMING, build_session


def test_rows_sorted_by_gpu_start_with_unstarted_last() -> None:
    s = build_session(
        [
            dict(job_id="a", partition=0, gpu_start=30, gpu_end=40, worker=1, gpu=0),
            dict(job_id="a", partition=1, synth_start=0),
            dict(job_id="b", partition=0, gpu_start=10, gpu_end=20, worker=0, gpu=0),
        ]
    )
    assert s.partitions["gpu_start"].tolist()[:2] == [10, 30]
    assert np.isnan(s.partitions["gpu_start"].iloc[2])
    assert s.jobs["job_id"].tolist() == ["a", "b"]
    assert s.jobs["partitions"].tolist() == [2, 1]
    assert s.gpus == {0: [0, 1]}


def test_open_interval_and_kind() -> None:
    s = build_session(
        [dict(job_id="w", partition=-1, gpu_start=5, worker=0, gpu=0)], kinds={"w": "window-post"}
    )
    assert s.open_intervals == 1
    assert s.jobs["kind"].tolist() == ["window-post"]
    assert bool(s.jobs["monolithic"].iloc[0])
    assert s.kernel_source == KERNEL_SOURCE_GPU_MS


def test_kernel_source_follows_data() -> None:
    s = build_session([dict(job_id="a", partition=0, gpu_start=0, gpu_end=9, kernel_ms=4.0)])
    assert s.kernel_source == KERNEL_SOURCE_TIMING


def test_empty_session_has_typed_columns() -> None:
    s = build_session([])
    assert len(s.partitions) == 0
    assert s.partitions["gpu_start"].dtype == np.float64
    assert s.gpus == {}


def test_main_session_is_the_one_with_most_calls_later_on_a_tie() -> None:
    from pathlib import Path

    from viewer.model import Timeline

    def session(index: int, calls: int):
        rows = [dict(job_id="a", partition=p, gpu_start=p, gpu_end=p + 1) for p in range(calls)]
        return build_session(rows, index=index)

    assert Timeline(Path("x"), []).main_session_position() == 0
    assert Timeline(Path("x"), [session(0, 3), session(1, 1)]).main_session_position() == 0
    assert Timeline(Path("x"), [session(0, 2), session(1, 2)]).main_session_position() == 1
