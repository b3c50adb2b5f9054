"""Every figure in the panels says what it covers, and neighbouring figures add up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from viewer.analysis import summarize
from viewer.analysis.idle import idle_split
from viewer.analysis.units import duration
from viewer.io import open_log
from viewer.ui.panels import KernelPanel, ThroughputPanel

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.fixture(scope="module")
def pw20():
    return open_log(SAMPLES / "phase8_pw20.log").sessions[0]


def test_idle_time_reconciles_the_evidence_with_the_verdict(qtbot, pw20) -> None:
    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    sm = summarize(pw20)
    panel.set_summary(sm)
    assert panel.scope.text() == "Whole session 1: 0:00.040 → 7:13.465 (7 min 13 s)"
    # The evidence counts every idle gap (38.9 s starved), in the units the panel uses ...
    assert "idle gaps 38.9 s: 38.9 s starved" in panel.evidence.text()
    text = panel.idle.text()
    # ... the panel says the same total, how much of it is cold start, and what is left.
    split = idle_split(sm.gaps, sm.cold_start)
    assert split.total_ms == pytest.approx(split.cold_ms + split.warm_starved_ms)
    assert text.startswith("38.9 s idle in 6 gaps: 38.9 s starved")
    assert "14.5 s of it falls in the cold start; after it, 24.4 s starved" in text
    assert panel.form.captions["jobs"].text() == "Jobs completed in the session"
    assert "8 jobs completed in the session" in panel.how.text()


def test_the_verdicts_idle_seconds_are_the_panels(qtbot) -> None:
    session = open_log(SAMPLES / "monolithic_mixed.log").sessions[0]
    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    sm = summarize(session)
    panel.set_summary(sm)
    said = re.search(r"sat idle ([\d.]+ s) waiting", panel.verdict.text())
    assert said is not None
    assert f"after it, {said[1]} starved" in panel.idle.text() or (
        f"{said[1]} idle" in panel.idle.text() and "verdict weighs all of it" in panel.idle.text()
    )


def test_kernel_figures_say_clipped_or_whole(qtbot, pw20) -> None:
    panel = KernelPanel()
    qtbot.addWidget(panel)
    whole = summarize(pw20)
    panel.set_summary(whole)
    caption = panel.form.captions
    assert caption["total"].text() == "Kernel time, whole session"
    assert panel.form.text("total") == duration(whole.kernel.total_ms) == "4 min 59 s"
    assert panel.note.isHidden()
    rng = (100_000.0, 300_000.0)
    sm = summarize(pw20, rng)
    panel.set_summary(sm)
    assert panel.scope.text() == "Range 1:40.000 → 5:00.000 (3 min 20 s) of session 1"
    assert caption["total"].text() == "Kernel time in the range, clipped"
    assert caption["mean"].text() == "Mean per partition (whole kernels)"
    assert caption["partitions"].text() == "Partitions touching the range"
    assert caption["gpu_call"].text().endswith("(clipped to the range)")
    assert panel.per_gpu_title.text() == "Per GPU (clipped to the range)"
    k = sm.kernel
    assert k.total_ms / k.partitions != pytest.approx(k.mean_ms, rel=0.01)  # why the note
    assert not panel.note.isHidden() and "whole kernels" in panel.note.text()


def test_the_kernel_panel_says_when_the_parts_add_to_more_than_the_total(qtbot) -> None:
    from tests.analysis.builders import session
    from tests.analysis.test_kernels import domain_md_call

    panel = KernelPanel()
    qtbot.addWidget(panel)
    panel.set_summary(summarize(session(domain_md_call(0, 0), domain_md_call(1, 1))))
    assert panel.form.text("ntt_msm_h").endswith("(83 %)")  # 3117 of 3746
    assert not panel.note.isHidden()
    assert "The parts add to 104 % of the kernel time" in panel.note.text()
