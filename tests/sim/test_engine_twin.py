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
