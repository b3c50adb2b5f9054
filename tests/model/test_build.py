from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.model import (
    KERNEL_SOURCE_GPU_MS,
    KERNEL_SOURCE_TIMING,
    build_session,
    session_tables,
)


def test_rows_sorted_by_gpu_start_with_unstarted_last() -> None:
    s = build_session(
        [
            dict(job_id="a", partition=0, gpu_start=30, gpu_end=40, worker=1, gpu=0),
            dict(job_id="a", partition=1, synth_start=0),
            dict(job_id="b", partition=0, gpu_start=10, gpu_end=20, worker=0, gpu=0),
        ]
    )
    assert s.partitions["gpu_start"].tolist()[:2] == [10, 30]
    assert np.isnan(s.partitions["gpu_start"][2])
    assert s.jobs["job_id"].tolist() == ["a", "b"]
    assert s.jobs["partitions"].tolist() == [2, 1]
    assert s.gpus == {0: [0, 1]}


def test_open_interval_and_kind() -> None:
    s = build_session(
        [dict(job_id="w", partition=-1, gpu_start=5, worker=0, gpu=0)], kinds={"w": "window-post"}
    )
    assert s.open_intervals == 1
    assert s.jobs["kind"].tolist() == ["window-post"]
    assert bool(s.jobs["monolithic"][0])
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


def random_calls(draw_rows) -> dict[str, np.ndarray]:
    """Columns of rows (session, job code, partition, gpu_start, synth_start, worker)."""
    s, j, p, g, y, w = (np.array(c) for c in zip(*draw_rows, strict=True))
    return {
        "session": s.astype(np.int32),
        "job": j.astype(np.int32),
        "partition": p.astype(np.int32),
        "gpu_start": g.astype(np.float64),
        "synth_start": y.astype(np.float64),
        "gpu_end": g + 5.0,
        "worker": w.astype(np.int32),
        "gpu": (w // 2).astype(np.int32),
        "kernel_ms": np.where(w == 1, np.nan, 3.0),
    }


rows = st.tuples(
    st.integers(0, 3),
    st.integers(0, 4),
    st.integers(-1, 3),
    st.sampled_from([np.nan, 0.0, 1.0, 2.0]),  # ties and NaN: the sort must be stable
    st.sampled_from([np.nan, 0.0, 1.0]),
    st.integers(-1, 3),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(rows, min_size=1, max_size=30))
def test_tables_of_many_sessions_are_those_of_each_alone(drawn):
    """``session_tables`` builds every session in one pass; each table is what
    ``build_session`` builds from that session's calls alone."""
    drawn = sorted(drawn, key=lambda r: r[0])  # calls come grouped by session
    calls = random_calls(drawn)
    job_ids = [f"job-{k}" for k in range(5)]
    kinds = {"job-3": "winning-post"}
    sessions = int(calls["session"].max()) + 1
    workers = [{0: 0, 1: 0, 2: 1, 3: 1}] * sessions
    tables = session_tables(calls, job_ids, kinds, workers, session=calls["session"])
    for s, t in enumerate(tables):
        mine = calls["session"] == s
        frame = pd.DataFrame({k: v[mine] for k, v in calls.items() if k not in ("session", "job")})
        frame["job_id"] = np.array(job_ids, dtype=object)[calls["job"][mine]]
        alone = build_session(frame, kinds=kinds, workers=workers[s])
        pd.testing.assert_frame_equal(t.partitions.to_pandas(), alone.partitions.to_pandas())
        # the order pandas' stable sort gives, jobs numbered by first appearance
        want = frame.assign(job=pd.factorize(frame["job_id"])[0]).sort_values(
            ["gpu_start", "synth_start", "job", "partition"], kind="stable", na_position="last"
        )
        for col in ("job", "partition", "gpu_start", "synth_start", "worker"):
            np.testing.assert_array_equal(t.partitions[col], want[col], err_msg=col)
        pd.testing.assert_frame_equal(t.jobs.to_pandas(), alone.jobs.to_pandas())
        pd.testing.assert_frame_equal(t.workers.to_pandas(), alone.workers.to_pandas())
