"""The published Phase 8 table, from the simulator's reference schedule (no reader involved)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.analysis.builders import REFERENCE_MARKDOWN_ROWS
from viewer.analysis import summarize
from viewer.export.report import report_markdown
from viewer.model import Session, Timeline, build_session

reference = pytest.importorskip("viewer.sim.reference", reason="simulator not available")


def schedule_session() -> Session:
    s = reference.solve()
    d = s.draws
    cols = {
        "synth_start": s.synth_start,
        "synth_end": s.synth_end,
        "queued": s.queued,
        "pickup": s.pickup,
        "gpu_start": s.start,
        "gpu_end": s.end,
        "kernel_start": s.acquire,
        "kernel_ms": s.kernel,
        "ntt_msm_h_ms": s.ntt,
        "batch_add_ms": d.batch,
        "tail_msm_ms": d.tail,
    }
    frame = pd.DataFrame({k: np.where(v >= 0, v, np.nan).astype(float) for k, v in cols.items()})
    frame = frame.assign(
        job_id=np.array(d.job_ids, dtype=object)[d.job],
        partition=d.part,
        worker=s.worker,
        gpu=s.gpu,
    )
    return build_session(frame, start_ms=0)


def test_reference_figures() -> None:
    sm = summarize(schedule_session())
    assert sm.kernel.mean_ms == pytest.approx(3746)
    assert round(sm.throughput.theoretical_s_per_proof, 1) == 37.5
    assert sm.throughput.measured_s_per_proof == pytest.approx(37.4)
    assert sm.gpus[0].efficiency == pytest.approx(1.0)
    assert sm.gaps["ms"][sm.gaps["cross_sector"]].sum() == 0
    assert sm.transitions["gap_ms"].tolist() == [4490, 21, 244, 45]
    assert sm.transitions["overlap_ms"].tolist() == [761, 4048, 4834, 3916]
    assert sm.transitions["cold_start"].tolist() == [True, False, False, False]
    assert sm.verdict.kind == "gpu-bound"


def test_reference_markdown_rows() -> None:
    md = report_markdown(Timeline(Path("ref"), [schedule_session()]))
    for row in REFERENCE_MARKDOWN_ROWS:
        assert row in md
    assert "GPU-bound: measured 37.4 s/proof equals the 37.5 s of serial kernel time" in md
