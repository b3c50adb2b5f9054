"""TimelineView both ways: model -> lanes and items; mouse and keys -> range, selection, signals."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from viewer.ui.view.timeline_view import DEBOUNCE_MS, TimelineView

Qt = QtCore.Qt


def hosted_view(qtbot, width: int = 1200, height: int = 600) -> TimelineView:
    """A shown TimelineView of ``width`` x ``height``. A top-level window with a layout
    makes the offscreen platform warn (propagateSizeHints): the view is hosted in a plain
    window instead (closed by qtbot)."""
    host = QtWidgets.QWidget()
    qtbot.addWidget(host)
    host.resize(width, height)
    w = TimelineView(host)
    w.resize(width, height)
    host.show()
    qtbot.waitExposed(host)
    w.test_host = host  # the host's wrapper owns the window: kept as long as the view
    return w


@pytest.fixture
def view(qtbot, phase8_timeline) -> Iterator[TimelineView]:
    w = hosted_view(qtbot)
    w.set_timeline(phase8_timeline)
    yield w
    w.parentWidget().close()


def scene_point(view: TimelineView, x_ms: float, y: float) -> QtCore.QPoint:
    """Viewport pixel of view point (x ms, y layout px)."""
    scene = view._vb.mapViewToScene(QtCore.QPointF(x_ms, y))
    return view.plot.mapFromScene(scene)


def send_mouse(
    view: TimelineView,
    kind,
    pos: QtCore.QPoint,
    button=Qt.MouseButton.LeftButton,
    buttons=None,
    mods=Qt.KeyboardModifier.NoModifier,
) -> None:
    port = view.plot.viewport()
    if buttons is None:
        buttons = (
            Qt.MouseButton.NoButton if kind == QtCore.QEvent.Type.MouseButtonRelease else button
        )
    event = QtGui.QMouseEvent(
        kind, QtCore.QPointF(pos), QtCore.QPointF(port.mapToGlobal(pos)), button, buttons, mods
    )
    QtWidgets.QApplication.sendEvent(port, event)


def drag(
    view,
    a: QtCore.QPoint,
    b: QtCore.QPoint,
    button=Qt.MouseButton.LeftButton,
    mods=Qt.KeyboardModifier.NoModifier,
) -> None:
    # pyqtgraph drops moves closer than 1 / mouseRateLimit s to the last one: these come at
    # once, so a drag right after another would be lost whenever the redraw is fast.
    rate_limit = pg.getConfigOption("mouseRateLimit")
    pg.setConfigOption("mouseRateLimit", -1)
    try:
        send_mouse(view, QtCore.QEvent.Type.MouseButtonPress, a, button, mods=mods)
        for t in np.linspace(0.1, 1.0, 8):
            p = QtCore.QPoint(int(a.x() + (b.x() - a.x()) * t), int(a.y() + (b.y() - a.y()) * t))
            send_mouse(view, QtCore.QEvent.Type.MouseMove, p, Qt.MouseButton.NoButton, button, mods)
        send_mouse(view, QtCore.QEvent.Type.MouseButtonRelease, b, button, mods=mods)
    finally:
        pg.setConfigOption("mouseRateLimit", rate_limit)


def lane_y(view: TimelineView, name: str) -> float:
    lane = next(lane for lane in view.lanes().lanes() if lane.name == name)
    return lane.top + lane.height / 2


def test_set_timeline_builds_lanes_per_gpu_and_synthesis(view: TimelineView) -> None:
    lanes = view.lanes()
    assert [g.name for g in lanes.groups] == ["GPU 0", "counters", "synthesis"]
    assert [lane.name for lane in lanes.groups[0].lanes] == [
        "GPU 0 · worker 0",
        "GPU 0 · worker 1",
        "GPU 0 · busy",
    ]
    bars = sum(len(lane.layers["bar"]) for lane in lanes.groups[0].lanes[:2])
    assert bars == len(view.session().partitions) == 50
    assert 10 <= len(lanes.groups[2].lanes) <= 25  # pw=10, plus queue waits
    assert all(item.rect_count() > 0 for item in view.group_items())
    x0, x1 = view.x_range()
    assert x0 <= lanes.x_min and x1 >= lanes.x_max


def test_sessions_switch_by_call_and_number_keys(qtbot, view: TimelineView) -> None:
    with qtbot.waitSignal(view.session_changed) as blocker:
        qtbot.keyClick(view, Qt.Key.Key_2)
    assert blocker.args == [1]
    assert [g.name for g in view.lanes().groups] == ["GPU 0", "GPU 1", "counters", "synthesis"]
    with qtbot.waitSignal(view.session_changed):
        view.set_session(0)
    assert view.session_index() == 0


def test_wheel_zooms_time_around_the_cursor(view: TimelineView) -> None:
    x0, x1 = view.x_range()
    anchor = x0 + (x1 - x0) * 0.25
    pos = scene_point(view, anchor, 60)
    port = view.plot.viewport()
    event = QtGui.QWheelEvent(
        QtCore.QPointF(pos),
        QtCore.QPointF(port.mapToGlobal(pos)),
        QtCore.QPoint(0, 0),
        QtCore.QPoint(0, 240),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QtWidgets.QApplication.sendEvent(port, event)
    y0, y1 = view.x_range()
    assert y1 - y0 < 0.9 * (x1 - x0)
    # The time under the cursor stays under the cursor.
    assert (anchor - y0) / (y1 - y0) == pytest.approx(0.25, abs=0.01)


def test_keys_zoom_pan_and_fit(qtbot, view: TimelineView) -> None:
    x0, x1 = view.x_range()
    qtbot.keyClick(view, Qt.Key.Key_W)
    a, b = view.x_range()
    assert b - a == pytest.approx((x1 - x0) / 2)
    assert (a + b) / 2 == pytest.approx((x0 + x1) / 2)
    qtbot.keyClick(view, Qt.Key.Key_D)
    c, d = view.x_range()
    assert c == pytest.approx(a + (b - a) * 0.25)
    qtbot.keyClick(view.plot, Qt.Key.Key_S)  # keys reach the view from the plot too
    assert view.x_range()[1] - view.x_range()[0] == pytest.approx(x1 - x0)
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.x_range() == pytest.approx((x0, x1))


def test_drag_pans_and_right_drag_zooms_to_span(view: TimelineView) -> None:
    x0, x1 = view.x_range()
    y = lane_y(view, "GPU 0 · busy")
    drag(
        view, scene_point(view, x0 + (x1 - x0) * 0.5, y), scene_point(view, x0 + (x1 - x0) * 0.3, y)
    )
    a, b = view.x_range()
    assert b - a == pytest.approx(x1 - x0)
    assert a == pytest.approx(x0 + (x1 - x0) * 0.2, rel=0.02)
    lo, hi = a + (b - a) * 0.4, a + (b - a) * 0.6
    drag(view, scene_point(view, lo, y), scene_point(view, hi, y), Qt.MouseButton.RightButton)
    assert view.x_range() == pytest.approx((lo, hi), rel=0.01)
    assert view.selection() is None


def test_next_and_previous_transition_frame_it(qtbot, view: TimelineView) -> None:
    times = view.lanes().transitions["time"]
    assert len(times) == 4
    view.fit()
    view.set_x_range(0, times[0] / 2)
    view.next_transition()
    a, b = view.x_range()
    assert (a + b) / 2 == pytest.approx(times[0])
    qtbot.keyClick(view, Qt.Key.Key_BracketRight)
    assert sum(view.x_range()) / 2 == pytest.approx(times[1])
    qtbot.keyClick(view, Qt.Key.Key_N)
    qtbot.keyClick(view, Qt.Key.Key_P)
    assert sum(view.x_range()) / 2 == pytest.approx(times[1])
    view.prev_transition()
    view.prev_transition()  # nothing before the first: stays
    assert sum(view.x_range()) / 2 == pytest.approx(times[0])


def test_set_selection_emits_once_debounced(qtbot, view: TimelineView) -> None:
    seen: list[tuple[float, float]] = []
    view.selection_changed.connect(lambda a, b: seen.append((a, b)))
    view.set_selection(1000, 5000)
    view.set_selection(2000, 6000)
    view.set_selection(7000, 3000)
    assert seen == []
    qtbot.wait(DEBOUNCE_MS * 4)
    assert seen == [(3000.0, 7000.0)]
    assert view.selection() == (3000.0, 7000.0)
    view.clear_selection()
    qtbot.wait(DEBOUNCE_MS * 4)
    assert view.selection() is None
    assert seen[-1] == (0.0, 0.0)


def test_ctrl_drag_selects_and_dragging_the_region_moves_it(qtbot, view: TimelineView) -> None:
    x0, x1 = view.x_range()
    y = lane_y(view, "GPU 0 · busy")
    lo, hi = x0 + (x1 - x0) * 0.3, x0 + (x1 - x0) * 0.5
    with qtbot.waitSignal(view.selection_changed) as blocker:
        drag(
            view,
            scene_point(view, lo, y),
            scene_point(view, hi, y),
            mods=Qt.KeyboardModifier.ControlModifier,
        )
    assert blocker.args == pytest.approx([lo, hi], rel=0.01)
    assert view.x_range() == (x0, x1)  # selecting does not pan
    shift = (x1 - x0) * 0.1
    mid = (lo + hi) / 2
    with qtbot.waitSignal(view.selection_changed) as blocker:
        drag(view, scene_point(view, mid, y), scene_point(view, mid + shift, y))
    assert blocker.args == pytest.approx([lo + shift, hi + shift], rel=0.01)


def test_select_visible(qtbot, view: TimelineView) -> None:
    with qtbot.waitSignal(view.selection_changed) as blocker:
        view.select_visible()
    assert tuple(blocker.args) == view.x_range()


def test_hover_tooltip_is_plain_text_with_the_job_id(qtbot, view: TimelineView) -> None:
    view.set_session(1)  # job ids there look like HTML: "<b>crash-0"
    row = 0
    p = view.session().partitions.row(row)
    lane = f"GPU {p['gpu']} · worker {p['worker']}"
    view.set_x_range(p["gpu_start"] - 2000, p["gpu_end"] + 2000)
    at = scene_point(view, (p["gpu_start"] + p["gpu_end"]) / 2, lane_y(view, lane))
    with qtbot.waitSignal(view.cursor_moved):
        send_mouse(
            view, QtCore.QEvent.Type.MouseMove, at, Qt.MouseButton.NoButton, Qt.MouseButton.NoButton
        )
    tip = view.tooltip_label()
    assert tip.isVisible()
    assert tip.textFormat() == Qt.TextFormat.PlainText
    job_id = view.session().jobs["job_id"][p["job"]]
    assert job_id.startswith("<b>")
    assert f"job {job_id}" in tip.text()
    assert f"partition {p['partition']}" in tip.text()
    assert "kernel" in tip.text() and "ntt" in tip.text()


def test_open_call_is_drawn_and_described(view: TimelineView) -> None:
    view.set_session(1)
    opened = [lane for lane in view.lanes().lanes() if len(lane.layers.get("open", ()))]
    assert [lane.kind for lane in opened] == ["worker"]
    iv = opened[0].layers["open"]
    assert iv.end[0] == pytest.approx(view.session().end_ms)
    text = view.tooltip_text_at((iv.start[0] + iv.end[0]) / 2, opened[0].top + 5)
    assert "open (no GPU_END)" in text


def test_click_selects_job_and_double_click_frames_partition(qtbot, view: TimelineView) -> None:
    p = view.session().partitions
    row = 12
    y = lane_y(view, f"GPU 0 · worker {p['worker'][row]}")
    at = scene_point(view, (p["gpu_start"][row] + p["gpu_end"][row]) / 2, y)
    with qtbot.waitSignal(view.partition_clicked) as blocker:
        send_mouse(view, QtCore.QEvent.Type.MouseButtonPress, at)
        send_mouse(view, QtCore.QEvent.Type.MouseButtonRelease, at)
    assert blocker.args == [row]
    assert view.selected_job() == p["job"][row]
    outlined = sum(len(item._outline) for item in view.group_items())
    assert outlined == 2 * (p["job"] == p["job"][row]).sum()  # GPU bars and synthesis bars
    view.frame_partition(row)
    a, b = view.x_range()
    assert a < p["gpu_start"][row] < p["gpu_end"][row] < b
    assert b - a == pytest.approx(3 * (p["gpu_end"][row] - p["gpu_start"][row]), rel=0.01)
    view.fit()
    empty = scene_point(view, view.lanes().x_min + 10, lane_y(view, "GPU 0 · worker 0"))
    with qtbot.waitSignal(view.partition_clicked) as blocker:
        send_mouse(view, QtCore.QEvent.Type.MouseButtonPress, empty)
        send_mouse(view, QtCore.QEvent.Type.MouseButtonRelease, empty)
    assert blocker.args == [-1] and view.selected_job() is None


def test_clicking_a_group_header_collapses_it(qtbot, view: TimelineView) -> None:
    lanes = view.lanes()
    before = lanes.height
    header = view._header
    synthesis = lanes.groups[-1]
    y = header.mapFromScene(view._vb.mapViewToScene(QtCore.QPointF(0, synthesis.top + 5)))
    at = view.plot.mapFromScene(header.mapToScene(QtCore.QPointF(20, y.y())))
    send_mouse(view, QtCore.QEvent.Type.MouseButtonPress, at)
    send_mouse(view, QtCore.QEvent.Type.MouseButtonRelease, at)
    assert synthesis.collapsed
    assert lanes.height < before
    assert view.group_items()[-1].rect_count() == 0


def test_bars_are_painted_in_their_job_colour(qtbot, view: TimelineView) -> None:
    from viewer.ui.palette import job_color

    p = view.session().partitions
    row = 20
    view.frame_partition(row)
    qtbot.wait(20)
    image = view.plot.grab().toImage()
    at = scene_point(
        view,
        (p["gpu_start"][row] + p["kernel_start"][row]) / 2,
        lane_y(view, f"GPU 0 · worker {p['worker'][row]}") - 8,
    )
    assert image.pixelColor(at) == job_color(int(p["job"][row]))


def test_dark_palette_gives_a_dark_theme(qtbot, view: TimelineView) -> None:
    palette = QtGui.QPalette()
    palette.setColor(QtGui.QPalette.ColorRole.Base, QtGui.QColor("#1e1e1e"))
    palette.setColor(QtGui.QPalette.ColorRole.Text, QtGui.QColor("#e0e0e0"))
    view.setPalette(palette)
    assert view.theme.dark
    assert view.group_items()[0].theme.dark
    image = view.plot.grab().toImage()
    assert image.pixelColor(view.plot.width() - 30, 8).lightnessF() < 0.3


def test_x_range_changed_is_debounced(qtbot, view: TimelineView) -> None:
    seen: list[tuple[float, float]] = []
    view.x_range_changed.connect(lambda a, b: seen.append((a, b)))
    for _ in range(5):
        qtbot.keyClick(view, Qt.Key.Key_W)
    qtbot.wait(DEBOUNCE_MS * 4)
    assert seen == [view.x_range()]


def test_idle_gap_tooltip_names_its_cause(view: TimelineView, gw1_timeline) -> None:
    view.set_timeline(gw1_timeline)
    gaps = view.lanes().gaps
    assert len(gaps)
    g = gaps.row(0)
    view.set_x_range(g["start"] - 500, g["end"] + 500)
    text = view.tooltip_text_at((g["start"] + g["end"]) / 2, lane_y(view, "GPU 0 · busy"))
    assert text.startswith("idle gap")
    assert ("starved" in text) == bool(g["starved"])


@pytest.mark.parametrize(
    ("ms", "spacing", "span", "expected"),
    [
        (12500.0, 500.0, 60000.0, "12.5 s"),
        (120000.0, 20000.0, 600000.0, "120 s"),
        (12345.0, 5.0, 1000.0, "12\u2009345 ms"),
        (3_600_250.0, 50.0, 1000.0, "+250 ms"),
    ],
)
def test_time_axis_units_follow_the_zoom(ms, spacing, span, expected) -> None:
    from viewer.ui.view.axis import format_ms, ms_origin

    assert format_ms(ms, spacing, span, ms_origin(ms - 100, span)) == expected


def test_next_transition_from_fit_all_starts_at_the_first_and_says_last(
    qtbot, view: TimelineView
) -> None:
    times = view.lanes().transitions["time"]
    messages: list[str] = []
    view.message_ready.connect(messages.append)
    view.fit()
    qtbot.keyClick(view, Qt.Key.Key_BracketRight)
    assert sum(view.x_range()) / 2 == pytest.approx(times[0])  # not the one after the centre
    assert messages[-1].startswith("transition 1 of 4") and "first transition" in messages[-1]
    for i in range(1, 4):
        qtbot.keyClick(view, Qt.Key.Key_BracketRight)
        assert sum(view.x_range()) / 2 == pytest.approx(times[i])
    assert "last transition" in messages[-1]
    qtbot.keyClick(view, Qt.Key.Key_BracketRight)  # past the last: stays, says so
    assert sum(view.x_range()) / 2 == pytest.approx(times[3])
    assert messages[-1] == "last transition"
    # Backwards from Fit all: the last one before the right edge, then "first transition".
    view.fit()
    qtbot.keyClick(view, Qt.Key.Key_BracketLeft)
    assert sum(view.x_range()) / 2 == pytest.approx(times[3])
    view.set_x_range(times[0] - 5000, times[1] - 1)  # panned by hand: from the left edge on
    qtbot.keyClick(view, Qt.Key.Key_BracketLeft)
    assert sum(view.x_range()) / 2 == pytest.approx(times[0])
    qtbot.keyClick(view, Qt.Key.Key_BracketLeft)
    assert messages[-1] == "first transition"


def _header_pixels(view: TimelineView) -> QtGui.QImage:
    view.plot.viewport().repaint()
    header = view._header
    rect = header.mapRectToScene(QtCore.QRectF(0, 0, header.width() - 2, header.height()))
    return view.plot.grab(view.plot.mapFromScene(rect).boundingRect()).toImage()


def test_the_cached_lane_names_follow_collapses_scrolls_and_themes(view, qtbot) -> None:
    """The lane-name axis is drawn from a cached pixmap while the view pans (it drew every
    name in each frame): after a collapse, a vertical scroll and a theme change it shows
    what drawing it anew shows."""
    from viewer.ui.view.axis import LaneHeaderAxis

    header = view._header
    assert header.cacheMode() == QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache

    def fresh() -> QtGui.QImage:
        header.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.NoCache)
        image = _header_pixels(view)
        header.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        return image

    before = _header_pixels(view)
    lo, hi = view.x_range()
    view.set_x_range(lo + (hi - lo) / 3, hi)  # a pan: the names stay
    assert _header_pixels(view) == before
    view._on_toggle_group(view._lanes.groups[0])  # collapse the first GPU
    collapsed = _header_pixels(view)
    assert collapsed != before and collapsed == fresh()
    view._scroll_by(40)
    assert _header_pixels(view) == fresh()
    palette = QtGui.QPalette(QtGui.QColor("#202020"))
    palette.setColor(QtGui.QPalette.ColorRole.Base, QtGui.QColor("#101010"))
    palette.setColor(QtGui.QPalette.ColorRole.Text, QtGui.QColor("#eeeeee"))
    view.setPalette(palette)  # a dark theme
    assert view.theme.dark
    dark = _header_pixels(view)
    assert dark == fresh() and dark != collapsed
    assert isinstance(header, LaneHeaderAxis)


def test_the_hover_label_follows_a_view_that_moves_under_a_still_pointer(
    qtbot, view: TimelineView
) -> None:
    """issue 28 item 6: after a key moved the view (a transition step, a zoom) or a group
    folded, the hover label kept describing a bar no longer under the pointer."""
    p = view.session().partitions.row(0)
    lane = f"GPU {p['gpu']} · worker {p['worker']}"
    view.set_x_range(p["gpu_start"] - 2000, p["gpu_end"] + 2000)
    at = scene_point(view, (p["gpu_start"] + p["gpu_end"]) / 2, lane_y(view, lane))
    port = view.plot.viewport()
    QtGui.QCursor.setPos(port.mapToGlobal(at))
    send_mouse(
        view, QtCore.QEvent.Type.MouseMove, at, Qt.MouseButton.NoButton, Qt.MouseButton.NoButton
    )
    tip = view.tooltip_label()
    assert tip.isVisible() and "partition" in tip.text()

    def under_pointer() -> str:
        point = view._vb.mapSceneToView(view.plot.mapToScene(at))
        return view.tooltip_text_at(point.x(), point.y())

    changed = 0
    for key in (Qt.Key.Key_BracketRight, Qt.Key.Key_S, Qt.Key.Key_D, Qt.Key.Key_BracketRight):
        before = tip.text()
        qtbot.keyClick(port, key)
        qtbot.wait(10)
        now = under_pointer()
        assert (tip.text() if tip.isVisible() else "") == now, key
        changed += now != before
    assert changed  # the keys did move other bars (or none) under the pointer
    # A folded group moves the lanes under the pointer too.
    header = next(g for g in view.lanes().groups if g.name.startswith("GPU 0"))
    view._on_toggle_group(header)
    qtbot.wait(10)
    assert (tip.text() if tip.isVisible() else "") == under_pointer()
    # The pointer leaves the view (a key moved focus elsewhere): no label.
    QtGui.QCursor.setPos(port.mapToGlobal(QtCore.QPoint(-50, -50)))
    view.pan(0.1)
    qtbot.wait(10)
    assert not tip.isVisible()


def test_a_transition_label_at_the_right_edge_is_written_inside_the_view(
    view: TimelineView,
) -> None:
    """issue 28 item 2: "gap 45 ms · overlap 39" was cut by the view's right edge."""
    times = view.lanes().transitions["time"]
    last = float(times[-1])
    view.set_x_range(last - 60_000.0, last + 500.0)
    overlay = view._overlay
    px = view.ms_per_px()
    x0, x1 = view.x_range()
    assert overlay._labels
    for anchor, _text, width, _cold in overlay._labels:
        assert anchor.x() + width * px <= x1 + 1e-6
        assert anchor.x() >= x0 - 1e-6


def test_an_interleaved_transition_is_not_labelled_a_gap(qtbot) -> None:
    """issue 28 item 4: "gap 36548 ms" over a worker busy the whole time (the prediction
    beside of a run whose sectors interleave)."""
    from tests.analysis.builders import call, session
    from tests.ui.conftest import timeline_of

    s = session(
        call("A", 0, 0.0, 10_000.0, 0),
        call("B", 0, 10_005.0, 20_000.0, 0),
        call("A", 1, 20_010.0, 30_000.0, 0),
        call("C", 0, 30_020.0, 40_000.0, 0),
        call("C", 1, 40_000.0, 41_000.0, 1),
    )
    view = hosted_view(qtbot, 1200, 500)
    view.set_timeline(timeline_of(s))
    view.fit()
    texts = [text.text() for _, text, _, _ in view._overlay._labels]
    assert "gap 5 ms · overlap 19995 ms" in texts  # sector 0 runs on past it
    assert "interleaved · idle 20 ms · overlap 0 ms" in texts
    assert not any(t.startswith("gap 10020") for t in texts)
