"""The compiled engine (``_engine.c``) plays every schedule exactly as the Python one does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer.sim import engine
from viewer.sim.engine import Shape, Tasks, play_compiled, play_python

pytestmark = pytest.mark.skipif(engine._engine is None, reason="the C engine is not built")


@st.composite
def pipelines(draw) -> tuple[Shape, Tasks]:
    jobs = draw(st.integers(1, 6))
    per_job = draw(st.lists(st.integers(1, 5), min_size=jobs, max_size=jobs))
    n = sum(per_job)
    # Small integer ranges make ties (two events in one ms) common: the order of ties is
    # where two engines would part ways.
    small = st.integers(0, 40)

    def col(strategy=small) -> np.ndarray:
        return np.array(draw(st.lists(strategy, min_size=n, max_size=n)), dtype=np.int64)

    arrival = np.sort(np.array(draw(st.lists(st.integers(0, 60), min_size=jobs, max_size=jobs))))
    tasks = Tasks(
        job=np.repeat(np.arange(jobs), per_job).astype(np.int64),
        arrival=arrival.astype(np.int64),
        assemble=np.array(draw(st.lists(small, min_size=jobs, max_size=jobs)), dtype=np.int64),
        synth=col(st.integers(0, 80)),
        qdelay=col(st.integers(0, 2)),
        pickup=col(st.integers(0, 3)),
        dispatch=col(st.integers(0, 5)),
        prelock=col(),
        kernel=col(st.integers(0, 60)),
        hold=col(st.integers(0, 2)),
        post=col(st.integers(2, 30)),
    )
    shape = Shape(
        pw=draw(st.integers(1, 6)),
        gw=draw(st.integers(1, 3)),
        gpus=draw(st.integers(1, 3)),
        queue_cap=draw(st.one_of(st.none(), st.integers(1, 4))),
        warmup_ms=draw(st.sampled_from([0, 7])),
    )
    return shape, tasks


@settings(max_examples=300, deadline=None)
@given(pipelines())
def test_compiled_engine_is_the_python_engine(pipeline: tuple[Shape, Tasks]) -> None:
    shape, tasks = pipeline
    a, b = play_python(shape, tasks), play_compiled(shape, tasks)
    for name in a.__dataclass_fields__:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_a_task_of_no_job_is_refused_not_read_out_of_bounds() -> None:
    tasks = Tasks(*(np.zeros(3, np.int64) for _ in range(11)))
    bad = Tasks(**{**tasks.__dict__, "job": np.array([0, 5, 0], np.int64)})
    with pytest.raises(ValueError, match="job is out of range"):
        play_compiled(Shape(1, 1, 1), bad)


def test_the_backend_is_chosen_once_by_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUZK_PURE_PYTHON", "1")
    assert not engine.compiled()
    monkeypatch.delenv("CUZK_PURE_PYTHON")
    assert engine.compiled()


def _held(values: np.ndarray, how: str) -> np.ndarray:
    """``values`` held as a plan holds them: int32, a column of one value (stride 0), or a
    view with another stride (a negative one too)."""
    if how == "int32":
        return values.astype(np.int32)
    if how == "one value" and len(values) and (values == values[0]).all():
        return np.broadcast_to(values[:1].astype(np.int32), values.shape)
    if how == "strided":
        return np.repeat(values, 2)[::2]
    if how == "backwards":  # the same values read through a negative stride
        return np.ascontiguousarray(values[::-1].astype(np.int32))[::-1]
    return values


@settings(max_examples=200, deadline=None)
@given(
    pipelines(),
    st.lists(st.sampled_from(["int64", "int32", "one value", "strided"]), min_size=11, max_size=11),
)
def test_the_compiled_engine_reads_columns_as_they_are_held(
    pipeline: tuple[Shape, Tasks], hows: list[str]
) -> None:
    shape, tasks = pipeline
    held = Tasks(
        **{k: _held(v, how) for (k, v), how in zip(tasks.__dict__.items(), hows, strict=True)}
    )
    a, b = play_python(shape, tasks), play_compiled(shape, held)
    for name in a.__dataclass_fields__:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert getattr(b, name).dtype == np.int32  # every time within 2^30 ms


def test_a_schedule_past_2_to_the_30_ms_comes_back_in_int64() -> None:
    one = np.ones(2, np.int64)
    late = 2**30 - 5  # the second task ends past 2^30 ms: int32 times would not do
    tasks = Tasks(
        job=np.array([0, 1]), arrival=np.array([0, late]), assemble=np.zeros(2, np.int64),
        synth=one * 3, qdelay=one * 0, pickup=one, dispatch=one, prelock=one,
        kernel=one * 4, hold=one * 0, post=one * 2,
    )  # fmt: skip
    a, b = play_python(Shape(1, 1, 1), tasks), play_compiled(Shape(1, 1, 1), tasks)
    assert b.end.dtype == np.int64 and b.end[1] > 2**30
    for name in a.__dataclass_fields__:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_a_column_of_another_type_is_refused_by_the_compiled_engine() -> None:
    tasks = Tasks(*(np.zeros(3, np.int64) for _ in range(11)))
    from viewer.sim import _engine

    cols = [np.zeros(3, np.int16)] + [np.zeros(3, np.int64)] * 8
    out = [np.zeros(3, np.int64) for _ in range(11)]
    with pytest.raises(ValueError, match="int32 or int64"):
        _engine.play(cols, tasks.arrival, tasks.assemble, out, 1, 1, 1, -1, 0)
    with pytest.raises(ValueError, match="int32 or int64"):
        _engine.play([np.zeros(3, np.int64)] * 9, tasks.arrival, tasks.assemble,
                     [np.zeros(3, np.float64)] * 11, 1, 1, 1, -1, 0)  # fmt: skip


def test_an_argument_out_of_range_is_said_as_it_is_not_retried() -> None:
    """Only a time past an int32 output plays again in int64: a warm-up of inf fails as
    itself, not as an engine that stopped short twice."""
    tasks = Tasks(*(np.zeros(2, np.int64) for _ in range(11)))
    with pytest.raises(OverflowError):
        play_compiled(Shape(1, 1, 1, None, float("inf")), tasks)
