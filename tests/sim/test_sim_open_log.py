"""The project's reader (viewer.io.open_log) finds in the samples what the simulator put there."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from viewer.io import open_log
from viewer.sim.damage import DamageReport, damaged_log
from viewer.sim.samples import monolithic_mixed, phase8, two_gpus

SAMPLES_DIR = Path(__file__).parents[2] / "sample_logs"


def test_phase8_calls_read_back_exactly() -> None:
    s = phase8()[0]
    (session,) = open_log(SAMPLES_DIR / "phase8_pw10_5sectors.log").sessions
    p = session.partitions
    ids = np.array(session.jobs["job_id"].tolist())[p["job"]]
    job = np.array([s.draws.job_ids.index(j) for j in ids])
    task = np.array(
        [
            np.flatnonzero((s.draws.job == j) & (s.draws.part == k))[0]
            for j, k in zip(job, p["partition"], strict=True)
        ]
    )
    assert (p["gpu_start"] == s.start[task]).all()
    assert (p["gpu_end"] == s.end[task]).all()
    assert (p["worker"] == s.worker[task]).all()
    assert (p["kernel_ms"] == s.kernel[task]).all()
    assert (p["kernel_start"] == s.acquire[task]).all()
    assert session.kernel_source == "cuzk_timing"


def test_damaged_log_reads_as_documented() -> None:
    r = DamageReport()
    damaged_log(r)
    t = open_log(SAMPLES_DIR / "damaged.log")
    assert len(t.sessions) == 2
    assert [s.events for s in t.sessions] == r.events
    assert [s.open_intervals for s in t.sessions] == [r.open_gpu, 0]


def test_two_gpus_and_monolithic_kinds() -> None:
    (s2,) = open_log(SAMPLES_DIR / "two_gpus.log").sessions
    assert s2.gpus == {0: [0, 1], 1: [2, 3]}
    assert s2.partitions["kernel_ms"].sum() == two_gpus()[0].kernel.sum()
    (sm,) = open_log(SAMPLES_DIR / "monolithic_mixed.log").sessions
    sim = monolithic_mixed()[0]
    kinds = dict(zip(sm.jobs["job_id"], sm.jobs["kind"], strict=True))
    for jid, kind in zip(sim.draws.job_ids, sim.draws.job_kind, strict=True):
        assert kinds[jid] == (None if kind == "porep-c2" else kind)
