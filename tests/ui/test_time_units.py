"""Human units: long runs on the axis and in the window in min / h, and the wall clock."""

from __future__ import annotations

from collections.abc import Iterator

import pyqtgraph as pg
import pytest
from PySide6 import QtWidgets

from tests.ui.conftest import load_and_wait
from tests.ui.test_axis_layout import pyqtgraph_specs
from tests.ui.test_main_window import PHASE8, window  # noqa: F401
from viewer.analysis.units import wall_time
from viewer.analysis.wallclock import session_wall_starts
from viewer.ui.axis import TimeAxisItem

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
    assert window.cursor_label.text() == "cursor 75.742 s"
    assert window.transitions_panel.table.model().index(0, at).data() == "1:15.742"
    assert window.session_combo.itemText(0) == "1: 5 jobs, 3 min 46 s"
