"""A played run's Session (``replay.played_session``) makes its columns from the schedule
when read (issue 27 item 9): its tables are those ``build_session`` gives for the calls of
its log, column for column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from viewer.analysis import cache
from viewer.io import open_log
from viewer.model import KERNEL_SOURCE_TIMING, Session, build_session
from viewer.model.frame import Frame
from viewer.sim.model import SimConfig, simulate
from viewer.whatif import Knobs, plan
from viewer.whatif.replay import played_session, replay

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def built(index: int, s) -> Session:  # noqa: ANN001 - a Schedule
    """The played run as one ``build_session`` of every column made at once."""
    d = s.draws
    n = len(d.job)
    calls = Frame(
        {
            "job_id": np.array(d.job_ids, dtype=object)[d.job],
            "partition": d.part,
            "synth_start": s.synth_start,
            "synth_end": s.synth_end,
            "synth_ms": d.synth,
            "queued": s.queued,
            "pickup": s.pickup,
            "gpu_start": s.start,
            "gpu_end": s.end,
            "gpu_ms": s.end - s.start,
            "worker": s.worker,
            "gpu": s.gpu,
            "kernel_start": s.acquire,
            "kernel_ms": s.kernel.astype(np.float64),
            "ntt_msm_h_ms": s.ntt,
            "barrier_wait_ms": d.barrier,
            "batch_add_ms": d.batch,
            "tail_msm_ms": d.tail,
            "prep_msm_ms": d.prep,
            "pre_lock_cpu_ms": s.prelock,
            "mutex_wait_ms": s.wait,
            "mutex_held_ms": s.release - s.acquire,
            "total_start_fn_ms": s.release - s.start,
            "b_g2_msm_ms": d.b_g2,
            "num_circuits": d.circuits,
            "gpu_open": np.zeros(n, dtype=bool),
            "synth_open": np.zeros(n, dtype=bool),
        }
    )
    kinds = {
        j: (None if k == "porep-c2" else k) for j, k in zip(d.job_ids, d.job_kind, strict=True)
    }
    cfg = s.config
    return build_session(
        calls,
        index=index,
        kinds=kinds,
        workers={w: w // cfg.gw for w in range(cfg.gw * cfg.gpus)},
        kernel_source=KERNEL_SOURCE_TIMING,
    )


def schedules() -> list[tuple[str, object]]:
    out = []
    for path in sorted(SAMPLES.glob("*.log")):
        for session in open_log(path).sessions:
            try:
                pl = plan(session)
            except ValueError:
                continue
            out.append((f"{path.name}:{session.index}", replay(pl)))
            out.append(
                (f"{path.name}:{session.index} gw 3 gpus 2", replay(pl, Knobs(gw=3, gpus=2)))
            )
    cfg = SimConfig(sectors=7, pw=6, gw=2, gpus=2, seed=5, warmup_ms=300.0)
    out.append(("simulated", simulate(cfg)))
    mixed = (("porep-c2", 1.0), ("window-post", 2.0), ("winning-post", 1.0))
    out.append(("simulated mixed", simulate(SimConfig(sectors=12, kinds=mixed, seed=2))))
    return out


def _same(a: Frame, b: Frame) -> None:
    assert a.columns == b.columns
    assert len(a) == len(b)
    for k in a.columns:
        x, y = a[k], b[k]
        assert x.dtype == y.dtype, k
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), k


@pytest.mark.parametrize(("name", "s"), schedules(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_played_session_is_the_one_its_calls_build(name: str, s) -> None:  # noqa: ANN001
    lazy, whole = played_session(2, s), built(2, s)
    for table in ("partitions", "jobs", "workers", "unattributed"):
        _same(getattr(lazy, table), getattr(whole, table))
    for field in ("index", "events", "start_ms", "end_ms", "kernel_source", "skipped", "notes"):
        assert getattr(lazy, field) == getattr(whole, field), field
    assert lazy.gpus == whole.gpus


def test_its_columns_are_made_when_read_and_let_go_when_forgotten() -> None:
    s = schedules()[-1][1]
    played = played_session(0, s)
    first = played.partitions["gpu_start"]
    assert played.partitions["gpu_start"] is first  # kept while the session holds it
    cache.forget(played)
    again = played.partitions["gpu_start"]
    assert again is not first
    assert np.array_equal(again, first)
