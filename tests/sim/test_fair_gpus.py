"""Free work spreads over the GPUs (issue 27 item 6): among free workers, one of the GPU with
the fewest workers in a call takes the next call, then the one free longest, then the
lowest; with one GPU that is the one free longest, as before.  Both engines and the loaded
one (``viewer.sim.engine``, ``_engine.c``, ``viewer.sim.loaded``) take the same."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.sim import engine
from viewer.sim.contention import NONE
from viewer.sim.engine import Shape, Tasks, play_compiled, play_python
from viewer.sim.loaded import play_loaded


def _backlog(n: int, kernel: int = 100) -> Tasks:
    """``n`` one-call jobs all there at 0, synthesized at once: a queue of ``n`` calls."""
    one = np.ones(n, np.int64)
    return Tasks(
        job=np.arange(n, dtype=np.int64),
        arrival=np.zeros(n, np.int64),
        assemble=np.zeros(n, np.int64),
        synth=one * 10,
        qdelay=one * 0,
        pickup=one,
        dispatch=one * 2,
        prelock=one * 50,
        kernel=one * kernel,
        hold=one * 0,
        post=one * 20,
    )


def _plays(shape: Shape, tasks: Tasks) -> list:
    out = [play_python(shape, tasks), play_loaded(shape, tasks, NONE)[0]]
    if engine._engine is not None:
        out.append(play_compiled(shape, tasks))
    return out


def test_the_first_calls_alternate_the_gpus() -> None:
    """16 workers on each of 2 GPUs and 8 calls queued at once: GPU 0, 1, 0, 1, ... (with
    GPU 0's workers first, all eight went to GPU 0 and its kernel mutex while GPU 1 idled)."""
    shape = Shape(pw=8, gw=16, gpus=2)
    for p in _plays(shape, _backlog(8)):
        assert (p.worker // 16).tolist() == [0, 1] * 4
        assert p.worker.tolist() == [0, 16, 1, 17, 2, 18, 3, 19]


def test_more_gpus_or_workers_never_finish_a_backlog_later() -> None:
    ends = {}
    for gpus in (1, 2, 3, 4):
        for gw in (1, 2, 4, 8, 16):
            runs = _plays(Shape(pw=64, gw=gw, gpus=gpus), _backlog(64))
            assert len({int(p.end.max()) for p in runs}) == 1  # the engines agree
            ends[gpus, gw] = int(runs[0].end.max())
    for (gpus, gw), end in ends.items():
        for more_gpus, more_gw in ends:
            if more_gpus >= gpus and more_gw >= gw:
                assert ends[more_gpus, more_gw] <= end, ((gpus, gw), (more_gpus, more_gw))


def test_one_gpu_takes_the_worker_free_longest_then_the_lowest() -> None:
    """One GPU: no GPU to spread over, the rule of before (the single-GPU samples' bytes
    are unchanged)."""
    tasks = _backlog(6)
    for p in _plays(Shape(pw=6, gw=3, gpus=1), tasks):
        assert p.worker.tolist()[:3] == [0, 1, 2]
        # The next three go to the workers as they come free, in the order they did.
        first = np.argsort(p.end[:3], kind="stable")
        assert p.worker.tolist()[3:] == p.worker[:3][first].tolist()


@pytest.mark.parametrize("gw", [1, 2, 3])
def test_a_gpu_with_fewer_workers_in_a_call_goes_first(gw: int) -> None:
    """Two GPUs, one call queued while GPU 0 has a call in flight and GPU 1 none: GPU 1's
    free worker takes it even where GPU 0's has been free longer."""
    n = 2
    tasks = Tasks(
        job=np.arange(n, dtype=np.int64),
        arrival=np.array([0, 30], np.int64),
        assemble=np.zeros(n, np.int64),
        synth=np.array([10, 10], np.int64),
        qdelay=np.zeros(n, np.int64),
        pickup=np.ones(n, np.int64),
        dispatch=np.ones(n, np.int64),
        prelock=np.full(n, 5, np.int64),
        kernel=np.full(n, 1000, np.int64),
        hold=np.zeros(n, np.int64),
        post=np.full(n, 5, np.int64),
    )
    for p in _plays(Shape(pw=2, gw=gw, gpus=2), tasks):
        assert (p.worker // gw).tolist() == [0, 1]
