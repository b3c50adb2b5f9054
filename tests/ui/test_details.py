"""The details pane and the flow arrows: click a bar -> its partition's whole life, with
the figures of ``stages``, and arrows synth -> queue -> GPU on the lanes."""

from __future__ import annotations

import math

import pytest
from PySide6 import QtCore

from tests.ui.conftest import load_and_wait
from tests.ui.test_main_window import PHASE8, window  # noqa: F401
from tests.ui.test_timeline_view import scene_point, send_mouse
from viewer.analysis.stages import stages
from viewer.analysis.units import duration


def click_partition(win, row: int) -> None:
    view = win.view
    p = view.session().partitions
    view.frame_partition(row)
    lane = next(
        ln
        for ln in view.lanes().lanes()
        if ln.kind == "worker" and (ln.layers["bar"].row == row).any()
    )
    x = (float(p["gpu_start"][row]) + float(p["gpu_end"][row])) / 2
    at = scene_point(view, x, lane.top + 3)
    send_mouse(view, QtCore.QEvent.Type.MouseButtonPress, at)
    send_mouse(view, QtCore.QEvent.Type.MouseButtonRelease, at)


def test_clicking_a_bar_shows_its_life_and_flow(qtbot, window) -> None:  # noqa: F811
    timeline = load_and_wait(qtbot, window, PHASE8)
    session = timeline.sessions[0]
    row = 12
    with qtbot.waitSignal(window.view.partition_clicked) as clicked:
        click_partition(window, row)
    assert clicked.args == [row]
    pane = window.details_pane
    assert window.docks["details"].isVisible() and pane.header.isVisible()
    p = session.partitions.row(row)
    job_id = session.jobs["job_id"][int(p["job"])]
    assert (
        pane.header.text()
        == f"job {job_id} · partition {int(p['partition'])} · worker {int(p['worker'])} · GPU 0"
    )
    st = stages(session).row(row)
    listed = dict(pane.stage_texts())
    for name, col in (
        ("synthesis", "synth_ms"),
        ("queue wait", "queue_wait_ms"),
        ("dispatch", "dispatch_ms"),
        ("CPU prep", "prep_ms"),
        ("mutex wait", "mutex_wait_ms"),
        ("CUDA kernels", "kernel_ms"),
        ("post (b_g2 + epilogue)", "post_ms"),
    ):
        assert listed[name] == duration(float(st[col])), name
    assert "ntt_msm_h" in pane.figures.text() and "b_g2_msm_ms" in pane.figures.text()
    # The flow: synthesis end -> queue start on the synthesis row, queue end -> GPU_START.
    flow = window.view.flow_item()
    assert flow is not None and flow.row == row
    (a, b), (c, d) = flow.segments()
    assert a.x() == p["synth_end"] and b.x() == st["ready"] and a.y() == b.y()
    assert c.x() == st["wait_end"] and d.x() == p["gpu_start"]
    gpu_lane = flow.gpu_lane
    assert d.y() == pytest.approx(gpu_lane.top + gpu_lane.height / 2)
    assert flow.synth_lane.kind == "synth"
    # Frame it brings the call back into view; clicking empty space clears both.
    window.view.fit()
    pane.frame_button.click()
    lo, hi = window.view.x_range()
    assert lo < p["gpu_start"] < hi and hi - lo < 60_000
    window.view.fit()
    empty = scene_point(window.view, window.view.lanes().x_min + 10, gpu_lane.top + 3)
    send_mouse(window.view, QtCore.QEvent.Type.MouseButtonPress, empty)
    send_mouse(window.view, QtCore.QEvent.Type.MouseButtonRelease, empty)
    assert window.view.flow_item() is None and not pane.header.isVisible()


def test_the_life_bar_draws_each_stage_in_its_colour(qtbot, window) -> None:  # noqa: F811
    from viewer.ui.palette import Theme
    from viewer.ui.panels.details_pane import stage_color

    load_and_wait(qtbot, window, PHASE8)
    click_partition(window, 12)
    bar = window.details_pane.bar
    bar.resize(900, bar.height())
    image = bar.grab().toImage()
    lf = bar.life
    theme = Theme.from_palette(bar.palette())
    stages_ = [s for s in lf.stages if math.isfinite(s.start) and math.isfinite(s.end)]
    a, b = min(s.start for s in stages_), max(s.end for s in stages_)
    scale = (bar.width() - 12) / (b - a)
    synth = lf.stage("synthesis")
    x = int(6 + ((synth.start + synth.end) / 2 - a) * scale)
    y = bar.fontMetrics().height() + bar.ROW // 2
    assert image.pixelColor(x, y).name() == stage_color(theme, "synthesis", lf.job).name()
