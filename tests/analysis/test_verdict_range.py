"""A range that holds only a cold-start transition is not a pipeline that never warmed up."""

from __future__ import annotations

from pathlib import Path

from viewer.analysis import summarize
from viewer.io import open_log

PHASE8 = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


def test_cold_transition_alone_is_not_called_never_warm() -> None:
    session = open_log(PHASE8).sessions[0]
    summary = summarize(session, (69_000.0, 80_000.0))
    assert summary.transitions["cold_start"].tolist() == [True]
    assert summary.verdict.kind != "synthesis-bound"
    assert not any("never warmed up" in e for e in summary.verdict.evidence)
