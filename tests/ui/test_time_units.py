"""Human units: long runs on the axis and in the window in min / h, and the wall clock."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtWidgets

from tests.ui.conftest import load_and_wait, phase8_calls, timeline_of
from tests.ui.test_axis_layout import pyqtgraph_specs
from tests.ui.test_main_window import PHASE8, window  # noqa: F401
from tests.ui.test_timeline_view import hosted_view
from viewer.analysis.units import DAY, wall_date, wall_time
from viewer.analysis.wallclock import session_wall_starts
from viewer.model import build_session
from viewer.ui.view.axis import TimeAxisItem
from viewer.ui.windows.main_window import MainWindow

T0 = 1771462800000.0  # 2026-02-19 01:00:00 UTC


@pytest.fixture
def axis(qtbot) -> Iterator[TimeAxisItem]:
    host = QtWidgets.QWidget()
    qtbot.addWidget(host)
    axis = TimeAxisItem()
    plot = pg.PlotWidget(host, axisItems={"bottom": axis})
    plot.resize(1300, 300)
    host.show()
    qtbot.waitExposed(host)
    yield axis
    del plot


def labels(axis: TimeAxisItem) -> list[str]:
    return [text.text() for _, text in axis._layout().labels]


def test_a_long_run_is_labelled_in_minutes_and_hours(axis: TimeAxisItem) -> None:
    axis.setRange(0.0, 4 * 3_600_000.0)  # four hours
    shown = labels(axis)
    assert "1 h" in shown and "2 h" in shown
    assert any(t.endswith(" min") for t in shown)  # "1 h 30 min"
    assert not any(t.endswith(" s") for t in shown)
    axis.setRange(0.0, 40 * 60_000.0)  # 40 minutes: round minutes
    shown = labels(axis)
    assert "10 min" in shown and "20 min" in shown
    # The labels are still laid out as pyqtgraph would.
    assert shown == [text for _, _, text in pyqtgraph_specs(axis)[2]]
    axis.setRange(0.0, 220_000.0)  # a few minutes: seconds, as before
    assert "100 s" in labels(axis)


def test_wall_clock_ticks_fall_on_round_utc_times(axis: TimeAxisItem) -> None:
    axis.setRange(0.0, 40 * 60_000.0)
    axis.set_wall_start(T0 + 123_456.0)  # the engine started at 01:02:03.456
    axis.update_label()
    shown = labels(axis)
    assert "01:10:00" in shown and "01:20:00" in shown
    assert axis.labelText == "wall clock (UTC), 2026-02-19"
    axis.setRange(1_000.0, 2_000.0)  # a second: decimals of the second
    shown = labels(axis)
    assert any(t.startswith("01:02:05.") for t in shown)
    axis.set_wall_start(None)
    axis.update_label()
    assert axis.labelText == "time since daemon start"


def test_view_wall_clock_option(qtbot, window) -> None:  # noqa: F811
    load_and_wait(qtbot, window, PHASE8)
    clock = window.wall_clock
    assert not clock.is_on() and window.view.wall_start() is None
    with qtbot.waitSignal(clock.starts_ready, timeout=10000):
        clock.action.setChecked(True)
    (wall,) = session_wall_starts(PHASE8, 1)
    assert window.view.wall_start() == wall
    assert window.statusBar().currentMessage() == "session started 2026-02-19 01:00:00.000 UTC"
    window._on_cursor_moved(75_742.0)
    assert window.cursor_label.text() == "cursor 01:01:15.742 UTC"
    # The panels write their times on the same clock.
    assert window.throughput_panel.scope.text() == (
        "Whole session 1: 01:00:00.040 → 01:03:46.103 UTC (3 min 46 s)"
    )
    first = window.transitions_panel.frame()["time"][0]
    at = [h for _, h in window.transitions_panel.COLUMNS].index("at")
    assert window.transitions_panel.table.model().index(0, at).data() == wall_time(wall + first, 1)
    assert window.settings.value("view/wall_clock") == "true"
    clock.action.setChecked(False)
    assert window.view.wall_start() is None
    window._on_cursor_moved(75_742.0)
    # A session past 2 min writes every time on m:ss, the cursor too (one form per session).
    assert window.cursor_label.text() == "cursor 1:15.742"
    assert window.transitions_panel.table.model().index(0, at).data() == "1:15.742"
    assert window.session_combo.itemText(0) == "1: 5 jobs, 3 min 46 s"


def test_wall_clock_saved_on_starts_clean_and_every_pane_follows(qtbot, tmp_path) -> None:
    """issue 28 item 1: saved from a previous run, wall-clock mode raised KeyError 'time' at
    start, and the gaps and jobs tables, the Details tab and the hover stayed on the
    session's clock beside a UTC axis."""
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    settings.setValue("view/wall_clock", "true")
    win = MainWindow(settings=settings)  # pytest-qt fails the test on an exception in a slot
    qtbot.addWidget(win)
    win.resize(1400, 850)
    win.show()
    try:
        with qtbot.waitSignal(win.wall_clock.starts_ready, timeout=15000):
            load_and_wait(qtbot, win, PHASE8)
        (wall,) = session_wall_starts(PHASE8, 1)
        assert win.view.wall_start() == wall
        utc = re.compile(r"^01:0\d:\d\d\.\d{3}$")
        for panel, column in (
            (win.jobs_panel, "first_gpu_start"),
            (win.transitions_panel, "time"),
            (win.gaps_panel, "start"),
        ):
            if not len(panel.frame()):
                continue
            keys = [k for k, _ in panel.COLUMNS]
            model = panel.table.model()
            head = model.headerData(keys.index(column), QtCore.Qt.Orientation.Horizontal)
            assert head.endswith("(UTC)")
            assert utc.match(model.index(0, keys.index(column)).data()), panel
        # The Details tab and the tooltip of a bar write the same clock.
        session = win.view.session()
        win.view.partition_clicked.emit(0)
        assert "UTC" in win.details_pane.job.text()
        starts = [win.details_pane.table.item(0, j).text() for j in range(3)]
        assert all(utc.match(text) for text in starts if text != "—"), starts
        lane = next(x for x in win.view.lanes().lanes() if x.kind == "worker")
        bar = lane.layers["bar"]
        tip = win.view.tooltip_text_at((bar.start[0] + bar.end[0]) / 2, lane.top + 5)
        assert re.search(r"GPU 01:0\d:\d\d\.\d{3} → 01:0\d:\d\d\.\d{3} UTC", tip), tip
        # Off again: every pane back on the session's clock, in one form (the run passes 2 min).
        win.wall_clock.action.setChecked(False)
        assert "UTC" not in win.details_pane.job.text()
        keys = [k for k, _ in win.jobs_panel.COLUMNS]
        first = win.jobs_panel.table.model().index(0, keys.index("first_gpu_start")).data()
        assert re.match(r"^\d:\d\d\.\d{3}$", first), first
        assert session.end_ms > 120_000
    finally:
        win.cancel_loading()
        win.runner.wait()
        win.wall_clock.wait()


def test_the_details_tab_writes_one_form_of_time_per_session(qtbot, window) -> None:  # noqa: F811
    """issue 28 item 1: Details mixed "114.529 s" with "2:28.194" in one table."""
    load_and_wait(qtbot, window, PHASE8)
    session = window.view.session()
    late = int(np.argmax(session.partitions["gpu_end"]))
    window.view.partition_clicked.emit(late)
    pane = window.details_pane
    texts = [
        pane.table.item(i, j).text() for i in range(2) for j in range(pane.table.columnCount())
    ]
    texts = [t for t in texts if t != "—"]
    assert texts and all(re.match(r"^\d+:\d\d\.\d{3}$", t) for t in texts), texts


def long_session(days: float = 7.0):
    """A run of ``days`` days (two waves of syntheses some days long)."""
    calls = phase8_calls(jobs=2, synth_ms=days / 2.4 * DAY)
    return build_session(calls)


def test_a_week_long_run_on_the_wall_clock_says_its_dates(qtbot) -> None:
    """issue 28 item 1: a 7-day run's axis showed times of day with one date, the day
    before the run (the fit's margin)."""
    view = hosted_view(qtbot, 1300, 500)
    session = long_session()
    view.set_timeline(timeline_of(session))
    start = T0 - 3_600_000.0 + 30 * 60_000.0  # the daemon started 00:30 UTC on 02-19
    view.set_wall_start(start)
    view.fit()
    axis = view._time_axis
    axis.update_label()
    last = wall_date(start + session.end_ms)
    assert last >= "2026-02-24"
    assert axis.labelText == f"wall clock (UTC), 2026-02-19 → {last}"
    clock = view.clock()
    assert clock.dated
    assert view.format_time(session.end_ms).startswith(last[5:] + " ")
    # Zoomed on one midnight, the tick there carries its date, the others the time of day.
    midnight = (T0 - 3_600_000.0 + 3 * DAY) - start  # 02-22 00:00
    view.set_x_range(midnight - 3 * 3_600_000.0, midnight + 3 * 3_600_000.0)
    axis.update_label()
    shown = labels(axis)
    assert "02-22 00:00" in shown, shown
    assert any(re.match(r"^2[0-3]:00:00$", t) for t in shown), shown
    assert axis.labelText == "wall clock (UTC), 2026-02-21 → 2026-02-22"
